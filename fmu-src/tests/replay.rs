//! `device = replay:PATH`: a node run alone against a recording, its own or its
//! peer's, gets the recorded frames bit for bit; an input that differs from the
//! recording is counted, and its first step and signal logged; past the end of
//! the recording a step fails saying where it ends; a recording of another
//! interface is refused naming the difference.

mod common;

use std::path::{Path, PathBuf};

use common::{unique, Fmu};
use fmu_model::fmi2::*;
use tempfile::TempDir;

const H: f64 = 1e-3;
const STEPS: usize = 500;
const OUTPUTS: [&str; 4] = ["peer.roll", "peer.pitch", "peer.yaw", "peer.time"];

fn roll(me: usize, k: usize) -> f64 {
    (k as f64 * 0.37 + me as f64).sin()
}

fn node(me: usize, device: &str, record: Option<&Path>) -> Fmu {
    let fmu = Fmu::new(&format!("n{me}"));
    fmu.set_all(&[
        ("device", device),
        ("nodeSlot", &me.to_string()),
        ("peerSlot", &(1 - me).to_string()),
        ("lag", "1"),
    ]);
    if let Some(file) = record {
        fmu.set_all(&[("recordFile", file.to_str().unwrap())]);
    }
    fmu
}

/// One step of node `me` with roll `roll`; returns its outputs' bits.
fn step(fmu: &Fmu, k: usize, roll: f64) -> (fmi2Status, Vec<u64>, i32) {
    fmu.set_all(&[
        ("roll", &format!("{roll:?}")),
        ("pitch", &format!("{:?}", -roll)),
    ]);
    let status = fmu.step(k as f64 * H, H);
    let values = fmu.reals(&OUTPUTS).iter().map(|x| x.to_bits()).collect();
    (status, values, fmu.integer("peer.step"))
}

/// Each step's outputs of one node: the peer's values' bits and its step.
type Outputs = Vec<(Vec<u64>, i32)>;

/// Runs nodes 0 and 1 coupled for STEPS steps, node 0 recording; returns the
/// recording (in a folder removed when the returned guard drops) and each
/// node's outputs after each step.
fn recorded_run() -> (TempDir, PathBuf, [Outputs; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("n0.rec");
    let device = format!("loopback:{}", unique("replay"));
    let nodes = [node(0, &device, Some(&file)), node(1, &device, None)];
    for n in &nodes {
        assert_eq!(n.init(), fmi2OK, "{:?}", n.log());
    }
    let mut outputs = [Vec::new(), Vec::new()];
    for k in 0..STEPS {
        for (me, n) in nodes.iter().enumerate() {
            let (status, values, step) = step(n, k, roll(me, k));
            assert_eq!(status, fmi2OK, "{:?}", n.log());
            outputs[me].push((values, step));
        }
    }
    for n in &nodes {
        assert_eq!(n.terminate(), fmi2OK);
    }
    (dir, file, outputs)
}

fn replaying(me: usize, file: &Path) -> Fmu {
    let fmu = node(me, &format!("replay:{}", file.display()), None);
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    fmu
}

/// Steps `fmu` (node `me`, replaying) through the recorded run with the same
/// inputs: every step succeeds with the outputs and peer step `recorded`, and
/// nothing diverges.
fn steps_as_recorded(fmu: &Fmu, me: usize, recorded: &Outputs) {
    for (k, (values, peer_step)) in recorded.iter().enumerate() {
        let (status, got, got_step) = step(fmu, k, roll(me, k));
        assert_eq!(status, fmi2OK, "step {k}: {:?}", fmu.log());
        assert_eq!((&got, got_step), (values, *peer_step), "step {k}");
    }
    assert_eq!(fmu.integer("replay.divergence"), 0);
}

#[test]
fn a_replayed_peer_gives_the_recorded_outputs_bit_for_bit() {
    let (_dir, file, [recorded, _]) = recorded_run();
    let fmu = replaying(0, &file);
    steps_as_recorded(&fmu, 0, &recorded);
    assert!(fmu.boolean("link.ok"));
    // Past the end: the recording has no more peer frames.
    let (status, _, _) = step(&fmu, STEPS, roll(0, STEPS));
    assert_eq!(status, fmi2Error);
    let err = fmu.last_error();
    assert!(
        err.contains("the recording has no frame 500 of slot 1 (its last is 499)"),
        "{err}"
    );
}

/// Node 1 alone against node 0's recording: node 0's frames are the ones it
/// published, node 1's the ones it took from node 1.
#[test]
fn a_node_replays_against_its_peers_recording_too() {
    let (_dir, file, [_, recorded]) = recorded_run();
    let fmu = replaying(1, &file);
    steps_as_recorded(&fmu, 1, &recorded);
}

#[test]
fn inputs_that_differ_from_the_recording_are_counted_from_their_first_step() {
    let (_dir, file, [recorded, _]) = recorded_run();
    let fmu = replaying(0, &file);
    for (k, (values, _)) in recorded.iter().enumerate() {
        let changed = (100..110).contains(&k);
        let r = if changed { 7.5 } else { roll(0, k) };
        let (status, got, _) = step(&fmu, k, r);
        assert_eq!(status, fmi2OK, "a divergence never fails a step");
        assert_eq!(&got, values, "the peer is replayed as recorded, step {k}");
    }
    assert_eq!(fmu.integer("replay.divergence"), 10);
    let log: Vec<String> = fmu.log().into_iter().map(|(_, _, m)| m).collect();
    let first = format!("was {:?} in the recording, 7.5 now", roll(0, 100));
    assert!(
        log.iter()
            .any(|m| m.contains("first divergence at step 100: `roll` ")
                && m.contains(&first.replace(".0 ", " "))),
        "{log:?}"
    );
}

#[test]
fn a_recording_of_another_interface_is_refused_naming_the_difference() {
    let (_dir, file, _) = recorded_run();
    let device = format!("replay:{}", file.display());
    let other_peer = Fmu::new("n0");
    other_peer.set_all(&[
        ("device", &device),
        ("nodeSlot", "0"),
        ("peerSlot", "2"),
        ("lag", "1"),
    ]);
    assert_eq!(other_peer.init(), fmi2Error);
    assert!(
        other_peer
            .last_error()
            .contains("the recording has no node in slot 2"),
        "{}",
        other_peer.last_error()
    );
}

/// A self-loop (nodeSlot = peerSlot) recorded at each lag replays: at lag 1
/// step 1 used to fail with "the recording has no frame 1 of slot 0 (its last
/// is 2)", the frames it took of itself being recorded out of order.
#[test]
fn a_self_loop_recorded_at_any_lag_replays_exactly() {
    for lag in ["0", "1", "3"] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("self.rec");
        let looped = |device: &str, record: bool| {
            let fmu = Fmu::new("self");
            fmu.set_all(&[
                ("device", device),
                ("nodeSlot", "0"),
                ("peerSlot", "0"),
                ("lag", lag),
            ]);
            if record {
                fmu.set_all(&[("recordFile", file.to_str().unwrap())]);
            }
            assert_eq!(fmu.init(), fmi2OK, "lag {lag}: {:?}", fmu.log());
            fmu
        };
        let run = |fmu: &Fmu| -> Outputs {
            (0..STEPS)
                .map(|k| {
                    let (status, values, step) = step(fmu, k, roll(0, k));
                    assert_eq!(status, fmi2OK, "lag {lag}, step {k}: {:?}", fmu.log());
                    (values, step)
                })
                .collect()
        };
        let original = looped(&format!("loopback:{}", unique("self")), true);
        let recorded = run(&original);
        assert_eq!(original.terminate(), fmi2OK);
        let replayed = looped(&format!("replay:{}", file.display()), false);
        assert_eq!(run(&replayed), recorded, "lag {lag}");
        assert_eq!(replayed.integer("replay.divergence"), 0, "lag {lag}");
        assert_eq!(replayed.terminate(), fmi2OK);
    }
}
