//! One ring's copy of a struct: the words that hold it, and a try at a whole
//! copy by the struct's handshake. A reader holds one per ring its memory
//! spans ([`super::StructReader`] chooses between them).

use std::sync::atomic::{fence, Ordering};

use rfm_memory::{Region, RegionError};

use super::{from_order, marker_bytes, ByteOrder, Counting, Mark};

/// The words of one ring that hold the struct, and the copies made of them.
#[derive(Debug)]
pub(super) struct RingCopy {
    /// The words that hold the struct (it need not start or end on a word).
    window: Region,
    pub(super) copy: Vec<u8>,
    second: Vec<u8>,
    /// Two rings, a handshake without a counter: the last whole struct this
    /// ring gave, and how many times the other ring moved since this one did
    /// (a ring that stands still while the other moves twice carries no
    /// writes: it is cut, or its writer's stores do not reach it).
    pub(super) seen: Option<Vec<u8>>,
    pub(super) still: u32,
}

/// What one ring gave at a read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Whole {
    /// A whole copy in [`RingCopy::copy`] (with its counter where the struct
    /// has one), or none.
    pub(super) taken: Option<Option<u64>>,
    pub(super) retries: u32,
    /// A flag handshake's flag was seen set at some attempt.
    pub(super) marked: bool,
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

impl RingCopy {
    pub(super) fn new(window: Region) -> RingCopy {
        let len = window.len();
        RingCopy {
            window,
            copy: vec![0; len],
            second: vec![0; len],
            seen: None,
            still: 0,
        }
    }

    /// The marker's value at byte `at` of a struct `skip` bytes into the
    /// window, in the struct's byte order.
    pub(super) fn marker(
        &self,
        at: usize,
        width: usize,
        order: ByteOrder,
    ) -> Result<u64, RegionError> {
        let mut bytes = [0u8; 8];
        marker_bytes(&self.window, at, &mut bytes[..width])?;
        Ok(from_order(&bytes[..width], order))
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

    /// Up to `attempts` tries at a whole copy; `skip`: where the struct
    /// starts in the window (the marker's byte is `skip + at`).
    pub(super) fn whole(
        &mut self,
        mark: Mark,
        skip: usize,
        order: ByteOrder,
        attempts: u32,
    ) -> Result<Whole, RegionError> {
        let mut marked = false;
        for attempt in 0..attempts {
            match self.attempt(mark, skip, order, attempt)? {
                Attempt::Whole(counter) => {
                    return Ok(Whole {
                        taken: Some(counter),
                        retries: attempt,
                        marked: true,
                    })
                }
                Attempt::Again { flag_set } => marked |= flag_set,
            }
        }
        Ok(Whole {
            taken: None,
            retries: attempts - 1,
            marked,
        })
    }

    /// One try at a whole copy in `copy`, by the struct's handshake.
    fn attempt(
        &mut self,
        mark: Mark,
        skip: usize,
        order: ByteOrder,
        attempt: u32,
    ) -> Result<Attempt, RegionError> {
        match mark {
            Mark::Counter {
                at,
                width,
                counting,
            } => {
                let before = self.marker(skip + at, width, order)?;
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
                let after = self.marker(skip + at, width, order)?;
                let agree = counting == Counting::Seqlock || self.copy == self.second;
                Ok(if before == after && agree {
                    Attempt::Whole(Some(after))
                } else {
                    Attempt::AGAIN
                })
            }
            Mark::Flag { at, width, value } => {
                if self.marker(skip + at, width, order)? != value {
                    return Ok(Attempt::AGAIN);
                }
                // Two copies, the flag set around each: one whole
                // rewrite inside a copy (clear, write, set) cannot pass.
                self.copy_into(false)?;
                fence(Ordering::Acquire);
                if self.marker(skip + at, width, order)? == value {
                    self.copy_into(true)?;
                    fence(Ordering::Acquire);
                    if self.marker(skip + at, width, order)? == value && self.copy == self.second {
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
