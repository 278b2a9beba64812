//! The `framed` layout: our frame (a header and a node's payload), its codec, and
//! where frames sit in a node's area.
//!
//! A node's area (see `rfm_interface::layout`) holds the head word at offset 0
//! (the low 32 bits of the newest complete step, stored after the frame, Release)
//! and a ring of 16 entries, the frame of step s in entry s mod 16.
//!
//! Frame (little-endian; the CRC-32C covers byte 8 to the end of the payload; every
//! field from byte 8 on is 8-byte aligned, so sealing is whole-word stores that the
//! CRC's 8-byte loads can forward from):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | seqlock sequence: odd while the writer is inside the frame |
//! | 4 | 4 | CRC-32C (Castagnoli) of bytes 8..64 + payload length |
//! | 8 | 4 | magic `"RFMf"` (0x664d4652) |
//! | 12 | 1 | format version ([`VERSION`]) |
//! | 13 | 1 | writer's node slot |
//! | 14 | 1 | lockstep lag of the writer |
//! | 15 | 1 | sync mode of the writer (0 free, 1 lockstep) |
//! | 16 | 4 | payload length in bytes |
//! | 20 | 4 | reserved (zero) |
//! | 24 | 8 | epoch: random per writer session; a change means the peer restarted |
//! | 32 | 8 | interface fingerprint (`rfm_interface::Interface::fingerprint`) |
//! | 40 | 8 | step: 0 for the frame published at initialization, then 1, 2, … |
//! | 48 | 8 | simulation time (f64) |
//! | 56 | 8 | writer's wall clock, ns since the Unix epoch |
//! | 64 | n | payload: the writer's signals (`rfm_interface::layout`) |
//!
//! CRC-32C rather than the zip CRC-32: the same 32 bits of protection, computed by
//! one instruction per 8 bytes on x86-64 (SSE4.2) and aarch64, with a portable
//! fallback.

use std::sync::Arc;

use super::crc::{lanes, Lanes};
use super::FrameError;

/// Bytes of the header before the payload.
pub const HEADER_SIZE: usize = crate::area::FRAME_HEADER;
/// `"RFMf"` in little-endian.
pub const MAGIC: u32 = u32::from_le_bytes(*b"RFMf");
/// Format version this build writes and reads. Version 3: a header and an
/// interface's payload, in areas sized by the interface.
pub const VERSION: u8 = 3;
/// Offset of the head word within an area.
pub const HEAD_OFFSET: usize = 0;
/// Offset of the step within a frame (in the frame's first cache line, with the
/// sequence word: a reader polls both with one line).
pub const STEP_OFFSET: usize = 40;
const CRC_OFFSET: usize = 4;
/// Where the CRC's coverage starts.
pub const CRC_START: usize = 8;

/// How the writer of a frame synchronises (peers must agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// Never waits; readers take the latest frame.
    #[default]
    Free,
    /// Every step waits for the peer's frame of the matching step.
    Lockstep,
}

/// Each mode by the word the FMU's `syncMode` parameter gives it.
impl crate::names::Named for SyncMode {
    const KIND: &'static str = "sync mode";
    const NAMES: &'static [(&'static str, SyncMode)] =
        &[("lockstep", SyncMode::Lockstep), ("free", SyncMode::Free)];
}

crate::named_words!(SyncMode);

/// A frame's header, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Header {
    pub writer_slot: u8,
    pub lag: u8,
    pub mode: SyncMode,
    pub epoch: u64,
    pub fingerprint: u64,
    pub step: u64,
    pub sim_time: f64,
    pub wall_clock_ns: u64,
}

impl Header {
    /// The writer's step that published this frame, as the FMU's `<peer>.step`
    /// output and every rfmctl command number it: step k publishes frame
    /// k + 1, and frame 0 (the initial values) is step -1. The header's `step`
    /// field is the frame's index.
    pub fn writer_step(&self) -> i64 {
        step_of(self.step)
    }
}

/// The writer's step that published frame `index` (see [`Header::writer_step`]).
pub fn step_of(index: u64) -> i64 {
    i64::try_from(index).map_or(i64::MAX, |i| i - 1)
}

/// One frame's bytes (header and payload), 8-byte aligned so that the CRC's word
/// loads and the payload's Reals are aligned too. A writer fills the payload in
/// place and seals the header over it; a reader copies a ring entry into one and
/// checks it: no value is copied twice.
#[derive(Clone)]
pub struct FrameBuf {
    words: Vec<u64>,
    payload_len: usize,
    /// The CRC of this length in three lanes, where the CPU has the instruction.
    lanes: Option<Arc<Lanes>>,
}

impl PartialEq for FrameBuf {
    fn eq(&self, other: &FrameBuf) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for FrameBuf {}

impl std::fmt::Debug for FrameBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameBuf")
            .field("payload_len", &self.payload_len)
            .finish_non_exhaustive()
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[inline]
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

impl FrameBuf {
    /// A zeroed frame for a payload of `payload_len` bytes (a multiple of 8).
    pub fn new(payload_len: usize) -> FrameBuf {
        debug_assert!(payload_len.is_multiple_of(8));
        let words = (HEADER_SIZE + payload_len).div_ceil(8);
        FrameBuf {
            words: vec![0; words],
            payload_len,
            lanes: lanes(words - CRC_START / 8),
        }
    }

    /// Bytes of the whole frame.
    #[inline]
    pub fn len(&self) -> usize {
        HEADER_SIZE + self.payload_len
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    #[inline]
    pub fn bytes(&self) -> &[u8] {
        let len = self.len();
        // SAFETY: `words` holds at least `len` initialised bytes; u8 has no alignment.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), len) }
    }

    #[inline]
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len();
        // SAFETY: as in `bytes`, and the borrow of `self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), len) }
    }

    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.bytes()[HEADER_SIZE..]
    }

    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.bytes_mut()[HEADER_SIZE..]
    }

    /// Writes `h` over the header (sequence word left alone) and the CRC over it
    /// and the payload as it now is.
    pub fn seal(&mut self, h: &Header) {
        let payload_len = self.payload_len as u32;
        let b = self.bytes_mut();
        let mut word = [0u8; 8];
        word[..4].copy_from_slice(&MAGIC.to_le_bytes());
        let mode = match h.mode {
            SyncMode::Free => 0,
            SyncMode::Lockstep => 1,
        };
        word[4..].copy_from_slice(&[VERSION, h.writer_slot, h.lag, mode]);
        b[8..16].copy_from_slice(&word);
        b[16..24].copy_from_slice(&u64::from(payload_len).to_le_bytes());
        b[24..32].copy_from_slice(&h.epoch.to_le_bytes());
        b[32..40].copy_from_slice(&h.fingerprint.to_le_bytes());
        b[STEP_OFFSET..STEP_OFFSET + 8].copy_from_slice(&h.step.to_le_bytes());
        b[48..56].copy_from_slice(&h.sim_time.to_le_bytes());
        b[56..64].copy_from_slice(&h.wall_clock_ns.to_le_bytes());
        let crc = self.crc();
        self.bytes_mut()[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());
    }

    /// The CRC-32C of the frame from byte [`CRC_START`] on.
    fn crc(&self) -> u32 {
        match &self.lanes {
            Some(lanes) => lanes.crc(&self.words[CRC_START / 8..]),
            None => crc32c::crc32c(&self.bytes()[CRC_START..]),
        }
    }

    /// Checks magic, CRC, version and payload length; the header if they hold.
    pub fn check(&self) -> Result<Header, FrameError> {
        check_with(self.bytes(), self.payload_len, |_| self.crc())
    }
}

/// Checks `b` (a whole frame) as [`FrameBuf::check`] does; `payload_len` is what
/// the reader's interface says the writer publishes.
pub fn check(b: &[u8], payload_len: usize) -> Result<Header, FrameError> {
    check_with(b, payload_len, crc32c::crc32c)
}

/// [`check`] with `crc` computing the CRC of the bytes it covers.
fn check_with(
    b: &[u8],
    payload_len: usize,
    crc: impl FnOnce(&[u8]) -> u32,
) -> Result<Header, FrameError> {
    if b.len() < HEADER_SIZE {
        return Err(FrameError::Empty);
    }
    let magic = u32_at(b, 8);
    if magic == 0 {
        return Err(FrameError::Empty);
    }
    if magic != MAGIC {
        return Err(FrameError::BadMagic {
            found: magic,
            expected: MAGIC,
        });
    }
    // The length before the CRC, which covers the writer's length: a writer of
    // another interface shows as one, not as corruption.
    let found = u32_at(b, 16) as usize;
    if found != payload_len || b.len() != HEADER_SIZE + payload_len {
        return Err(FrameError::BadLength {
            found,
            expected: payload_len,
        });
    }
    let stored = u32_at(b, CRC_OFFSET);
    let computed = crc(&b[CRC_START..]);
    if stored != computed {
        return Err(FrameError::BadCrc { stored, computed });
    }
    // After the CRC: a version byte that checks out is really the writer's.
    if b[12] != VERSION {
        return Err(FrameError::BadVersion {
            found: b[12],
            expected: VERSION,
        });
    }
    Ok(Header {
        writer_slot: b[13],
        lag: b[14],
        mode: if b[15] == 0 {
            SyncMode::Free
        } else {
            SyncMode::Lockstep
        },
        epoch: u64_at(b, 24),
        fingerprint: u64_at(b, 32),
        step: u64_at(b, STEP_OFFSET),
        sim_time: f64::from_bits(u64_at(b, 48)),
        wall_clock_ns: u64_at(b, 56),
    })
}

/// The CRC word of a sealed frame: a digest of everything it carries.
#[inline]
pub fn crc_of(b: &[u8]) -> u32 {
    u32_at(b, CRC_OFFSET)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> (Header, FrameBuf) {
        let h = Header {
            writer_slot: 3,
            lag: 1,
            mode: SyncMode::Lockstep,
            epoch: 0x0123_4567_89ab_cdef,
            fingerprint: 0xfeed_f00d_dead_beef,
            step: 7,
            sim_time: 0.125,
            wall_clock_ns: 1_700_000_000_000_000_000,
        };
        let mut f = FrameBuf::new(16);
        f.payload_mut()[..8].copy_from_slice(&std::f64::consts::PI.to_le_bytes());
        f.payload_mut()[8..12].copy_from_slice(b"RFM!");
        f.seal(&h);
        (h, f)
    }

    #[test]
    fn layout_is_the_documented_little_endian_one() {
        let (_, f) = sample();
        let b = f.bytes();
        assert_eq!(b.len(), 80);
        assert_eq!(
            &b[0..4],
            &[0, 0, 0, 0],
            "the sequence word is the seqlock's"
        );
        assert_eq!(u32_at(b, 4), crc32c::crc32c(&b[8..80]));
        assert_eq!(&b[8..12], b"RFMf");
        assert_eq!((b[12], b[13], b[14], b[15]), (VERSION, 3, 1, 1));
        assert_eq!(u32_at(b, 16), 16);
        assert_eq!(&b[20..24], &[0; 4]);
        assert_eq!(&b[24..32], &0x0123_4567_89ab_cdefu64.to_le_bytes());
        assert_eq!(&b[32..40], &0xfeed_f00d_dead_beefu64.to_le_bytes());
        assert_eq!(&b[40..48], &7u64.to_le_bytes());
        assert_eq!(&b[64..72], &std::f64::consts::PI.to_le_bytes());
        assert_eq!(&b[72..76], b"RFM!");
        // The CRC-32C check value of the standard test vector "123456789".
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn round_trips() {
        let (h, f) = sample();
        assert_eq!(f.check(), Ok(h));
    }

    #[test]
    fn reports_empty_wrong_magic_version_length_and_crc() {
        assert_eq!(FrameBuf::new(8).check(), Err(FrameError::Empty));
        let (h, f) = sample();
        let mut b = f.clone();
        b.bytes_mut()[8] ^= 0x01;
        assert!(matches!(b.check(), Err(FrameError::BadMagic { .. })));
        let mut b = f.clone();
        b.bytes_mut()[70] ^= 0x80;
        assert!(matches!(b.check(), Err(FrameError::BadCrc { .. })));
        // A version change that keeps a valid CRC is a real other version.
        let mut b = f.clone();
        b.bytes_mut()[12] = 9;
        let crc = crc32c::crc32c(&b.bytes()[8..]);
        b.bytes_mut()[4..8].copy_from_slice(&crc.to_le_bytes());
        let err = b.check().unwrap_err();
        assert_eq!(
            err,
            FrameError::BadVersion {
                found: 9,
                expected: VERSION
            }
        );
        assert!(err.to_string().contains("version 9"), "{err}");
        // A payload of another length is another interface's.
        assert_eq!(
            check(f.bytes(), 24),
            Err(FrameError::BadLength {
                found: 16,
                expected: 24
            })
        );
        let _ = h;
    }
}
