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
pub enum Miss {
    /// The sequence was odd: the writer was inside the block.
    InProgress,
    /// The sequence changed during the copy.
    Torn,
}

/// The writer inside one block: the sequence is odd from `enter` until drop.
///
/// Drop always ends the write with the next even sequence, also when the copy
/// between failed or panicked: readers then see a finished frame whose CRC says
/// whether it is whole, instead of an entry "in progress" forever, and the writer's
/// own copy of the sequence stays equal to memory.
///
/// Public for writers whose block has a layout of its own around the sequence
/// (the seed packet's, whose format leaves the sequence outside the packet).
#[derive(Debug)]
#[must_use = "the sequence goes even again when the guard drops"]
pub struct WriteGuard<'a> {
    region: &'a Region,
    offset: usize,
    seq: &'a mut u32,
}

impl<'a> WriteGuard<'a> {
    /// Marks the block at `offset` as being written: its sequence goes odd.
    #[inline]
    pub fn enter(region: &'a Region, offset: usize, seq: &'a mut u32) -> Result<Self, RegionError> {
        let odd = *seq | 1;
        region.store_u32(offset, odd, Ordering::Relaxed)?;
        fence(Ordering::Release);
        *seq = odd;
        Ok(WriteGuard {
            region,
            offset,
            seq,
        })
    }
}

impl Drop for WriteGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        let even = self.seq.wrapping_add(1);
        // The odd store at this offset succeeded, so this one cannot fail.
        let _ = self.region.store_u32(self.offset, even, Ordering::Release);
        *self.seq = even;
    }
}

/// Writes `bytes[WORD..]` into the block at `offset`, bracketed by sequence updates.
///
/// `seq` is the writer's own copy of the sequence (the writer never reads its
/// block back: on RFM2g a read crosses PCIe). `bytes[..WORD]` is ignored.
#[inline]
pub fn write(
    region: &Region,
    offset: usize,
    seq: &mut u32,
    bytes: &[u8],
) -> Result<(), RegionError> {
    let _inside = WriteGuard::enter(region, offset, seq)?;
    region.write(offset + WORD, &bytes[WORD..])
}

/// The sequence a whole copy of a block holds ([`read_once`] puts it first).
pub fn sequence_of(copy: &[u8]) -> u32 {
    u32::from_ne_bytes(
        copy[..WORD]
            .try_into()
            .expect("a copy starts with its sequence"),
    )
}

/// One attempt to copy the block at `offset` into `buf` (`buf[..WORD]` gets the sequence).
#[inline]
pub fn read_once(
    region: &Region,
    offset: usize,
    buf: &mut [u8],
) -> Result<Result<(), Miss>, RegionError> {
    let before = region.load_u32(offset, Ordering::Acquire)?;
    if before & 1 == 1 {
        return Ok(Err(Miss::InProgress));
    }
    // On a card, a long block in one vendor call (DMA); else the word after the
    // sequence, then the rest: from byte 8 on, the copy's 8-byte stores line up
    // with an 8-aligned `buf`, so 8-byte loads of it (the CRC) are forwarded
    // instead of stalling.
    if !region.read_dma(offset + WORD, &mut buf[WORD..])? {
        region.read(offset + WORD, &mut buf[WORD..2 * WORD])?;
        region.read(offset + 2 * WORD, &mut buf[2 * WORD..])?;
    }
    fence(Ordering::Acquire);
    let after = region.load_u32(offset, Ordering::Relaxed)?;
    if after != before {
        return Ok(Err(Miss::Torn));
    }
    buf[..WORD].copy_from_slice(&before.to_ne_bytes());
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Device, OpenOptions};

    #[test]
    fn a_write_that_fails_half_way_still_ends_with_an_even_sequence() {
        let d = Device::open("loopback:seqlock-guard", &OpenOptions::default()).unwrap();
        let region = d.map(0, 4096).unwrap();
        let block = region.subregion(4096 - 8, 8).unwrap();
        let mut seq = 4;
        // 16 bytes do not fit the 8-byte block: the sequence store works, the copy fails.
        assert!(write(&block, 0, &mut seq, &[7u8; 16]).is_err());
        let in_memory = block.load_u32(0, Ordering::Acquire).unwrap();
        assert_eq!(in_memory % 2, 0, "left odd: readers would wait forever");
        assert_eq!((in_memory, seq), (6, 6));
        // And the next write goes on from there.
        write(&block, 0, &mut seq, &[1u8; 8]).unwrap();
        assert_eq!(block.load_u32(0, Ordering::Acquire).unwrap(), 8);
    }
}
