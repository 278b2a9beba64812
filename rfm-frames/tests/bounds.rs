//! No public API reaches outside its window. A window in the middle of a larger
//! memory is attacked through every call that takes an offset or a length, at and
//! past its end and with overflowing values; the bytes around it, set to a
//! sentinel, must be untouched afterwards, and every attempt must be an error.

mod common;

use std::sync::atomic::Ordering;

use rfm_frames::slot::{FramedReader, FramedWriter, SeedReader, SeedWriter};
use rfm_memory::{Device, DeviceError, OpenOptions, Region, RegionError};

const SIZE: usize = 64 << 10;
/// The attacked window: two attitude slots in the middle of the memory.
const AT: usize = 16 << 10;
const SLOT_SIZE: usize = common::STRIDE as usize;
const LEN: usize = 2 * SLOT_SIZE;
const SENTINEL: u8 = 0xA5;

/// Counts the attempts refused, each for lying beyond the window.
#[derive(Default)]
struct Refused(usize);

impl Refused {
    /// `r` is refused, and for the reason that it lies beyond the window (a
    /// peek or poke at an odd offset may be refused first for its alignment,
    /// also before any byte is touched).
    fn expect(&mut self, what: &str, r: Result<(), RegionError>) {
        match r {
            Err(RegionError::OutOfBounds { .. }) => {}
            Err(RegionError::UnalignedAccess { .. }) if what == "peek" || what == "poke" => {}
            other => panic!("{what}: {other:?}, expected an out-of-bounds refusal"),
        }
        self.0 += 1;
    }
}

fn attack(device: &Device) {
    let whole = device.map(0, SIZE).unwrap();
    whole.fill(0, SIZE, SENTINEL).unwrap();
    let w = device.map(AT as u64, LEN).unwrap();
    w.fill(0, LEN, 0).unwrap();
    let mut refused = Refused::default();
    attack_accesses(&w, &mut refused);
    attack_slots(&w, &mut refused);
    // Windows past the device's end.
    for (offset, len) in [
        (SIZE as u64 - 4, 8),
        (SIZE as u64, 4),
        (u64::MAX - 3, 8),
        (0, SIZE + 4),
    ] {
        assert!(
            matches!(
                device.map(offset, len),
                Err(DeviceError::WindowOutOfRange(_))
            ),
            "map({offset}, {len})"
        );
        refused.0 += 1;
    }
    let mut all = vec![0u8; SIZE];
    whole.read(0, &mut all).unwrap();
    let outside = all[..AT].iter().chain(&all[AT + LEN..]);
    assert!(
        outside.clone().all(|b| *b == SENTINEL),
        "a byte outside the window changed"
    );
    println!(
        "{}: {} out-of-bounds attempts refused, nothing outside the window changed",
        device.name(),
        refused.0
    );
}

/// Every access that takes an offset or a length, at and past the window's
/// end and with overflowing values.
fn attack_accesses(w: &Region, refused: &mut Refused) {
    let mut buf = [0u8; 64];
    for offset in [
        LEN - 3,
        LEN - 2,
        LEN - 1,
        LEN,
        LEN + 4,
        usize::MAX - 3,
        usize::MAX,
    ] {
        let word = offset & !3;
        let past = |at: usize, len: usize| at.checked_add(len).is_none_or(|end| end > LEN);
        if past(word, 4) {
            refused.expect("store_u32", w.store_u32(word, 1, Ordering::Relaxed));
            refused.expect("load_u32", w.load_u32(word, Ordering::Relaxed).map(|_| ()));
        }
        for width in [1, 2, 4, 8] {
            if past(offset, width) {
                refused.expect("poke", w.poke(offset, width, u64::MAX));
                refused.expect("peek", w.peek(offset, width).map(|_| ()));
            }
        }
        for len in [4, 8, 64] {
            if past(word, len) {
                refused.expect("write", w.write(word, &buf[..len]));
                refused.expect("read", w.read(word, &mut buf[..len]));
                refused.expect("fill", w.fill(word, len, 0xFF));
                refused.expect("subregion", w.subregion(word, len).map(|_| ()));
            }
        }
    }
    refused.expect("write of usize::MAX", w.fill(4, usize::MAX & !3, 0xFF));
}

/// Slots past the window, readers and writers on slots too short, and readers
/// over garbage, which read only inside their slot whatever the head says.
fn attack_slots(w: &Region, refused: &mut Refused) {
    let area = |slot| rfm_frames::area::window(w, &common::area(slot));
    refused.expect("slot 2 of a 2-slot window", area(2).map(|_| ()));
    refused.expect("slot 255", area(255).map(|_| ()));
    let ring = common::ring();
    let small = w.subregion(0, common::area(0).len - 4).unwrap();
    refused.expect(
        "FramedWriter on a short slot",
        FramedWriter::new(small.clone(), ring).map(|_| ()),
    );
    refused.expect(
        "FramedReader on a short slot",
        FramedReader::new(small.clone(), ring).map(|_| ()),
    );
    refused.expect(
        "SeedWriter on a short slot",
        SeedWriter::new(w.subregion(0, 64).unwrap()).map(|_| ()),
    );
    refused.expect(
        "SeedReader on a short slot",
        SeedReader::new(w.subregion(0, 64).unwrap()).map(|_| ()),
    );
    w.fill(0, LEN, 0xFF).unwrap();
    let reader = FramedReader::new(area(1).unwrap(), ring).unwrap();
    let mut frame = reader.buffer();
    for step in [0, 15, 16, u64::from(u32::MAX), u64::MAX] {
        let _ = reader.read_entry(step, &mut frame);
        let _ = reader.poll_step(step, &mut frame);
    }
    let _ = reader.read_latest(&mut frame);
    let _ = SeedReader::new(area(0).unwrap()).unwrap().read();
}

#[test]
fn loopback_windows_cannot_be_left() {
    let device = Device::open(
        &format!("loopback:{}", common::unique("bounds")),
        &OpenOptions {
            memory_size: SIZE,
            rfm2g_library: None,
            existing_only: false,
            dma_reads_from: None,
        },
    )
    .unwrap();
    attack(&device);
}

#[cfg(not(miri))]
#[test]
fn shm_windows_cannot_be_left() {
    let name = common::unique("bounds");
    let _guard = common::ShmGuard(name.clone());
    let device = Device::open(
        &format!("shm:{name}"),
        &OpenOptions {
            memory_size: SIZE,
            rfm2g_library: None,
            existing_only: false,
            dma_reads_from: None,
        },
    )
    .unwrap();
    attack(&device);
}

#[cfg(not(miri))]
#[test]
fn rfm2g_windows_cannot_be_left() {
    let ring = common::unique("bounds");
    let _ring = common::RingGuard(ring.clone());
    let device = Device::open(
        &format!("/dev/rfm2g-sim/{ring}/1/64K"),
        &OpenOptions {
            memory_size: SIZE,
            rfm2g_library: Some(common::sim_library()),
            existing_only: false,
            dma_reads_from: None,
        },
    )
    .unwrap();
    attack(&device);
}
