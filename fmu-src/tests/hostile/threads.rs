//! Calls on one instance from several threads at once: refused naming the call
//! that runs, and the instance usable after.

use super::*;

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
    let cb = callbacks_with(racing_logger, &*m as *const Racing as *mut std::ffi::c_void);
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
