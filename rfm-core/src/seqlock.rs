//! A seqlock over one block of a [`Region`], as crossbeam writes it, bounded.
//!
//! The block's first word is the sequence: odd while the (single) writer is inside.
//! Writer: sequence ← odd (Relaxed), `fence(Release)`, data (Relaxed), sequence ←
//! even (Release). Reader: sequence (Acquire), data (Relaxed), `fence(Acquire)`,
//! sequence again: the copy is whole only if both reads saw the same even value.
//! All data words are atomics, so the race the seqlock detects is not UB (Boehm,
//! "Can seqlocks get along with programming language memory models?", 2012).

use std::sync::atomic::{fence, Ordering};

use crate::region::{Region, RegionError, WORD};

/// Why one read attempt produced no whole copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Miss {
    /// The sequence was odd: the writer was inside the block.
    InProgress,
    /// The sequence changed during the copy.
    Torn,
}

/// Writes `bytes[WORD..]` into the block at `offset`, bracketed by sequence updates.
///
/// `seq` is the writer's own copy of the sequence (the writer never reads its
/// block back: on RFM2g a read crosses PCIe). `bytes[..WORD]` is ignored.
pub(crate) fn write(
    region: &Region,
    offset: usize,
    seq: &mut u32,
    bytes: &[u8],
) -> Result<(), RegionError> {
    let odd = *seq | 1;
    region.store_u32(offset, odd, Ordering::Relaxed)?;
    fence(Ordering::Release);
    region.write(offset + WORD, &bytes[WORD..])?;
    let even = odd.wrapping_add(1);
    region.store_u32(offset, even, Ordering::Release)?;
    *seq = even;
    Ok(())
}

/// One attempt to copy the block at `offset` into `buf` (`buf[..WORD]` gets the sequence).
pub(crate) fn read_once(
    region: &Region,
    offset: usize,
    buf: &mut [u8],
) -> Result<Result<(), Miss>, RegionError> {
    let before = region.load_u32(offset, Ordering::Acquire)?;
    if before & 1 == 1 {
        return Ok(Err(Miss::InProgress));
    }
    // The word after the sequence, then the rest: from byte 8 on, the copy's 8-byte
    // stores line up with an 8-aligned `buf`, so 8-byte loads of it (the CRC) are
    // forwarded instead of stalling.
    region.read(offset + WORD, &mut buf[WORD..2 * WORD])?;
    region.read(offset + 2 * WORD, &mut buf[2 * WORD..])?;
    fence(Ordering::Acquire);
    let after = region.load_u32(offset, Ordering::Relaxed)?;
    if after != before {
        return Ok(Err(Miss::Torn));
    }
    buf[..WORD].copy_from_slice(&before.to_ne_bytes());
    Ok(Ok(()))
}
