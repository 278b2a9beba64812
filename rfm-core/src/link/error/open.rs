//! Why a link could not open: what [`crate::link::Link::open`] returns, apart
//! from what its start, steps and close can (`LinkError`), so that a caller
//! matches only what opening can do.

use rfm_interface::settings::SettingError;
use rfm_memory::{DeviceError, RegionError};

/// A link that could not open: its settings, its memory, or the recording it
/// replays.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A setting refused by its table, or two that do not go together.
    #[error("parameter {0}")]
    Setting(#[from] SettingError),
    /// A setting the memory or the interface cannot take.
    #[error("parameter {parameter} = {value}: {problem}")]
    Config {
        parameter: &'static str,
        value: String,
        problem: String,
    },
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Region(#[from] RegionError),
    /// `device = replay:PATH`: the recording cannot be replayed as this node.
    #[error("replay:{path}: {problem}")]
    Replay { path: String, problem: String },
}

/// [`OpenError::Config`]: `parameter` = `value` cannot work, and why.
pub fn open_config(
    parameter: &'static str,
    value: impl ToString,
    problem: impl Into<String>,
) -> OpenError {
    OpenError::Config {
        parameter,
        value: value.to_string(),
        problem: problem.into(),
    }
}
