//! A writer thread rewrites one frame as fast as it can while a reader reads it
//! over and over: every frame the reader accepts must be internally consistent
//! (all its fields derived from one counter), and counters never go backwards.
//! Runs under Miri too (with small counts), where the scheduler preempts threads
//! at every atomic access.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use common::WORDS;
use rfm_frames::area::RING_DEPTH;
use rfm_frames::frame::framed::{FrameBuf, Header, SyncMode};
use rfm_frames::frame::seed::{FlightData, SEQUENCE_OFFSET};
use rfm_frames::frame::Message;
use rfm_frames::slot::{FramedReader, FramedWriter, ReadError, SeedReader, SeedWriter};
use rfm_memory::{Device, OpenOptions, Region};

const READS: u32 = if cfg!(miri) {
    60
} else if cfg!(debug_assertions) {
    500_000
} else {
    2_000_000
};

fn region() -> Region {
    let device = format!("loopback:{}", common::unique("torn"));
    Device::open(&device, &OpenOptions::default())
        .unwrap()
        .map(0, common::region_len(0))
        .unwrap()
}

/// Slot 0's area of `region`.
fn area(region: &Region) -> Region {
    common::window(region, 0)
}

/// Frame number `c`: every field a function of `c`, all written to ring entry 0.
fn framed(c: u64) -> (Header, [u64; WORDS]) {
    let header = Header {
        writer_slot: 0,
        lag: (c % 7) as u8,
        mode: SyncMode::Free,
        epoch: c ^ 0xa5a5_a5a5_a5a5_a5a5,
        fingerprint: c.wrapping_mul(3),
        step: c * RING_DEPTH as u64,
        sim_time: c as f64,
        wall_clock_ns: c + 1,
    };
    let words = std::array::from_fn(|i| c.rotate_left(i as u32 * 8) ^ i as u64);
    (header, words)
}

fn packet(c: u64) -> FlightData {
    let small = (c % (1 << 20)) as f32;
    FlightData {
        packet_id: c,
        timestamp: c as f64,
        attitude: [small, small + 1.0, -small],
        status: c as u8,
        msg: Message::new(&format!("packet {c}")).unwrap(),
    }
}

/// Runs a writer (`write(c)` for c = 1, 2, …) against `READS` calls of `read`,
/// checking each accepted value with `counter_of` (None = inconsistent).
fn race<T: std::fmt::Debug>(
    write: impl FnMut(u64) + Send + 'static,
    mut read: impl FnMut() -> Result<T, ReadError>,
    counter_of: impl Fn(&T) -> Option<u64>,
) {
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = Arc::clone(&stop);
        let mut write = write;
        thread::spawn(move || {
            let mut c = 1;
            // Under Miri every write is interpreted: bound them so the run stays short.
            let most = if cfg!(miri) {
                4 * u64::from(READS)
            } else {
                u64::MAX
            };
            while !stop.load(Ordering::Relaxed) && c <= most {
                write(c);
                c += 1;
            }
            c
        })
    };
    let (mut accepted, mut rejected, mut last) = (0u64, 0u64, 0u64);
    for _ in 0..READS {
        match read() {
            Ok(value) => {
                let c = counter_of(&value)
                    .unwrap_or_else(|| panic!("accepted an inconsistent frame: {value:?}"));
                assert!(c >= last, "counter went backwards: {last} then {c}");
                last = c;
                accepted += 1;
            }
            Err(ReadError::Empty) => {}
            Err(ReadError::Unreadable { .. }) => rejected += 1,
            Err(e) => panic!("unexpected read error: {e}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    eprintln!("{READS} reads against {written} writes: {accepted} accepted, {rejected} gave up, last counter {last}");
    assert!(accepted > 0, "the reader never got a frame");
}

fn framed_counter(f: &(Header, [u64; WORDS])) -> Option<u64> {
    let c = f.0.step / RING_DEPTH as u64;
    (f.0.step.is_multiple_of(RING_DEPTH as u64) && *f == framed(c)).then_some(c)
}

fn seed_counter(p: &FlightData) -> Option<u64> {
    (*p == packet(p.packet_id)).then_some(p.packet_id)
}

#[test]
fn framed_reader_never_accepts_a_torn_frame() {
    let region = region();
    let ring = common::ring();
    let mut writer = FramedWriter::new(area(&region), ring).unwrap();
    let reader = FramedReader::new(area(&region), ring).unwrap();
    let mut frame = FrameBuf::new(ring.payload_len);
    let mut buf = reader.buffer();
    race(
        move |c| {
            let (header, words) = framed(c);
            common::write_words(&mut frame, words);
            writer.publish(&mut frame, &header).unwrap()
        },
        || {
            let header = reader.read_entry(0, &mut buf)?;
            Ok((header, common::words(&buf)))
        },
        framed_counter,
    );
}

#[test]
fn seed_reader_never_accepts_a_torn_packet() {
    let region = region();
    let mut writer = SeedWriter::new(area(&region)).unwrap();
    let reader = SeedReader::new(area(&region)).unwrap();
    race(
        move |c| writer.publish(&packet(c)).unwrap(),
        || reader.read(),
        seed_counter,
    );
}

/// The consistency checks above do catch a mix of two frames.
#[test]
fn the_checks_reject_mixed_frames() {
    let mut words = framed(9).1;
    words[WORDS / 2..].copy_from_slice(&framed(8).1[WORDS / 2..]);
    let mixed = (framed(9).0, words);
    assert_eq!(framed_counter(&mixed), None);
    assert_eq!(framed_counter(&framed(9)), Some(9));
    let mixed = FlightData {
        msg: packet(4).msg,
        ..packet(5)
    };
    assert_eq!(seed_counter(&mixed), None);
    assert_eq!(seed_counter(&packet(5)), Some(5));
}

/// Two copies can agree and still be torn (two rewrites tearing them alike):
/// the sequence word is what tells the reader our writer was inside.
#[test]
fn the_seed_reader_takes_no_packet_while_the_sequence_is_odd() {
    let region = region();
    let mut writer = SeedWriter::new(area(&region)).unwrap();
    let reader = SeedReader::new(area(&region)).unwrap().with_attempts(4);
    writer.publish(&packet(5)).unwrap();
    let slot = area(&region);
    let seq = slot.load_u32(SEQUENCE_OFFSET, Ordering::Acquire).unwrap();
    slot.store_u32(SEQUENCE_OFFSET, seq | 1, Ordering::Release)
        .unwrap();
    match reader.read() {
        Err(ReadError::Unreadable { rejections, .. }) => assert_eq!(rejections.in_progress, 4),
        other => panic!("took {other:?} from a packet being rewritten"),
    }
    slot.store_u32(SEQUENCE_OFFSET, seq + 2, Ordering::Release)
        .unwrap();
    assert_eq!(reader.read().unwrap(), packet(5));
}

/// Each publish moves the sequence by two; a writer on a memory another left,
/// even one that stopped inside a packet, goes on from there.
#[test]
fn the_seed_writer_goes_on_from_the_sequence_in_memory() {
    let region = region();
    let slot = area(&region);
    let seq = || slot.load_u32(SEQUENCE_OFFSET, Ordering::Acquire).unwrap();
    let mut writer = SeedWriter::new(area(&region)).unwrap();
    writer.publish(&packet(1)).unwrap();
    writer.publish(&packet(2)).unwrap();
    assert_eq!(seq(), 4);
    slot.store_u32(SEQUENCE_OFFSET, 7, Ordering::Release)
        .unwrap();
    let mut next = SeedWriter::new(area(&region)).unwrap();
    next.publish(&packet(3)).unwrap();
    assert_eq!(seq(), 10);
    next.clear().unwrap();
    assert_eq!(seq(), 12);
}
