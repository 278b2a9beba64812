//! Parameters and steps refused: each bad parameter fails initialization naming
//! it, and fmi2DoStep checks its time, step size and stop time.

use super::*;

type Case<'a> = (Vec<(&'a str, String)>, Vec<&'a str>);

/// Each case's parameters, set on an instance of `device` before
/// initialization, make fmi2ExitInitializationMode fail logging every part.
fn refused_at_initialization(device: &str, cases: Vec<Case>) {
    assert!(!cases.is_empty());
    for (params, parts) in cases {
        let fmu = Fmu::new("params");
        assert_eq!(fmu.set("device", device), fmi2OK);
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
}

/// The settings (the parameters an interface file may set): each wrong value
/// is refused at its fmi2Set* call, by the rule a file's line is held to
/// (rfm-interface's `SETTINGS`), naming the parameter and what it accepts;
/// they used to be taken and refused only at fmi2ExitInitializationMode, where
/// the master cannot tell which call gave the wrong value. The same values
/// from a master that sets them right are taken.
#[test]
fn bad_settings_are_refused_at_the_set_call_naming_the_parameter() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "syncMode",
            "sync",
            "parameter syncMode = \"sync\": unknown sync mode `sync`; expected lockstep or free",
        ),
        (
            "waitStrategy",
            "poll",
            "parameter waitStrategy = \"poll\": unknown wait strategy `poll`; expected adaptive, spin, yield, sleep or event",
        ),
        ("lag", "9", "parameter lag = 9: expected 0..7"),
        (
            "timeout",
            "0",
            "parameter timeout = 0: expected 0.1..1e9 seconds",
        ),
        (
            "timeout",
            "0.01",
            "parameter timeout = 0.01: expected 0.1..1e9 seconds",
        ),
        (
            "timeout",
            "0.05",
            "parameter timeout = 0.05: expected 0.1..1e9 seconds",
        ),
        (
            "timeout",
            "2e9",
            "parameter timeout = 2000000000: expected 0.1..1e9 seconds",
        ),
        (
            "startupTimeout",
            "-3",
            "parameter startupTimeout = -3: expected seconds greater than 0, at most 1e9",
        ),
        (
            "idleTimeout",
            "0",
            "parameter idleTimeout = 0: expected seconds greater than 0, at most 1e9",
        ),
        (
            "realTimeFactor",
            "-1",
            "parameter realTimeFactor = -1: expected 0..1e6 times real time (0: as fast as possible, 1: real time)",
        ),
        (
            "layout",
            "json",
            "parameter layout = \"json\": unknown layout `json`; expected framed or seed",
        ),
        ("device", "", "parameter device = \"\": "),
        (
            "device",
            "tcp:host",
            "`tcp:host` is not a form this FMU knows",
        ),
        ("device", "shm:a/b", "'/' is not allowed"),
        // The logger prints the format alone (common::printed): a `%` the user
        // wrote shows as itself, not as a conversion.
        (
            "device",
            "tcp:50%s%n%%",
            "`tcp:50%s%n%%` is not a form this FMU knows",
        ),
        // A typo of the board path: named with the nearest form before any
        // library is looked for (it used to earn advice to build one).
        (
            "device",
            "/dev/rfmg20",
            "device = \"/dev/rfmg20\": device `/dev/rfmg20`: no RFM2g board path (did you mean `/dev/rfm2g0`?)",
        ),
        (
            "regionOffset",
            "-4",
            "parameter regionOffset = -4: expected bytes from 0, a multiple of 4",
        ),
        (
            "regionOffset",
            "3",
            "parameter regionOffset = 3: expected bytes from 0, a multiple of 4",
        ),
    ];
    for (name, value, part) in cases {
        let fmu = Fmu::new("settings");
        assert_eq!(fmu.set(name, value), fmi2Error, "{name} = {value}");
        assert_logged(&fmu, fmi2Error, &[part]);
    }
    let fmu = Fmu::new("settings");
    for (name, value) in [
        ("lag", "7"),
        ("timeout", "0.1"),
        ("realTimeFactor", "1"),
        ("regionOffset", "8"),
        ("syncMode", "free"),
    ] {
        assert_eq!(fmu.set(name, value), fmi2OK, "{name} = {value}");
    }
}

/// Parameters: each wrong one fails fmi2ExitInitializationMode at the latest,
/// naming the parameter and what it accepts.
#[test]
fn bad_parameters_fail_initialization_naming_the_parameter() {
    let dev = format!("loopback:{}", unique("params"));
    let cases: Vec<Case> = vec![
        (
            vec![("nodeSlot", "300".into())],
            vec!["parameter nodeSlot = 300: expected a slot number 0..255"],
        ),
        (
            vec![("peerSlot", "-1".into())],
            vec!["parameter peerSlot = -1"],
        ),
        (
            vec![("regionOffset", "1048000".into())],
            vec![
                "parameter regionOffset = 1048000",
                "does not fit the 1048576-byte memory",
            ],
        ),
        (
            vec![("layout", "seed".into())],
            vec!["parameter layout = \"seed\"", "syncMode = free"],
        ),
        (
            vec![("waitStrategy", "event".into())],
            vec!["parameter waitStrategy = event: RFM2g network interrupts need an RFM2g device"],
        ),
    ];
    refused_at_initialization(&dev, cases);
}

/// The RFM2g cases, through the emulator: a board path of no known form, a
/// board that does not exist, a library that is not an RFM2g library, a
/// memory too small for the slots.
#[test]
fn bad_rfm2g_parameters_fail_initialization_naming_the_parameter() {
    let dev = format!("loopback:{}", unique("params"));
    let lib = common::sim_library();
    let lib = lib.to_str().unwrap();
    let ring = unique("params");
    let _ring = common::RingGuard(ring.clone());
    let board = format!("/dev/rfm2g-sim/{ring}/1/64K");
    let cases: Vec<Case> = vec![
        (
            vec![
                ("device", "/dev/rfm2g0".into()),
                ("rfm2gLibrary", "/nonexistent/librfm2g.so".into()),
            ],
            vec!["/nonexistent/librfm2g.so", "gcc -shared -fPIC"],
        ),
        // A board path the emulator's configuration does not name: no board
        // (it used to open one of a default ring, where nobody else was).
        (
            vec![
                ("device", "/dev/rfm2g7".into()),
                ("rfm2gLibrary", lib.into()),
            ],
            vec![
                "RFM2gOpen on `/dev/rfm2g7` failed with RFM2G_NO_RFM2G_BOARD",
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
                "parameter regionOffset = 0: slots 0..=40 (nodeSlot 40, peerSlot 1) need 166528 bytes",
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
    refused_at_initialization(&dev, cases);
}

/// A fixed parameter cannot change once initialized.
#[test]
fn a_fixed_parameter_is_refused_after_initialization() {
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

/// Every value just outside a rule of the settings' table (each bound, step
/// and word list, read from the table itself: `SettingSpec::refused_near`) is
/// refused where a master gives it, at its fmi2Set* call, naming the
/// parameter, and where an interface file gives it, at its line, by the
/// parser build-fmu checks a file with; fmu-src's `config` unit test holds
/// initialization to the same values. A bound added to the table is tried in
/// all three places without a line of this test changed.
#[test]
fn every_bound_of_the_settings_table_is_refused_at_the_set_call_and_in_files() {
    use rfm_interface::settings::SETTINGS;
    let mut tried = 0;
    for spec in &SETTINGS {
        for bad in spec.refused_near(rfm_frames::area::MAX_LAG) {
            let fmu = Fmu::new("table");
            let written = bad.written();
            assert_eq!(
                fmu.set(spec.key, &written),
                fmi2Error,
                "{} = {written}",
                spec.key
            );
            assert_logged(&fmu, fmi2Error, &[&format!("parameter {} = ", spec.key)]);
            tried += 1;
            if !spec.in_files {
                continue;
            }
            let line = match &bad {
                rfm_frames::fmi::Value::String(s) => format!("{s:?}"),
                rfm_frames::fmi::Value::Real(x) => format!("{x:?}"),
                other => other.written(),
            };
            let file = format!(
                "name = \"lab\"\n{} = {line}\n[[node]]\nname = \"a\"\nslot = 0\n\
                 signals = [{{ name = \"x\", type = \"Real\" }}]\n",
                spec.key
            );
            let none = rfm_interface::Reserved::NONE;
            let err = rfm_interface::Interface::parse("lab.toml", &file, &none)
                .expect_err(&format!("{} = {line} taken from a file", spec.key));
            assert_eq!(err.line, 2, "{err}");
        }
    }
    assert!(tried >= 18, "{tried} values tried");
}
