//! The ring's memory through every access path: one memory per ring, accesses
//! and copies kept inside it, and mappings by the page rules.

use super::*;

#[test]
fn one_memory_per_ring_through_every_access_path() {
    let (_g, a, b) = ring("64K");
    let mut ptr: *mut c_void = null_mut();
    // SAFETY: open handles, valid pointers and lengths throughout.
    unsafe {
        assert_eq!(RFM2gUserMemory(b.0, &mut ptr, 8192, 2), SUCCESS);
        let mapped = ptr.cast::<u32>();
        assert_eq!(RFM2gPoke32(a.0, 8192 + 8, 0xA1B2_C3D4), SUCCESS);
        assert_eq!(
            mapped.add(2).read_volatile(),
            0xA1B2_C3D4,
            "a poke shows in b's mapping"
        );
        mapped.add(3).write_volatile(0x0102_0304);
        let (mut v8, mut v16, mut v32) = (0u8, 0u16, 0u32);
        assert_eq!(RFM2gPeek32(a.0, 8192 + 12, &mut v32), SUCCESS);
        assert_eq!(RFM2gPeek16(a.0, 8192 + 12, &mut v16), SUCCESS);
        assert_eq!(RFM2gPeek8(a.0, 8192 + 15, &mut v8), SUCCESS);
        assert_eq!((v32, v16, v8), (0x0102_0304, 0x0304, 0x01));
        let text = *b"unaligned copies work, 31 bytes";
        assert_eq!(
            RFM2gWrite(a.0, 8192 + 101, text.as_ptr() as *mut c_void, 31),
            SUCCESS
        );
        let mut back = [0u8; 31];
        assert_eq!(
            RFM2gRead(b.0, 8192 + 101, back.as_mut_ptr().cast(), 31),
            SUCCESS
        );
        assert_eq!(back, text);
        assert_eq!(ptr.cast::<u8>().add(101).read_volatile(), b'u');
        assert_eq!(RFM2gPoke16(b.0, 10, 0xBEEF), SUCCESS);
        assert_eq!(RFM2gPoke8(b.0, 12, 0x7F), SUCCESS);
        assert_eq!(RFM2gPeek32(a.0, 8, &mut v32), SUCCESS);
        assert_eq!(v32, 0xBEEF_0000);
        assert_eq!(RFM2gPeek32(a.0, 12, &mut v32), SUCCESS);
        assert_eq!(v32, 0x7F);
        assert_eq!(RFM2gUnMapUserMemory(b.0, &mut ptr, 2), SUCCESS);
        assert!(ptr.is_null());
    }
}

#[test]
fn single_accesses_and_copies_stay_inside_the_memory() {
    let (_g, a, _b) = ring("64K");
    let end = 64u32 << 10;
    let (mut v8, mut v16, mut v32, mut v64) = (0u8, 0u16, 0u32, 0u64);
    let mut buf = [0u8; 16];
    // SAFETY: open handle, valid out pointers and buffers.
    unsafe {
        assert_eq!(RFM2gPeek32(a.0, end - 4, &mut v32), SUCCESS);
        assert_eq!(RFM2gPeek32(a.0, end, &mut v32), OUT_OF_RANGE);
        assert_eq!(RFM2gPeek32(a.0, u32::MAX - 1, &mut v32), OUT_OF_RANGE);
        assert_eq!(RFM2gPoke16(a.0, end - 1, 1), OUT_OF_RANGE);
        assert_eq!(RFM2gPeek8(a.0, end, &mut v8), OUT_OF_RANGE);
        assert_eq!(RFM2gPeek32(a.0, 2, &mut v32), UNALIGNED_OFFSET);
        assert_eq!(RFM2gPoke16(a.0, 3, 1), UNALIGNED_OFFSET);
        assert_eq!(RFM2gPeek16(a.0, 1, &mut v16), UNALIGNED_OFFSET);
        assert_eq!(RFM2gPeek32(a.0, 0, null_mut()), BAD_PARAMETER_3);
        assert_eq!(RFM2gPeek64(a.0, 0, &mut v64), NOT_IMPLEMENTED);
        assert_eq!(RFM2gPoke64(a.0, 0, 1), NOT_IMPLEMENTED);
        assert_eq!(
            RFM2gRead(a.0, end - 8, buf.as_mut_ptr().cast(), 16),
            OUT_OF_RANGE
        );
        assert_eq!(
            RFM2gWrite(a.0, end - 16, buf.as_mut_ptr().cast(), 16),
            SUCCESS
        );
        assert_eq!(
            RFM2gWrite(a.0, u32::MAX, buf.as_mut_ptr().cast(), 16),
            OUT_OF_RANGE
        );
        assert_eq!(RFM2gRead(a.0, 0, null_mut(), 4), BAD_PARAMETER_3);
        assert_eq!(RFM2gRead(a.0, 0, null_mut(), 0), SUCCESS);
    }
}

#[test]
fn mappings_follow_the_page_rules() {
    let (_g, a, b) = ring("64K");
    let mut ptr: *mut c_void = null_mut();
    // SAFETY: open handles; `ptr` is a valid pointer variable.
    unsafe {
        assert_eq!(RFM2gUserMemory(a.0, &mut ptr, 100, 1), MEM_NOT_MAPPED);
        assert_eq!(RFM2gUserMemory(a.0, &mut ptr, 4096, 0), BAD_PARAMETER_4);
        assert_eq!(RFM2gUserMemory(a.0, &mut ptr, 60 << 10, 2), OUT_OF_RANGE);
        assert_eq!(
            RFM2gUserMemory(a.0, &mut ptr, u64::MAX - 4095, 1),
            OUT_OF_RANGE
        );
        assert_eq!(RFM2gUserMemory(a.0, null_mut(), 0, 1), BAD_PARAMETER_2);
        assert_eq!(RFM2gUserMemoryBytes(a.0, &mut ptr, 0, 0), BAD_PARAMETER_4);
        assert!(ptr.is_null());
        // 4097 bytes round up to two pages: the whole 64 KiB as 16 pages.
        assert_eq!(RFM2gUserMemoryBytes(a.0, &mut ptr, 56 << 10, 4097), SUCCESS);
        ptr.cast::<u32>().add(2047).write_volatile(7);
        let mut wrong = ptr;
        assert_eq!(
            RFM2gUnMapUserMemory(b.0, &mut wrong, 2),
            MEM_NOT_MAPPED,
            "other handle"
        );
        assert_eq!(
            RFM2gUnMapUserMemory(a.0, &mut wrong, 3),
            BAD_PARAMETER_3,
            "other length"
        );
        let mut inside = ptr.cast::<u8>().add(4096).cast::<c_void>();
        assert_eq!(RFM2gUnMapUserMemory(a.0, &mut inside, 1), MEM_NOT_MAPPED);
        assert_eq!(RFM2gUnMapUserMemoryBytes(a.0, &mut ptr, 8192), SUCCESS);
        assert!(ptr.is_null());
        assert_eq!(RFM2gUnMapUserMemory(a.0, &mut ptr, 2), MEM_NOT_MAPPED);
        let mut v = 0u32;
        assert_eq!(RFM2gPeek32(b.0, (56 << 10) + 4 * 2047, &mut v), SUCCESS);
        assert_eq!(v, 7);
    }
}
