//! The seed layout's writer and reader: the article's packet, kept whole.
//!
//! The packet has no sequence word, and a constant header: a reader that sees
//! the header valid before and after its copies cannot tell whether whole
//! rewrites happened in between. Two copies that agree are not enough either:
//! a CI run's race test once accepted packet c with the low word of its
//! timestamp as packets c - 1 and c + 1 have it (equal there): the first copy
//! torn by the rewrite to c, the second by the rewrite to c + 1. So our writer also keeps a seqlock's sequence
//! in the head block's last word ([`SEQUENCE_OFFSET`]), after the packet and
//! before the article's acknowledgement word: the article's programs never
//! touch it, and against our writer the read is a seqlock's. Against an
//! article writer the word stands still, and the double copy is what is left.

use std::sync::atomic::{fence, Ordering};

use super::{check_len, ReadError, Rejections};
use crate::area::HEAD_BLOCK;
use crate::frame::seed::{self, FlightData, PACKET_WORDS_SIZE, SEQUENCE_OFFSET};
use rfm_memory::seqlock::{Miss, WriteGuard};
use rfm_memory::{Region, RegionError, WORD};

/// The single writer of a seed area (the article's `FlightData` at its start).
#[derive(Debug)]
pub struct SeedWriter {
    slot: Region,
    /// The writer's copy of the sequence word (even between publishes).
    seq: u32,
}

impl SeedWriter {
    /// Goes on from the sequence the memory holds (a run after another on one
    /// memory), rounded up to even if a writer stopped inside a packet.
    pub fn new(slot: Region) -> Result<SeedWriter, RegionError> {
        check_len(&slot, HEAD_BLOCK)?;
        let seq = slot.load_u32(SEQUENCE_OFFSET, Ordering::Acquire)?;
        Ok(SeedWriter {
            slot,
            seq: seq.wrapping_add(1) & !1,
        })
    }

    /// Inside the sequence, clears `header`, writes the packet, then sets
    /// `header`: the article's receivers skip the packet while it is rewritten,
    /// and ours see the sequence move.
    pub fn publish(&mut self, packet: &FlightData) -> Result<(), RegionError> {
        let bytes = seed::encode(packet);
        let _inside = WriteGuard::enter(&self.slot, SEQUENCE_OFFSET, &mut self.seq)?;
        self.slot.store_u32(0, 0, Ordering::Relaxed)?;
        fence(Ordering::Release);
        self.slot.write(WORD, &bytes[WORD..])?;
        let header = u32::from_ne_bytes(bytes[..WORD].try_into().expect("one word"));
        self.slot.store_u32(0, header, Ordering::Release)
    }

    /// Zeroes the packet (an empty slot to the article's receivers: wrong header).
    pub fn clear(&mut self) -> Result<(), RegionError> {
        let _inside = WriteGuard::enter(&self.slot, SEQUENCE_OFFSET, &mut self.seq)?;
        self.slot.fill(0, PACKET_WORDS_SIZE, 0)
    }
}

/// A reader of a seed slot.
///
/// A packet is taken only when the sequence word is even and unchanged around
/// the whole attempt, and the header is valid before, between and after two
/// copies that agree. Against our [`SeedWriter`] the sequence makes it a
/// seqlock; against an article writer (which leaves the sequence alone) the
/// copies are the best the format allows: two identical torn copies need a
/// stall spanning both, or two rewrites that tear both the same way.
#[derive(Debug, Clone)]
pub struct SeedReader {
    slot: Region,
    attempts: u32,
}

/// The two copies of one read attempt.
type Copies = ([u8; PACKET_WORDS_SIZE], [u8; PACKET_WORDS_SIZE]);

impl SeedReader {
    pub fn new(slot: Region) -> Result<SeedReader, RegionError> {
        check_len(&slot, HEAD_BLOCK)?;
        Ok(SeedReader {
            slot,
            attempts: super::DEFAULT_READ_ATTEMPTS,
        })
    }

    pub fn with_attempts(mut self, attempts: u32) -> SeedReader {
        self.attempts = attempts.max(1);
        self
    }

    /// The slot this reader reads.
    pub fn region(&self) -> &Region {
        &self.slot
    }

    pub fn read(&self) -> Result<FlightData, ReadError> {
        let mut copies = ([0u8; PACKET_WORDS_SIZE], [0u8; PACKET_WORDS_SIZE]);
        let mut rejections = Rejections::default();
        for _ in 0..self.attempts {
            match self.attempt(&mut copies)? {
                Attempt::Empty => return Err(ReadError::Empty),
                Attempt::Missed(miss) => rejections.miss(miss),
                Attempt::Whole => match seed::decode(&copies.0) {
                    Ok(packet) => return Ok(packet),
                    Err(err) => rejections.count(err),
                },
            }
            std::hint::spin_loop();
        }
        Err(ReadError::Unreadable {
            attempts: self.attempts,
            rejections,
        })
    }

    /// Copies the packet twice between loads of the sequence and the header.
    fn attempt(&self, (first, second): &mut Copies) -> Result<Attempt, RegionError> {
        let before = self.slot.load_u32(SEQUENCE_OFFSET, Ordering::Acquire)?;
        if before & 1 == 1 {
            return Ok(Attempt::Missed(Miss::InProgress));
        }
        let h1 = self.slot.load_u32(0, Ordering::Acquire)?;
        self.slot.read(WORD, &mut first[WORD..])?;
        fence(Ordering::Acquire);
        // Acquire, not Relaxed: if this sees the header of a newer packet, the
        // second copy must then see at least that packet's body; a Relaxed load
        // would let both copies return the same stale mix (Miri finds it).
        let h2 = self.slot.load_u32(0, Ordering::Acquire)?;
        self.slot.read(WORD, &mut second[WORD..])?;
        fence(Ordering::Acquire);
        let h3 = self.slot.load_u32(0, Ordering::Relaxed)?;
        let after = self.slot.load_u32(SEQUENCE_OFFSET, Ordering::Relaxed)?;
        first[..WORD].copy_from_slice(&h1.to_ne_bytes());
        if h1 == 0 && h2 == 0 && h3 == 0 && first.iter().all(|&b| b == 0) {
            return Ok(Attempt::Empty);
        }
        if before != after || h1 != h2 || h2 != h3 || first[WORD..] != second[WORD..] {
            return Ok(Attempt::Missed(Miss::Torn));
        }
        Ok(Attempt::Whole)
    }
}

/// What one read attempt found.
enum Attempt {
    /// Nothing was ever written (all zero, header included).
    Empty,
    Missed(Miss),
    /// The first copy is a whole packet (still to be decoded).
    Whole,
}
