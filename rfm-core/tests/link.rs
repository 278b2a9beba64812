//! The link's contract: exact lockstep exchange (lag 0 and 1), free mode, the seed
//! layout, the startup handshake over stale memory, and every failure it reports.
#![cfg(not(miri))]

mod common;

use common::input;

use std::time::{Duration, Instant};

use rfm_core::frame::framed::FrameBuf;
use rfm_core::frame::framed::SyncMode;
use rfm_core::link::{AttitudeLink, Layout, LinkConfig, LinkError, Sample};
use rfm_core::wait::WaitStrategy;

fn config(device: &str, node: u8, peer: u8, lag: u8) -> LinkConfig {
    LinkConfig {
        device: device.to_owned(),
        node_slot: node,
        peer_slot: peer,
        lag,
        wait: WaitStrategy::Yield,
        timeout: Duration::from_secs(10),
        startup_timeout: Duration::from_secs(10),
        ..LinkConfig::default()
    }
}

fn loopback() -> String {
    format!("loopback:{}", common::unique("link"))
}

#[test]
fn lag_one_in_one_thread_exchanges_exactly() {
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 1)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    for k in 0..10_000u64 {
        let got_a = a.step(k, &input(0, k)).unwrap().unwrap();
        let got_b = b.step(k, &input(1, k)).unwrap().unwrap();
        let expect = |node| {
            if k == 0 {
                input(node, u64::MAX)
            } else {
                input(node, k - 1)
            }
        };
        assert_eq!(got_a.sample, expect(1), "a at step {k}");
        assert_eq!(got_b.sample, expect(0), "b at step {k}");
    }
    assert_eq!(
        (a.health().lost, a.health().restarts, a.health().bad_frames),
        (0, 0, 0)
    );
}

#[test]
fn lag_zero_in_two_threads_exchanges_exactly() {
    let dev = loopback();
    exchange_in_two_threads(config(&dev, 0, 1, 0), config(&dev, 1, 0, 0), 5_000);
}

/// Nodes 0 and 1 start, then step concurrently in two threads, each checking that
/// every frame it takes is exactly the other's input of the same step.
fn exchange_in_two_threads(a: LinkConfig, b: LinkConfig, steps: u64) -> [AttitudeLink; 2] {
    let mut a = AttitudeLink::open(a).unwrap();
    let mut b = AttitudeLink::open(b).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    exchange_started(a, b, steps)
}

/// As [`exchange_in_two_threads`], for two started links of slots 0 and 1 (or of
/// any two slots whose nodes feed `input(0, k)` and `input(1, k)`).
fn exchange_started(a: AttitudeLink, b: AttitudeLink, steps: u64) -> [AttitudeLink; 2] {
    let run = |mut link: AttitudeLink, me: u8| {
        std::thread::spawn(move || {
            for k in 0..steps {
                let got = link.step(k, &input(me, k)).unwrap().unwrap();
                assert_eq!(got.sample, input(1 - me, k), "node {me} at step {k}");
            }
            link
        })
    };
    let (ta, tb) = (run(a, 0), run(b, 1));
    [ta.join().unwrap(), tb.join().unwrap()]
}

#[test]
fn a_self_loop_echoes_its_own_inputs() {
    let dev = loopback();
    let mut link = AttitudeLink::open(config(&dev, 3, 3, 0)).unwrap();
    link.start(&input(3, u64::MAX)).unwrap();
    for k in 0..100 {
        assert_eq!(
            link.step(k, &input(3, k)).unwrap().unwrap().sample,
            input(3, k)
        );
    }
}

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
        matches!(err, LinkError::SlotInUse { slot: 0, .. }),
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

/// The lag belongs to the reader: a node at lag 2 and its peer at lag 0 couple,
/// each taking exactly the frame its own lag names; and a free node's frames
/// are taken by a free reader, which a lockstep peer does not refuse.
#[test]
fn peers_of_different_lags_and_a_free_reader_of_a_lockstep_node_couple_exactly() {
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 2)).unwrap();
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    for k in 0..1_000u64 {
        // a (lag 2) takes b's inputs of step k - 2; b (lag 0) a's of step k.
        let got_a = a.step(k, &input(0, k)).unwrap().unwrap();
        let want = k.checked_sub(2).map_or(input(1, u64::MAX), |j| input(1, j));
        assert_eq!(got_a.sample, want, "a, step {k}");
        let got_b = b.step(k, &input(1, k)).unwrap().unwrap();
        assert_eq!(got_b.sample, input(0, k), "b, step {k}");
    }
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        ..config(&dev, 1, 0, 0)
    })
    .unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    // b never waits: a's frames are whole and of the step they name.
    let mut seen = 0;
    for k in 0..200u64 {
        if let Some(got) = b.step(k, &input(1, k)).unwrap() {
            let j = got.index.checked_sub(1).map_or(u64::MAX, |j| j);
            assert_eq!(got.sample, input(0, j), "b, step {k}");
            seen += 1;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    assert!(seen > 0);
    drop(a);
}

#[test]
fn a_silent_peer_times_out_with_device_slots_step_and_time() {
    let dev = loopback();
    let mut cfg = config(&dev, 2, 5, 0);
    cfg.startup_timeout = Duration::from_millis(50);
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
    assert!(started.elapsed() >= rfm_core::link::liveness::DEAD_AFTER);
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
    use rfm_core::frame::framed::FrameBuf;
    use rfm_core::link::Link;
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
    assert!(matches!(failed, LinkError::Config { .. }), "{failed}");
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

#[test]
fn incompatible_peers_are_refused_at_first_contact() {
    // A lockstep node refuses a free-running peer it waits for: its frames
    // would be overwritten before they are taken.
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        ..config(&dev, 1, 0, 1)
    })
    .unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let err = a.step(0, &input(0, 0)).unwrap_err();
    assert!(matches!(err, LinkError::Incompatible { .. }), "{err:?}");
    let part = "node `slot1` runs syncMode = free, and this node waits for it in lockstep: run \
                `slot1` with syncMode = lockstep, or list it in this node's `free`";
    assert!(err.to_string().contains(part), "{err}");
    // A peer writing the article's layout where ours is expected.
    let dev = loopback();
    let mut a = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        ..config(&dev, 0, 1, 0)
    })
    .unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        layout: Layout::Seed,
        ..config(&dev, 1, 0, 0)
    })
    .unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let err = a.step(0, &input(0, 0)).unwrap_err();
    assert!(err.to_string().contains("uses layout seed"), "{err}");
    // b started after a: a's layout counts once b has seen it beat (what
    // a run that is over left in an area is never judged), within a beat.
    let started = std::time::Instant::now();
    let err = (0..)
        .find_map(|k| {
            std::thread::sleep(Duration::from_millis(1));
            assert!(started.elapsed() < Duration::from_secs(1), "no error");
            b.step(k, &input(1, k)).err()
        })
        .unwrap();
    assert!(
        err.to_string()
            .contains("uses layout framed, this node layout seed"),
        "{err}"
    );
    // And a lockstep node meets the seed writer while it waits for its first frame.
    let dev = loopback();
    let mut a = AttitudeLink::open(LinkConfig {
        startup_timeout: Duration::from_secs(60),
        ..config(&dev, 0, 1, 0)
    })
    .unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        layout: Layout::Seed,
        ..config(&dev, 1, 0, 0)
    })
    .unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    let err = a.step(0, &input(0, 0)).unwrap_err();
    assert!(err.to_string().contains("uses layout seed"), "{err}");
}

#[test]
fn free_mode_takes_the_newest_frame_and_never_waits() {
    let dev = loopback();
    let free = |node, peer| LinkConfig {
        mode: SyncMode::Free,
        ..config(&dev, node, peer, 0)
    };
    let mut a = AttitudeLink::open(free(0, 1)).unwrap();
    let mut b = AttitudeLink::open(free(1, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    assert_eq!(
        a.step(0, &input(0, 0)).unwrap(),
        None,
        "no peer yet: nothing, at once"
    );
    b.start(&input(1, u64::MAX)).unwrap();
    for k in 0..5 {
        b.step(k, &input(1, k)).unwrap();
    }
    // b's frames are taken once its heartbeat has been seen to move.
    let mut k = 1;
    let got = loop {
        if let Some(got) = a.step(k, &input(0, k)).unwrap() {
            break got;
        }
        assert!(k < 1000, "b's heartbeat was never seen");
        k += 1;
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(a.peer_alive());
    assert_eq!((got.sample, got.index), (input(1, 4), 5));
    // Nothing new: the same frame, and it ages.
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(a.step(k + 1, &input(0, k + 1)).unwrap().unwrap().index, 5);
    assert!(a.health().age(std::time::Instant::now()).unwrap() >= Duration::from_millis(20));
    b.step(5, &input(1, 5)).unwrap();
    b.step(6, &input(1, 6)).unwrap();
    assert_eq!(a.step(k + 2, &input(0, k + 2)).unwrap().unwrap().index, 7);
    assert_eq!(a.health().lost, 1, "index 6 was never seen");
    assert_eq!(a.report().waited, Duration::ZERO);
}

#[test]
fn the_seed_layout_interoperates_in_free_mode() {
    let dev = loopback();
    let seed = |node, peer| LinkConfig {
        mode: SyncMode::Free,
        layout: Layout::Seed,
        ..config(&dev, node, peer, 0)
    };
    let mut a = AttitudeLink::open(seed(0, 1)).unwrap();
    let mut b = AttitudeLink::open(seed(1, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    b.step(0, &input(1, 0)).unwrap();
    let got = a.step(0, &input(0, 0)).unwrap().unwrap();
    // float on the wire: attitude rounded to f32.
    let sent = input(1, 0);
    assert_eq!(
        got.sample.attitude,
        sent.attitude.map(|x| f64::from(x as f32))
    );
    assert_eq!(
        (got.sample.status, got.sample.message, got.index),
        (sent.status, sent.message, 1)
    );
}

#[test]
fn configurations_that_cannot_work_name_the_parameter() {
    let dev = loopback();
    let cases: Vec<(LinkConfig, &str)> = vec![
        (
            LinkConfig {
                lag: 8,
                ..config(&dev, 0, 1, 0)
            },
            "parameter lag = 8: at most 7",
        ),
        (
            LinkConfig {
                region_offset: 6,
                ..config(&dev, 0, 1, 0)
            },
            "parameter regionOffset = 6: must be a multiple of 4",
        ),
        (
            LinkConfig {
                layout: Layout::Seed,
                ..config(&dev, 0, 1, 0)
            },
            "parameter layout = seed",
        ),
        (
            LinkConfig {
                timeout: Duration::ZERO,
                ..config(&dev, 0, 1, 0)
            },
            "parameter timeout",
        ),
        (
            LinkConfig {
                region_offset: 1 << 20,
                ..config(&dev, 0, 1, 0)
            },
            "does not fit its 1048576-byte memory",
        ),
        (
            LinkConfig {
                region_offset: 600 << 10,
                ..config(&dev, 0, 255, 0)
            },
            "does not fit its 1048576-byte memory",
        ),
        (config("udp:host", 0, 1, 0), "not a form this FMU knows"),
    ];
    for (cfg, part) in cases {
        let err = AttitudeLink::open(cfg).unwrap_err();
        assert!(err.to_string().contains(part), "`{err}` lacks `{part}`");
    }
}

/// Two emulated boards (nodes 1 and 2) on a fresh ring, and the emulator library.
fn two_boards() -> (common::RingGuard, [String; 2], Option<std::path::PathBuf>) {
    let ring = common::unique("evt");
    let dev = |node| format!("/dev/rfm2g-sim/{ring}/{node}/1M");
    (
        common::RingGuard(ring.clone()),
        [dev(1), dev(2)],
        Some(common::sim_library()),
    )
}

#[test]
fn network_interrupts_reach_the_other_nodes_of_the_ring() {
    let (_ring, dev, lib) = two_boards();
    let options = rfm_core::OpenOptions {
        rfm2g_library: lib,
        ..Default::default()
    };
    let a = rfm_core::Device::open(&dev[0], &options).unwrap();
    let b = rfm_core::Device::open(&dev[1], &options).unwrap();
    let (ea, eb) = (a.events().unwrap().unwrap(), b.events().unwrap().unwrap());
    ea.broadcast(42).unwrap();
    assert_eq!(
        eb.wait(1000).unwrap(),
        Some((a.info().node_id.unwrap(), 42))
    );
    assert_eq!(eb.wait(5).unwrap(), None, "one event, one wake-up");
    assert_eq!(
        ea.wait(5).unwrap(),
        None,
        "a broadcast does not come back to its sender"
    );
}

#[test]
fn lockstep_on_network_interrupts_exchanges_exactly() {
    let (_ring, dev, lib) = two_boards();
    let cfg = |node: u8, peer| LinkConfig {
        wait: WaitStrategy::Event,
        rfm2g_library: lib.clone(),
        ..config(&dev[usize::from(node)], node, peer, 0)
    };
    for (me, link) in exchange_in_two_threads(cfg(0, 1), cfg(1, 0), 2_000)
        .iter()
        .enumerate()
    {
        // Interrupts woke the waits: without them every wait runs out its 10 ms
        // slice (and the exchange is still exact, only slower).
        let waits = link.event_waits();
        assert!(
            waits.woken > 0 && waits.woken > waits.timed_out,
            "node {me}: {waits:?}"
        );
    }
}

/// Two couplings share two board nodes. Freeing the first one used to disable the
/// interrupt for the whole board node, and the second then failed in
/// `RFM2gWaitForEvent` with RFM2G_NOT_ENABLED.
#[test]
fn freeing_one_coupling_leaves_the_interrupts_of_another_on_the_same_board_nodes() {
    let (_ring, dev, lib) = two_boards();
    let cfg = |board: usize, node: u8, peer: u8| LinkConfig {
        wait: WaitStrategy::Event,
        rfm2g_library: lib.clone(),
        ..config(&dev[board], node, peer, 0)
    };
    let started = |c: LinkConfig, me: u8| {
        let mut link = AttitudeLink::open(c).unwrap();
        link.start(&input(me, u64::MAX)).unwrap();
        link
    };
    let first = [started(cfg(0, 0, 1), 0), started(cfg(1, 1, 0), 1)];
    let second = [started(cfg(0, 2, 3), 0), started(cfg(1, 3, 2), 1)];
    drop(first);
    let [a, b] = second;
    exchange_started(a, b, 500);
}

#[test]
fn waiting_on_interrupts_is_refused_without_an_rfm2g_board() {
    let err = AttitudeLink::open(LinkConfig {
        wait: WaitStrategy::Event,
        ..config(&loopback(), 0, 1, 0)
    })
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "parameter waitStrategy = event: RFM2g network interrupts need an RFM2g device"
        ),
        "{text}"
    );
    assert!(text.contains("use spin, yield or sleep"), "{text}");
}

/// A framed writer's head word passes through the seed magic 0x55AA55AA (its step
/// number). A free-mode reader that then fails to read the newest frame (here a
/// corrupted one) used to take the slot for a seed writer's and fail the link
/// with "uses layout seed".
#[test]
fn a_framed_peer_whose_step_number_looks_like_the_seed_magic_is_not_a_seed_writer() {
    use rfm_core::slot::FramedWriter;
    use std::sync::atomic::Ordering;

    let dev = loopback();
    let mut a = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        ..config(&dev, 0, 1, 0)
    })
    .unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    let memory = rfm_core::Device::open(&dev, &rfm_core::OpenOptions::default()).unwrap();
    let region = memory
        .map(0, rfm_core::interface::attitude_region_len(1))
        .unwrap();
    let slot = common::attitude_area(&region, 1);
    let ring = common::attitude_ring();
    let mut writer = FramedWriter::new(slot.clone(), ring).unwrap();
    let seed_like = u64::from(rfm_core::frame::seed::MAGIC);
    for step in seed_like - 3..=seed_like {
        let (mut frame, mut header) = common::attitude_frame(1, 0, step, 0x77, &input(1, step));
        header.mode = SyncMode::Free;
        writer.publish(&mut frame, &header).unwrap();
    }
    assert_eq!(
        slot.load_u32(0, Ordering::Acquire).unwrap(),
        rfm_core::frame::seed::MAGIC
    );
    // The newest frame is corrupted: unreadable.
    let at = ring.entry_offset(seed_like) + 64;
    let word = slot.load_u32(at, Ordering::Relaxed).unwrap();
    slot.store_u32(at, word ^ 1, Ordering::Relaxed).unwrap();
    let got = a.step(0, &input(0, 0));
    assert!(
        got.is_ok(),
        "taken for a seed writer: {:?}",
        got.unwrap_err()
    );
    assert_eq!(a.health().bad_frames, 1);
}

/// The Overwritten error names both frames in one numbering: frame i is the peer's
/// output after its step i − 1 (frame 0 its initial values).
#[test]
fn a_peer_that_ran_past_the_ring_is_reported_in_frame_numbers() {
    use rfm_core::link::{Node, StartPoll};
    use std::task::Poll;

    let dev = loopback();
    let memory = rfm_core::Device::open(&dev, &rfm_core::OpenOptions::default()).unwrap();
    let region = memory
        .map(0, rfm_core::interface::attitude_region_len(1))
        .unwrap();
    let interface = std::sync::Arc::new(rfm_core::interface::attitude(0, 1));
    let map = interface.map().unwrap();
    let t0 = Instant::now();
    let ms = |n: u64| t0 + Duration::from_millis(n);
    let mut nodes = [0u8, 1].map(|n| {
        Node::new(
            config(&dev, n, 1 - n, 0),
            interface.clone(),
            &map,
            &region,
            0x11 + 2 * u64::from(n),
            t0,
        )
        .unwrap()
    });
    let mut beaters = Vec::new();
    let mut frames = nodes.each_ref().map(|n| FrameBuf::new(n.payload_len()));
    for (n, node) in nodes.iter_mut().enumerate() {
        let mut t = 0;
        loop {
            let init = input(n as u8, u64::MAX);
            init.write(frames[n].payload_mut());
            match node
                .poll_start(ms(t), init.sim_time, &mut frames[n])
                .unwrap()
            {
                StartPoll::Claimed => beaters.push(node.beater().unwrap()),
                StartPoll::Started => break,
                StartPoll::Pending => t += 1,
            }
        }
    }
    let [a, b] = &mut nodes;
    let frame = &mut frames[1];
    let mut publish = |b: &mut Node, index: u64| {
        let sample = input(1, index - 1);
        sample.write(frame.payload_mut());
        b.publish(index, sample.sim_time, frame).unwrap();
    };
    publish(b, 1);
    // a binds b once it has seen b's beat move.
    assert!(a.exchange().poll_lockstep(0, ms(100)).unwrap().is_pending());
    beaters[1].beat().unwrap();
    let Poll::Ready(()) = a.exchange().poll_lockstep(0, ms(101)).unwrap() else {
        panic!("b's frame 1 was there and b beating")
    };
    assert_eq!(a.peers()[0].observed().latest().unwrap().step, 1);
    // b runs 17 frames ahead: the entry of frame 2 now holds frame 18.
    for index in 2..=18 {
        publish(b, index);
    }
    let err = a.exchange().poll_lockstep(1, ms(102)).unwrap_err();
    assert!(
        matches!(
            err,
            LinkError::Overwritten {
                step: 1,
                need: 2,
                found: 18,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("at step 1 this node needs frame 2 of node `slot1`, but its ring entry already holds frame 18"),
        "{err}"
    );
}

/// A node whose slot was taken over while it was silent (paused past DEAD_AFTER,
/// or the rare double win of a claim) stops beating at its next beat and fails its
/// next step naming the slot and the new holder; closing it then writes nothing
/// into the new holder's slot.
#[test]
fn a_node_whose_slot_was_taken_over_fails_its_next_step_and_leaves_the_slot_alone() {
    use rfm_core::area::LIVENESS_OFFSET;
    use rfm_core::link::liveness::{Words, HEARTBEAT_PERIOD};
    use std::sync::atomic::Ordering;

    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 0, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    a.step(0, &input(0, 0)).unwrap();
    let memory = rfm_core::Device::open(&dev, &rfm_core::OpenOptions::default()).unwrap();
    let slot = common::attitude_area(
        &memory
            .map(0, rfm_core::interface::attitude_region_len(0))
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
                owner: 0x7777_7777,
                ..
            }
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
        0,
        "no closed mark in another's slot"
    );
}

const LAB: &str = r#"
name = "lab"
[[node]]
name = "cockpit"
slot = 0
signals = [ { name = "roll", type = "Real", unit = "rad" }, { name = "flap_detent", type = "Integer" } ]
[[node]]
name = "visual"
slot = 1
signals = [ { name = "frame_count", type = "Integer" } ]
"#;

/// The visual node's error at its first step when the cockpit was built from
/// `cockpit_file` and the visual from [`LAB`].
fn first_exchange_error(cockpit_file: &str) -> String {
    use rfm_core::interface::{Interface, Reserved};
    use std::sync::Arc;
    let dev = loopback();
    let open = |slot: u8, interface: Interface| {
        let mut link = rfm_core::link::Link::open(LinkConfig {
            interface: Some(Arc::new(interface)),
            ..config(&dev, slot, 1 - slot, 0)
        })
        .unwrap();
        let mut frame = FrameBuf::new(link.payload_len());
        link.start(0.0, &mut frame).unwrap();
        (link, frame)
    };
    let (mut cockpit, mut cockpit_frame) = open(
        0,
        Interface::parse("cockpit.toml", cockpit_file, &Reserved::NONE).unwrap(),
    );
    let (mut visual, mut visual_frame) = open(
        1,
        Interface::parse("lab.toml", LAB, &Reserved::NONE).unwrap(),
    );
    // The cockpit steps too (and fails the same way, from its side).
    // It stays open until the visual has stepped: a node that closed its area is
    // no longer exchanged with.
    let other = std::thread::spawn(move || {
        let result = cockpit
            .step(0, 0.0, &mut cockpit_frame)
            .map_err(|e| e.to_string());
        (cockpit, result)
    });
    let err = visual
        .step(0, 0.0, &mut visual_frame)
        .unwrap_err()
        .to_string();
    let (_cockpit, theirs) = other.join().unwrap();
    let theirs = theirs.unwrap_err();
    assert!(
        theirs.contains("node `visual` (slot 1) and this node `cockpit` (slot 0)"),
        "{theirs}"
    );
    err
}

/// Peers built from files that differ are refused at the first exchange, and the
/// message names the first signal that differs and both nodes: with frames of the
/// same length (another type) and of another length (a signal more).
#[test]
fn peers_built_from_different_interface_files_are_refused_naming_the_first_difference() {
    let other_type = LAB.replace(
        r#"{ name = "flap_detent", type = "Integer" }"#,
        r#"{ name = "flap_detent", type = "Real" }"#,
    );
    let text = first_exchange_error(&other_type);
    for part in [
        "node `cockpit` (slot 0) and this node `visual` (slot 1) were built from different interface files",
        "signal `cockpit.flap_detent` is a Real there and an Integer here",
        "build every node's FMU from one file",
    ] {
        assert!(text.contains(part), "`{text}` lacks `{part}`");
    }
    let one_more = LAB.replace(
        r#"{ name = "flap_detent", type = "Integer" } ]"#,
        r#"{ name = "flap_detent", type = "Integer" }, { name = "gear_down", type = "Boolean" }, { name = "speed", type = "Real" } ]"#,
    );
    let text = first_exchange_error(&one_more);
    assert!(
        text.contains("signal `cockpit.gear_down` is missing here"),
        "{text}"
    );
    let other_unit = LAB.replace(r#"unit = "rad""#, r#"unit = "deg""#);
    let text = first_exchange_error(&other_unit);
    assert!(
        text.contains(r#"signal `cockpit.roll` has unit "deg" there and "rad" here"#),
        "{text}"
    );
}

/// Runs a lockstep pair in which `b` stops stepping for `pause` after step 4
/// (its heartbeat beating the while, as a frozen master's does), with `a`'s
/// step timeout 0.2 s and idle timeout `idle`: `a`'s result of step 5, and how
/// long that step waited.
fn a_pause_of_the_peer(pause: Duration, idle: Duration) -> Result<Duration, LinkError> {
    let dev = loopback();
    let mut a = AttitudeLink::open(LinkConfig {
        timeout: Duration::from_millis(200),
        idle_timeout: idle,
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

/// [`LAB`] with the cockpit publishing twelve Reals more: the visual's area
/// then lies elsewhere in it.
fn wider_cockpit() -> String {
    let more: String = (0..12)
        .map(|i| format!(r#", {{ name = "extra{i}", type = "Real" }}"#))
        .collect();
    LAB.replace(
        r#"{ name = "flap_detent", type = "Integer" } ]"#,
        &format!(r#"{{ name = "flap_detent", type = "Integer" }}{more} ]"#),
    )
}

/// Two nodes whose files differ in layout (the cockpit publishes twelve Reals
/// more, so the visual's area lies elsewhere in the cockpit's file): each used
/// to wait `startupTimeout` where its file puts the other. Both are told within
/// a second, naming both nodes.
#[test]
fn nodes_whose_files_differ_in_layout_are_both_told_within_a_second() {
    use rfm_core::interface::{Interface, Reserved};
    use std::sync::Arc;
    let cockpit_file = wider_cockpit();
    let dev = loopback();
    let open = |slot: u8, interface: Interface| {
        let mut link = rfm_core::link::Link::open(LinkConfig {
            interface: Some(Arc::new(interface)),
            startup_timeout: Duration::from_secs(20),
            ..config(&dev, slot, 1 - slot, 0)
        })
        .unwrap();
        let mut frame = FrameBuf::new(link.payload_len());
        link.start(0.0, &mut frame).unwrap();
        (link, frame)
    };
    let cockpit = Interface::parse("cockpit.toml", &cockpit_file, &Reserved::NONE).unwrap();
    let visual = Interface::parse("lab.toml", LAB, &Reserved::NONE).unwrap();
    assert_ne!(
        cockpit.map().unwrap().area(1).offset,
        visual.map().unwrap().area(1).offset,
        "the files must lay the visual out apart"
    );
    let (mut cockpit, mut cockpit_frame) = open(0, cockpit);
    let (mut visual, mut visual_frame) = open(1, visual);
    let started = Instant::now();
    let other = std::thread::spawn(move || {
        let result = cockpit.step(0, 0.0, &mut cockpit_frame);
        (
            cockpit,
            result.map_err(|e| e.to_string()),
            started.elapsed(),
        )
    });
    let visual_result = visual
        .step(0, 0.0, &mut visual_frame)
        .map_err(|e| e.to_string());
    let visual_took = started.elapsed();
    let (_cockpit, cockpit_result, cockpit_took) = other.join().unwrap();
    for (who, result, took, peer) in [
        ("cockpit", cockpit_result, cockpit_took, "visual"),
        ("visual", visual_result, visual_took, "cockpit"),
    ] {
        let text = result.expect_err(who);
        assert!(took < Duration::from_secs(1), "{who} took {took:?}: {text}");
        assert!(
            text.contains("were built from different interface files")
                && text.contains(&format!("node `{peer}`"))
                && text.contains(&format!("this node `{who}`")),
            "{who}: {text}"
        );
    }
}

/// A node of another interface whose area lies over a running pair's memory:
/// it used to leave initialization and break the pair within milliseconds. It
/// is refused before it writes anything, naming what it found, and the pair
/// steps on exactly.
#[test]
fn a_node_of_another_interface_over_a_running_pair_is_refused_and_the_pair_runs_on() {
    use rfm_core::interface::{Interface, Reserved};
    use std::sync::Arc;
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 1)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let step = |a: &mut AttitudeLink, b: &mut AttitudeLink, k: u64| {
        let got_a = a.step(k, &input(0, k)).unwrap().unwrap();
        let got_b = b.step(k, &input(1, k)).unwrap().unwrap();
        let want = |node| {
            k.checked_sub(1)
                .map_or(input(node, u64::MAX), |j| input(node, j))
        };
        assert_eq!((got_a.sample, got_b.sample), (want(1), want(0)), "step {k}");
    };
    for k in 0..100 {
        step(&mut a, &mut b, k);
    }
    let foreign = Interface::parse(
        "pq.toml",
        r#"
name = "pq"
[[node]]
name = "p"
slot = 7
signals = [ { name = "x", type = "Real" } ]
[[node]]
name = "q"
slot = 8
signals = [ { name = "y", type = "Real" } ]
"#,
        &Reserved::NONE,
    )
    .unwrap();
    let mut q = rfm_core::link::Link::open(LinkConfig {
        interface: Some(Arc::new(foreign)),
        ..config(&dev, 8, 7, 0)
    })
    .unwrap();
    let mut frame = FrameBuf::new(q.payload_len());
    // The pair's heartbeats beat on their own threads while q watches them.
    let err = q.start(0.0, &mut frame).unwrap_err();
    assert!(matches!(err, LinkError::Foreign { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("whose heartbeat last moved")
            && text.contains("it is of interface `rfm_attitude`, this node of `pq`")
            && text.contains("Nothing was written"),
        "{text}"
    );
    for k in 100..1_000 {
        step(&mut a, &mut b, k);
    }
}

/// The cockpit (from [`LAB`] with twelve Reals more, so that its area covers
/// where [`LAB`] puts the visual's) and the visual (from [`LAB`]), opened
/// together so that neither sees the other's descriptor, then claiming in the
/// order given: both started, and the time (ms after the returned instant)
/// when the later did.
fn started_apart(
    cockpit_wins_first: bool,
) -> ([rfm_core::link::Node; 2], Instant, u64, rfm_core::Device) {
    use rfm_core::interface::{Interface, Reserved};
    use rfm_core::link::{Node, StartPoll};
    use std::sync::Arc;
    let cockpit_file = wider_cockpit();
    let dev = loopback();
    let memory = rfm_core::Device::open(&dev, &rfm_core::OpenOptions::default()).unwrap();
    let region = memory.map(0, memory.size() as usize).unwrap();
    let files = [
        Interface::parse("cockpit.toml", &cockpit_file, &Reserved::NONE).unwrap(),
        Interface::parse("lab.toml", LAB, &Reserved::NONE).unwrap(),
    ];
    let t0 = Instant::now();
    let mut nodes = [0u8, 1].map(|n| {
        let interface = Arc::new(files[usize::from(n)].clone());
        let map = interface.map().unwrap();
        Node::new(
            LinkConfig {
                interface: Some(interface.clone()),
                ..config(&dev, n, 1 - n, 0)
            },
            interface,
            &map,
            &region,
            0x21 + 2 * u64::from(n),
            t0,
        )
        .unwrap()
    });
    let mut frames = nodes.each_ref().map(|n| FrameBuf::new(n.payload_len()));
    let mut poll = |n: usize, ms: u64| {
        nodes[n]
            .poll_start(t0 + Duration::from_millis(ms), 0.0, &mut frames[n])
            .unwrap_or_else(|e| panic!("node {n} at {ms} ms: {e}"))
    };
    // Both look at the memory (nothing there) and write their owner words.
    for n in [0, 1] {
        assert_eq!(poll(n, 0), StartPoll::Claimed);
    }
    let (first, second) = if cockpit_wins_first { (0, 1) } else { (1, 0) };
    let settled = rfm_core::link::CLAIM_SETTLE.as_millis() as u64 + 10;
    assert_eq!(poll(first, settled), StartPoll::Started);
    let mut ms = settled;
    while poll(second, ms) != StartPoll::Started {
        ms += 1;
        assert!(ms < 1_000, "node {second} never started");
    }
    (nodes, t0, ms, memory)
}

/// Whether `text` names both nodes of [`started_apart`] as built apart, told
/// to node `n`.
fn names_both_apart(text: &str, n: usize) -> bool {
    let [who, peer] = if n == 0 {
        ["cockpit", "visual"]
    } else {
        ["visual", "cockpit"]
    };
    text.contains(&format!(
        "node `{peer}` (slot {}) and this node `{who}` (slot {n}) were built from different \
         interface files",
        1 - n
    ))
}

/// Two nodes whose files differ in layout, started together and claiming in
/// the two orders a race can take: the cockpit's clear used to wipe the owner
/// word the visual had just written ("slot 1 was claimed by another node at
/// the same moment") or the descriptor it had written. Both start, and each
/// one's first exchange names both nodes.
#[test]
fn nodes_whose_files_differ_in_layout_both_start_whichever_claims_first() {
    for cockpit_wins_first in [true, false] {
        let (mut nodes, t0, started, _memory) = started_apart(cockpit_wins_first);
        let mut beaters: Vec<_> = nodes.iter().map(|n| n.beater().unwrap()).collect();
        let mut t = started + 1;
        let mut errors = [None, None];
        while errors.iter().any(Option::is_none) {
            for b in &mut beaters {
                b.beat().unwrap();
            }
            for n in [0, 1] {
                if errors[n].is_none() {
                    let at = t0 + Duration::from_millis(t);
                    if let Err(e) = nodes[n].exchange().poll_lockstep(0, at) {
                        errors[n] = Some(e.to_string());
                    }
                }
            }
            t += 10;
            assert!(t < 5_000, "{errors:?}");
        }
        for n in [0, 1] {
            let text = errors[n].as_deref().unwrap();
            assert!(names_both_apart(text, n), "{cockpit_wins_first}: {text}");
        }
    }
}

/// The cockpit of the other file fails and closes while the visual waits for
/// its first frame: the visual used to say "node `cockpit` stopped", which
/// sends the user to restart it; its descriptor says why it stopped.
#[test]
fn a_peer_from_another_file_that_stops_before_its_first_frame_is_named_built_apart() {
    let (mut nodes, t0, started, _memory) = started_apart(true);
    let mut cockpit = nodes[0].beater().unwrap();
    let at = |ms: u64| t0 + Duration::from_millis(started + ms);
    for ms in [1, 11] {
        cockpit.beat().unwrap();
        assert!(nodes[1]
            .exchange()
            .poll_lockstep(0, at(ms))
            .unwrap()
            .is_pending());
    }
    nodes[0].close().unwrap();
    let err = nodes[1].exchange().poll_lockstep(0, at(21)).unwrap_err();
    assert!(names_both_apart(&err.to_string(), 1), "{err}");
}
