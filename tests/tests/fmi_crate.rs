//! The packaged .fmu in the Rust `fmi` 0.8 importer, a master nobody here wrote:
//! the full lifecycle, lag 0 in lockstep, in two threads and in two processes.
//! Needs `target/fmu/rfm_attitude.fmu` (or RFM_FMU): `cargo run --release -p build-fmu`.

use std::ffi::CString;
use std::path::PathBuf;
use std::process::Command;

use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::{CoSimulation, Common};
use fmi::traits::FmiImport;

const STEPS: u32 = 20_000;
const H: f64 = 1e-3;
const PEER_ENV: &str = "RFM_ARTEFACT_PEER";

fn fmu_path() -> PathBuf {
    let path = std::env::var_os("RFM_FMU")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/fmu/rfm_attitude.fmu")
        });
    assert!(
        path.is_file(),
        "{} is missing: run `cargo run --release -p build-fmu` first",
        path.display()
    );
    path
}

fn vr(import: &Fmi2Import, name: &str) -> u32 {
    import
        .model_description()
        .model_variables
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("the packed XML has no {name}"))
        .value_reference
}

fn attitude(node: u32, k: u32) -> [f64; 3] {
    let x = f64::from(k);
    [
        x * 1e-3 + f64::from(node),
        -x * 1e-3,
        f64::from(k % 1000) * 0.01,
    ]
}

/// One master: imports the .fmu, runs the whole lifecycle, checks every step.
fn master(device: &str, me: u32) {
    let import: Fmi2Import =
        fmi::import::from_path(fmu_path()).expect("the fmi crate imports the .fmu");
    let mut inst = import
        .instantiate_cs(&format!("node{me}"), false, true)
        .expect("instantiate");
    let v = |n| vr(&import, n);
    inst.set_string(&[v("device")], &[CString::new(device).unwrap()])
        .unwrap();
    inst.set_integer(
        &[v("nodeSlot"), v("peerSlot"), v("lag")],
        &[me as i32, 1 - me as i32, 0],
    )
    .unwrap();
    inst.set_string(&[v("waitStrategy")], &[CString::new("yield").unwrap()])
        .unwrap();
    inst.set_real(&[v("startupTimeout"), v("timeout")], &[30.0, 30.0])
        .unwrap();
    inst.setup_experiment(None, 0.0, None).unwrap();
    Common::enter_initialization_mode(&mut inst).unwrap();
    Common::exit_initialization_mode(&mut inst).unwrap();
    let inputs = [v("roll"), v("pitch"), v("yaw")];
    let outputs = [v("peer.roll"), v("peer.pitch"), v("peer.yaw")];
    let mut got = [0.0; 3];
    for k in 0..STEPS {
        inst.set_real(&inputs, &attitude(me, k)).unwrap();
        inst.do_step(f64::from(k) * H, H, true)
            .unwrap_or_else(|e| panic!("node {me} step {k}: {e:?}"));
        inst.get_real(&outputs, &mut got).unwrap();
        assert_eq!(got, attitude(1 - me, k), "node {me} step {k}");
    }
    let mut step = [0];
    inst.get_integer(&[v("peer.step")], &mut step).unwrap();
    assert_eq!(step[0], STEPS as i32 - 1);
    Common::terminate(&mut inst).unwrap();
}

fn shm_device(tag: &str) -> (String, String) {
    let name = format!("artefact-{tag}-{}", std::process::id());
    (format!("shm:{name}"), name)
}

fn unlink(name: &str) {
    let path = CString::new(format!("/{name}")).unwrap();
    // SAFETY: a valid C string; removing our own test object.
    unsafe { libc::shm_unlink(path.as_ptr()) };
}

#[test]
fn the_full_lifecycle_in_two_threads_with_lag_zero() {
    let (device, name) = shm_device("threads");
    let threads: Vec<_> = (0..2)
        .map(|me| {
            let device = device.clone();
            std::thread::spawn(move || master(&device, me))
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join()).collect();
    unlink(&name);
    for r in results {
        r.expect("a master thread failed");
    }
}

#[test]
fn two_processes_with_lag_zero() {
    if let Ok(device) = std::env::var(PEER_ENV) {
        master(&device, 1);
        return;
    }
    let (device, name) = shm_device("procs");
    let mut peer = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "two_processes_with_lag_zero",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PEER_ENV, &device)
        .spawn()
        .unwrap();
    let mine = std::panic::catch_unwind(|| master(&device, 0));
    let status = peer.wait().unwrap();
    unlink(&name);
    mine.expect("this master failed");
    assert!(status.success(), "the peer master failed: {status}");
}
