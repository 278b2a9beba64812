//! One conformance suite, run against every backend: loopback and shm, and
//! RFM2g through a library with the vendor's ABI (the emulator, `rfm2g-sim`).
//! Under Miri only the loopback backend runs (no shm_open or dlopen there).
//! rfm-frames' suite of the same name runs frames over the same backends.

#[macro_use]
mod common;

use common::{Fixture, FIXTURE_SIZE as SIZE};
use rfm_memory::{DeviceError, RegionError};

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

// The emulator is a Linux library so far (issue 14 ports it to Windows).
on_every_backend!(
    opens_with_the_expected_size,
    two_opens_share_one_memory,
    regions_outlive_their_device,
    windows_outside_memory_are_refused,
);
