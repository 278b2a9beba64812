//! A hostile master: every exported function with NULL and freed components, NULL
//! arrays, every call in every state, bad numbers, strings and times. Each call
//! gets a status (and a logged message when it is refused); none crashes or
//! touches memory it should not. `scripts/test.sh` also runs this file under
//! AddressSanitizer.

#[path = "../common/mod.rs"]
mod common;

use std::ffi::{c_char, CString};
use std::ptr::{null, null_mut};

use common::{unique, vr, Fmu};
use fmu_model::fmi2::*;
use rfm_attitude::*;

/// Calls every function that takes a component with `c` and harmless other
/// arguments; returns each status by name.
///
/// # Safety
/// `c` is NULL or came from fmi2Instantiate (live or freed).
unsafe fn call_everything(c: fmi2Component) -> Vec<(&'static str, fmi2Status)> {
    let r = vr("roll").0;
    let (mut real, mut int, mut s) = (0.0f64, 0i32, null::<c_char>());
    let mut status = fmi2OK;
    let mut state: fmi2FMUstate = null_mut();
    let mut size = 0usize;
    let mut bytes = [0 as c_char; 8];
    let name = c"x";
    // SAFETY: the caller's contract for `c`; every other pointer is valid.
    unsafe {
        vec![
            (
                "fmi2SetDebugLogging",
                fmi2_set_debug_logging(c, 1, 0, null()),
            ),
            (
                "fmi2SetupExperiment",
                fmi2_setup_experiment(c, 0, 0.0, 0.0, 0, 0.0),
            ),
            (
                "fmi2EnterInitializationMode",
                fmi2_enter_initialization_mode(c),
            ),
            (
                "fmi2ExitInitializationMode",
                fmi2_exit_initialization_mode(c),
            ),
            ("fmi2Terminate", fmi2_terminate(c)),
            ("fmi2Reset", fmi2_reset(c)),
            ("fmi2GetReal", fmi2_get_real(c, &r, 1, &mut real)),
            ("fmi2GetInteger", fmi2_get_integer(c, &r, 1, &mut int)),
            ("fmi2GetBoolean", fmi2_get_boolean(c, &r, 1, &mut int)),
            ("fmi2GetString", fmi2_get_string(c, &r, 1, &mut s)),
            ("fmi2SetReal", fmi2_set_real(c, &r, 1, &real)),
            ("fmi2SetInteger", fmi2_set_integer(c, &r, 1, &int)),
            ("fmi2SetBoolean", fmi2_set_boolean(c, &r, 1, &int)),
            ("fmi2SetString", fmi2_set_string(c, &r, 1, &name.as_ptr())),
            ("fmi2GetFMUstate", fmi2_get_fmu_state(c, &mut state)),
            ("fmi2SetFMUstate", fmi2_set_fmu_state(c, state)),
            ("fmi2FreeFMUstate", fmi2_free_fmu_state(c, &mut state)),
            (
                "fmi2SerializedFMUstateSize",
                fmi2_serialized_fmu_state_size(c, state, &mut size),
            ),
            (
                "fmi2SerializeFMUstate",
                fmi2_serialize_fmu_state(c, state, bytes.as_mut_ptr(), 8),
            ),
            (
                "fmi2DeSerializeFMUstate",
                fmi2_deserialize_fmu_state(c, bytes.as_ptr(), 8, &mut state),
            ),
            (
                "fmi2GetDirectionalDerivative",
                fmi2_get_directional_derivative(c, &r, 1, &r, 1, &real, &mut real),
            ),
            (
                "fmi2SetRealInputDerivatives",
                fmi2_set_real_input_derivatives(c, &r, 1, &int, &real),
            ),
            (
                "fmi2GetRealOutputDerivatives",
                fmi2_get_real_output_derivatives(c, &r, 1, &int, &mut real),
            ),
            ("fmi2DoStep", fmi2_do_step(c, 0.0, 1e-3, 1)),
            ("fmi2CancelStep", fmi2_cancel_step(c)),
            ("fmi2GetStatus", fmi2_get_status(c, 0, &mut status)),
            ("fmi2GetRealStatus", fmi2_get_real_status(c, 2, &mut real)),
            (
                "fmi2GetIntegerStatus",
                fmi2_get_integer_status(c, 0, &mut int),
            ),
            (
                "fmi2GetBooleanStatus",
                fmi2_get_boolean_status(c, 0, &mut int),
            ),
            ("fmi2GetStringStatus", fmi2_get_string_status(c, 1, &mut s)),
        ]
    }
}

mod arguments;
mod reentrancy;
mod states;
mod threads;

#[test]
fn null_and_freed_components_get_an_error_from_every_function() {
    // SAFETY: NULL is what is being tested.
    let answers = unsafe { call_everything(null_mut()) };
    assert_eq!(
        answers.len(),
        30,
        "with Instantiate, FreeInstance and the two getters: 34"
    );
    for (name, status) in answers {
        assert_eq!(status, fmi2Error, "{name}(NULL)");
    }
    let fmu = Fmu::new("freed");
    // SAFETY: freed twice; then every call on the tombstone.
    let answers = unsafe {
        fmi2_free_instance(fmu.c);
        fmi2_free_instance(fmu.c);
        fmi2_free_instance(null_mut());
        call_everything(fmu.c)
    };
    for (name, status) in answers {
        assert_eq!(status, fmi2Error, "{name}(freed component)");
    }
    // SAFETY: static strings.
    unsafe {
        assert_eq!(std::ffi::CStr::from_ptr(fmi2_get_version()), c"2.0");
        assert_eq!(
            std::ffi::CStr::from_ptr(fmi2_get_types_platform()),
            c"default"
        );
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum St {
    Instantiated,
    Initialization,
    StepComplete,
    Terminated,
    Error,
}

const ALL: [St; 5] = [
    St::Instantiated,
    St::Initialization,
    St::StepComplete,
    St::Terminated,
    St::Error,
];

/// A fresh instance on its own loopback self-loop, brought into state `st`.
fn in_state(st: St) -> Fmu {
    let fmu = Fmu::new("states");
    fmu.set_all(&[
        ("device", &format!("loopback:{}", unique("states"))),
        ("peerSlot", "0"),
    ]);
    // SAFETY: a live instance; each call is legal on the way to `st`.
    unsafe {
        match st {
            St::Instantiated => {}
            St::Error => assert_eq!(fmi2_do_step(fmu.c, 0.0, 1e-3, 1), fmi2Error),
            _ => {
                assert_eq!(fmi2_setup_experiment(fmu.c, 0, 0.0, 0.0, 0, 0.0), fmi2OK);
                assert_eq!(fmi2_enter_initialization_mode(fmu.c), fmi2OK);
                if st != St::Initialization {
                    assert_eq!(
                        fmi2_exit_initialization_mode(fmu.c),
                        fmi2OK,
                        "{:?}",
                        fmu.log()
                    );
                }
                if st == St::Terminated {
                    assert_eq!(fmi2_terminate(fmu.c), fmi2OK);
                }
            }
        }
    }
    fmu
}
