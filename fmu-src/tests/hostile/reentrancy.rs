//! A logger that calls back into the FMU: freeing the instance from inside a
//! call, or calling it, gets an error and touches no freed memory.

use super::*;

/// What the re-entrant logger below does when the FMU logs an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reenter {
    Free,
    GetReal,
}

/// The master's state for the re-entrant logger.
struct Reentrant {
    c: std::cell::Cell<fmi2Component>,
    action: Reenter,
    /// (status, message) of every message, and the status of each re-entrant call.
    seen: std::cell::RefCell<Vec<(fmi2Status, String)>>,
    answers: std::cell::RefCell<Vec<fmi2Status>>,
}

/// A logger that calls back into the FMU on every error it is told about.
unsafe extern "C" fn reentrant_logger(
    env: *mut std::ffi::c_void,
    _name: fmi2String,
    status: fmi2Status,
    _category: fmi2String,
    format: fmi2String,
) {
    // SAFETY: `env` is the test's Reentrant, alive for the whole test; `format` is
    // the FMU's NUL-terminated message.
    let (m, text) = unsafe { (&*(env as *const Reentrant), common::printed(format)) };
    m.seen.borrow_mut().push((status, text));
    if status != fmi2Error {
        return;
    }
    let c = m.c.get();
    // SAFETY: `c` came from fmi2Instantiate; a re-entrant call is what is tested.
    let answer = unsafe {
        match m.action {
            Reenter::Free => {
                fmi2_free_instance(c);
                fmi2OK
            }
            Reenter::GetReal => {
                let (r, mut x) = (vr("roll").0, 0.0);
                fmi2_get_real(c, &r, 1, &mut x)
            }
        }
    };
    m.answers.borrow_mut().push(answer);
}

fn reentrant_instance(action: Reenter) -> Box<Reentrant> {
    let m = Box::new(Reentrant {
        c: std::cell::Cell::new(null_mut()),
        action,
        seen: Default::default(),
        answers: Default::default(),
    });
    let cb = callbacks_with(
        reentrant_logger,
        &*m as *const Reentrant as *mut std::ffi::c_void,
    );
    let guid = CString::new(fmu_model::PRESET_GUID).unwrap();
    // SAFETY: valid strings and callbacks; `m` outlives the instance.
    let c = unsafe {
        fmi2_instantiate(
            c"reentrant".as_ptr(),
            fmi2CoSimulation,
            guid.as_ptr(),
            null(),
            &cb,
            0,
            0,
        )
    };
    assert!(!c.is_null());
    m.c.set(c);
    m
}

#[test]
fn a_logger_that_frees_the_instance_from_inside_a_call_touches_no_freed_memory() {
    let m = reentrant_instance(Reenter::Free);
    let c = m.c.get();
    // An illegal call: the FMU logs an error, and the logger frees the instance
    // while that call is still running.
    // SAFETY: `c` is live.
    assert_eq!(unsafe { fmi2_do_step(c, 0.0, 1e-3, 1) }, fmi2Error);
    let seen = m.seen.borrow().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen[0].1.starts_with("fmi2DoStep: illegal call sequence"),
        "{seen:?}"
    );
    assert!(
        seen[1].1.starts_with(
            "fmi2FreeInstance: called from inside another FMI call on this instance (from the \
             master's logger callback): the instance is freed when that call returns"
        ),
        "{seen:?}"
    );
    // Freed once the outer call returned: later calls get an error, not freed memory.
    // SAFETY: a freed component keeps its tombstone.
    unsafe {
        assert_eq!(fmi2_terminate(c), fmi2Error);
        fmi2_free_instance(c);
    }
    assert_eq!(m.seen.borrow().len(), 2, "a freed instance logs nothing");
}

#[test]
fn a_call_from_inside_the_logger_gets_an_error_and_one_message() {
    let m = reentrant_instance(Reenter::GetReal);
    let c = m.c.get();
    // SAFETY: `c` is live.
    assert_eq!(unsafe { fmi2_do_step(c, 0.0, 1e-3, 1) }, fmi2Error);
    // The logger calls back on the error, and again on the refusal's own message:
    // both are refused, the second without another message (the recursion ends).
    assert_eq!(*m.answers.borrow(), vec![fmi2Error, fmi2Error]);
    let seen = m.seen.borrow().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen[1].1.starts_with(
            "fmi2GetReal: called from inside another FMI call on this instance (from the \
             master's logger callback): the call is refused"
        ),
        "{seen:?}"
    );
    // The instance itself is untouched and usable.
    // SAFETY: `c` is live.
    unsafe {
        assert_eq!(fmi2_setup_experiment(c, 0, 0.0, 0.0, 0, 0.0), fmi2Error);
        fmi2_free_instance(c);
    }
}
