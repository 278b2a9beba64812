//! One node coupled to its peers through reflective memory. It stands on the
//! floors beneath, each imported from its own crate and never re-exported
//! here (module-cycles fails on a re-export, so every caller says which floor
//! it means): the memory of `rfm-memory`, the area of `rfm-frames`, the
//! interface files of `rfm-interface` and the recordings of `rfm-record`.
//! Its modules, each naming only those above it in this list:
//!
//! - [`link`]: one node coupled to its peers (ownership, heartbeat, exchange,
//!   redundant rings), with [`health`], [`realtime`];
//! - [`card`]: what a step costs on a PCIE-5565, and a coupling's share of the
//!   ring.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod card;
pub mod health;
pub mod link;
pub mod realtime;
