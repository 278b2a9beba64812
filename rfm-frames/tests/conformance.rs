//! Frames over every backend: framed frames and the article's packets written
//! through one open and read through another, and slots apart, on loopback,
//! shm and RFM2g through the emulator (rfm-memory's suite of the same name
//! runs the backends' own calls). Under Miri only the loopback backend runs.

#[macro_use]
mod common;

use common::{frame as framed, Fixture, WORDS};
use rfm_frames::frame::framed::{FrameBuf, Header};
use rfm_frames::frame::seed::FlightData;
use rfm_frames::frame::Message;
use rfm_frames::slot::{FramedReader, FramedWriter, ReadError, SeedReader, SeedWriter, StepPoll};
use rfm_memory::RegionError;

/// The frame `slot` publishes at `step`, sealed as a writer seals it.
fn frame(slot: u8, step: u64) -> (FrameBuf, Header) {
    let words: [u64; WORDS] = std::array::from_fn(|i| (step << 8) + i as u64 + u64::from(slot));
    let (mut frame, header) = framed(slot, step, 0xfeed, words);
    frame.seal(&header);
    (frame, header)
}

/// Publishes `slot`'s frame of `step` through `writer`.
fn publish(writer: &mut FramedWriter, slot: u8, step: u64) {
    let (mut f, h) = frame(slot, step);
    writer.publish(&mut f, &h).unwrap();
}

/// Whether `read` holds what `written` held, past the sequence word (which only
/// the ring entry's seqlock sets).
fn same_frame(read: &FrameBuf, written: &FrameBuf) -> bool {
    read.bytes()[4..] == written.bytes()[4..]
}

/// Asserts that `reader` holds exactly `slot`'s frame of `step` for that step.
fn assert_ready(reader: &FramedReader, slot: u8, step: u64) {
    let mut buf = reader.buffer();
    let (f, h) = frame(slot, step);
    assert_eq!(reader.poll_step(step, &mut buf), Ok(StepPoll::Ready(h)));
    assert!(
        same_frame(&buf, &f),
        "step {step}: other bytes than written"
    );
}

fn framed_frames_cross_between_opens(f: Fixture) {
    let (a, b) = (f.open(), f.open());
    let len = common::region_len(2);
    let region_a = a.map(8192, len).unwrap();
    let region_b = b.map(8192, len).unwrap();
    let ring = common::ring();
    let mut writer = FramedWriter::new(common::window(&region_a, 1), ring).unwrap();
    let reader = FramedReader::new(common::window(&region_b, 1), ring).unwrap();
    let mut buf = reader.buffer();
    assert_eq!(reader.read_latest(&mut buf), Err(ReadError::Empty));
    assert_eq!(reader.poll_step(0, &mut buf), Ok(StepPoll::NotYet));
    for step in 0..40 {
        publish(&mut writer, 1, step);
        assert_ready(&reader, 1, step);
        assert_eq!(reader.poll_step(step + 1, &mut buf), Ok(StepPoll::NotYet));
        assert_eq!(reader.read_latest(&mut buf), Ok(frame(1, step).1));
    }
    // Step 20 was overwritten by step 36 (ring of 16).
    assert_eq!(
        reader.poll_step(20, &mut buf),
        Ok(StepPoll::Overwritten {
            found: 36,
            epoch: frame(1, 36).1.epoch
        })
    );
    assert_ready(&reader, 1, 25);
    writer.clear().unwrap();
    assert_eq!(reader.read_latest(&mut buf), Err(ReadError::Empty));
    assert_eq!(reader.poll_step(39, &mut buf), Ok(StepPoll::NotYet));
    // A new writer over the same area continues each entry's sequence.
    let mut again = FramedWriter::new(common::window(&region_a, 1), ring).unwrap();
    publish(&mut again, 1, 0);
    assert_ready(&reader, 1, 0);
}

fn seed_packets_cross_between_opens(f: Fixture) {
    let (a, b) = (f.open(), f.open());
    let len = common::region_len(0);
    let mut writer = SeedWriter::new(common::window(&a.map(0, len).unwrap(), 0)).unwrap();
    let reader = SeedReader::new(common::window(&b.map(0, len).unwrap(), 0)).unwrap();
    assert_eq!(reader.read(), Err(ReadError::Empty));
    let packet = FlightData {
        packet_id: 42,
        timestamp: 1.25,
        attitude: [0.5, -1.5, 3.0],
        status: 1,
        msg: Message::new("Hello RFM").unwrap(),
    };
    writer.publish(&packet).unwrap();
    assert_eq!(reader.read(), Ok(packet));
    // The packet is at the slot's offset, byte for byte: header first.
    let mut header = [0u8; 4];
    b.map(0, 4).unwrap().read(0, &mut header).unwrap();
    assert_eq!(u32::from_le_bytes(header), 0x55AA_55AA);
    writer.clear().unwrap();
    assert_eq!(reader.read(), Err(ReadError::Empty));
}

fn slots_do_not_overlap(f: Fixture) {
    let d = f.open();
    let region = d.map(0, common::region_len(3)).unwrap();
    let ring = common::ring();
    let mut writers: Vec<_> = (0..4)
        .map(|s| FramedWriter::new(common::window(&region, s), ring).unwrap())
        .collect();
    for (s, w) in writers.iter_mut().enumerate() {
        for step in 0..20 {
            publish(w, s as u8, step);
        }
    }
    for s in 0..4u8 {
        let r = FramedReader::new(common::window(&region, s), ring).unwrap();
        let mut buf = r.buffer();
        assert_eq!(r.read_latest(&mut buf), Ok(frame(s, 19).1));
        assert!(same_frame(&buf, &frame(s, 19).0));
    }
    // Slot 2's first ring entry carries its magic 8 bytes in.
    let at = common::area(2).offset as usize + ring.entry_offset(0) + 8;
    assert_eq!(
        region
            .load_u32(at, std::sync::atomic::Ordering::Relaxed)
            .unwrap(),
        u32::from_le_bytes(*b"RFMf")
    );
    assert!(matches!(
        rfm_frames::area::window(&region, &common::area(4)),
        Err(RegionError::OutOfBounds { .. })
    ));
    let small = region.subregion(0, ring.entry_offset(1)).unwrap();
    assert!(matches!(
        FramedWriter::new(small.clone(), ring),
        Err(RegionError::OutOfBounds { .. })
    ));
    assert!(matches!(
        SeedReader::new(region.subregion(0, 32).unwrap()),
        Err(RegionError::OutOfBounds { .. })
    ));
}

// The emulator is a Linux library so far (issue 14 ports it to Windows).
on_every_backend!(
    framed_frames_cross_between_opens,
    seed_packets_cross_between_opens,
    slots_do_not_overlap,
);
