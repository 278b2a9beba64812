//! A failed FMI call: the status it returns and the message the master's logger
//! gets. Every layer of the FMU returns it; the exports turn it into an
//! `fmi2Status` once, at the boundary, where the call's name is put before the
//! message ([`FmiError::in_call`]): no layer types a function's name.

use fmu_model::fmi2::*;

use crate::state_machine::Call;

/// A failed call: the status it returns and the message logged.
#[derive(Debug, Clone, PartialEq)]
pub struct FmiError {
    pub status: fmi2Status,
    /// What failed, without the call's name.
    pub message: String,
    /// Where in the call, written after its name (`step 3, t = 0.003`).
    pub context: Option<String>,
}

impl FmiError {
    /// `self` at `context`, which the message names after the call.
    pub fn at(self, context: String) -> FmiError {
        FmiError {
            context: Some(context),
            ..self
        }
    }

    /// The error as the master's logger gets it: the name of `call` first.
    #[cold]
    pub fn in_call(self, call: Call) -> FmiError {
        let message = match &self.context {
            Some(context) => format!("{} ({context}): {}", call.name(), self.message),
            None => format!("{}: {}", call.name(), self.message),
        };
        FmiError {
            message,
            context: None,
            ..self
        }
    }
}

pub type FmiResult<T = ()> = Result<T, FmiError>;

/// The common failure: `fmi2Error` with `message`.
pub fn error(message: impl Into<String>) -> FmiError {
    FmiError {
        status: fmi2Error,
        message: message.into(),
        context: None,
    }
}
