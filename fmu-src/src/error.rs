//! A failed FMI call: the status it returns and the message the master's logger
//! gets. Every layer of the FMU returns it; the exports turn it into an
//! `fmi2Status` once, at the boundary, where the call's name is put before the
//! message ([`FmiError::in_call`]): no layer types a function's name.

use fmu_model::fmi2::*;
use fmu_model::Category;

use crate::state_machine::Call;

/// How badly a call failed: the status it returns, never `fmi2OK` (a success
/// is an `Ok`) nor `fmi2Pending` (no step runs asynchronously).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The call did nothing it was asked (a status query with no answer).
    Discard,
    /// The call failed; the instance may be reset or freed.
    Error,
    /// The instance is unusable; only `fmi2FreeInstance` is allowed.
    Fatal,
}

/// Each failure's status and the log category its message goes to: the one
/// conversion at the C boundary.
const FAILURES: [(Failure, fmi2Status, Category); 3] = [
    (Failure::Discard, fmi2Discard, Category::Discard),
    (Failure::Error, fmi2Error, Category::Error),
    (Failure::Fatal, fmi2Fatal, Category::Fatal),
];

impl Failure {
    /// The status the C function returns.
    pub fn status(self) -> fmi2Status {
        FAILURES
            .iter()
            .find(|f| f.0 == self)
            .map_or(fmi2Fatal, |f| f.1)
    }

    /// The category the master's logger gets the message in.
    pub fn category(self) -> Category {
        FAILURES
            .iter()
            .find(|f| f.0 == self)
            .map_or(Category::Fatal, |f| f.2)
    }
}

/// A failed call: the status it returns and the message logged.
#[derive(Debug, Clone, PartialEq)]
pub struct FmiError {
    pub status: Failure,
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
        status: Failure::Error,
        message: message.into(),
        context: None,
    }
}

/// Runs every ending of a run, in order, even after one fails: a link that
/// cannot mark its slot closed must still put the stepping thread back and
/// write the recording's last records. The first failure is the one reported.
pub(crate) fn end_each<const N: usize>(endings: [&mut dyn FnMut() -> FmiResult; N]) -> FmiResult {
    let mut first = Ok(());
    for end in endings {
        let this = end();
        if first.is_ok() {
            first = this;
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_has_one_status_and_one_category() {
        for (i, a) in FAILURES.iter().enumerate() {
            assert_eq!((a.0.status(), a.0.category()), (a.1, a.2));
            assert!(FAILURES[i + 1..].iter().all(|b| b.0 != a.0 && b.1 != a.1));
        }
        assert!(FAILURES.iter().all(|f| f.1 != fmi2OK));
    }

    #[test]
    fn every_ending_runs_after_one_fails_and_the_first_failure_is_reported() {
        let ran = std::cell::RefCell::new(Vec::new());
        let result = end_each([
            &mut || Err(error("close")),
            &mut || {
                ran.borrow_mut().push("realtime");
                Ok(())
            },
            &mut || {
                ran.borrow_mut().push("recording");
                Err(error("finish"))
            },
        ]);
        assert_eq!(result.unwrap_err().message, "close");
        assert_eq!(*ran.borrow(), ["realtime", "recording"]);
    }
}
