//! A redundant device (`shm:A+shm:B`) through the FMU's C API (issue 38): two
//! attitude instances in one thread, lag 1. From step 3,000 to 5,999 node a's
//! frames on ring A are garbage (the master zeroes them after a's step, a
//! fault in the memory), from 8,000 on the same on ring B: every value of every
//! step exact, the `ring.*` outputs exact, one warning naming the ring and the
//! peer, the summary at fmi2Terminate. Both rings' frames gone: the step
//! fails within the timeout.

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{sim_library, unique, Fmu, RingGuard, ShmGuard};
use fmu_model::fmi2::*;
use rfm_interface as interface;
use rfm_memory::backend::rfm2g::emulated;
use rfm_memory::{Device, OpenOptions, Region};

const H: f64 = 1e-3;

fn node(name: &str, device: &str, me: u8, timeout: &str) -> Fmu {
    // A peer whose frames are spoiled on both rings still beats on them: it
    // is waited for up to idleTimeout, here as long as timeout.
    let fmu = Fmu::new(name);
    fmu.set_all(&[
        ("device", device),
        ("nodeSlot", &me.to_string()),
        ("peerSlot", &(1 - me).to_string()),
        ("lag", "1"),
        ("waitStrategy", "yield"),
        ("startupTimeout", "20"),
        ("timeout", timeout),
        ("idleTimeout", timeout),
    ]);
    fmu
}

fn roll(node: u8, k: i64) -> f64 {
    k as f64 * 0.5 + f64::from(node)
}

/// Node a's frame ring on one memory, to spoil.
struct Frames {
    region: Region,
    _device: Device,
}

impl Frames {
    fn of(shm: &str) -> Frames {
        let map = interface::attitude(0, 1).map().unwrap();
        let area = map.area(0);
        let device = Device::open(&format!("shm:{shm}"), &OpenOptions::default()).unwrap();
        let region = device
            .map(
                area.offset + area.ring_offset() as u64,
                area.len - area.ring_offset(),
            )
            .unwrap();
        Frames {
            region,
            _device: device,
        }
    }

    /// Every entry's header and payload zeroed: no frame holds whole.
    fn spoil(&self) {
        self.region.fill(0, self.region.len(), 0).unwrap();
        std::sync::atomic::fence(Ordering::SeqCst);
    }
}

fn pair(prefix: &str, timeout: &str) -> (Fmu, Fmu, [Frames; 2], [ShmGuard; 2]) {
    let (x, y) = (unique(prefix), unique(prefix));
    let device = format!("shm:{x}+shm:{y}");
    let a = node("a", &device, 0, timeout);
    let b = node("b", &device, 1, timeout);
    for (fmu, me) in [(&a, 0), (&b, 1)] {
        fmu.set_all(&[("roll", &roll(me, -1).to_string())]);
        assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    }
    let frames = [Frames::of(&x), Frames::of(&y)];
    (a, b, frames, [ShmGuard(x), ShmGuard(y)])
}

#[test]
fn a_spoiled_ring_costs_no_value_and_the_outputs_count_it() {
    let (a, b, frames, _names) = pair("redfmu", "5");
    for k in 0..10_000i64 {
        let t = k as f64 * H;
        a.set_all(&[("roll", &roll(0, k).to_string())]);
        assert_eq!(a.step(t, H), fmi2OK, "a step {k}: {:?}", a.log());
        if (3000..6000).contains(&k) {
            frames[0].spoil();
        } else if k >= 8000 {
            frames[1].spoil();
        }
        b.set_all(&[("roll", &roll(1, k).to_string())]);
        assert_eq!(b.step(t, H), fmi2OK, "b step {k}: {:?}", b.log());
        assert_eq!(b.real("peer.roll"), roll(0, k - 1), "b at step {k}");
        assert_eq!(a.real("peer.roll"), roll(1, k - 1), "a at step {k}");
    }
    // b took a's initial frame and frames 0..=9998, frame k - 1 at its step
    // k. Spoiling zeroes every entry of the ring: frames 2999 to 5999 (taken
    // at b's steps 3000 to 6000; 5999's entry is not written again before
    // b takes it) came from B, the rest from A.
    assert_eq!(
        (b.integer("ring.a.frames"), b.integer("ring.b.frames")),
        (10_000 - 3001, 3001)
    );
    assert_eq!(b.integer("ring.failovers"), 1);
    assert!(b.boolean("ring.a.ok"));
    assert_eq!(b.integer("link.lost"), 0);
    // a's peer was never spoiled.
    assert_eq!(
        (a.integer("ring.a.frames"), a.integer("ring.b.frames")),
        (10_000, 0)
    );
    assert_eq!(a.integer("ring.failovers"), 0);
    let warned: Vec<String> = b
        .log()
        .into_iter()
        .filter(|(s, _, _)| *s == fmi2Warning)
        .map(|(_, _, m)| m)
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].starts_with("ring A (`shm:")
            && warned[0]
                .contains("did not hold a whole frame of node `slot0` (slot 0) at step 3000"),
        "{warned:?}"
    );
    assert!(b
        .log()
        .iter()
        .any(|(_, _, m)| m
            .contains("holds the frames of node `slot0` (slot 0) again from step 6001")));
    assert_eq!(b.terminate(), fmi2OK);
    assert!(
        b.log()
            .iter()
            .any(|(_, _, m)| m.starts_with("redundant rings: ring A")
                && m.contains("gave 6999 frames")
                && m.ends_with("1 failovers from A to B")),
        "{:?}",
        b.log()
    );
    assert_eq!(a.terminate(), fmi2OK);
}

#[test]
fn both_rings_spoiled_fails_the_step_within_the_timeout() {
    let (a, b, frames, _names) = pair("redcut", "0.5");
    for k in 0..100i64 {
        let t = k as f64 * H;
        assert_eq!(a.step(t, H), fmi2OK, "a step {k}: {:?}", a.log());
        if k >= 50 {
            frames[0].spoil();
            frames[1].spoil();
        }
        let began = Instant::now();
        let status = b.step(t, H);
        if k < 50 {
            assert_eq!(status, fmi2OK, "b step {k}: {:?}", b.log());
            continue;
        }
        let took = began.elapsed();
        assert_eq!(status, fmi2Error, "b step {k}");
        assert!(
            took >= Duration::from_millis(500) && took < Duration::from_secs(3),
            "{took:?}"
        );
        assert!(
            b.last_error()
                .contains("no frame for step 50 from node `slot0` (slot 0; this node: slot 1)"),
            "{}",
            b.last_error()
        );
        return;
    }
    unreachable!("b's step 50 fails");
}

/// On two emulated rings, node a's card of ring B cut and mended: the FMU's
/// watch thread sees the card's LCSR and its sync-loss event, the master's
/// log is told (warnings naming the ring, the register and the event, an
/// info line when it is well again),
/// `ring.b.ok` follows, and every value stays exact (ring A carries them).
#[test]
#[cfg(target_os = "linux")]
fn a_cut_card_is_told_and_its_ring_not_ok_until_mended() {
    let (ra, rb) = (unique("wa"), unique("wb"));
    let _guards = [RingGuard(ra.clone()), RingGuard(rb.clone())];
    let lib = sim_library();
    let board = |ring: &str, node: u8| format!("/dev/rfm2g-sim/{ring}/{node}/64K");
    let nodes: Vec<Fmu> = [0u8, 1]
        .into_iter()
        .map(|me| {
            let device = format!("{}+{}", board(&ra, me + 1), board(&rb, me + 1));
            let fmu = node(["a", "b"][usize::from(me)], &device, me, "5");
            fmu.set_all(&[
                ("rfm2gLibrary", lib.to_str().unwrap()),
                ("roll", &roll(me, -1).to_string()),
            ]);
            assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
            fmu
        })
        .collect();
    let (a, b) = (&nodes[0], &nodes[1]);
    let cut_b = board(&rb, 1);
    // Steps 1 ms apart, so that the watch (every 100 ms) looks a few times in
    // each phase.
    let mut b_ok = Vec::new();
    for k in 0..900i64 {
        match k {
            300 => emulated::set_link(Some(&lib), &cut_b, false).unwrap(),
            600 => emulated::set_link(Some(&lib), &cut_b, true).unwrap(),
            _ => {}
        }
        let t = k as f64 * H;
        for (me, fmu) in [(0u8, a), (1, b)] {
            fmu.set_all(&[("roll", &roll(me, k).to_string())]);
            assert_eq!(fmu.step(t, H), fmi2OK, "step {k}: {:?}", fmu.log());
        }
        assert_eq!(b.real("peer.roll"), roll(0, k - 1), "b at step {k}");
        assert_eq!(a.real("peer.roll"), roll(1, k - 1), "a at step {k}");
        if k % 100 == 99 {
            b_ok.push(a.boolean("ring.b.ok"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // Phases of 300 steps (at least 300 ms): the last look in each is sure.
    assert!(
        b_ok[2] && !b_ok[5] && b_ok[8],
        "ring.b.ok every 100 steps: {b_ok:?}"
    );
    let log = a.log();
    let told = |status: fmi2Status, part: &str| {
        log.iter()
            .filter(|(s, _, m)| *s == status && m.contains(part))
            .count()
    };
    assert_eq!(
        told(
            fmi2Warning,
            "`): its card reports LCSR 0x00000008 (receive sync lost)"
        ),
        1,
        "{log:?}"
    );
    assert_eq!(told(fmi2OK, "): its card is well again"), 1, "{log:?}");
    // The cut raised the card's sync-loss event once; the watch enabled it again.
    assert_eq!(
        told(
            fmi2Warning,
            "): its card raised RFM2GEVENT_SYNC_LOSS (its fibre in lost sync) (1 error events so far)"
        ),
        1,
        "{log:?}"
    );
    // Frames came on ring A throughout: no ring stopped delivering them.
    assert_eq!(told(fmi2Warning, "has not carried"), 0, "{log:?}");
    assert!(
        log.iter()
            .any(|(_, _, m)| m.starts_with(&format!("ring B (`{cut_b}`): its card reports"))),
        "{log:?}"
    );
    assert!(b.boolean("ring.a.ok") && a.boolean("ring.a.ok"));
}
