//! The link's settings, one table ([`SETTINGS`]): each setting's name (the
//! FMU parameter's and the interface file's key), FMI type, default, range
//! or accepted words, and its parse into the Rust type the link takes, written
//! once. Everything that meets a setting reads this table: an interface
//! file's line ([`Settings`], so a wrong value is refused at its line and
//! column when the FMUs are built), the FMU's parameters (their start, `min`
//! and `max` in modelDescription.xml), `fmi2Set*` and initialization (the
//! values into [`LinkSettings`], which the link takes typed and does not
//! check again).
//!
//! ```toml
//! device = "shm:lab"        # every node's FMU starts with device = shm:lab
//! lag = 1
//! [[node]]
//! name = "ios"
//! lag = 0                   # but this node's with lag = 0
//! ```
//!
//! A master that sets nothing, or cannot set a String (OMSimulator from an SSP
//! file, FMPy's `simulate_ssp`), then couples the lab as the file says.
//! Settings do not enter the fingerprint: nodes built with other defaults
//! still couple.

mod error;
mod file;
mod link;
mod near;
mod table;

pub use error::SettingError;
pub use file::Settings;
pub use link::LinkSettings;
pub use table::{in_files, spec, Max, Rule, Setting, SettingSpec, Start, SETTINGS};
