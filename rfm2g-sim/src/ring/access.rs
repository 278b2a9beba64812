//! Aligned single accesses and byte copies inside `[0, size)` of ring memory.
//! Every access is bounds-checked here; the memory is shared with other
//! processes, so it is touched only through atomics.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU8, Ordering};

use crate::abi::Code;

fn window(size: u64, offset: u32, len: u32, align: u32) -> Result<usize, Code> {
    if u64::from(offset) + u64::from(len) > size {
        return Err(Code::OUT_OF_RANGE);
    }
    if !offset.is_multiple_of(align) {
        return Err(Code::UNALIGNED_OFFSET);
    }
    Ok(offset as usize)
}

macro_rules! single {
    ($peek:ident, $poke:ident, $t:ty, $atomic:ty) => {
        /// # Safety
        /// `base` must be valid for `size` bytes and aligned to 4096.
        pub unsafe fn $peek(base: *mut u8, size: u64, offset: u32) -> Result<$t, Code> {
            let at = window(size, offset, size_of::<$t>() as u32, size_of::<$t>() as u32)?;
            // SAFETY: in bounds and naturally aligned (checked above; base is
            // page-aligned); the memory is only accessed atomically.
            Ok(unsafe { <$atomic>::from_ptr(base.add(at).cast()) }.load(Ordering::Relaxed))
        }

        /// # Safety
        /// As for the peek of the same width.
        pub unsafe fn $poke(base: *mut u8, size: u64, offset: u32, value: $t) -> Result<(), Code> {
            let at = window(size, offset, size_of::<$t>() as u32, size_of::<$t>() as u32)?;
            // SAFETY: as in the peek.
            unsafe { <$atomic>::from_ptr(base.add(at).cast()) }.store(value, Ordering::Relaxed);
            Ok(())
        }
    };
}

single!(peek8, poke8, u8, AtomicU8);
single!(peek16, poke16, u16, AtomicU16);
single!(peek32, poke32, u32, AtomicU32);

/// Walks `[start, start + len)` as aligned 4-byte words where it can and
/// single bytes at the ends: calls `each(index, width)` with width 4 or 1.
fn pieces(start: usize, len: usize, mut each: impl FnMut(usize, usize)) {
    let mut i = 0;
    while i < len {
        let width = if (start + i).is_multiple_of(4) && len - i >= 4 {
            4
        } else {
            1
        };
        each(i, width);
        i += width;
    }
}

/// Copies `buf.len()` bytes from `offset`.
///
/// # Safety
/// `base` must be valid for `size` bytes and aligned to 4096.
pub unsafe fn read(base: *mut u8, size: u64, offset: u32, buf: &mut [u8]) -> Result<(), Code> {
    let len = u32::try_from(buf.len()).map_err(|_| Code::OUT_OF_RANGE)?;
    let start = window(size, offset, len, 1)?;
    pieces(start, buf.len(), |i, width| {
        if width == 4 {
            // SAFETY: inside the checked window, and 4-aligned.
            let w = unsafe { AtomicU32::from_ptr(base.add(start + i).cast()) };
            buf[i..i + 4].copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
        } else {
            // SAFETY: inside the checked window.
            buf[i] = unsafe { AtomicU8::from_ptr(base.add(start + i)) }.load(Ordering::Relaxed);
        }
    });
    Ok(())
}

/// Copies `buf` to `offset`.
///
/// # Safety
/// As for [`read`].
pub unsafe fn write(base: *mut u8, size: u64, offset: u32, buf: &[u8]) -> Result<(), Code> {
    let len = u32::try_from(buf.len()).map_err(|_| Code::OUT_OF_RANGE)?;
    let start = window(size, offset, len, 1)?;
    pieces(start, buf.len(), |i, width| {
        if width == 4 {
            let w = u32::from_ne_bytes(buf[i..i + 4].try_into().expect("4 bytes"));
            // SAFETY: inside the checked window, and 4-aligned.
            unsafe { AtomicU32::from_ptr(base.add(start + i).cast()) }.store(w, Ordering::Relaxed);
        } else {
            // SAFETY: inside the checked window.
            unsafe { AtomicU8::from_ptr(base.add(start + i)) }.store(buf[i], Ordering::Relaxed);
        }
    });
    Ok(())
}
