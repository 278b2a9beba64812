//! What the master's logger is told: capabilities the FMU lacks with the reason,
//! debug logging by category with errors always through, and the link's
//! settings as key = value.

use super::*;

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
