//! Sessions dead, silent, stopped, restarted, failed, paused or taken over: what
//! a node takes, how long it waits and what its error says.

use super::*;
use rfm_core::link::liveness::TakenBy;
use rfm_frames::session::Token;
use rfm_interface::settings::LinkSettings;

/// Frames a crashed earlier session left in both slots are never taken for the new
/// session's: the new pair exchanges its own values from the first step.
#[test]
fn frames_left_by_a_dead_session_are_never_taken() {
    let dev = loopback();
    let mut old_a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut old_b = AttitudeLink::open(config(&dev, 1, 0, 1)).unwrap();
    let stale = |k: u64| Sample {
        attitude: [1e6 + k as f64; 3],
        ..Sample::default()
    };
    old_a.start(&stale(0)).unwrap();
    old_b.start(&stale(0)).unwrap();
    for k in 0..5 {
        old_a.step(k, &stale(k)).unwrap();
        old_b.step(k, &stale(k)).unwrap();
    }
    // A crash: no close, the heartbeats stop, the memory keeps every frame. Keep the
    // loopback memory alive while the new nodes open it.
    let keep = AttitudeLink::open(config(&dev, 9, 9, 0)).unwrap();
    old_a.abandon();
    old_b.abandon();

    // Node 1 starts first (taking its slot once the dead holder has been silent for
    // DEAD_AFTER) and sees node 0's stale frames; node 0 starts later.
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 0)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let tb = std::thread::spawn(move || {
        (0..50u64)
            .map(|k| b.step(k, &input(1, k)).unwrap().unwrap().sample)
            .collect::<Vec<_>>()
    });
    std::thread::sleep(Duration::from_millis(50));
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    for k in 0..50u64 {
        assert_eq!(
            a.step(k, &input(0, k)).unwrap().unwrap().sample,
            input(1, k),
            "a at {k}"
        );
    }
    let got_b = tb.join().unwrap();
    assert_eq!(got_b, (0..50).map(|k| input(0, k)).collect::<Vec<_>>());
    drop(keep);
}

#[test]
fn a_slot_another_live_node_writes_is_refused() {
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    let mut twin = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let err = twin.start(&input(0, u64::MAX)).unwrap_err();
    assert!(
        matches!(err, StartError::SlotInUse { slot: 0, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("slot 0 is held by another running node")
            && text.contains("heartbeat last moved")
            && text.contains("own nodeSlot"),
        "{text}"
    );
    // Once the first node closes, the slot is free at once.
    a.close().unwrap();
    twin.start(&input(0, u64::MAX)).unwrap();
}

#[test]
fn a_silent_peer_times_out_with_device_slots_step_and_time() {
    let dev = loopback();
    let mut cfg = config(&dev, 2, 5, 0);
    cfg.settings.startup_timeout = Duration::from_millis(50);
    let mut a = AttitudeLink::open(cfg).unwrap();
    a.start(&input(2, u64::MAX)).unwrap();
    let err = a.step(0, &input(2, 0)).unwrap_err();
    let LinkError::Timeout {
        step: 0, waited, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert!(*waited >= Duration::from_millis(50));
    let text = err.to_string();
    for part in [
        &*dev,
        "step 0",
        "from node `slot5` (slot 5",
        "this node: slot 2",
        "nothing from node `slot5`",
    ] {
        assert!(text.contains(part), "`{text}` lacks `{part}`");
    }
}

#[test]
fn a_stopped_peer_ends_a_lockstep_wait_at_once() {
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 1)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    for k in 0..3 {
        a.step(k, &input(0, k)).unwrap();
        b.step(k, &input(1, k)).unwrap();
    }
    a.step(3, &input(0, 3)).unwrap();
    drop(b); // closes its slot
    let err = a.step(4, &input(0, 4)).unwrap_err();
    assert!(
        matches!(
            err,
            LinkError::PeerStopped {
                peer_slot: 1,
                step: 4,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(
            "node `slot1` (slot 1) of this coupling stopped before step 4: its master terminated it"
        ),
        "{err}"
    );
}

#[test]
fn a_peer_restart_mid_run_is_an_error_in_lockstep() {
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 1)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    for k in 0..3 {
        a.step(k, &input(0, k)).unwrap();
        b.step(k, &input(1, k)).unwrap();
    }
    let old = b.epoch();
    b.abandon(); // crashed: no close, no heartbeat
    let mut b2 = AttitudeLink::open(config(&dev, 1, 0, 1)).unwrap();
    // Its slot is held by a silent session: taken once it has been silent DEAD_AFTER.
    let started = Instant::now();
    b2.start(&input(1, u64::MAX)).unwrap();
    assert!(started.elapsed() >= rfm_core::link::ownership::DEAD_AFTER);
    let err = a.step(3, &input(0, 3)).unwrap_err();
    let LinkError::PeerRestarted {
        old: seen_old, new, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*seen_old, new.clone()),
        (old, format!("{:#018x}", b2.epoch()))
    );
    assert!(err.to_string().contains("restarted"), "{err}");
    assert_eq!(a.health().restarts, 1);
}

/// A node that fails records how before its closed mark, and a peer waiting
/// for it stops at once with that reason, not after a timeout that blames an
/// earlier run: here node 1's master lends its link a frame of the wrong size,
/// and node 0, waiting for node 1's next frame, says how node 1 ended.
#[test]
fn a_peer_that_failed_ends_the_wait_at_once_with_how_it_ended() {
    use rfm_core::link::Link;
    use rfm_frames::frame::framed::FrameBuf;
    let dev = loopback();
    let mut a = Link::open(config(&dev, 0, 1, 0)).unwrap();
    let mut b = Link::open(config(&dev, 1, 0, 0)).unwrap();
    let (mut fa, mut fb) = (
        FrameBuf::new(a.payload_len()),
        FrameBuf::new(b.payload_len()),
    );
    a.start(0.0, &mut fa).unwrap();
    b.start(0.0, &mut fb).unwrap();
    let mut wrong = FrameBuf::new(b.payload_len() + 8);
    let failed = b.step(0, 0.0, &mut wrong).unwrap_err();
    assert!(
        matches!(failed, LinkError::Publish(PublishError::FrameSize { .. })),
        "{failed}"
    );
    b.close().unwrap();
    let started = std::time::Instant::now();
    let err = a.step(0, 0.0, &mut fa).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the wait ended at once, not after its timeout (10 s): {:?}",
        started.elapsed()
    );
    assert!(
        err.to_string()
            .contains("node `slot1` (slot 1) of this coupling stopped before step 0: it failed;"),
        "{err}"
    );
}

/// A node whose slot was taken over while it was silent (paused past DEAD_AFTER,
/// or the rare double win of a claim) stops beating at its next beat and fails its
/// next step naming the slot and the new holder; closing it then writes nothing
/// into the new holder's slot.
#[test]
fn a_node_whose_slot_was_taken_over_fails_its_next_step_and_leaves_the_slot_alone() {
    use rfm_core::link::ownership::block::Words;
    use rfm_frames::area::HEARTBEAT_PERIOD;
    use rfm_frames::area::LIVENESS_OFFSET;
    use std::sync::atomic::Ordering;

    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 0, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    a.step(0, &input(0, 0)).unwrap();
    let memory = rfm_memory::Device::open(&dev, &rfm_memory::OpenOptions::default()).unwrap();
    let slot = common::attitude_area(
        &memory
            .map(0, rfm_interface::attitude_region_len(0))
            .unwrap(),
        0,
    );
    // Another session's token in the owner word, as a taker writes it.
    slot.store_u32(LIVENESS_OFFSET, 0x7777_7777, Ordering::Release)
        .unwrap();
    std::thread::sleep(3 * HEARTBEAT_PERIOD);
    let beat = Words::read(&slot).unwrap().beat;
    std::thread::sleep(3 * HEARTBEAT_PERIOD);
    assert_eq!(
        Words::read(&slot).unwrap().beat,
        beat,
        "it stopped beating into the slot"
    );
    let err = a.step(1, &input(0, 1)).unwrap_err();
    assert!(
        matches!(
            err,
            LinkError::SlotTakenOver {
                slot: 0,
                owner: TakenBy(Some(t)),
                ..
            } if t == Token::of(0x7777_7777)
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("slot 0 was taken over by another node (session token 0x77777777)"),
        "{err}"
    );
    a.close().unwrap();
    assert_eq!(
        Words::read(&slot).unwrap().closed,
        None,
        "no closed mark in another's slot"
    );
}

/// Runs a lockstep pair in which `b` stops stepping for `pause` after step 4
/// (its heartbeat beating the while, as a frozen master's does), with `a`'s
/// step timeout 0.2 s and idle timeout `idle`: `a`'s result of step 5, and how
/// long that step waited.
fn a_pause_of_the_peer(pause: Duration, idle: Duration) -> Result<Duration, LinkError> {
    let dev = loopback();
    let mut a = AttitudeLink::open(LinkConfig {
        settings: LinkSettings {
            timeout: Duration::from_millis(200),
            idle_timeout: idle,
            ..config(&dev, 0, 1, 0).settings
        },
        ..config(&dev, 0, 1, 0)
    })
    .unwrap();
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let other = std::thread::spawn(move || {
        for k in 0..8 {
            if k == 5 {
                std::thread::sleep(pause);
            }
            if b.step(k, &input(1, k)).is_err() {
                break;
            }
        }
        b
    });
    let mut result = Ok(Duration::ZERO);
    for k in 0..8 {
        match a.step(k, &input(0, k)) {
            Ok(got) => {
                assert_eq!(got.unwrap().sample, input(1, k), "step {k}");
                if k == 5 {
                    result = Ok(a.report().waited);
                }
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    a.close().unwrap();
    drop(other.join().unwrap());
    result
}

/// Late is not dead: a peer whose heartbeat beats but whose master froze for
/// 1 s (five times the step timeout) is waited for, and the pair goes on
/// exactly; with idleTimeout shorter than the freeze, the wait ends then, saying
/// the peer's heartbeat beats and naming idleTimeout.
#[test]
fn a_live_peer_that_is_late_is_waited_for_up_to_the_idle_timeout() {
    let waited = a_pause_of_the_peer(Duration::from_secs(1), Duration::from_secs(30)).unwrap();
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
    let err = a_pause_of_the_peer(Duration::from_secs(3), Duration::from_millis(500)).unwrap_err();
    let LinkError::Timeout {
        step: 5, waited, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert!(
        (Duration::from_millis(500)..Duration::from_secs(2)).contains(waited),
        "{waited:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("heartbeat beats") && text.contains("idleTimeout"),
        "{text}"
    );
}
