//! A failed FMI call: the status it returns and the message the master's logger
//! gets. Every layer of the FMU returns it; the exports turn it into an
//! `fmi2Status` once, at the boundary.

use fmu_model::fmi2::*;

/// A failed call: the status it returns and the message logged.
#[derive(Debug, Clone, PartialEq)]
pub struct FmiError {
    pub status: fmi2Status,
    pub message: String,
}

pub type FmiResult<T = ()> = Result<T, FmiError>;

/// The common failure: `fmi2Error` with `message`.
pub fn error(message: impl Into<String>) -> FmiError {
    FmiError {
        status: fmi2Error,
        message: message.into(),
    }
}
