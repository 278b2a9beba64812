//! The status queries (`fmi2Get*Status`): which kinds have an answer.

use fmu_model::fmi2::*;

use crate::error::{Failure, FmiError, FmiResult};

/// Status queries: only `fmi2LastSuccessfulTime` and `fmi2Terminated` have answers
/// (this FMU never runs a step asynchronously); the rest are `fmi2Discard`.
pub fn status_kind(kind: fmi2StatusKind, answerable: fmi2StatusKind) -> FmiResult {
    if kind == answerable {
        Ok(())
    } else {
        Err(FmiError {
            status: Failure::Discard,
            message: format!(
                "status kind {kind} is not available: this FMU never returns fmi2Pending"
            ),
            context: None,
        })
    }
}
