//! Region against heap memory: every width, every bound.

use super::*;

/// A heap-backed region for unit tests (the loopback backend does the same).
fn heap_region(len: usize) -> Region {
    let storage: Arc<Vec<AtomicU32>> =
        Arc::new((0..len / WORD).map(|_| AtomicU32::new(0)).collect());
    let base = NonNull::new(storage.as_ptr().cast_mut().cast::<u8>()).unwrap();
    // SAFETY: the Vec's buffer is aligned for AtomicU32, `len` bytes long, and kept
    // alive by the owner Arc; it is only touched through atomics.
    unsafe { Region::from_raw_parts(base, len, storage) }
}

#[test]
fn round_trips_bytes_and_words() {
    let r = heap_region(64);
    r.write(8, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    let mut out = [0u8; 8];
    r.read(8, &mut out).unwrap();
    assert_eq!(out, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(
        r.load_u32(8, Ordering::Acquire).unwrap(),
        u32::from_ne_bytes([1, 2, 3, 4])
    );
    r.store_u32(60, 0xdead_beef, Ordering::Release).unwrap();
    assert_eq!(r.load_u32(60, Ordering::Relaxed).unwrap(), 0xdead_beef);
    r.fill(0, 8, 0xab).unwrap();
    r.read(0, &mut out).unwrap();
    assert_eq!(out, [0xab; 8]);
}

#[test]
fn single_accesses_of_every_width_are_little_endian_and_checked() {
    let r = heap_region(16);
    r.poke(0, 8, 0x0807_0605_0403_0201).unwrap();
    let mut bytes = [0u8; 8];
    r.read(0, &mut bytes).unwrap();
    assert_eq!(bytes, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(r.peek(1, 1), Ok(2));
    assert_eq!(r.peek(2, 2), Ok(0x0403));
    assert_eq!(r.peek(4, 4), Ok(0x0807_0605));
    r.poke(9, 1, 0xaa).unwrap();
    r.poke(10, 2, 0xbbcc).unwrap();
    assert_eq!(r.peek(8, 4), Ok(0xbbcc_aa00));
    assert_eq!(
        r.peek(1, 2),
        Err(RegionError::UnalignedAccess {
            offset: 1,
            width: 2
        })
    );
    assert_eq!(
        r.peek(4, 8),
        Err(RegionError::UnalignedAccess {
            offset: 4,
            width: 8
        })
    );
    assert_eq!(
        r.poke(15, 2, 0),
        Err(RegionError::OutOfBounds {
            offset: 15,
            len: 2,
            region_len: 16
        })
    );
    assert_eq!(r.peek(16, 1).unwrap_err().to_string(), "access of 1 bytes at offset 16 is outside the 16-byte region (it must end at or before byte 16)");
    assert_eq!(
        r.peek(usize::MAX, 8),
        Err(RegionError::OutOfBounds {
            offset: usize::MAX,
            len: 8,
            region_len: 16
        })
    );
    assert_eq!(r.peek(0, 3), Err(RegionError::BadWidth { width: 3 }));
}

#[test]
fn refuses_every_access_that_leaves_the_window() {
    let r = heap_region(64);
    let mut buf = [0u8; 8];
    let oob = |offset, len| RegionError::OutOfBounds {
        offset,
        len,
        region_len: 64,
    };
    assert_eq!(r.read(60, &mut buf), Err(oob(60, 8)));
    assert_eq!(r.write(64, &buf[..4]), Err(oob(64, 4)));
    assert_eq!(r.load_u32(64, Ordering::Relaxed), Err(oob(64, 4)));
    assert_eq!(
        r.store_u32(usize::MAX - 3, 0, Ordering::Relaxed),
        Err(oob(usize::MAX - 3, 4))
    );
    assert_eq!(r.fill(usize::MAX - 3, 8, 0), Err(oob(usize::MAX - 3, 8)));
    assert_eq!(r.subregion(32, 36).unwrap_err(), oob(32, 36));
    assert_eq!(
        r.read(2, &mut buf),
        Err(RegionError::UnalignedOffset { offset: 2 })
    );
    assert_eq!(
        r.read(0, &mut buf[..3]),
        Err(RegionError::UnalignedLength { len: 3 })
    );
    let msg = oob(60, 8).to_string();
    assert!(
        msg.contains("8 bytes at offset 60") && msg.contains("64-byte region"),
        "{msg}"
    );
}

#[test]
fn subregions_share_memory_and_are_bounded_by_their_own_length() {
    let r = heap_region(64);
    let sub = r.subregion(16, 16).unwrap();
    sub.store_u32(0, 7, Ordering::Relaxed).unwrap();
    assert_eq!(r.load_u32(16, Ordering::Relaxed).unwrap(), 7);
    assert!(matches!(
        sub.load_u32(16, Ordering::Relaxed),
        Err(RegionError::OutOfBounds { .. })
    ));
    drop(r);
    // The clone keeps the storage alive after the parent is gone.
    assert_eq!(sub.load_u32(0, Ordering::Relaxed).unwrap(), 7);
}
