//! What a node publishes of its own timing (its area's statistics block),
//! against delays the test controls: node 1's master takes `SLOW` before each
//! step, so node 0 waits about that long for each of node 1's frames, and
//! node 1 takes each of node 0's frames about that long after node 0 stored
//! it (one host: one clock).

use super::*;
use rfm_core::link::stats::Stats;
use rfm_memory::{Device, OpenOptions};

const SLOW: Duration = Duration::from_millis(3);

/// The statistics block of the attitude preset's slot `slot` on `device`.
fn published(device: &str, slot: u64) -> Option<Stats> {
    let dev = Device::open(device, &OpenOptions::default()).unwrap();
    let area = dev.map(slot * 4096, 4096).unwrap();
    Stats::read(&area).unwrap()
}

#[test]
fn a_slowed_node_shows_in_its_peers_published_wait_and_latency() {
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 0)).unwrap();
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let steps = 400; // 1.2 s of SLOW steps: a window's worth, stored since
    let fast = std::thread::spawn(move || {
        for k in 0..steps {
            a.step(k, &input(0, k)).unwrap();
        }
        a
    });
    for k in 0..steps {
        std::thread::sleep(SLOW);
        b.step(k, &input(1, k)).unwrap();
    }
    let a = fast.join().unwrap();
    // Stored every tenth beat (100 ms): the last store covers the last second.
    std::thread::sleep(Duration::from_millis(250));
    let (sa, sb) = (
        published(&dev, 0).expect("node 0 published"),
        published(&dev, 1).expect("node 1 published"),
    );
    let ms = |ns: i32| f64::from(ns) / 1e6;
    let slow = SLOW.as_secs_f64() * 1e3;
    // Node 0 waits for node 1's every frame; node 1 never waits.
    assert!(sa.samples >= 100, "{sa:?}");
    assert!(
        ms(sa.wait.median) > 0.8 * slow && ms(sa.wait.median) < 5.0 * slow,
        "node 0's wait: {sa:?}"
    );
    assert!(ms(sa.step.median) >= ms(sa.wait.median), "{sa:?}");
    assert!(ms(sb.wait.median) < 0.5 * slow, "node 1's wait: {sb:?}");
    // Node 1 takes node 0's frames SLOW after their store; node 0 takes node
    // 1's as soon as they are stored.
    let of = |s: &Stats, slot: u8| s.peers.iter().find(|p| p.slot == slot).copied();
    let b_of_a = of(&sb, 0).expect("node 1 measured node 0");
    let a_of_b = of(&sa, 1).expect("node 0 measured node 1");
    assert!(
        ms(b_of_a.latency.median) > 0.8 * slow && ms(b_of_a.latency.median) < 5.0 * slow,
        "{b_of_a:?}"
    );
    assert!(ms(a_of_b.latency.median) < 0.5 * slow, "{a_of_b:?}");
    assert!(
        a_of_b.latency.median >= 0,
        "one clock: never negative {a_of_b:?}"
    );
    assert_eq!(sa.steps, steps as u32, "steps counted to the last sampled");
    drop((a, b));
}

/// A slow peer's frame, read again at every step of a fast reader, counts
/// once, at its first take: its latency is the time from its store to that
/// take (under the reader's step, 1 ms), not how long the reader held it
/// (half the writer's 20 ms period on average). Both nodes free: node 1
/// reads node 0's newest frame at each of its steps.
#[test]
fn a_held_frame_counts_once_at_its_first_take() {
    let dev = loopback();
    let (mut a, mut b) = started_free_pair(&dev, Layout::Framed);
    let slow = std::thread::spawn(move || {
        for k in 0..60 {
            std::thread::sleep(Duration::from_millis(20));
            a.step(k, &input(0, k)).unwrap();
        }
        a
    });
    let mut k = 0;
    while !slow.is_finished() {
        std::thread::sleep(Duration::from_millis(1));
        b.step(k, &input(1, k)).unwrap();
        k += 1;
    }
    let a = slow.join().unwrap();
    std::thread::sleep(Duration::from_millis(250));
    let sb = published(&dev, 1).expect("node 1 published");
    let b_of_a = (sb.peers.iter().find(|p| p.slot == 0)).expect("node 1 measured node 0's frames");
    // At most one sample per frame of node 0 (50 a second), not one per step.
    assert!(
        b_of_a.samples > 0 && b_of_a.samples <= 60,
        "{b_of_a:?} of {} steps sampled",
        sb.samples
    );
    assert!(
        b_of_a.latency.median < 5_000_000,
        "a held frame counted again: {b_of_a:?}"
    );
    drop((a, b));
}
