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

use std::sync::atomic::{fence, Ordering};

use rfm_memory::{Region, RegionError};

use super::ByteOrder;

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
}

/// One read's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    pub outcome: Outcome,
    /// Attempts beyond the first.
    pub retries: u32,
    /// Whether the marker (a counter's value) or, without a counter, the
    /// struct's bytes differ from the last struct taken: the writer lives.
    pub changed: bool,
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

/// Reads one struct of `size` bytes at `offset` of a region.
#[derive(Debug)]
pub struct StructReader {
    /// The words that hold the struct (it need not start or end on a word).
    window: Region,
    /// Where the struct starts in `window`.
    skip: usize,
    size: usize,
    mark: Mark,
    order: ByteOrder,
    attempts: u32,
    copy: Vec<u8>,
    second: Vec<u8>,
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
    pub fn new(
        region: &Region,
        offset: usize,
        size: usize,
        mark: Mark,
        order: ByteOrder,
    ) -> Result<StructReader, ReaderError> {
        let (window, skip) = words(region, offset, size, mark)?;
        let len = window.len();
        Ok(StructReader {
            skip,
            size,
            mark,
            order,
            attempts: DEFAULT_ATTEMPTS,
            copy: vec![0; len],
            second: vec![0; len],
            last: None,
            last_counter: None,
            moved: 0,
            window,
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

    /// Adds the counter's move from its last value to `c` (its first value
    /// starts the count), modulo its width.
    fn count_move(&mut self, c: u64) {
        let Mark::Counter { width, .. } = self.mark else {
            return;
        };
        let mask = match width {
            8.. => u64::MAX,
            w => (1u64 << (8 * w)) - 1,
        };
        self.moved = match self.last_counter {
            None => c,
            Some(last) => self.moved.wrapping_add(c.wrapping_sub(last) & mask),
        };
    }

    pub fn with_attempts(mut self, attempts: u32) -> StructReader {
        self.attempts = attempts.max(1);
        self
    }

    /// The marker's value, in the struct's byte order.
    fn marker(&self, at: usize, width: usize) -> Result<u64, RegionError> {
        let mut bytes = [0u8; 8];
        marker_bytes(&self.window, self.skip + at, &mut bytes[..width])?;
        Ok(from_order(&bytes[..width], self.order))
    }

    /// Copies the struct's words into `copy` (or `second`).
    fn copy_into(&mut self, second: bool) -> Result<(), RegionError> {
        let buf = if second {
            &mut self.second
        } else {
            &mut self.copy
        };
        self.window.read(0, buf)
    }

    fn struct_of(buf: &[u8], skip: usize, size: usize) -> &[u8] {
        &buf[skip..skip + size]
    }

    /// The newest whole struct into `out` (`size` bytes), as the handshake
    /// allows.
    pub fn read(&mut self, out: &mut [u8]) -> Result<Read, RegionError> {
        let mut retries = 0;
        let mut marked = false;
        let mut whole = None;
        for attempt in 0..self.attempts {
            retries = attempt;
            match self.attempt(attempt)? {
                Attempt::Whole(counter) => {
                    whole = Some(counter);
                    break;
                }
                Attempt::Again { flag_set } => marked |= flag_set,
            }
        }
        let Some(counter) = whole else {
            let outcome = match self.mark {
                Mark::Flag { .. } if !marked => Outcome::NotMarked,
                _ => Outcome::GaveUp,
            };
            return Ok(Read {
                outcome,
                retries,
                changed: false,
            });
        };
        if let Some(c) = counter {
            self.count_move(c);
        }
        let now = Self::struct_of(&self.copy, self.skip, self.size);
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
            retries,
            changed,
        })
    }

    /// One try at a whole copy in `copy`, by the struct's handshake.
    fn attempt(&mut self, attempt: u32) -> Result<Attempt, RegionError> {
        match self.mark {
            Mark::Counter {
                at,
                width,
                counting,
            } => {
                let before = self.marker(at, width)?;
                if counting == Counting::Seqlock && before & 1 == 1 {
                    return Ok(Attempt::AGAIN);
                }
                self.copy_into(false)?;
                if counting == Counting::AfterData {
                    self.copy_into(true)?;
                }
                // The copy's loads before the marker's second load (an
                // acquire load alone lets earlier loads pass it).
                fence(Ordering::Acquire);
                let after = self.marker(at, width)?;
                let agree = counting == Counting::Seqlock || self.copy == self.second;
                Ok(if before == after && agree {
                    Attempt::Whole(Some(after))
                } else {
                    Attempt::AGAIN
                })
            }
            Mark::Flag { at, width, value } => {
                if self.marker(at, width)? != value {
                    return Ok(Attempt::AGAIN);
                }
                // Two copies, the flag set around each: one whole
                // rewrite inside a copy (clear, write, set) cannot pass.
                self.copy_into(false)?;
                fence(Ordering::Acquire);
                if self.marker(at, width)? == value {
                    self.copy_into(true)?;
                    fence(Ordering::Acquire);
                    if self.marker(at, width)? == value && self.copy == self.second {
                        return Ok(Attempt::Whole(None));
                    }
                }
                Ok(Attempt::Again { flag_set: true })
            }
            Mark::None => {
                if attempt == 0 {
                    self.copy_into(false)?;
                } else {
                    std::mem::swap(&mut self.copy, &mut self.second);
                }
                self.copy_into(true)?;
                Ok(if self.copy == self.second {
                    Attempt::Whole(None)
                } else {
                    Attempt::AGAIN
                })
            }
        }
    }
}

/// What one try at a copy found.
enum Attempt {
    /// A whole copy, with the counter's value when the struct has one.
    Whole(Option<u64>),
    /// No whole copy; `flag_set` when a flag handshake's flag was seen set
    /// (a struct whose flag is never set is not marked, not torn).
    Again { flag_set: bool },
}

impl Attempt {
    const AGAIN: Attempt = Attempt::Again { flag_set: false };
}

#[cfg(test)]
mod tests;
