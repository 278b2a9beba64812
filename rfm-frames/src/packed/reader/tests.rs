//! The struct reader on memory written as a lab's program writes it.

use super::*;
use rfm_memory::{Device, OpenOptions};
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Words of the test struct after its marker; each holds the write's number.
const WORDS: usize = 15;
const SIZE: usize = 4 * (WORDS + 1);
const FLAG: u64 = 0x55AA_55AA;

fn memory(name: &str) -> Region {
    let d = Device::open(&format!("loopback:packed-{name}"), &OpenOptions::default()).unwrap();
    d.map(0, 4096).unwrap()
}

/// Writes struct number `k` at `at` (bytes 4.. of the struct) as `mark`'s
/// writer does: a C program's order of stores.
fn write(region: &Region, at: usize, mark: Mark, k: u32) {
    let data = [k.to_le_bytes(); WORDS].concat();
    match mark {
        Mark::Counter { .. } => {
            region
                .store_u32(at, (2 * k + 1).to_le(), Ordering::Release)
                .unwrap();
            fence(Ordering::Release);
            region.write(at + 4, &data).unwrap();
            region
                .store_u32(at, (2 * k + 2).to_le(), Ordering::Release)
                .unwrap();
        }
        Mark::Flag { .. } => {
            region.store_u32(at, 0, Ordering::Release).unwrap();
            fence(Ordering::Release);
            region.write(at + 4, &data).unwrap();
            region
                .store_u32(at, (FLAG as u32).to_le(), Ordering::Release)
                .unwrap();
        }
        Mark::None => region.write(at + 4, &data).unwrap(),
    }
}

/// Whether a taken struct is one write's: every word the same number.
fn whole(bytes: &[u8]) -> bool {
    let words: Vec<&[u8]> = bytes[4..SIZE].chunks(4).collect();
    words.windows(2).all(|w| w[0] == w[1])
}

struct Run {
    taken: u64,
    torn: u64,
    retries: u64,
    gave_up: u64,
}

/// A writer thread rewriting the struct as fast as it can while this one
/// reads, until the writer has written `writes` structs and the reader has
/// seen a retry (or 10 s passed).
fn race(name: &str, mark: Mark, writes: u32) -> Run {
    let region = memory(name);
    let at = 64;
    write(&region, at, mark, 0);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (region, stop) = (region.clone(), stop.clone());
        thread::spawn(move || {
            let mut k = 1;
            while !stop.load(Ordering::Relaxed) {
                write(&region, at, mark, k);
                k += 1;
            }
            k
        })
    };
    let mut reader = StructReader::new(&region, at, SIZE, mark, ByteOrder::Little).unwrap();
    let mut out = [0u8; SIZE];
    let mut run = Run {
        taken: 0,
        torn: 0,
        retries: 0,
        gave_up: 0,
    };
    // Miri runs a thousand times slower and preempts rarely: a few reads,
    // and no retry required there.
    let (writes, deadline) = match cfg!(miri) {
        true => (writes.min(40), Instant::now() + Duration::from_secs(600)),
        false => (writes, Instant::now() + Duration::from_secs(10)),
    };
    let want_retry = !cfg!(miri);
    while Instant::now() < deadline
        && ((want_retry && run.retries == 0) || run.taken < u64::from(writes))
    {
        let r = reader.read(&mut out).unwrap();
        run.retries += u64::from(r.retries);
        match r.outcome {
            Outcome::Taken => {
                run.taken += 1;
                run.torn += u64::from(!whole(&out));
            }
            Outcome::GaveUp => run.gave_up += 1,
            Outcome::NotMarked | Outcome::Unsettled => {}
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    run
}

#[test]
fn a_seqlock_counter_or_a_flag_never_lets_a_torn_struct_through() {
    let marks = [
        (
            "seqlock",
            Mark::Counter {
                at: 0,
                width: 4,
                counting: Counting::Seqlock,
            },
        ),
        (
            "flag",
            Mark::Flag {
                at: 0,
                width: 4,
                value: FLAG,
            },
        ),
    ];
    for (name, mark) in marks {
        let run = race(name, mark, 20_000);
        assert_eq!(run.torn, 0, "{name}: torn structs taken");
        assert!(run.taken >= 40, "{name}: {} taken", run.taken);
        assert!(
            run.retries > 0 || cfg!(miri),
            "{name}: the race never made a read retry"
        );
    }
}

#[test]
fn without_a_handshake_two_copies_must_agree_and_retries_are_counted() {
    let run = race("none", Mark::None, 20_000);
    assert!(
        run.retries > 0,
        "no read retried against a writer rewriting"
    );
    // A writer descheduled mid-write over both copies still passes (the
    // limit the docs state): reported, not asserted away.
    println!(
        "none: {} structs taken, {} retries, {} gave up, {} torn (the writer stalled)",
        run.taken, run.retries, run.gave_up, run.torn
    );
}

/// A 16-bit after-data counter that wraps: the writes it counts go on
/// rising (lockstep waits by them), a seqlock's by half its moves.
#[test]
fn a_narrow_counter_that_wraps_goes_on_counting_writes() {
    let region = memory("wrap");
    for (counting, step, per_write) in [(Counting::AfterData, 1, 1), (Counting::Seqlock, 2, 2)] {
        let mark = Mark::Counter {
            at: 0,
            width: 2,
            counting,
        };
        let mut reader = StructReader::new(&region, 0, 4, mark, ByteOrder::Little).unwrap();
        let mut out = [0u8; 4];
        let first = 65_530u64 - 65_530 % step;
        for k in 0..20u64 {
            let c = (first + k * step) % 65_536;
            region.store_u32(0, c as u32, Ordering::SeqCst).unwrap();
            assert_eq!(reader.read(&mut out).unwrap().outcome, Outcome::Taken);
            assert_eq!(
                reader.writes(),
                Some((first + k * step) / per_write),
                "{counting:?}, counter {c}"
            );
        }
    }
}

#[test]
fn a_struct_at_an_odd_offset_in_big_endian_reads_its_counter_and_bytes() {
    let region = memory("odd");
    // A 2-byte big-endian counter at byte 2 of a struct at offset 102.
    let mark = Mark::Counter {
        at: 2,
        width: 2,
        counting: Counting::Seqlock,
    };
    let bytes: Vec<u8> = (0..8u8).map(|i| 0x10 + i).collect();
    let mut all = [0u8; 112];
    all[102..110].copy_from_slice(&bytes);
    all[104..106].copy_from_slice(&[0, 3]); // 3: odd, a write in progress
    region.write(0, &all).unwrap();
    let mut reader = StructReader::new(&region, 102, 8, mark, ByteOrder::Big)
        .unwrap()
        .with_attempts(3);
    let mut out = [0u8; 8];
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.outcome, r.retries), (Outcome::GaveUp, 2));
    all[104..106].copy_from_slice(&[1, 0]); // 256, even in big-endian
    region.write(0, &all).unwrap();
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.outcome, r.changed), (Outcome::Taken, true));
    assert_eq!(out[..2], bytes[..2]);
    assert_eq!(out[2..4], [1, 0]);
    // The same counter again: taken, not changed (a stopped writer).
    assert!(!reader.read(&mut out).unwrap().changed);
    let odd = Mark::Counter {
        at: 1,
        width: 2,
        counting: Counting::Seqlock,
    };
    let err = StructReader::new(&region, 102, 8, odd, ByteOrder::Big);
    assert!(matches!(err, Err(ReaderError::UnalignedMarker { .. })));
}

#[test]
fn a_flag_never_set_is_not_marked_and_a_set_one_is_taken() {
    let region = memory("flagged");
    let mark = Mark::Flag {
        at: 0,
        width: 4,
        value: FLAG,
    };
    let mut reader = StructReader::new(&region, 0, SIZE, mark, ByteOrder::Little).unwrap();
    let mut out = [0u8; SIZE];
    assert_eq!(reader.read(&mut out).unwrap().outcome, Outcome::NotMarked);
    write(&region, 0, mark, 7);
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.outcome, r.retries, r.changed), (Outcome::Taken, 0, true));
    assert_eq!(out[4..8], 7u32.to_le_bytes());
    assert!(!reader.read(&mut out).unwrap().changed, "the same bytes");
}

/// Two memories as one redundant window (`A+B`), and each ring's own.
fn rings(name: &str) -> (Region, [Region; 2]) {
    let (a, b) = (memory(&format!("{name}-a")), memory(&format!("{name}-b")));
    let both = Region::redundant(a.clone(), b.clone()).unwrap();
    (both, [a, b])
}

const SEQLOCK: Mark = Mark::Counter {
    at: 0,
    width: 4,
    counting: Counting::Seqlock,
};

/// On two rings a counted struct comes from the ring whose counter is
/// newer; a ring that lags (cut, then mended with what it held) never
/// gives an older struct; both rings agreeing on a lower counter is the
/// program restarted, taken.
#[test]
fn a_counted_struct_on_two_rings_is_the_newer_and_never_older() {
    let (both, [_, b]) = rings("two-counted");
    let mut reader = StructReader::new(&both, 0, SIZE, SEQLOCK, ByteOrder::Little).unwrap();
    let mut out = [0u8; SIZE];
    let word = |out: &[u8]| u32::from_le_bytes(out[4..8].try_into().unwrap());
    write(&both, 0, SEQLOCK, 5);
    let r = reader.read(&mut out).unwrap();
    assert_eq!(
        (r.outcome, r.ring, word(&out)),
        (Outcome::Taken, Network::A, 5)
    );
    // Ring A stops carrying the writes: B's newer struct is taken.
    write(&b, 0, SEQLOCK, 9);
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.ring, r.changed, word(&out)), (Network::B, true, 9));
    assert_eq!(r.holding, [false, true]);
    // Ring B now lags (cut) and A is mended with what it held (write 5):
    // not taken; the struct stays write 9.
    b.store_u32(0, 1, Ordering::SeqCst).unwrap(); // B mid-write, forever
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.changed, word(&out)), (false, 9), "{r:?}");
    // The program writes both again: its next write, from either ring.
    write(&both, 0, SEQLOCK, 10);
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.changed, word(&out)), (true, 10));
    // Restarted: both rings at write 1.
    write(&both, 0, SEQLOCK, 1);
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.changed, word(&out)), (true, 1));
}

/// Without a counter a struct one ring alone holds is not taken until the
/// other stood still over two of its moves: a torn struct a cut left on
/// one ring is never given, and a cut ring's writes come from the other.
#[test]
fn a_struct_without_counter_on_two_rings_is_taken_when_both_agree_or_one_is_still() {
    let (both, [a, b]) = rings("two-none");
    let mut reader = StructReader::new(&both, 0, SIZE, Mark::None, ByteOrder::Little).unwrap();
    let mut out = [0u8; SIZE];
    let word = |out: &[u8]| u32::from_le_bytes(out[4..8].try_into().unwrap());
    write(&both, 0, Mark::None, 3);
    assert_eq!(reader.read(&mut out).unwrap().outcome, Outcome::Taken);
    assert_eq!(word(&out), 3);
    // A cut in the middle of a write leaves ring A torn (half of write 4):
    // one ring's struct alone, not taken.
    a.write(4, &4u32.to_le_bytes()).unwrap();
    let r = reader.read(&mut out).unwrap();
    assert_eq!(
        (r.changed, word(&out), r.holding),
        (false, 3, [false, true])
    );
    // Ring B carries writes 4 and 5 while A stands still: write 5 is taken
    // from B (write 4 was B's alone while A's state was unclear).
    write(&b, 0, Mark::None, 4);
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.outcome, r.changed), (Outcome::Unsettled, false));
    write(&b, 0, Mark::None, 5);
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.changed, r.ring, word(&out)), (true, Network::B, 5));
    // The torn struct on A is never given, however long it stays.
    for _ in 0..3 {
        assert!(!reader.read(&mut out).unwrap().changed);
        assert_eq!(word(&out), 5);
    }
    // Mended: both rings hold the next write.
    write(&both, 0, Mark::None, 6);
    let r = reader.read(&mut out).unwrap();
    assert_eq!((r.changed, word(&out), r.holding), (true, 6, [true, true]));
}
