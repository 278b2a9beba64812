//! NULL arrays, unknown references, bad numbers, strings and times: each
//! refused with a status and a message.

use super::*;

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
    // An over-long device string is refused at its set call, naming the
    // parameter, and the instance initializes with the device it had.
    let fmu = Fmu::new("device");
    // SAFETY: a valid NUL-terminated string.
    let status = unsafe { fmi2_set_string(fmu.c, &vr("device").0, 1, &long.as_ptr()) };
    assert_eq!(status, fmi2Error);
    assert!(
        fmu.last_error().contains("parameter device"),
        "{}",
        fmu.last_error()
    );

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
