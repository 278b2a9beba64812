//! One conformance suite, run against every backend: loopback and shm, and RFM2g
//! through a library with the vendor's ABI (the emulator, `rfm2g-sim`).
//! Under Miri only the loopback backend runs (no shm_open or dlopen there).

mod common;

use rfm_core::link::Sample;
use rfm_frames::frame::framed::{FrameBuf, Header};
use rfm_frames::frame::seed::FlightData;
use rfm_frames::frame::Message;
use rfm_frames::slot::{FramedReader, FramedWriter, ReadError, SeedReader, SeedWriter, StepPoll};
use rfm_interface as interface;
use rfm_memory::{Device, DeviceError, OpenOptions, RegionError};

const SIZE: usize = 1 << 20;

/// A device string and options naming one memory no other test uses.
struct Fixture {
    device: String,
    options: OpenOptions,
    #[cfg(not(miri))]
    _guard: Option<Box<dyn std::any::Any>>,
}

impl Fixture {
    fn open(&self) -> Device {
        Device::open(&self.device, &self.options)
            .unwrap_or_else(|e| panic!("open {}: {e}", self.device))
    }
}

fn loopback() -> Fixture {
    Fixture {
        device: format!("loopback:{}", common::unique("conf")),
        options: OpenOptions {
            memory_size: SIZE,
            ..OpenOptions::default()
        },
        #[cfg(not(miri))]
        _guard: None,
    }
}

#[cfg(not(miri))]
fn shm() -> Fixture {
    let name = common::unique("rfm-core-conf");
    Fixture {
        device: format!("shm:{name}"),
        options: OpenOptions {
            memory_size: SIZE,
            ..OpenOptions::default()
        },
        _guard: Some(Box::new(common::ShmGuard(name))),
    }
}

/// Node 0 of a ring of its own; every open is the same board, as when two
/// programs on one PC open `/dev/rfm2g0`.
#[cfg(all(not(miri), target_os = "linux"))]
fn rfm2g_sim() -> Fixture {
    let ring = common::unique("conf");
    Fixture {
        device: format!("/dev/rfm2g-sim/{ring}/0/1M"),
        options: OpenOptions {
            // Ignored for RFM2g: the board has its own size (1M in the path).
            memory_size: SIZE,
            rfm2g_library: Some(common::sim_library()),
            ..OpenOptions::default()
        },
        _guard: Some(Box::new(common::RingGuard(ring))),
    }
}

/// As [`rfm2g_sim`], with the driver's DMA threshold set and every block of
/// a frame from 4 bytes on read with one `RFM2gRead`: the card's read path.
#[cfg(all(not(miri), target_os = "linux"))]
fn rfm2g_sim_dma() -> Fixture {
    let mut fixture = rfm2g_sim();
    fixture.options.block_reads_from = Some(4);
    fixture.open().set_dma_threshold(0).unwrap();
    fixture
}

/// The attitude frame `slot` publishes at `step`, sealed as a writer seals it.
fn frame(slot: u8, step: u64) -> (FrameBuf, Header) {
    let sample = Sample {
        sim_time: step as f64 * 0.001,
        attitude: [step as f64, -(step as f64), 0.5],
        status: (step % 256) as u8,
        message: Message::new(&format!("s{slot} k{step}")).unwrap(),
    };
    let (mut frame, header) = common::attitude_frame(slot, slot, step, 0xfeed, &sample);
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

fn opens_with_the_expected_size(f: Fixture) {
    let d = f.open();
    assert_eq!(d.size(), SIZE as u64);
    let info = d.info();
    assert_eq!(info.device, f.device);
    assert_eq!(
        info.node_id.is_some(),
        f.device.starts_with('/'),
        "{info:?}"
    );
}

fn two_opens_share_one_memory(f: Fixture) {
    let (a, b) = (f.open(), f.open());
    let wa = a.map(4096, 64).unwrap();
    wa.write(0, &(0u8..64).collect::<Vec<_>>()).unwrap();
    let mut got = [0u8; 64];
    b.map(4096, 64).unwrap().read(0, &mut got).unwrap();
    assert_eq!(got.to_vec(), (0u8..64).collect::<Vec<_>>());
    // A window that does not start on a page (RFM2g rounds the mapping out to pages).
    let mut mid = [0u8; 8];
    b.map(4100, 8).unwrap().read(0, &mut mid).unwrap();
    assert_eq!(mid, [4, 5, 6, 7, 8, 9, 10, 11]);
}

fn regions_outlive_their_device(f: Fixture) {
    let d = f.open();
    let r = d.map(0, 16).unwrap();
    drop(d);
    r.write(8, &[9, 9, 9, 9]).unwrap();
    let mut got = [0u8; 4];
    f.open().map(8, 4).unwrap().read(0, &mut got).unwrap();
    assert_eq!(got, [9, 9, 9, 9]);
}

fn windows_outside_memory_are_refused(f: Fixture) {
    let d = f.open();
    for (offset, len) in [(SIZE as u64 - 4, 8), (SIZE as u64, 4), (u64::MAX - 3, 8)] {
        let err = d.map(offset, len).unwrap_err();
        assert!(
            matches!(err, DeviceError::WindowOutOfRange(_)),
            "{offset}+{len}: {err:?}"
        );
        assert!(
            err.to_string()
                .contains(&format!("{len} bytes at offset {offset}")),
            "{err}"
        );
    }
    assert!(matches!(
        d.map(2, 4),
        Err(DeviceError::UnalignedWindow { offset: 2, .. })
    ));
    let r = d.map(SIZE as u64 - 8, 8).unwrap();
    assert!(matches!(
        r.read(4, &mut [0u8; 8]),
        Err(RegionError::OutOfBounds { .. })
    ));
    assert!(matches!(
        r.store_u32(8, 0, std::sync::atomic::Ordering::Relaxed),
        Err(RegionError::OutOfBounds { .. })
    ));
}

fn framed_frames_cross_between_opens(f: Fixture) {
    let (a, b) = (f.open(), f.open());
    let len = interface::attitude_region_len(2);
    let region_a = a.map(8192, len).unwrap();
    let region_b = b.map(8192, len).unwrap();
    let ring = common::attitude_ring();
    let mut writer = FramedWriter::new(common::attitude_area(&region_a, 1), ring).unwrap();
    let reader = FramedReader::new(common::attitude_area(&region_b, 1), ring).unwrap();
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
    let mut again = FramedWriter::new(common::attitude_area(&region_a, 1), ring).unwrap();
    publish(&mut again, 1, 0);
    assert_ready(&reader, 1, 0);
}

fn seed_packets_cross_between_opens(f: Fixture) {
    let (a, b) = (f.open(), f.open());
    let len = interface::attitude_region_len(0);
    let mut writer = SeedWriter::new(common::attitude_area(&a.map(0, len).unwrap(), 0)).unwrap();
    let reader = SeedReader::new(common::attitude_area(&b.map(0, len).unwrap(), 0)).unwrap();
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
    let region = d.map(0, interface::attitude_region_len(3)).unwrap();
    let ring = common::attitude_ring();
    let mut writers: Vec<_> = (0..4)
        .map(|s| FramedWriter::new(common::attitude_area(&region, s), ring).unwrap())
        .collect();
    for (s, w) in writers.iter_mut().enumerate() {
        for step in 0..20 {
            publish(w, s as u8, step);
        }
    }
    for s in 0..4u8 {
        let r = FramedReader::new(common::attitude_area(&region, s), ring).unwrap();
        let mut buf = r.buffer();
        assert_eq!(r.read_latest(&mut buf), Ok(frame(s, 19).1));
        assert!(same_frame(&buf, &frame(s, 19).0));
    }
    // Slot 2's first ring entry carries its magic 8 bytes in.
    let at = interface::attitude_area(2).offset as usize + ring.entry_offset(0) + 8;
    assert_eq!(
        region
            .load_u32(at, std::sync::atomic::Ordering::Relaxed)
            .unwrap(),
        u32::from_le_bytes(*b"RFMf")
    );
    assert!(matches!(
        rfm_frames::area::window(&region, &interface::attitude_area(4)),
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

macro_rules! conformance {
    ($backend:ident $(, #[$attr:meta])?) => {
        $(#[$attr])?
        mod $backend {
            #[test]
            fn opens_with_the_expected_size() { super::opens_with_the_expected_size(super::$backend()) }
            #[test]
            fn two_opens_share_one_memory() { super::two_opens_share_one_memory(super::$backend()) }
            #[test]
            fn regions_outlive_their_device() { super::regions_outlive_their_device(super::$backend()) }
            #[test]
            fn windows_outside_memory_are_refused() { super::windows_outside_memory_are_refused(super::$backend()) }
            #[test]
            fn framed_frames_cross_between_opens() { super::framed_frames_cross_between_opens(super::$backend()) }
            #[test]
            fn seed_packets_cross_between_opens() { super::seed_packets_cross_between_opens(super::$backend()) }
            #[test]
            fn slots_do_not_overlap() { super::slots_do_not_overlap(super::$backend()) }
        }
    };
}

conformance!(loopback);
conformance!(shm, #[cfg(not(miri))]);
// The emulator is a Linux library so far (issue 14 ports it to Windows).
conformance!(rfm2g_sim, #[cfg(all(not(miri), target_os = "linux"))]);
conformance!(rfm2g_sim_dma, #[cfg(all(not(miri), target_os = "linux"))]);
