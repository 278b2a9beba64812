//! Reading a struct a lab's own program writes, never taking a torn one where
//! its writer marks whole structs, and saying how often that took a retry.
//!
//! What each handshake costs and catches (the reader's loads; on a card each
//! word of a copy is a PCIe read):
//!
//! | handshake | a read loads | a torn struct is taken when |
//! |---|---|---|
//! | `counter`, seqlock | marker, struct, marker | never: an odd or moved counter retries |
//! | `counter`, after-data | marker, struct twice, marker | the writer stalls mid-write over both copies |
//! | `flag` | marker, struct, marker, struct, marker | the writer stalls mid-write over both copies with its flag set (it clears it first) |
//! | `none` | struct twice (more on a retry) | the writer stalls mid-write over both copies |
//!
//! On a redundant memory (`A+B`) the reader holds a copy of each ring and
//! takes the newest whole struct either carries ([`rings`]: by the counter,
//! or without one by which ring's bytes moved), never one older than a struct
//! it already gave.

use std::sync::atomic::Ordering;

use rfm_memory::{Network, Region, RegionError};

use super::ByteOrder;
use copy::RingCopy;

mod copy;
mod rings;

/// Reads a struct is copied, at most, before the reader gives up for this
/// step (counted): a writer rewriting faster than a copy takes never lets two
/// copies agree.
pub const DEFAULT_ATTEMPTS: u32 = 8;

/// When a counter moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// Odd while the writer writes, even once the struct is whole.
    Seqlock,
    /// Incremented once after each whole write.
    AfterData,
}

/// How the writer marks a whole struct, as the reader uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A counter of `width` bytes at `at` (in the struct).
    Counter {
        at: usize,
        width: usize,
        counting: Counting,
    },
    /// A marker of `width` bytes at `at` holding `value` while the struct is whole.
    Flag { at: usize, width: usize, value: u64 },
    /// Nothing: two copies must agree.
    None,
}

/// What one read gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A whole struct, in the caller's buffer.
    Taken,
    /// The flag was not set at any attempt (a writer that has not written yet,
    /// or one between clearing and setting it each time we looked).
    NotMarked,
    /// No attempt gave a whole struct: the buffer holds nothing new.
    GaveUp,
    /// Two rings, no counter: each gave a whole struct, but they differ and
    /// neither is known to have stopped carrying writes, so which is newer
    /// cannot be told yet (a writer between its two rings' stores, or a ring
    /// cut mid-write). The buffer holds nothing new; the next read decides.
    Unsettled,
}

/// One read's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    pub outcome: Outcome,
    /// Attempts beyond the first (on two rings, of both).
    pub retries: u32,
    /// Whether the marker (a counter's value) or, without a counter, the
    /// struct's bytes differ from the last struct taken: the writer lives.
    pub changed: bool,
    /// The ring the struct in the caller's buffer came from (A on a memory
    /// of one ring).
    pub ring: Network,
    /// Which rings held that struct (or, with a counter, a newer one) at
    /// this read: a ring that stops holding it stopped carrying the writes.
    pub holding: [bool; 2],
}

/// Why a reader cannot be made for a struct.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReaderError {
    #[error(transparent)]
    Region(#[from] RegionError),
    #[error(
        "the marker at byte {at} of the struct (memory offset {offset}) is not a multiple of \
         its {width} bytes: one aligned load must read it"
    )]
    UnalignedMarker {
        at: usize,
        offset: usize,
        width: usize,
    },
}

/// The `bytes.len()` bytes of a marker at `at` of `window`, in memory order,
/// by whole 32-bit loads (RFM2g's PIO width, and the one atomic width every
/// access to the memory shares): the word that holds a marker of up to 4
/// bytes (it is aligned to its width), or the two of an 8-byte one, low first.
pub(super) fn marker_bytes(
    window: &Region,
    at: usize,
    bytes: &mut [u8],
) -> Result<(), RegionError> {
    let word = at - at % 4;
    let first = window.load_u32(word, Ordering::Acquire)?.to_ne_bytes();
    if bytes.len() == 8 {
        let second = window.load_u32(word + 4, Ordering::Acquire)?.to_ne_bytes();
        bytes[..4].copy_from_slice(&first);
        bytes[4..].copy_from_slice(&second);
    } else {
        let from = at % 4;
        bytes.copy_from_slice(&first[from..from + bytes.len()]);
    }
    Ok(())
}

/// A marker's bytes as a number, in the struct's byte order.
pub(super) fn from_order(bytes: &[u8], order: ByteOrder) -> u64 {
    let fold = |v: u64, b: &u8| v << 8 | u64::from(*b);
    match order {
        ByteOrder::Little => bytes.iter().rev().fold(0, fold),
        ByteOrder::Big => bytes.iter().fold(0, fold),
    }
}

/// Reads one struct of `size` bytes at `offset` of a region: of each ring
/// the region spans.
#[derive(Debug)]
pub struct StructReader {
    /// Ring A's copy, and ring B's on a redundant memory.
    rings: Vec<RingCopy>,
    /// Where the struct starts in each ring's window.
    skip: usize,
    size: usize,
    mark: Mark,
    order: ByteOrder,
    attempts: u32,
    /// The ring the last struct came from (an index of `rings`).
    current: usize,
    /// Without a counter: the last struct taken.
    last: Option<Vec<u8>>,
    last_counter: Option<u64>,
    /// The counter's moves since the first struct, added up modulo its width
    /// each time: a 16- or 32-bit counter wraps (a 32-bit seqlock at 1 kHz
    /// after 24 days), and the writes it counts must not go back with it.
    moved: u64,
}

/// The whole 32-bit words a struct at `offset` of `size` bytes lies in (its
/// reader loads and its writer stores words), and where it starts in them;
/// refused when one aligned load cannot read its marker.
pub(super) fn words(
    region: &Region,
    offset: usize,
    size: usize,
    mark: Mark,
) -> Result<(Region, usize), ReaderError> {
    let start = offset - offset % 4;
    let end = (offset + size).next_multiple_of(4);
    let window = region.subregion(start, end - start)?;
    if let Mark::Counter { at, width, .. } | Mark::Flag { at, width, .. } = mark {
        if !(offset + at).is_multiple_of(width.min(4)) {
            return Err(ReaderError::UnalignedMarker {
                at,
                offset: offset + at,
                width,
            });
        }
    }
    Ok((window, offset - start))
}

impl StructReader {
    /// A reader of the struct in `region`; of both rings where the region
    /// spans two (each ring's window read apart, whatever ring the region's
    /// own loads read).
    pub fn new(
        region: &Region,
        offset: usize,
        size: usize,
        mark: Mark,
        order: ByteOrder,
    ) -> Result<StructReader, ReaderError> {
        let (window, skip) = words(region, offset, size, mark)?;
        let rings = match window.is_redundant() {
            true => Network::BOTH.map(|r| RingCopy::new(window.on(r))).into(),
            false => vec![RingCopy::new(window)],
        };
        Ok(StructReader {
            rings,
            skip,
            size,
            mark,
            order,
            attempts: DEFAULT_ATTEMPTS,
            current: 0,
            last: None,
            last_counter: None,
            moved: 0,
        })
    }

    /// The writes its counter counts, as of the last struct taken: a seqlock
    /// moves by two a write, an after-data counter by one; `None` without a
    /// counter, or before the first struct. Past a wrap of a counter narrower
    /// than 64 bits it goes on counting, as long as fewer than half its range
    /// of moves pass between two reads (2^31 for 32 bits).
    pub fn writes(&self) -> Option<u64> {
        match self.mark {
            Mark::Counter { counting, .. } => self.last_counter.map(|_| match counting {
                Counting::Seqlock => self.moved / 2,
                Counting::AfterData => self.moved,
            }),
            _ => None,
        }
    }

    /// The counter's values as a mask of its width.
    fn counter_mask(&self) -> u64 {
        match self.mark {
            Mark::Counter { width: 8.., .. } => u64::MAX,
            Mark::Counter { width, .. } => (1u64 << (8 * width)) - 1,
            _ => 0,
        }
    }

    /// Adds the counter's move from its last value to `c` (its first value
    /// starts the count), modulo its width.
    fn count_move(&mut self, c: u64) {
        if !matches!(self.mark, Mark::Counter { .. }) {
            return;
        }
        let mask = self.counter_mask();
        self.moved = match self.last_counter {
            None => c,
            Some(last) => self.moved.wrapping_add(c.wrapping_sub(last) & mask),
        };
    }

    pub fn with_attempts(mut self, attempts: u32) -> StructReader {
        self.attempts = attempts.max(1);
        self
    }

    fn struct_of(buf: &[u8], skip: usize, size: usize) -> &[u8] {
        &buf[skip..skip + size]
    }

    /// Ring `ring`'s whole copy of the struct, if it gave one.
    fn whole(&mut self, ring: usize) -> Result<copy::Whole, RegionError> {
        let (mark, skip, order, attempts) = (self.mark, self.skip, self.order, self.attempts);
        self.rings[ring].whole(mark, skip, order, attempts)
    }

    /// The newest whole struct into `out` (`size` bytes), as the handshake
    /// allows; on two rings, of either ([`rings`]).
    pub fn read(&mut self, out: &mut [u8]) -> Result<Read, RegionError> {
        if self.rings.len() == 2 {
            return match self.mark {
                Mark::Counter { at, width, .. } => self.read_counted_rings((at, width), out),
                _ => self.read_moved_rings(out),
            };
        }
        let w = self.whole(0)?;
        let Some(counter) = w.taken else {
            return Ok(self.nothing(w.retries, w.marked));
        };
        if let Some(c) = counter {
            self.count_move(c);
        }
        let now = Self::struct_of(&self.rings[0].copy, self.skip, self.size);
        let changed = match counter {
            Some(c) => self.last_counter.replace(c) != Some(c),
            None => self.last.as_deref() != Some(now),
        };
        if changed && counter.is_none() {
            self.last = Some(now.to_vec());
        }
        out[..self.size].copy_from_slice(now);
        Ok(Read {
            outcome: Outcome::Taken,
            retries: w.retries,
            changed,
            ring: Network::A,
            holding: [true, false],
        })
    }

    /// A read that gave no whole struct: a flag never seen set is not
    /// marked, anything else gave up.
    fn nothing(&self, retries: u32, marked: bool) -> Read {
        let outcome = match self.mark {
            Mark::Flag { .. } if !marked => Outcome::NotMarked,
            _ => Outcome::GaveUp,
        };
        Read {
            outcome,
            retries,
            changed: false,
            ring: Network::BOTH[self.current],
            holding: [false; 2],
        }
    }
}

#[cfg(test)]
mod tests;
