//! The FMI 3.0 face (`build-fmu --fmi 3`) in the Rust `fmi` 0.8 crate's FMI 3.0
//! importer, a master nobody here wrote: an FMI 3.0 node and an FMI 2.0 node
//! (the crate's FMI 2.0 importer, on the FMI 2.0 FMU of the same binary)
//! couple at lag 0 in lockstep, in two threads, every value by the rule.
//! Needs `target/fmu/fmi3/rfm_attitude.fmu` (or RFM_FMU3) and
//! `target/fmu/rfm_attitude.fmu` (or RFM_FMU): scripts/test.sh packs both.

use std::ffi::CString;
use std::path::PathBuf;

use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::{CoSimulation as _, Common as _};
use fmi::fmi3::import::Fmi3Import;
use fmi::fmi3::{CoSimulation as _, Common as _, Fmi3Model as _, GetSet as _};
use fmi::traits::FmiImport;

const STEPS: u32 = 5_000;
const H: f64 = 1e-3;

fn fmu(var: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(default));
    assert!(
        path.is_file(),
        "{} is missing: scripts/test.sh packs it",
        path.display()
    );
    path
}

fn attitude(node: u32, k: u32) -> [f64; 3] {
    let x = f64::from(k);
    [
        x * 1e-3 + f64::from(node),
        -x * 1e-3,
        f64::from(k % 1000) * 0.01,
    ]
}

/// The FMI 3.0 master: slot `me`, every step's peer values checked.
fn fmi3_master(device: &str, me: u32) {
    let import: Fmi3Import =
        fmi::import::from_path(fmu("RFM_FMU3", "../target/fmu/fmi3/rfm_attitude.fmu"))
            .expect("the fmi crate imports the FMI 3.0 .fmu");
    let vr = |name: &str| {
        (import.model_description().model_variables.iter_abstract())
            .find(|v| v.name() == name)
            .unwrap_or_else(|| panic!("the packed XML has no {name}"))
            .value_reference()
    };
    let mut inst = import
        .instantiate_cs(&format!("fmi3-node{me}"), false, true, false, false, &[])
        .expect("instantiate");
    inst.set_string(&[vr("device")], &[CString::new(device).unwrap()])
        .unwrap();
    inst.set_int32(
        &[vr("nodeSlot"), vr("peerSlot"), vr("lag")],
        &[me as i32, 1 - me as i32, 0],
    )
    .unwrap();
    inst.set_string(&[vr("waitStrategy")], &[CString::new("yield").unwrap()])
        .unwrap();
    inst.set_float64(&[vr("startupTimeout"), vr("timeout")], &[30.0, 30.0])
        .unwrap();
    inst.enter_initialization_mode(None, 0.0, None).unwrap();
    inst.exit_initialization_mode().unwrap();
    let inputs = [vr("roll"), vr("pitch"), vr("yaw")];
    let outputs = [vr("peer.roll"), vr("peer.pitch"), vr("peer.yaw")];
    let mut got = [0.0; 3];
    let (mut event, mut terminate, mut early, mut reached) = (true, true, true, 0.0);
    for k in 0..STEPS {
        inst.set_float64(&inputs, &attitude(me, k)).unwrap();
        let t = f64::from(k) * H;
        inst.do_step(
            t,
            H,
            true,
            &mut event,
            &mut terminate,
            &mut early,
            &mut reached,
        )
        .unwrap_or_else(|e| panic!("FMI 3.0 node step {k}: {e:?}"));
        assert_eq!((event, terminate, early), (false, false, false));
        assert!(
            (reached - (t + H)).abs() < 1e-12,
            "step {k} reached {reached}"
        );
        inst.get_float64(&outputs, &mut got).unwrap();
        assert_eq!(got, attitude(1 - me, k), "FMI 3.0 node, step {k}");
    }
    inst.terminate().unwrap();
}

/// The FMI 2.0 master of the same node's FMI 2.0 FMU.
fn fmi2_master(device: &str, me: u32) {
    let import: Fmi2Import =
        fmi::import::from_path(fmu("RFM_FMU", "../target/fmu/rfm_attitude.fmu"))
            .expect("the fmi crate imports the FMI 2.0 .fmu");
    let vr = |name: &str| {
        (import.model_description().model_variables.variables.iter())
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("the packed XML has no {name}"))
            .value_reference
    };
    let mut inst = import
        .instantiate_cs(&format!("fmi2-node{me}"), false, true)
        .expect("instantiate");
    inst.set_string(&[vr("device")], &[CString::new(device).unwrap()])
        .unwrap();
    inst.set_integer(
        &[vr("nodeSlot"), vr("peerSlot"), vr("lag")],
        &[me as i32, 1 - me as i32, 0],
    )
    .unwrap();
    inst.set_string(&[vr("waitStrategy")], &[CString::new("yield").unwrap()])
        .unwrap();
    inst.set_real(&[vr("startupTimeout"), vr("timeout")], &[30.0, 30.0])
        .unwrap();
    inst.setup_experiment(None, 0.0, None).unwrap();
    inst.enter_initialization_mode().unwrap();
    inst.exit_initialization_mode().unwrap();
    let inputs = [vr("roll"), vr("pitch"), vr("yaw")];
    let outputs = [vr("peer.roll"), vr("peer.pitch"), vr("peer.yaw")];
    let mut got = [0.0; 3];
    for k in 0..STEPS {
        inst.set_real(&inputs, &attitude(me, k)).unwrap();
        inst.do_step(f64::from(k) * H, H, true)
            .unwrap_or_else(|e| panic!("FMI 2.0 node step {k}: {e:?}"));
        inst.get_real(&outputs, &mut got).unwrap();
        assert_eq!(got, attitude(1 - me, k), "FMI 2.0 node, step {k}");
    }
    inst.terminate().unwrap();
}

#[test]
fn an_fmi3_node_and_an_fmi2_node_couple_at_lag_zero_in_two_threads() {
    let name = format!("artefact-fmi3-{}", std::process::id());
    let device = format!("shm:{name}");
    let fmi3 = {
        let device = device.clone();
        std::thread::spawn(move || fmi3_master(&device, 0))
    };
    let fmi2 = {
        let device = device.clone();
        std::thread::spawn(move || fmi2_master(&device, 1))
    };
    let results = [fmi3.join(), fmi2.join()];
    let path = CString::new(format!("/{name}")).unwrap();
    // SAFETY: a valid C string; removing our own test object.
    unsafe { libc::shm_unlink(path.as_ptr()) };
    for r in results {
        r.expect("a master thread failed");
    }
}
