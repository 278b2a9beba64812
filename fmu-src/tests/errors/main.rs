//! Every way a master can call the FMU wrongly, or configure it wrongly: the status
//! it gets and the message it is told. Nothing here may crash.

#[path = "../common/mod.rs"]
mod common;

use std::ffi::{c_char, CString};
use std::sync::Arc;

use common::{callbacks, unique, vr, Fmu, Log, ShmGuard};
use fmu_model::fmi2::*;
use rfm_attitude::*;

mod logging;
mod parameters;
mod peers;

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
        assert_logged(&fmu, fmi2Error, &["is `status`, an Integer variable"]);
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
