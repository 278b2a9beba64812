//! A redundant device (`A+B`): two rings carry one coupling, every store on
//! both; a peer's frame is taken from whichever ring holds it whole. Ring A cut
//! at step 3,000 and mended at 6,000, ring B cut at 8,000 (here: every node's
//! stores withheld from that ring, as a cut ring carries none): every value of
//! every step exact, the counts exact, no step held up by the cut; both cut:
//! the timeout error within the timeout.
#![cfg(not(miri))]

mod common;

use common::input;
use rfm_interface::settings::LinkSettings;

use std::time::{Duration, Instant};

use rfm_core::link::{AttitudeLink, LinkConfig, LinkError};
use rfm_frames::wait::WaitStrategy;
use rfm_memory::Network;

const STEPS: u64 = 10_000;

fn config(device: &str, node: u8) -> LinkConfig {
    LinkConfig {
        node_slot: node,
        peer_slot: 1 - node,
        settings: LinkSettings {
            device: device.to_owned().parse().expect("a device string"),
            wait: WaitStrategy::Yield,
            timeout: Duration::from_secs(2),
            startup_timeout: Duration::from_secs(10),
            ..Default::default()
        },
        ..LinkConfig::default()
    }
}

/// The rings' faults of the issue, as each node applies them before its step
/// `k`: ring A cut over [3000, 6000), ring B from 8000.
fn faults(link: &AttitudeLink, k: u64) {
    match k {
        3000 => link.withhold(Network::A, true),
        6000 => link.withhold(Network::A, false),
        8000 => link.withhold(Network::B, true),
        _ => {}
    }
}

fn redundant(prefix: &str) -> (String, [common::ShmGuard; 2]) {
    let (a, b) = (common::unique(prefix), common::unique(prefix));
    (
        format!("shm:{a}+shm:{b}"),
        [common::ShmGuard(a), common::ShmGuard(b)],
    )
}

/// Node `me` steps to `STEPS` through the faults; returns its longest wait
/// in steps with a ring cut and in steps without.
fn run(mut link: AttitudeLink, me: u8) -> (AttitudeLink, [Duration; 2]) {
    let mut longest = [Duration::ZERO; 2];
    for k in 0..STEPS {
        faults(&link, k);
        let got = link.step(k, &input(me, k)).unwrap().unwrap();
        assert_eq!(got.sample, input(1 - me, k), "node {me} at step {k}");
        let cut = (3000..6000).contains(&k) || k >= 8000;
        let waited = link.report().waited;
        let i = usize::from(cut);
        longest[i] = longest[i].max(waited);
    }
    (link, longest)
}

#[test]
fn a_cut_ring_costs_no_step_and_no_value() {
    let (device, _names) = redundant("red");
    let mut a = AttitudeLink::open(config(&device, 0)).unwrap();
    let mut b = AttitudeLink::open(config(&device, 1)).unwrap();
    assert!(a.is_redundant() && b.is_redundant());
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let (ta, tb) = (
        std::thread::spawn(move || run(a, 0)),
        std::thread::spawn(move || run(b, 1)),
    );
    for (link, longest) in [ta.join().unwrap(), tb.join().unwrap()] {
        let rings = link.rings();
        // Frames 0 (the start) to 3000 came from A, 3001 to 6000 (steps
        // 3000..6000) from B, then from A again: one failover.
        assert_eq!(rings.frames, [STEPS - 3000, 3000], "{rings:?}");
        assert_eq!(rings.failovers, 1);
        assert_eq!(link.health().lost, 0);
        assert!(
            rings.ok[0],
            "ring A carries the frames at the end: {rings:?}"
        );
        assert!(
            longest[1] <= longest[0] + Duration::from_millis(10),
            "a step with a ring cut waited {:?}, one without at most {:?}",
            longest[1],
            longest[0]
        );
    }
}

/// With both rings cut, a peer's frames reach no ring: the step fails with
/// the timeout error within the timeout, as on one ring.
#[test]
fn both_rings_cut_is_the_timeout_error() {
    let (device, _names) = redundant("cut");
    let mut a = AttitudeLink::open(config(&device, 0)).unwrap();
    let mut b = AttitudeLink::open(config(&device, 1)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let peer = std::thread::spawn(move || {
        for k in 0..100 {
            if k == 50 {
                b.withhold(Network::A, true);
                b.withhold(Network::B, true);
            }
            if b.step(k, &input(1, k)).is_err() {
                break;
            }
        }
        b
    });
    let mut failed = None;
    let began = Instant::now();
    for k in 0..100 {
        match a.step(k, &input(0, k)) {
            Ok(got) => assert_eq!(got.unwrap().sample, input(1, k)),
            Err(e) => {
                failed = Some((k, e, began.elapsed()));
                break;
            }
        }
    }
    let (k, e, took) = failed.expect("the step after both cuts fails");
    assert_eq!(k, 50, "{e} after {took:?}");
    assert!(
        matches!(e, LinkError::PeerDead { .. } | LinkError::Timeout { .. }),
        "{e}"
    );
    assert!(took < Duration::from_secs(5), "{e} after {took:?}");
    // b, whose stores reach no ring, still sees a's beat: a closing ends its
    // wait (a's idle peer would otherwise be waited for idleTimeout).
    drop(a);
    drop(peer.join().unwrap());
}
