//! What crosses: lockstep at its lags, a self-loop, peers of different lags and
//! free readers, free mode, the seed layout, and frame numbers past the ring.

use super::*;
use rfm_interface::settings::LinkSettings;

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
        settings: LinkSettings {
            mode: SyncMode::Free,
            ..config(&dev, 1, 0, 0).settings
        },
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
fn free_mode_takes_the_newest_frame_and_never_waits() {
    let dev = loopback();
    let free = |node, peer| LinkConfig {
        settings: LinkSettings {
            mode: SyncMode::Free,
            ..config(&dev, node, peer, 0).settings
        },
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
    let (mut a, mut b) = started_free_pair(&loopback(), Layout::Seed);
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

/// A framed writer's head word passes through the seed magic 0x55AA55AA (its step
/// number). A free-mode reader that then fails to read the newest frame (here a
/// corrupted one) used to take the slot for a seed writer's and fail the link
/// with "uses layout seed".
#[test]
fn a_framed_peer_whose_step_number_looks_like_the_seed_magic_is_not_a_seed_writer() {
    use rfm_frames::slot::FramedWriter;
    use std::sync::atomic::Ordering;

    let dev = loopback();
    let mut a = AttitudeLink::open(LinkConfig {
        settings: LinkSettings {
            mode: SyncMode::Free,
            ..config(&dev, 0, 1, 0).settings
        },
        ..config(&dev, 0, 1, 0)
    })
    .unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    let memory = rfm_memory::Device::open(&dev, &rfm_memory::OpenOptions::default()).unwrap();
    let region = memory
        .map(0, rfm_interface::attitude_region_len(1))
        .unwrap();
    let slot = common::attitude_area(&region, 1);
    let ring = common::attitude_ring();
    let mut writer = FramedWriter::new(slot.clone(), ring).unwrap();
    let seed_like = u64::from(rfm_frames::frame::seed::MAGIC);
    for step in seed_like - 3..=seed_like {
        let (mut frame, mut header) = common::attitude_frame(1, 0, step, 0x77, &input(1, step));
        header.mode = SyncMode::Free;
        writer.publish(&mut frame, &header).unwrap();
    }
    assert_eq!(
        slot.load_u32(0, Ordering::Acquire).unwrap(),
        rfm_frames::frame::seed::MAGIC
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
    let memory = rfm_memory::Device::open(&dev, &rfm_memory::OpenOptions::default()).unwrap();
    let region = memory
        .map(0, rfm_interface::attitude_region_len(1))
        .unwrap();
    let interface = std::sync::Arc::new(rfm_interface::attitude(0, 1));
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
                StartPoll::Announced => beaters.push(node.beater().unwrap()),
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
        b.publish(index, (sample.sim_time, 0), frame).unwrap();
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
