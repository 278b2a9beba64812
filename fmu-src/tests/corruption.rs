//! Corruption of the peer's slot while the coupling runs: bit flips and garbage
//! in its frames, the wrong magic and torn writes in the article's layout. Each
//! is counted in `link.badFrames` (or rejected as torn) and never reaches the
//! outputs: every value the instance reports is one the peer really sent.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{unique, Fmu};
use fmu_model::fmi2::*;
use rfm_frames::area::Area;
use rfm_frames::area::RING_DEPTH;
use rfm_interface as interface;
use rfm_memory::{Device, OpenOptions, Region};

const H: f64 = 1e-3;

/// xorshift64*: enough randomness for flipping bits, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn node(device: &str, me: u8, extra: &[(&str, &str)]) -> Fmu {
    let fmu = Fmu::new(&format!("n{me}"));
    fmu.set_all(&[
        ("device", device),
        ("nodeSlot", &me.to_string()),
        ("peerSlot", &(1 - me).to_string()),
        ("timeout", "5"),
        ("startupTimeout", "5"),
    ]);
    fmu.set_all(extra);
    fmu
}

/// Node 1 feeds (k, 2k, 3k) at step k: a corrupt or torn frame taken as data
/// would break the relation between the three, or give a k never sent.
fn feed(fmu: &Fmu, k: i64) {
    let x = k as f64;
    fmu.set_all(&[
        ("roll", &x.to_string()),
        ("pitch", &(2.0 * x).to_string()),
        ("yaw", &(3.0 * x).to_string()),
    ]);
}

fn assert_sent(fmu: &Fmu, newest: i64) {
    let [r, p, y] = fmu.reals(&["peer.roll", "peer.pitch", "peer.yaw"])[..] else {
        unreachable!()
    };
    assert!(
        r.fract() == 0.0 && (-1.0..=newest as f64).contains(&r) && p == 2.0 * r && y == 3.0 * r,
        "outputs ({r}, {p}, {y}) were never sent (newest {newest})"
    );
}

/// A thread that damages slot 1 of `device` until stopped: single bit flips in
/// the ring's frames, and now and then a run of garbage bytes.
/// `hits` counts the corruptions made so far.
/// The peer's (slot 1's) area in `device`, mapped alone.
fn peer_area(device: &str) -> (Region, Area) {
    let memory = Device::open(device, &OpenOptions::default()).unwrap();
    let area = interface::attitude_area(1);
    (memory.map(area.offset, area.len).unwrap(), area)
}

fn corrupter(
    device: &str,
    seed: u64,
    stop: Arc<AtomicBool>,
    hits: Arc<std::sync::atomic::AtomicU64>,
) -> std::thread::JoinHandle<()> {
    let (slot, area) = peer_area(device);
    let frame_size = area.frame_len();
    std::thread::spawn(move || {
        let mut rng = Rng(seed);
        while !stop.load(Ordering::Relaxed) {
            let entry = area.entry_offset(rng.below(RING_DEPTH) as u64);
            if rng.below(8) == 0 {
                // Garbage: up to 4 words of random bytes over a frame's contents,
                // never past its end (the next area's head could follow).
                let at = entry + 8 + 4 * rng.below((frame_size - 8 - 16) / 4);
                for w in 0..rng.below(4) + 1 {
                    let _ = slot.poke(at + 4 * w, 4, rng.next());
                }
            } else {
                // One bit of the CRC-covered bytes.
                let at = entry + 8 + rng.below(frame_size - 8);
                let byte = slot.peek(at, 1).unwrap();
                slot.poke(at, 1, byte ^ (1 << rng.below(8))).unwrap();
            }
            hits.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    })
}

#[test]
fn corrupted_frames_are_counted_and_never_become_outputs_in_free_mode() {
    let device = format!("loopback:{}", unique("corrupt"));
    let free = [("syncMode", "free")];
    let (a, b) = (node(&device, 0, &free), node(&device, 1, &free));
    feed(&b, -1);
    assert_eq!((a.init(), b.init()), (fmi2OK, fmi2OK));
    let stop = Arc::new(AtomicBool::new(false));
    let hits = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let damage = corrupter(&device, 0x5eed, stop.clone(), hits.clone());
    // At least 20,000 steps and 1,000 corruptions, however the two threads are
    // scheduled.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut k = 0i64;
    while (k < 20_000 || hits.load(Ordering::Relaxed) < 1000)
        && std::time::Instant::now() < deadline
    {
        feed(&b, k);
        assert_eq!(b.step(k as f64 * H, H), fmi2OK);
        assert_eq!(
            a.step(k as f64 * H, H),
            fmi2OK,
            "free mode never fails: {:?}",
            a.log()
        );
        assert_sent(&a, k);
        k += 1;
    }
    stop.store(true, Ordering::Relaxed);
    damage.join().unwrap();
    let hits = hits.load(Ordering::Relaxed);
    let bad = a.integer("link.badFrames");
    println!("free mode: {hits} corruptions, {bad} bad frames counted, {k} steps, outputs always sent values");
    assert!(hits >= 1000, "the corrupter ran ({hits} hits in 30 s)");
    assert!(bad > 0, "corruption must be counted");
    assert_eq!(
        a.integer("link.restarts"),
        0,
        "garbage is not taken for a new session"
    );
}

#[test]
fn a_corrupted_frame_fails_the_lockstep_step_that_needs_it_and_is_counted() {
    let device = format!("loopback:{}", unique("corrupt-ls"));
    // Lag 1 lets one thread step both: a reads b's step k-1.
    let lag = [("lag", "1"), ("timeout", "1")];
    let (a, b) = (node(&device, 0, &lag), node(&device, 1, &lag));
    feed(&b, -1);
    assert_eq!((a.init(), b.init()), (fmi2OK, fmi2OK));
    let (slot, area) = peer_area(&device);
    for k in 0..100i64 {
        let status = a.step(k as f64 * H, H);
        if k <= 50 {
            assert_eq!(status, fmi2OK, "step {k}: {:?}", a.log());
            assert_sent(&a, k);
        } else {
            assert_eq!(status, fmi2Error, "step {k} needs the corrupted frame");
            let text = a.last_error();
            assert!(text.contains("CRC"), "{text}");
            assert!(a.integer("link.badFrames") >= 1);
            assert_sent(&a, k);
            println!("lockstep: {text}");
            return;
        }
        feed(&b, k);
        assert_eq!(
            b.step(k as f64 * H, H),
            fmi2OK,
            "b step {k}: {}",
            b.last_error()
        );
        if k == 50 {
            // Flip one bit of the roll in the frame b's doStep 50 published
            // (frame 51: the frame of initialization is 0), which a needs next.
            let entry = area.entry_offset(51);
            let byte = slot.peek(entry + 64, 1).unwrap();
            slot.poke(entry + 64, 1, byte ^ 0x04).unwrap();
        }
    }
    panic!("the corrupted frame was never needed");
}

/// What the seed layout's writer and reader tell each other.
#[derive(Default)]
struct Handoff {
    stop: AtomicBool,
    /// The newest packet written.
    written: std::sync::atomic::AtomicU64,
    /// How many bad frames the reader has counted, so that the writer can hold
    /// a wrong magic until it has been seen (a timing-free hand-off).
    counted: std::sync::atomic::AtomicU64,
    /// The newest packet the reader has taken: a good packet stays until it
    /// has been read or 5 ms have passed, so reading and rewriting interleave.
    taken: std::sync::atomic::AtomicU64,
}

/// The only writer of `slot`, until told to stop: packet v carries (v, 2v,
/// 3v), written one field at a time with a yield between fields; every 16th
/// packet is left with a wrong magic until the reader counted it. Returns the
/// packets written and those with a wrong magic.
fn seed_writer(slot: Region, h: Arc<Handoff>) -> std::thread::JoinHandle<(u64, u64)> {
    std::thread::spawn(move || {
        let (mut v, mut wrong) = (0u64, 0u64);
        while !h.stop.load(Ordering::Relaxed) {
            v += 1;
            h.written.store(v, Ordering::Relaxed);
            slot.poke(0, 4, 0).unwrap();
            std::thread::yield_now();
            slot.poke(4, 4, v).unwrap();
            slot.poke(8, 4, 0).unwrap();
            for (i, m) in [1.0f32, 2.0, 3.0].iter().enumerate() {
                slot.poke(20 + 4 * i, 4, u64::from((v as f32 * m).to_bits()))
                    .unwrap();
                std::thread::yield_now();
            }
            if v.is_multiple_of(16) {
                slot.poke(0, 4, 0xDEAD_BEEF).unwrap();
                wrong += 1;
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
                while h.counted.load(Ordering::Acquire) < wrong
                    && !h.stop.load(Ordering::Relaxed)
                    && std::time::Instant::now() < deadline
                {
                    std::thread::yield_now();
                }
                slot.poke(0, 4, 0).unwrap();
                // A wrong-magic packet is not rewritten: the next one comes.
                continue;
            }
            slot.poke(0, 4, 0x55AA_55AA).unwrap();
            let until = std::time::Instant::now() + std::time::Duration::from_millis(5);
            while h.taken.load(Ordering::Acquire) < v && std::time::Instant::now() < until {
                std::thread::yield_now();
            }
        }
        (v, wrong)
    })
}

/// The article's layout has no sequence word and no CRC. Our reader takes two
/// copies and a packet only when both agree with the magic set; a writer that
/// clears the magic while it rewrites (as ours does) is never read half-done,
/// and a packet with the wrong magic is counted and dropped. (A writer that
/// leaves the magic set while rewriting, as the article's sender does, can leave
/// a stable half-old, half-new packet that no reader can tell from a real one:
/// the framed layout exists for that.)
#[test]
fn the_articles_layout_rejects_a_wrong_magic_and_half_written_packets() {
    let device = format!("loopback:{}", unique("corrupt-seed"));
    let a = node(&device, 0, &[("layout", "seed"), ("syncMode", "free")]);
    assert_eq!(a.init(), fmi2OK);
    let (slot, _) = peer_area(&device);
    let handoff = Arc::new(Handoff::default());
    let writer = seed_writer(slot, handoff.clone());
    let Handoff {
        stop,
        written,
        counted,
        taken,
    } = &*handoff;
    let (mut seen, mut k) = (0, 0i64);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    // Past packet 2000, itself a wrong-magic one (2000 = 125 × 16): the writer goes
    // on to 2001 only once the reader has counted it.
    while written.load(Ordering::Relaxed) <= 2000 && std::time::Instant::now() < deadline {
        assert_eq!(a.step(k as f64 * H, H), fmi2OK);
        let [r, p, y] = a.reals(&["peer.roll", "peer.pitch", "peer.yaw"])[..] else {
            unreachable!()
        };
        assert!(
            p == 2.0 * r && y == 3.0 * r,
            "a half-written packet reached the outputs: ({r}, {p}, {y})"
        );
        if a.boolean("link.ok") {
            seen += 1;
        }
        counted.store(a.integer("link.badFrames") as u64, Ordering::Release);
        taken.store(r as u64, Ordering::Release);
        k += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let (written, wrong) = writer.join().unwrap();
    let bad = a.integer("link.badFrames") as u64;
    println!(
        "seed: {written} packets written field by field, {wrong} of them with a wrong magic, \
         {bad} bad frames counted, {k} steps ({seen} with a live link), no half-written packet \
         taken"
    );
    assert!(seen > 1000, "the reader saw the writer's packets");
    assert!(
        wrong > 0 && bad >= wrong,
        "every wrong magic is counted ({bad} of {wrong})"
    );
}
