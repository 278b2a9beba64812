//! The three-rate lab (examples/lab.toml: cockpit at 1 kHz, visual at 60 Hz,
//! ios at 10 Hz) built with `build-fmu --fmi 3`, in the Rust `fmi` crate's
//! FMI 3.0 importer: a thread a node, each stepped by 1 ms for 1 s at lag 0
//! (each node takes its own steps where their times fall), every peer's step
//! and value after every doStep by the rule on time, in exact integers.
//! Needs target/release/build-fmu and target/fmu/rfm_attitude.fmu (or
//! RFM_FMU): scripts/test.sh builds them before its tests.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use fmi::fmi3::import::Fmi3Import;
use fmi::fmi3::{CoSimulation as _, Common as _, Fmi3Model as _, GetSet as _};
use fmi::traits::FmiImport;

/// Time in ticks of 1/3000 s: every period and the step are whole.
const TICKS_PER_S: i64 = 3000;
const H: i64 = 3; // 1 ms
const STEPS: i64 = 1000; // 1 s

/// One node of the lab: its period in ticks, the signal it publishes its
/// next step in (a Float64 for the cockpit), the peers it waits for and
/// those it reads free.
struct Node {
    name: &'static str,
    period: i64,
    signal: &'static str,
    waits: &'static [&'static str],
    free: &'static [&'static str],
}

const NODES: [Node; 3] = [
    Node {
        name: "cockpit",
        period: 3,
        signal: "altitude",
        waits: &["visual", "ios"],
        free: &[],
    },
    Node {
        name: "visual",
        period: 50,
        signal: "frame_count",
        waits: &["cockpit"],
        free: &["ios"],
    },
    Node {
        name: "ios",
        period: 300,
        signal: "reposition",
        waits: &["cockpit", "visual"],
        free: &[],
    },
];

fn node(name: &str) -> &'static Node {
    NODES.iter().find(|n| n.name == name).expect("a lab node")
}

/// The step a node of `period` takes next at tick `t`: the first whose grid
/// time is at or after `t`.
fn next_step(t: i64, period: i64) -> i64 {
    (t + period - 1).div_euclid(period)
}

/// The last step of a node of `period` whose doStep (by `H`) has ended by
/// tick `t_end` (-1: none).
fn last_step(t_end: i64, period: i64) -> i64 {
    let mut k = next_step(t_end, period) - 1;
    while k >= 0 && ((k * period).div_euclid(H) + 1) * H > t_end {
        k -= 1;
    }
    k
}

/// What a node of `period` published at its step `s`: the step the master
/// set before the doStep that took it (0 for its initial frame).
fn published(s: i64, period: i64) -> i64 {
    if s < 0 {
        return 0;
    }
    next_step((s * period).div_euclid(H) * H, period)
}

fn build_lab(out: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let from = std::env::var_os("RFM_FMU")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/fmu/rfm_attitude.fmu"));
    let built = std::process::Command::new(root.join("target/release/build-fmu"))
        .args(["--fmi", "3", "--interface"])
        .arg(root.join("examples/lab.toml"))
        .args(["--node", "all", "--from"])
        .arg(from)
        .arg("--out")
        .arg(out)
        .output()
        .expect("target/release/build-fmu runs (scripts/test.sh builds it)");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
}

/// One node's master: steps it by `H` for 1 s and checks every peer output
/// after every doStep; the values checked.
fn master(fmu: PathBuf, name: &'static str, device: String) -> usize {
    let import: Fmi3Import = fmi::import::from_path(&fmu).expect("the fmi crate imports it");
    let vr = |var: &str| {
        (import.model_description().model_variables.iter_abstract())
            .find(|v| v.name() == var)
            .unwrap_or_else(|| panic!("{} has no {var}", fmu.display()))
            .value_reference()
    };
    let mut inst = import
        .instantiate_cs(name, false, true, false, false, &[])
        .expect("instantiate");
    inst.set_string(&[vr("device")], &[CString::new(device).unwrap()])
        .unwrap();
    inst.enter_initialization_mode(None, 0.0, None).unwrap();
    inst.exit_initialization_mode().unwrap();
    let Node {
        period,
        signal,
        waits,
        free,
        ..
    } = *node(name);
    let (mut event, mut terminate, mut early, mut reached) = (false, false, false, 0.0);
    let mut checked = 0;
    for m in 0..STEPS {
        let t = m * H;
        let nxt = next_step(t, period);
        let set = match name {
            "cockpit" => inst.set_float64(&[vr(signal)], &[nxt as f64]),
            _ => inst.set_int32(&[vr(signal)], &[nxt as i32]),
        };
        set.unwrap();
        let secs = |ticks: i64| ticks as f64 / TICKS_PER_S as f64;
        inst.do_step(
            secs(t),
            secs(H),
            true,
            &mut event,
            &mut terminate,
            &mut early,
            &mut reached,
        )
        .unwrap_or_else(|e| panic!("{name} at base step {m}: {e:?}"));
        assert_eq!((event, terminate, early), (false, false, false));
        let k = last_step(t + H, period);
        for &peer in waits.iter().chain(free) {
            let (peer_period, peer_signal) = (node(peer).period, node(peer).signal);
            let mut step = [0];
            inst.get_int32(&[vr(&format!("{peer}.step"))], &mut step)
                .unwrap();
            let step = i64::from(step[0]);
            let at = format!("{name} after base step {m} (its step {k}), peer {peer}");
            if waits.contains(&peer) {
                assert_eq!(step, (k * period).div_euclid(peer_period), "{at}");
            } else {
                let newest = (k * period).div_euclid(peer_period) + 1;
                assert!((-1..=newest).contains(&step), "{at}: step {step}");
            }
            let value = match peer {
                "cockpit" => {
                    let mut x = [0.0];
                    inst.get_float64(&[vr("cockpit.altitude")], &mut x).unwrap();
                    x[0] as i64
                }
                _ => {
                    let mut x = [0];
                    inst.get_int32(&[vr(&format!("{peer}.{peer_signal}"))], &mut x)
                        .unwrap();
                    i64::from(x[0])
                }
            };
            assert_eq!(value, published(step, peer_period), "{at}: value");
            checked += 1;
        }
    }
    inst.terminate().unwrap();
    checked
}

#[test]
fn the_three_rate_lab_of_fmi3_fmus_runs_in_the_fmi_crates_fmi3_importer_by_the_rule() {
    let dir = std::env::temp_dir().join(format!("fmi3-lab-{}", std::process::id()));
    build_lab(&dir);
    let device = format!("loopback:fmi3-lab-{}", std::process::id());
    let masters: Vec<_> = NODES
        .iter()
        .map(|&Node { name, .. }| {
            let (fmu, device) = (dir.join(format!("lab_{name}.fmu")), device.clone());
            std::thread::spawn(move || master(fmu, name, device))
        })
        .collect();
    let checked: Vec<usize> = masters
        .into_iter()
        .map(|m| m.join().expect("a node's master failed"))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    // Every base step, each of the six peer readings of the lab.
    assert_eq!(checked.iter().sum::<usize>(), 6 * STEPS as usize);
}
