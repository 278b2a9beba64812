//! The `rfm_attitude` FMI 2.0 co-simulation FMU.
//!
//! Not built yet: this crate is the skeleton laid out by the rfm-core issue. The FMI
//! exports come with the fmu-src issue; until then the cdylib exports nothing and
//! `build-fmu` refuses to package it.
