//! `fmi3InstantiateCoSimulation`: FMI 3.0's arguments, checked as FMI 2.0's
//! are, and a component of the same kind (every later call goes through the
//! same handle, state machine and instance). The other kinds of instance
//! this FMU does not offer are refused, saying so to the master's logger.

use std::panic::{catch_unwind, AssertUnwindSafe};

use fmu_model::fmi3::*;

use crate::c_args::text;
use crate::component::new_handle;
use crate::instance::Instance;
use crate::instantiate::model_for;
use crate::logger::{Category, Logger, Sink};

/// A new component, or NULL after telling the master's logger why.
///
/// # Safety
/// The FMI 3.0 contract of `fmi3InstantiateCoSimulation`: every pointer is
/// NULL or valid.
pub unsafe fn instantiate(
    instance_name: fmi3String,
    token: fmi3String,
    resource_path: fmi3String,
    logging_on: fmi3Boolean,
    early_return_allowed: fmi3Boolean,
    (env, log): (fmi3InstanceEnvironment, Option<fmi3LogMessageCallback>),
) -> fmi3Instance {
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: NULL or a C string, as FMI requires.
        let name = unsafe { text(instance_name) }.unwrap_or("");
        let logger = Logger::new(
            Sink::Fmi3 { env, log },
            if name.is_empty() {
                "rfm_attitude"
            } else {
                name
            },
            logging_on,
        );
        let refuse = |why: String| {
            logger.log(
                Category::Error,
                &format!("fmi3InstantiateCoSimulation: {why}"),
            );
            std::ptr::null_mut()
        };
        if name.is_empty() {
            return refuse("instanceName is NULL, empty or not UTF-8".to_owned());
        }
        // SAFETY: NULL or C strings (this function's contract).
        let (token, resources) = unsafe { (text(token), text(resource_path)) };
        let Some(token) = token else {
            return refuse("instantiationToken is NULL or not UTF-8".to_owned());
        };
        match model_for(token, resources) {
            Ok(model) => {
                let mut instance = Instance::new(logger.clone(), model);
                if early_return_allowed {
                    instance.allow_early_return();
                }
                new_handle(logger, instance)
            }
            Err(e) => refuse(e),
        }
    }));
    made.unwrap_or(std::ptr::null_mut())
}

/// Model Exchange and Scheduled Execution: NULL, said to the logger.
pub fn refuse_kind(
    kind: &str,
    (env, log): (fmi3InstanceEnvironment, Option<fmi3LogMessageCallback>),
) -> fmi3Instance {
    let _ = catch_unwind(|| {
        Logger::new(Sink::Fmi3 { env, log }, "rfm_attitude", false).log(
            Category::Error,
            &format!(
                "fmi3Instantiate{kind}: this FMU is a Co-Simulation FMU only: call \
                 fmi3InstantiateCoSimulation"
            ),
        );
    });
    std::ptr::null_mut()
}
