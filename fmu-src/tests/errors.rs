//! Every way a master can call the FMU wrongly, or configure it wrongly: the status
//! it gets and the message it is told. Nothing here may crash.

mod common;

use std::ffi::{c_char, CString};
use std::sync::Arc;

use common::{callbacks, unique, vr, Fmu, Log, ShmGuard};
use fmu_model::fmi2::*;
use rfm_attitude::*;

fn assert_logged(fmu: &Fmu, status: fmi2Status, parts: &[&str]) {
    let log = fmu.log();
    let hit = log
        .iter()
        .any(|(s, _, m)| *s == status && parts.iter().all(|p| m.contains(p)));
    assert!(
        hit,
        "no message with status {status} containing {parts:?} in {log:#?}"
    );
}

fn instantiate(
    name: &str,
    ty: fmi2Type,
    guid: &str,
    resources: Option<&str>,
    log: &Log,
) -> fmi2Component {
    let name = CString::new(name).unwrap();
    let guid = CString::new(guid).unwrap();
    let res = resources.map(|r| CString::new(r).unwrap());
    let cb = callbacks(log);
    // SAFETY: valid C strings or NULL, callbacks alive for the call.
    unsafe {
        fmi2_instantiate(
            name.as_ptr(),
            ty,
            guid.as_ptr(),
            res.as_ref().map_or(std::ptr::null(), |r| r.as_ptr()),
            &cb,
            0,
            0,
        )
    }
}

fn messages(log: &Log) -> String {
    log.lock()
        .unwrap()
        .iter()
        .map(|(_, _, m)| m.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn instantiate_refuses_what_it_cannot_run_and_says_why() {
    let guid = fmu_model::PRESET_GUID;
    for (ty, g, res, part) in [
        (
            fmi2CoSimulation,
            "{00000000-0000-0000-0000-000000000000}",
            None,
            "is not the attitude FMU's, and no fmuResourceLocation was given",
        ),
        (
            fmi2CoSimulation,
            "{00000000-0000-0000-0000-000000000000}",
            Some("file:///nonexistent/resources"),
            "cannot read /nonexistent/resources/interface.toml",
        ),
        (0, guid, None, "supports only fmi2CoSimulation"),
        (
            fmi2CoSimulation,
            guid,
            Some("http://example/r"),
            "is not a file: URI",
        ),
        (
            fmi2CoSimulation,
            guid,
            Some("file:///tmp/a%zzb"),
            "bad percent escape",
        ),
    ] {
        let log: Log = Arc::default();
        let c = instantiate("x", ty, g, res, &log);
        assert!(c.is_null());
        assert!(messages(&log).contains(part), "{part}: {}", messages(&log));
    }
    let log: Log = Arc::default();
    assert!(instantiate("", fmi2CoSimulation, guid, None, &log).is_null());
    assert!(messages(&log).contains("instanceName is NULL, empty"));
    // Accepted resource URIs, percent-decoded.
    assert_eq!(resource_path("file:///a%20b/res").unwrap(), "/a b/res");
    assert_eq!(resource_path("file:/a/res").unwrap(), "/a/res");
    assert_eq!(resource_path("file://localhost/a").unwrap(), "/a");
    // No callbacks, or no logger: NULL, nothing to tell.
    // SAFETY: NULL callbacks are exactly what is being tested.
    let c = unsafe {
        fmi2_instantiate(
            c"x".as_ptr(),
            fmi2CoSimulation,
            c"g".as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            0,
            0,
        )
    };
    assert!(c.is_null());
    let mut cb = callbacks(&log);
    cb.logger = None;
    // SAFETY: a callback struct without logger.
    let c = unsafe {
        fmi2_instantiate(
            c"x".as_ptr(),
            fmi2CoSimulation,
            c"g".as_ptr(),
            std::ptr::null(),
            &cb,
            0,
            0,
        )
    };
    assert!(c.is_null());
}

#[test]
fn null_and_freed_components_get_errors_not_crashes() {
    let null = std::ptr::null_mut();
    // SAFETY: NULL components are exactly what is being tested.
    unsafe {
        assert_eq!(fmi2_do_step(null, 0.0, 1.0, 0), fmi2Error);
        assert_eq!(fmi2_enter_initialization_mode(null), fmi2Error);
        assert_eq!(
            fmi2_get_real(null, std::ptr::null(), 0, std::ptr::null_mut()),
            fmi2Error
        );
        fmi2_free_instance(null);
    }
    let fmu = Fmu::new("freed");
    // SAFETY: freeing twice and calling after free: the tombstone answers.
    unsafe {
        fmi2_free_instance(fmu.c);
        fmi2_free_instance(fmu.c);
        assert_eq!(fmi2_enter_initialization_mode(fmu.c), fmi2Error);
    }
}

#[test]
fn the_state_machine_refuses_illegal_call_sequences() {
    let fmu = Fmu::new("seq");
    assert_eq!(fmu.step(0.0, 0.1), fmi2Error);
    assert_logged(
        &fmu,
        fmi2Error,
        &["fmi2DoStep: illegal call sequence", "Instantiated"],
    );
    // The error moved the instance to Error: only Get*, Terminate, Reset and Free now.
    // SAFETY: a live instance.
    unsafe {
        assert_eq!(fmi2_enter_initialization_mode(fmu.c), fmi2Error);
        assert_eq!(fmi2_reset(fmu.c), fmi2OK);
        assert_eq!(fmi2_exit_initialization_mode(fmu.c), fmi2Error);
        assert_eq!(fmi2_reset(fmu.c), fmi2OK);
        assert_eq!(fmi2_setup_experiment(fmu.c, 0, 0.0, 0.0, 1, 1.0), fmi2OK);
        assert_eq!(
            fmi2_setup_experiment(fmu.c, 0, 0.0, 0.0, 1, 1.0),
            fmi2OK,
            "still Instantiated"
        );
        assert_eq!(fmi2_enter_initialization_mode(fmu.c), fmi2OK);
        assert_eq!(fmi2_setup_experiment(fmu.c, 0, 0.0, 0.0, 1, 1.0), fmi2Error);
    }
    assert_logged(
        &fmu,
        fmi2Error,
        &["fmi2SetupExperiment: illegal call sequence"],
    );
}

#[test]
fn bad_values_and_references_are_refused_by_name() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "peer.roll",
            "1",
            &["`peer.roll` is an output and cannot be set"],
        ),
        ("roll", "NaN", &["`roll` = NaN is not a finite number"]),
        ("yaw", "inf", &["`yaw` = inf is not a finite number"]),
        ("status", "300", &["`status` = 300: expected 0..255"]),
        ("message", &"m".repeat(32), &["`message`", "at most 31"]),
    ];
    for (name, value, parts) in cases {
        let fmu = Fmu::new("vals");
        assert_eq!(fmu.set(name, value), fmi2Error, "{name} = {value}");
        assert_logged(&fmu, fmi2Error, parts);
    }
    let fmu = Fmu::new("refs");
    let (real_vr, _) = vr("roll");
    let (int_vr, _) = vr("status");
    // SAFETY: valid pointers; the references and types are what is being tested.
    unsafe {
        assert_eq!(fmi2_set_real(fmu.c, &999, 1, &1.0), fmi2Error);
        assert_logged(&fmu, fmi2Error, &["unknown value reference 999"]);
        assert_eq!(fmi2_reset(fmu.c), fmi2OK);
        assert_eq!(fmi2_set_real(fmu.c, &int_vr, 1, &1.0), fmi2Error);
        assert_logged(&fmu, fmi2Error, &["is `status`, a Integer variable"]);
        assert_eq!(fmi2_reset(fmu.c), fmi2OK);
        assert_eq!(
            fmi2_set_real(fmu.c, &real_vr, 1, std::ptr::null()),
            fmi2Error
        );
        assert_logged(
            &fmu,
            fmi2Error,
            &["`value` is NULL but 1 values were announced"],
        );
        assert_eq!(fmi2_reset(fmu.c), fmi2OK);
        let bad_utf8: [c_char; 3] = [0xff_u8 as c_char, 0x41, 0];
        let (msg_vr, _) = vr("message");
        assert_eq!(
            fmi2_set_string(fmu.c, &msg_vr, 1, &bad_utf8.as_ptr()),
            fmi2Error
        );
        assert_logged(&fmu, fmi2Error, &["`message` is NULL or not UTF-8"]);
    }
}

/// Parameters: each wrong one fails fmi2ExitInitializationMode at the latest,
/// naming the parameter and what it accepts.
#[test]
fn bad_parameters_fail_initialization_naming_the_parameter() {
    let dev = format!("loopback:{}", unique("params"));
    // For the RFM2g cases, through the emulator: a board that does not exist, a
    // library that is not an RFM2g library, a memory too small for the slots.
    let lib = common::sim_library();
    let lib = lib.to_str().unwrap();
    let ring = unique("params");
    let _ring = common::RingGuard(ring.clone());
    let board = format!("/dev/rfm2g-sim/{ring}/1/64K");
    type Case<'a> = (Vec<(&'a str, String)>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            vec![("syncMode", "sync".into())],
            vec!["parameter syncMode = \"sync\": expected lockstep or free"],
        ),
        (
            vec![("layout", "json".into())],
            vec!["parameter layout = \"json\": expected framed or seed"],
        ),
        (
            vec![("waitStrategy", "poll".into())],
            vec!["parameter waitStrategy = \"poll\": expected adaptive, spin, yield, sleep or event"],
        ),
        (
            vec![("lag", "9".into())],
            vec!["parameter lag = 9: expected 0..7"],
        ),
        (
            vec![("nodeSlot", "300".into())],
            vec!["parameter nodeSlot = 300: expected a slot number 0..255"],
        ),
        (
            vec![("peerSlot", "-1".into())],
            vec!["parameter peerSlot = -1"],
        ),
        (
            vec![("timeout", "0".into())],
            vec!["parameter timeout = 0: expected seconds of at least 0.1 and at most 1e9"],
        ),
        (
            vec![("timeout", "0.05".into())],
            vec!["parameter timeout = 0.05: expected seconds of at least 0.1 and at most 1e9"],
        ),
        (
            vec![("timeout", "2e9".into())],
            vec!["parameter timeout = 2000000000: expected seconds of at least 0.1 and at most 1e9"],
        ),
        (
            vec![("startupTimeout", "-3".into())],
            vec!["parameter startupTimeout = -3"],
        ),
        (
            vec![("idleTimeout", "0".into())],
            vec!["parameter idleTimeout = 0: expected seconds greater than 0"],
        ),
        (
            vec![("realTimeFactor", "-1".into())],
            vec!["parameter realTimeFactor = -1: expected 0 (as fast as possible), 1 (real time)"],
        ),
        (
            vec![("regionOffset", "-4".into())],
            vec!["parameter regionOffset = -4: expected bytes"],
        ),
        (
            vec![("regionOffset", "6".into())],
            vec!["parameter regionOffset = 6: must be a multiple of 4"],
        ),
        (
            vec![("regionOffset", "1048000".into())],
            vec![
                "parameter regionOffset = 1048000",
                "does not fit the 1048576-byte memory",
            ],
        ),
        (
            vec![("device", "".into())],
            vec!["parameter device", "shm:NAME"],
        ),
        (
            vec![("device", "tcp:host".into())],
            vec!["`tcp:host` is not a form this FMU knows"],
        ),
        (
            vec![("device", "shm:a/b".into())],
            vec!["device `shm:a/b`", "'/' is not allowed"],
        ),
        // The logger prints the format alone (common::printed): a `%` the user
        // wrote shows as itself, not as a conversion.
        (
            vec![("device", "tcp:50%s%n%%".into())],
            vec!["`tcp:50%s%n%%` is not a form this FMU knows"],
        ),
        (
            vec![("layout", "seed".into())],
            vec!["parameter layout = seed", "syncMode = free"],
        ),
        (
            vec![("waitStrategy", "event".into())],
            vec!["parameter waitStrategy = event: RFM2g network interrupts need an RFM2g device"],
        ),
        (
            vec![
                ("device", "/dev/rfm2g0".into()),
                ("rfm2gLibrary", "/nonexistent/librfm2g.so".into()),
            ],
            vec!["/nonexistent/librfm2g.so", "gcc -shared -fPIC"],
        ),
        (
            vec![
                ("device", "/dev/nosuchboard".into()),
                ("rfm2gLibrary", lib.into()),
            ],
            vec![
                "RFM2gOpen on `/dev/nosuchboard` failed with RFM2G_NO_RFM2G_BOARD",
                "check the device path",
            ],
        ),
        (
            vec![
                ("device", board.clone()),
                ("rfm2gLibrary", "libc.so.6".into()),
            ],
            vec!["`libc.so.6` has no symbol `RFM2gOpen`", "rfm2gLibrary"],
        ),
        (
            vec![
                ("device", board.clone()),
                ("rfm2gLibrary", lib.into()),
                ("nodeSlot", "40".into()),
            ],
            vec![
                "parameter regionOffset = 0: slots 0..=40 (nodeSlot 40, peerSlot 1) need 166272 bytes",
                "does not fit the 65536-byte memory",
                "lower regionOffset or the slot numbers",
            ],
        ),
        (
            vec![
                ("device", board.clone()),
                ("rfm2gLibrary", lib.into()),
                ("regionOffset", "65536".into()),
            ],
            vec!["parameter regionOffset = 65536", "does not fit the 65536-byte memory"],
        ),
    ];
    for (params, parts) in cases {
        let fmu = Fmu::new("params");
        assert_eq!(fmu.set("device", &dev), fmi2OK);
        for (name, value) in &params {
            assert_eq!(
                fmu.set(name, value),
                fmi2OK,
                "{name} = {value} is refused only at initialization"
            );
        }
        assert_eq!(fmu.init(), fmi2Error, "{params:?}");
        let mut all = vec!["fmi2ExitInitializationMode"];
        all.extend(parts);
        assert_logged(&fmu, fmi2Error, &all);
    }
    // A fixed parameter cannot change once initialized.
    let fmu = Fmu::new("fixed");
    fmu.set_all(&[
        ("device", &format!("loopback:{}", unique("fixed"))),
        ("peerSlot", "0"),
    ]);
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    assert_eq!(fmu.set("lag", "1"), fmi2Error);
    assert_logged(
        &fmu,
        fmi2Error,
        &["`lag` is a fixed parameter: set it before fmi2ExitInitializationMode"],
    );
}

#[test]
fn do_step_checks_time_step_size_and_stop_time() {
    let fresh = || {
        let fmu = Fmu::new("time");
        fmu.set_all(&[
            ("device", &format!("loopback:{}", unique("time"))),
            ("peerSlot", "0"),
        ]);
        fmu
    };
    let fmu = fresh();
    assert_eq!(fmu.init(), fmi2OK);
    assert_eq!(fmu.step(0.5, 0.1), fmi2Error);
    assert_logged(
        &fmu,
        fmi2Error,
        &["currentCommunicationPoint 0.5 does not continue from 0,"],
    );
    for h in [0.0, -0.1, f64::NAN] {
        let fmu = fresh();
        assert_eq!(fmu.init(), fmi2OK);
        assert_eq!(fmu.step(0.0, h), fmi2Error);
        assert_logged(&fmu, fmi2Error, &["communicationStepSize", "must be > 0"]);
    }
    let fmu = fresh();
    // SAFETY: a live instance.
    unsafe {
        assert_eq!(fmi2_setup_experiment(fmu.c, 0, 0.0, 0.0, 1, 0.25), fmi2OK);
        assert_eq!(fmi2_enter_initialization_mode(fmu.c), fmi2OK);
        assert_eq!(fmi2_exit_initialization_mode(fmu.c), fmi2OK);
    }
    assert_eq!(fmu.step(0.0, 0.2), fmi2OK);
    assert_eq!(fmu.step(0.2, 0.1), fmi2Error);
    assert_logged(&fmu, fmi2Error, &["passes the stop time 0.25"]);
}

#[test]
fn a_silent_peer_fails_the_step_naming_device_slots_step_and_time() {
    let dev = format!("loopback:{}", unique("silent"));
    let fmu = Fmu::new("alone");
    fmu.set_all(&[
        ("device", &dev),
        ("nodeSlot", "2"),
        ("peerSlot", "7"),
        ("startupTimeout", "0.05"),
    ]);
    assert_eq!(fmu.init(), fmi2OK);
    assert_eq!(fmu.step(0.0, 0.1), fmi2Error);
    assert_logged(
        &fmu,
        fmi2Error,
        &[
            "fmi2DoStep (step 0, t = 0)",
            &dev,
            "from node `slot7` (slot 7",
            "this node: slot 2",
            "within",
        ],
    );
    // After the error: outputs can still be read, stepping cannot.
    assert!(!fmu.boolean("link.ok"));
    assert_eq!(fmu.step(0.0, 0.1), fmi2Error);
    assert_logged(
        &fmu,
        fmi2Error,
        &["fmi2DoStep: illegal call sequence", "Error"],
    );
}

#[test]
fn unsupported_capabilities_answer_with_the_reason() {
    let fmu = Fmu::new("caps");
    let mut state: fmi2FMUstate = std::ptr::null_mut();
    // SAFETY: valid pointers for every call.
    unsafe {
        assert_eq!(fmi2_get_fmu_state(fmu.c, &mut state), fmi2Error);
        assert_logged(
            &fmu,
            fmi2Error,
            &["fmi2GetFMUstate: not supported", "canGetAndSetFMUstate"],
        );
        fmi2_reset(fmu.c);
        assert_eq!(
            fmi2_get_directional_derivative(
                fmu.c,
                std::ptr::null(),
                0,
                std::ptr::null(),
                0,
                std::ptr::null(),
                std::ptr::null_mut()
            ),
            fmi2Error
        );
        assert_logged(&fmu, fmi2Error, &["providesDirectionalDerivative"]);
        fmi2_reset(fmu.c);
        assert_eq!(fmi2_cancel_step(fmu.c), fmi2Error);
        assert_logged(&fmu, fmi2Error, &["never returns fmi2Pending"]);
    }
    let fmu = Fmu::new("status");
    fmu.set_all(&[
        ("device", &format!("loopback:{}", unique("status"))),
        ("peerSlot", "0"),
    ]);
    assert_eq!(fmu.init(), fmi2OK);
    assert_eq!(fmu.step(0.0, 0.5), fmi2OK);
    let (mut t, mut terminated, mut s) = (0.0, 1, 0);
    // SAFETY: valid out pointers.
    unsafe {
        assert_eq!(
            fmi2_get_real_status(fmu.c, fmi2LastSuccessfulTime, &mut t),
            fmi2OK
        );
        assert_eq!(
            fmi2_get_boolean_status(fmu.c, fmi2Terminated, &mut terminated),
            fmi2OK
        );
        assert_eq!(fmi2_get_status(fmu.c, 0, &mut s), fmi2Discard);
    }
    assert_eq!((t, terminated), (0.5, 0));
    assert_logged(&fmu, fmi2Discard, &["never returns fmi2Pending"]);
    assert_eq!(fmu.step(0.5, 0.5), fmi2OK, "a Discard does not end the run");
}

#[test]
fn debug_logging_is_by_category_and_errors_always_reach_the_master() {
    let fmu = Fmu::new("logging");
    // SAFETY: valid category strings.
    unsafe {
        let bad = [c"logNope".as_ptr()];
        assert_eq!(fmi2_set_debug_logging(fmu.c, 1, 1, bad.as_ptr()), fmi2Error);
        assert_logged(
            &fmu,
            fmi2Error,
            &["unknown log category `logNope`", "logEvents"],
        );
        fmi2_reset(fmu.c);
        let events = [c"logEvents".as_ptr()];
        assert_eq!(fmi2_set_debug_logging(fmu.c, 1, 1, events.as_ptr()), fmi2OK);
    }
    fmu.set_all(&[
        ("device", &format!("loopback:{}", unique("log"))),
        ("peerSlot", "0"),
    ]);
    assert_eq!(fmu.init(), fmi2OK);
    // The `log` crate's info! from the FMU reached this instance's logger, as logEvents.
    assert!(
        fmu.log().iter().any(|(s, c, m)| *s == fmi2OK
            && c == "logEvents"
            && m.contains("published its initial frame")),
        "{:?}",
        fmu.log()
    );
    assert!(
        !fmu.log().iter().any(|(_, c, _)| c == "logDebug"),
        "logDebug was not enabled"
    );
}

/// With logDebug on, the master's log shows the link's settings as the
/// parameters a user set (`key = value`), not a Rust struct.
#[test]
fn the_debug_log_shows_the_links_settings_as_key_value() {
    let fmu = Fmu::new("settings");
    // SAFETY: a valid category string.
    unsafe {
        let debug = [c"logDebug".as_ptr()];
        assert_eq!(fmi2_set_debug_logging(fmu.c, 1, 1, debug.as_ptr()), fmi2OK);
    }
    let dev = format!("loopback:{}", unique("settings"));
    fmu.set_all(&[
        ("device", &dev),
        ("peerSlot", "0"),
        ("waitStrategy", "sleep"),
    ]);
    assert_eq!(fmu.init(), fmi2OK);
    let log = fmu.log();
    let line = log
        .iter()
        .find(|(_, c, m)| c == "logDebug" && m.contains("opening the link"))
        .map(|(_, _, m)| m.clone())
        .unwrap_or_else(|| panic!("no settings line: {log:?}"));
    assert!(
        !line.contains("LinkConfig") && !line.contains('{'),
        "{line}"
    );
    for part in [
        "interface = attitude preset, nodeSlot = 0, peerSlot = 0",
        &format!("device = {dev}"),
        "regionOffset = 0x0",
        "syncMode = lockstep",
        "lag = 0",
        "waitStrategy = sleep",
        "layout = framed",
        "timeout = ",
        "idleTimeout = 300 s",
        "rfm2gReadThreshold = 64",
    ] {
        assert!(line.contains(part), "`{part}` not in: {line}");
    }
}

#[test]
fn a_slot_another_live_instance_writes_is_refused_at_initialization() {
    // The first instance steps, then its master idles far longer than any frame
    // age once mattered (2.5 s): its heartbeat still holds the slot, in both modes.
    for mode in ["lockstep", "free"] {
        let dev = format!("loopback:{}", unique("twin"));
        let params = [
            ("device", dev.as_str()),
            ("nodeSlot", "3"),
            ("peerSlot", "3"),
            ("syncMode", mode),
        ];
        let first = Fmu::new("first");
        first.set_all(&params);
        assert_eq!(first.init(), fmi2OK);
        assert_eq!(first.step(0.0, 1e-3), fmi2OK, "{:?}", first.log());
        std::thread::sleep(std::time::Duration::from_millis(2500));
        let twin = Fmu::new("twin");
        twin.set_all(&params);
        assert_eq!(twin.init(), fmi2Error, "{mode}");
        assert_logged(
            &twin,
            fmi2Error,
            &[
                &format!("{dev}: slot 3 is held by another running node"),
                "its heartbeat last moved",
                "ms ago",
                "own nodeSlot",
            ],
        );
        // The first one is untouched: it still steps, and echoes its own inputs.
        first.set("roll", "0.5");
        assert_eq!(first.step(1e-3, 1e-3), fmi2OK, "{mode}: {:?}", first.log());
        assert_eq!(first.real("peer.roll"), 0.5);
    }
}

#[test]
fn of_two_instances_claiming_one_slot_at_the_same_moment_exactly_one_wins() {
    // loopback: claims serialized by a process lock; shm: Fischer's protocol over
    // the owner word, as between two PCs.
    for round in 0..10 {
        let name = unique("race");
        let _guard = ShmGuard(name.clone());
        let dev = if round % 2 == 0 {
            format!("loopback:{name}")
        } else {
            format!("shm:{name}")
        };
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let claim = |name: &'static str| {
            let (dev, barrier) = (dev.clone(), barrier.clone());
            std::thread::spawn(move || {
                let fmu = Fmu::new(name);
                fmu.set_all(&[("device", &dev), ("nodeSlot", "7"), ("peerSlot", "7")]);
                barrier.wait();
                let status = fmu.init();
                // Both hold on until both have an answer: a winner that freed at
                // once would leave a free slot to a later claimant.
                barrier.wait();
                (status, fmu.log())
            })
        };
        let (a, b) = (claim("a"), claim("b"));
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        let won = [a.0, b.0].iter().filter(|s| **s == fmi2OK).count();
        assert_eq!(won, 1, "round {round}: {:?} {:?}", a.1, b.1);
        let loser = if a.0 == fmi2OK { &b } else { &a };
        let text = format!("{:?}", loser.1);
        assert!(
            text.contains("slot 7 was claimed at the same moment by another node")
                || text.contains("slot 7 is held by another running node"),
            "round {round}: {text}"
        );
    }
}
