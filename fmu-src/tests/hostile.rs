//! A hostile master: every exported function with NULL and freed components, NULL
//! arrays, every call in every state, bad numbers, strings and times. Each call
//! gets a status (and a logged message when it is refused); none crashes or
//! touches memory it should not. `scripts/test.sh` also runs this file under
//! AddressSanitizer.

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

/// The calls whose legality depends on the state.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Call {
    SetupExperiment,
    EnterInit,
    ExitInit,
    DoStep,
    Terminate,
    Reset,
    SetDebugLogging,
    SetInput,
    SetFixedParameter,
    GetReal,
    GetString,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::SetupExperiment => "fmi2SetupExperiment",
            Call::EnterInit => "fmi2EnterInitializationMode",
            Call::ExitInit => "fmi2ExitInitializationMode",
            Call::DoStep => "fmi2DoStep",
            Call::Terminate => "fmi2Terminate",
            Call::Reset => "fmi2Reset",
            Call::SetDebugLogging => "fmi2SetDebugLogging",
            Call::SetInput | Call::SetFixedParameter => "fmi2SetReal",
            Call::GetReal => "fmi2GetReal",
            Call::GetString => "fmi2GetString",
        }
    }

    /// The FMI 2.0 co-simulation state machine: where this call is legal.
    fn legal(self) -> &'static [St] {
        use St::*;
        match self {
            Call::SetupExperiment | Call::EnterInit => &[Instantiated],
            Call::ExitInit => &[Initialization],
            Call::DoStep => &[StepComplete],
            Call::Terminate => &[StepComplete, Error],
            Call::Reset | Call::SetDebugLogging => &ALL,
            Call::SetInput => &[Instantiated, Initialization, StepComplete],
            Call::SetFixedParameter => &[Instantiated, Initialization],
            Call::GetReal | Call::GetString => &[Initialization, StepComplete, Terminated, Error],
        }
    }

    fn invoke(self, fmu: &Fmu) -> fmi2Status {
        let c = fmu.c;
        // SAFETY: a live instance; every pointer is valid for its count.
        unsafe {
            match self {
                Call::SetupExperiment => fmi2_setup_experiment(c, 0, 0.0, 0.0, 0, 0.0),
                Call::EnterInit => fmi2_enter_initialization_mode(c),
                Call::ExitInit => fmi2_exit_initialization_mode(c),
                Call::DoStep => fmi2_do_step(c, 0.0, 1e-3, 1),
                Call::Terminate => fmi2_terminate(c),
                Call::Reset => fmi2_reset(c),
                Call::SetDebugLogging => fmi2_set_debug_logging(c, 1, 0, null()),
                Call::SetInput => fmi2_set_real(c, &vr("roll").0, 1, &0.5),
                Call::SetFixedParameter => fmi2_set_real(c, &vr("timeout").0, 1, &2.0),
                Call::GetReal => fmi2_get_real(c, &vr("roll").0, 1, &mut 0.0),
                Call::GetString => fmi2_get_string(c, &vr("device").0, 1, &mut null()),
            }
        }
    }
}

/// Every call in every state: legal ones succeed, the others answer fmi2Error
/// with a message, as the FMI 2.0 co-simulation state machine says.
#[test]
fn every_call_in_every_state_follows_the_state_machine() {
    use Call::*;
    let calls = [
        SetupExperiment,
        EnterInit,
        ExitInit,
        DoStep,
        Terminate,
        Reset,
        SetDebugLogging,
        SetInput,
        SetFixedParameter,
        GetReal,
        GetString,
    ];
    // Why each refusal was made: a parameter that is fixed by then, or a call the
    // state does not allow.
    let mut fixed = Vec::new();
    for call in calls {
        for st in ALL {
            let fmu = in_state(st);
            let got = call.invoke(&fmu);
            if call.legal().contains(&st) {
                assert_eq!(got, fmi2OK, "{call:?} in {st:?}: {:?}", fmu.log());
            } else {
                assert_eq!(got, fmi2Error, "{call:?} in {st:?} must be refused");
                let text = fmu.last_error();
                assert!(
                    text.starts_with(call.name())
                        && (text.contains("illegal call sequence")
                            || text.contains("fixed parameter")),
                    "{call:?} in {st:?}: `{text}`"
                );
                if text.contains("fixed parameter") {
                    fixed.push((call, st));
                }
            }
        }
    }
    // A fixed parameter is refused as fixed exactly where a set is legal (an
    // input may be set) but the parameter may no longer change.
    let expected: Vec<_> = ALL
        .into_iter()
        .filter(|st| SetInput.legal().contains(st) && !SetFixedParameter.legal().contains(st))
        .map(|st| (SetFixedParameter, st))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(fixed, expected);
}

#[test]
fn null_arrays_and_unknown_references_are_refused() {
    let fmu = in_state(St::StepComplete);
    let roll = vr("roll").0;
    // SAFETY: NULL arrays with counts: the FMU must check before reading.
    unsafe {
        assert_eq!(
            fmi2_get_real(fmu.c, null(), 0, null_mut()),
            fmi2OK,
            "nothing asked, nothing read"
        );
        assert_eq!(fmi2_set_real(fmu.c, null(), 0, null()), fmi2OK);
        let past_end = fmu.model.variables.len() as u32;
        for (what, status) in [
            ("vr NULL", fmi2_get_real(fmu.c, null(), 3, &mut 0.0)),
            ("value NULL", fmi2_get_real(fmu.c, &roll, 1, null_mut())),
            (
                "string value NULL",
                fmi2_set_string(fmu.c, &vr("message").0, 1, null()),
            ),
            (
                "string element NULL",
                fmi2_set_string(fmu.c, &vr("message").0, 1, &null()),
            ),
            (
                "vr past the last",
                fmi2_get_real(fmu.c, &past_end, 1, &mut 0.0),
            ),
            ("vr u32::MAX", fmi2_set_integer(fmu.c, &u32::MAX, 1, &1)),
            (
                "huge count, NULL",
                fmi2_get_integer(fmu.c, null(), usize::MAX, null_mut()),
            ),
        ] {
            assert_eq!(status, fmi2Error, "{what}");
            assert_eq!(fmi2_reset(fmu.c), fmi2OK);
        }
    }
}

#[test]
fn bad_numbers_strings_and_times_are_refused() {
    let reals = [
        ("roll", f64::NAN),
        ("pitch", f64::INFINITY),
        ("yaw", f64::NEG_INFINITY),
        ("timeout", f64::NAN),
        ("startupTimeout", f64::INFINITY),
    ];
    for (name, value) in reals {
        let fmu = Fmu::new("reals");
        // SAFETY: valid pointers; the value is what is tested.
        let status = unsafe { fmi2_set_real(fmu.c, &vr(name).0, 1, &value) };
        assert_eq!(status, fmi2Error, "{name} = {value}");
        assert!(
            fmu.last_error().contains(&format!("`{name}`")),
            "{}",
            fmu.last_error()
        );
    }
    let long = CString::new("x".repeat(1 << 20)).unwrap();
    let not_utf8: [c_char; 4] = [0xc3_u8 as c_char, 0x28, 0x41, 0];
    for (name, value) in [
        ("message", long.as_ptr()),
        ("message", not_utf8.as_ptr()),
        ("layout", not_utf8.as_ptr()),
    ] {
        let fmu = Fmu::new("strings");
        // SAFETY: valid NUL-terminated strings.
        let status = unsafe { fmi2_set_string(fmu.c, &vr(name).0, 1, &value) };
        assert_eq!(status, fmi2Error, "{name}");
    }
    // An over-long device string is accepted as a value and refused at
    // initialization, naming the parameter.
    let fmu = Fmu::new("device");
    // SAFETY: a valid NUL-terminated string.
    let status = unsafe { fmi2_set_string(fmu.c, &vr("device").0, 1, &long.as_ptr()) };
    assert_eq!(status, fmi2OK);
    assert_eq!(fmu.init(), fmi2Error);
    assert!(fmu.last_error().contains("device"), "{}", fmu.last_error());

    for (t, h, part) in [
        (0.0, 0.0, "must be > 0"),
        (0.0, -1e-3, "must be > 0"),
        (0.0, f64::NAN, "must be > 0"),
        (0.0, f64::INFINITY, "must be > 0"),
        (0.5, 1e-3, "does not continue from 0,"),
        (f64::NAN, 1e-3, "does not continue from 0,"),
        (0.0, 1e300, "passes the stop time"),
    ] {
        let fmu = Fmu::new("times");
        fmu.set_all(&[
            ("device", &format!("loopback:{}", unique("times"))),
            ("peerSlot", "0"),
        ]);
        // SAFETY: a live instance.
        unsafe {
            assert_eq!(fmi2_setup_experiment(fmu.c, 0, 0.0, 0.0, 1, 10.0), fmi2OK);
            assert_eq!(fmi2_enter_initialization_mode(fmu.c), fmi2OK);
            assert_eq!(fmi2_exit_initialization_mode(fmu.c), fmi2OK);
            assert_eq!(fmi2_do_step(fmu.c, t, h, 1), fmi2Error, "t {t} h {h}");
        }
        assert!(
            fmu.last_error().contains(part),
            "t {t} h {h}: {}",
            fmu.last_error()
        );
    }
}

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
    let cb = common::callbacks_with(
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

/// A component shared with other threads, as a master that breaks FMI's rule of
/// one calling thread at a time shares it.
#[derive(Clone, Copy)]
struct Shared(fmi2Component);

// SAFETY: only passed to the FMU's exported functions, which must answer calls
// from any thread (that is what these tests check).
unsafe impl Send for Shared {}

/// The master's state for a logger that, on the first error, has another thread
/// call the same instance while the erroneous call is still running.
struct Racing {
    c: std::sync::Mutex<Shared>,
    /// The other thread was started (on the first message).
    raced: std::sync::atomic::AtomicBool,
    /// The status of the other thread's call, and everything logged, from any
    /// thread.
    answer: std::sync::Mutex<Option<fmi2Status>>,
    seen: std::sync::Mutex<Vec<String>>,
}

unsafe extern "C" fn racing_logger(
    env: *mut std::ffi::c_void,
    _name: fmi2String,
    _status: fmi2Status,
    _category: fmi2String,
    format: fmi2String,
) {
    // SAFETY: `env` is the test's Racing, alive for the whole test; `format` is
    // the FMU's NUL-terminated message.
    let (m, text) = unsafe { (&*(env as *const Racing), common::printed(format)) };
    m.seen.lock().unwrap().push(text);
    if m.raced.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return; // the other thread's message, or a later one
    }
    let c = *m.c.lock().unwrap();
    // The call that logged runs until this returns: the other thread's call
    // meets it.
    let other = std::thread::spawn(move || {
        let c = c;
        let (r, mut x) = (vr("roll").0, 0.0);
        // SAFETY: `c` is a live component.
        unsafe { fmi2_get_real(c.0, &r, 1, &mut x) }
    });
    *m.answer.lock().unwrap() = Some(other.join().unwrap());
}

#[test]
fn a_call_from_another_thread_while_one_runs_is_refused_naming_it() {
    let m = Box::new(Racing {
        c: std::sync::Mutex::new(Shared(null_mut())),
        raced: Default::default(),
        answer: Default::default(),
        seen: Default::default(),
    });
    let cb = common::callbacks_with(racing_logger, &*m as *const Racing as *mut std::ffi::c_void);
    let guid = CString::new(fmu_model::PRESET_GUID).unwrap();
    // SAFETY: valid strings and callbacks; `m` outlives the instance. Logging on,
    // so that initialization logs (and the logger races) without an error.
    let c = unsafe {
        fmi2_instantiate(
            c"racing".as_ptr(),
            fmi2CoSimulation,
            guid.as_ptr(),
            null(),
            &cb,
            0,
            1,
        )
    };
    assert!(!c.is_null());
    *m.c.lock().unwrap() = Shared(c);
    let device = CString::new(format!("loopback:{}", unique("racing"))).unwrap();
    let (dev, peer) = (vr("device").0, vr("peerSlot").0);
    // SAFETY: `c` is live; one value each. While initialization logs, another
    // thread calls the instance.
    unsafe {
        assert_eq!(fmi2_set_string(c, &dev, 1, &device.as_ptr()), fmi2OK);
        assert_eq!(fmi2_set_integer(c, &peer, 1, &0), fmi2OK);
        assert_eq!(fmi2_setup_experiment(c, 0, 0.0, 0.0, 0, 0.0), fmi2OK);
        assert_eq!(fmi2_enter_initialization_mode(c), fmi2OK);
        assert_eq!(fmi2_exit_initialization_mode(c), fmi2OK);
    }
    assert_eq!(*m.answer.lock().unwrap(), Some(fmi2Error));
    let seen = m.seen.lock().unwrap().clone();
    let refused: Vec<_> = seen.iter().filter(|m| m.contains("thread")).collect();
    assert_eq!(refused.len(), 1, "{seen:?}");
    assert!(
        refused[0].starts_with(
            "fmi2GetReal: called while fmi2ExitInitializationMode runs on this instance from \
             another thread; FMI 2.0 lets one thread at a time call an instance: the call is \
             refused, and the instance stays usable"
        ),
        "{seen:?}"
    );
    // Usable afterwards, from this thread or another.
    let (roll, peer_roll) = (vr("roll").0, vr("peer.roll").0);
    let mut x = f64::NAN;
    // SAFETY: `c` is live.
    unsafe {
        assert_eq!(fmi2_set_real(c, &roll, 1, &1.5), fmi2OK);
        assert_eq!(fmi2_do_step(c, 0.0, 1e-3, 1), fmi2OK);
    }
    let shared = Shared(c);
    let from_another = std::thread::spawn(move || {
        let c = shared;
        let mut x = f64::NAN;
        // SAFETY: `c` is live and no other thread calls it now.
        let status = unsafe { fmi2_get_real(c.0, &peer_roll, 1, &mut x) };
        (status, x)
    });
    assert_eq!(from_another.join().unwrap(), (fmi2OK, 1.5));
    // SAFETY: `c` is live.
    unsafe {
        assert_eq!(fmi2_do_step(c, 1e-3, 1e-3, 1), fmi2OK);
        assert_eq!(fmi2_get_real(c, &peer_roll, 1, &mut x), fmi2OK);
    }
    assert_eq!(x, 1.5);
    // SAFETY: `c` is live; freed once.
    unsafe { fmi2_free_instance(c) };
}

#[test]
fn four_threads_racing_on_one_instance_leave_it_usable() {
    let fmu = Fmu::new("racing4");
    fmu.set_all(&[
        ("device", &format!("loopback:{}", unique("racing4"))),
        ("peerSlot", "0"),
    ]);
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    let shared = Shared(fmu.c);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let c = shared;
                let (r, mut x) = (vr("roll").0, 0.0);
                let mut statuses = [0u32; 5];
                for i in 0..20_000 {
                    // SAFETY: `c` is live for the whole test; racing is the point.
                    let status = unsafe {
                        match (i + t) % 3 {
                            0 => fmi2_set_real(c.0, &r, 1, &(i as f64)),
                            1 => fmi2_get_real(c.0, &r, 1, &mut x),
                            _ => fmi2_get_boolean(c.0, &vr("link.ok").0, 1, &mut 0),
                        }
                    };
                    statuses[status as usize] += 1;
                }
                statuses
            })
        })
        .collect();
    let mut refused = 0;
    for thread in threads {
        let statuses = thread.join().unwrap();
        assert_eq!(
            statuses[0] + statuses[3],
            20_000,
            "only OK or Error: {statuses:?}"
        );
        refused += statuses[3];
    }
    let errors: Vec<_> = fmu
        .log()
        .into_iter()
        .filter(|(status, _, _)| *status == fmi2Error)
        .collect();
    let concurrent = "runs on this instance from another thread";
    let other = errors.iter().find(|(_, _, m)| !m.contains(concurrent));
    assert!(other.is_none(), "{other:?}");
    assert_eq!(
        errors.len(),
        refused as usize,
        "one message per refused call"
    );
    // Every later call works: steps, values, terminate.
    fmu.set_all(&[("roll", "0.25")]);
    assert_eq!(fmu.step(0.0, 1e-3), fmi2OK, "{:?}", fmu.log());
    assert_eq!(fmu.step(1e-3, 1e-3), fmi2OK, "{:?}", fmu.log());
    assert_eq!(fmu.real("peer.roll"), 0.25);
}
