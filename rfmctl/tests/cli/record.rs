//! `rfmctl record` following a live node, and `watch` and `record` started
//! before the memory exists.

use super::*;
use rfm_interface::settings::LinkSettings;

/// `rfmctl record` on a live node: it records what it can read and counts the
/// frames its ring reused before it got to them, so that frames and missed add
/// up to every step published.
#[test]
fn record_follows_a_live_node_and_counts_what_it_missed() {
    let shm = shm(1 << 20);
    let region = shm.memory.map(0, 1 << 20).unwrap();
    publish_attitude(&region, 3, 0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("record.rec");
    let child = Command::new(env!("CARGO_BIN_EXE_rfmctl"))
        .args(["record", &shm.device, "--out", out.to_str().unwrap()])
        .args(["--seconds", "1.5", "--slots", "3"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Recording once it says so: step 0, there now, is taken.
    let mut child = Following::new(child);
    child.until("rfmctl: recording into");
    // 200 steps at 1 kHz, which it keeps up with, then 2,000 at once, which a
    // ring of 16 frames cannot hold for it.
    for k in 1..=200 {
        publish_attitude_steps(&region, 3, k..=k);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    publish_attitude_steps(&region, 3, 201..=2200);
    let (status, text, stderr) = child.finish();
    assert!(status.success(), "{text} {stderr}");
    assert!(text.contains("slot   3: "), "{text}");
    let mut reader = rfm_record::Reader::open(&out).unwrap();
    assert_eq!(reader.header().node, None);
    assert_eq!(reader.header().descriptors.len(), 1);
    let (mut steps, mut missed) = (Vec::new(), 0);
    while let Some(r) = reader.next_record().unwrap() {
        match r.missed() {
            Some(n) => missed += n,
            None => {
                let payload = r.body.len() - frame::framed::HEADER_SIZE;
                steps.push(frame::framed::check(&r.body, payload).unwrap().step);
            }
        }
    }
    assert_eq!((steps.first(), steps.last()), (Some(&0), Some(&2200)));
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "in step order");
    assert!(missed > 0, "a burst of 2,000 frames overran the ring");
    assert_eq!(
        steps.len() as u64 + missed,
        2201,
        "every step recorded or counted"
    );
}

/// `watch` and `record` started before the coupling: with --wait they wait
/// for the memory and its node (saying so once), without it they fail at
/// once and say that --wait would wait.
#[test]
fn watch_and_record_wait_for_a_memory_created_later() {
    let name = sim::unique("rfmctl-wait");
    let device = format!("shm:{name}");
    let _guard = ShmGuard(name.clone());
    let (code, _, err) = run(&["watch", &device, "--once"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("does not exist") && err.contains("--wait waits for it"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("late.rec");
    let spawn = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rfmctl"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let watch = spawn(&[
        "watch",
        &device,
        "--wait",
        "20",
        "--once",
        "--json",
        "--interval",
        "0.2",
    ]);
    let record = spawn(&[
        "record",
        &device,
        "--wait",
        "--seconds",
        "0.5",
        "--out",
        rec.to_str().unwrap(),
    ]);
    // Both say once what they wait for: then the memory is made.
    let (mut watch, mut record) = (Following::new(watch), Following::new(record));
    watch.until("rfmctl: waiting (");
    record.until("rfmctl: waiting (");
    // A node that runs: `watch --wait` waits for it to beat.
    let mut node = rfm_core::link::AttitudeLink::open(rfm_core::link::LinkConfig {
        node_slot: 0,
        peer_slot: 0,
        settings: LinkSettings {
            device: device.clone().parse().expect("a device string"),
            ..rfm_core::link::LinkConfig::default().settings
        },
        ..rfm_core::link::LinkConfig::default()
    })
    .unwrap();
    node.start(&rfm_core::link::Sample::default()).unwrap();
    for (what, child) in [("watch", watch), ("record", record)] {
        let (status, stdout, stderr) = child.finish();
        assert!(status.success(), "{what}: {stdout} {stderr}");
        assert!(
            stderr.contains("rfmctl: waiting (")
                && stderr.contains("does not exist")
                && stderr.matches("waiting").count() == 1
                && stderr.contains("there after"),
            "{what}: {stderr}"
        );
    }
    assert!(rec.exists());
    // A memory there but a node that never comes: a bounded wait ends with
    // what was awaited.
    let (code, _, err) = run(&["watch", &device, "--slots", "5", "--wait", "0.3"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("no node describes slot 5 in this memory yet")
            && err.contains("still after --wait 0.3 s"),
        "{err}"
    );
}
