//! The `framed` layout: our frame, its codec, and the slot that holds a ring of them.
//!
//! Slot (offsets from the slot start, [`super::SLOT_SIZE`] bytes):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | head: low 32 bits of the newest complete step (stored after the frame, Release) |
//! | 4 | 60 | reserved (zero) |
//! | 64 + i·120 | 120 | ring entry i, holding the frame of step s where s mod 16 = i |
//! | 1984 | 64 | liveness: owner, heartbeat and closed words ([`crate::link::liveness`]) |
//!
//! Frame (little-endian; the CRC-32C covers bytes 8..120; every field from byte 8
//! on is 8-byte aligned, so encoding is whole-word stores that the CRC's 8-byte
//! loads can forward from):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | seqlock sequence: odd while the writer is inside the frame |
//! | 4 | 4 | CRC-32C (Castagnoli) of bytes 8..120 |
//! | 8 | 4 | magic `"RFMf"` (0x664d4652) |
//! | 12 | 1 | format version ([`VERSION`]) |
//! | 13 | 1 | writer's node slot |
//! | 14 | 1 | status byte (user data) |
//! | 15 | 1 | lockstep lag of the writer |
//! | 16 | 1 | sync mode of the writer (0 free, 1 lockstep) |
//! | 17 | 7 | reserved (zero) |
//! | 24 | 8 | epoch: random per writer session; a change means the peer restarted |
//! | 32 | 8 | ack epoch: the peer session this writer has taken frames from (0 = none yet; informational) |
//! | 40 | 8 | step: 0 for the frame published at initialization, then 1, 2, … |
//! | 48 | 8 | simulation time (f64) |
//! | 56 | 8 | writer's wall clock, ns since the Unix epoch |
//! | 64 | 24 | roll, pitch, yaw (f64: no precision lost from `fmi2Real`) |
//! | 88 | 32 | message (NUL-terminated, ≤ 31 bytes) |
//!
//! CRC-32C rather than the zip CRC-32: the same 32 bits of protection (better
//! Hamming distance at this length), computed by one instruction per 8 bytes on
//! x86-64 (SSE4.2) and aarch64, with a portable fallback.

use super::{FrameError, Message, MESSAGE_LEN};

/// Bytes per frame (ring entry).
pub const FRAME_SIZE: usize = 120;
/// `"RFMf"` in little-endian.
pub const MAGIC: u32 = u32::from_le_bytes(*b"RFMf");
/// Format version this build writes and reads. Version 2: the slot's holder beats a
/// heartbeat (a version-1 writer does not, and would look dead to this build).
pub const VERSION: u8 = 2;
/// Offset of ring entry 0 within a slot (a cache line after the head word).
pub const RING_OFFSET: usize = 64;
/// Offset of the head word within a slot.
pub const HEAD_OFFSET: usize = 0;
/// Bytes covered by the CRC.
pub const CRC_RANGE: std::ops::Range<usize> = 8..FRAME_SIZE;
const CRC_OFFSET: usize = 4;

const _: () = assert!(RING_OFFSET + super::RING_DEPTH * FRAME_SIZE <= super::LIVENESS_OFFSET);

/// How the writer of a frame synchronises (peers must agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// Never waits; readers take the latest frame.
    #[default]
    Free,
    /// Every step waits for the peer's frame of the matching step.
    Lockstep,
}

impl std::str::FromStr for SyncMode {
    type Err = String;

    fn from_str(s: &str) -> Result<SyncMode, String> {
        match s {
            "lockstep" => Ok(SyncMode::Lockstep),
            "free" => Ok(SyncMode::Free),
            other => Err(format!(
                "unknown sync mode `{other}`; expected lockstep or free"
            )),
        }
    }
}

/// One decoded frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Frame {
    pub writer_slot: u8,
    pub status: u8,
    pub lag: u8,
    pub mode: SyncMode,
    pub epoch: u64,
    pub ack_epoch: u64,
    pub step: u64,
    pub sim_time: f64,
    pub wall_clock_ns: u64,
    pub attitude: [f64; 3],
    pub message: Message,
}

/// Offset of the ring entry for `step` within a slot.
pub fn entry_offset(step: u64) -> usize {
    RING_OFFSET + (step % super::RING_DEPTH as u64) as usize * FRAME_SIZE
}

/// A frame's bytes, 8-byte aligned so the CRC's word loads are aligned too.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C, align(8))]
pub struct FrameBytes(pub [u8; FRAME_SIZE]);

impl std::ops::Deref for FrameBytes {
    type Target = [u8; FRAME_SIZE];
    fn deref(&self) -> &[u8; FRAME_SIZE] {
        &self.0
    }
}

impl std::ops::DerefMut for FrameBytes {
    fn deref_mut(&mut self) -> &mut [u8; FRAME_SIZE] {
        &mut self.0
    }
}

impl std::fmt::Debug for FrameBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FrameBytes").field(&&self.0[..]).finish()
    }
}

fn crc(bytes: &[u8; FRAME_SIZE]) -> u32 {
    crc32c::crc32c(&bytes[CRC_RANGE])
}

/// Encodes `frame` with a zero sequence word (the seqlock owns that word).
pub fn encode(frame: &Frame) -> FrameBytes {
    let mut b = FrameBytes([0u8; FRAME_SIZE]);
    let mut header = [0u8; 8];
    header[..4].copy_from_slice(&MAGIC.to_le_bytes());
    header[4..].copy_from_slice(&[VERSION, frame.writer_slot, frame.status, frame.lag]);
    b[8..16].copy_from_slice(&header);
    let mode: u64 = match frame.mode {
        SyncMode::Free => 0,
        SyncMode::Lockstep => 1,
    };
    b[16..24].copy_from_slice(&mode.to_le_bytes());
    b[24..32].copy_from_slice(&frame.epoch.to_le_bytes());
    b[32..40].copy_from_slice(&frame.ack_epoch.to_le_bytes());
    b[40..48].copy_from_slice(&frame.step.to_le_bytes());
    b[48..56].copy_from_slice(&frame.sim_time.to_le_bytes());
    b[56..64].copy_from_slice(&frame.wall_clock_ns.to_le_bytes());
    for (i, a) in frame.attitude.iter().enumerate() {
        b[64 + 8 * i..72 + 8 * i].copy_from_slice(&a.to_le_bytes());
    }
    b[88..120].copy_from_slice(frame.message.as_raw());
    let crc = crc(&b);
    b[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_le_bytes());
    b
}

fn u64_at(b: &[u8; FRAME_SIZE], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8; FRAME_SIZE], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Decodes a frame, checking magic, version and CRC (the sequence word is ignored).
pub fn decode(b: &[u8; FRAME_SIZE]) -> Result<Frame, FrameError> {
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
    let stored = u32_at(b, CRC_OFFSET);
    let computed = crc(b);
    if stored != computed {
        return Err(FrameError::BadCrc { stored, computed });
    }
    // Version after the CRC: a version byte that checks out is really the writer's.
    if b[12] != VERSION {
        return Err(FrameError::BadVersion {
            found: b[12],
            expected: VERSION,
        });
    }
    let mode = match b[16] {
        0 => SyncMode::Free,
        _ => SyncMode::Lockstep,
    };
    let mut message = [0u8; MESSAGE_LEN];
    message.copy_from_slice(&b[88..120]);
    Ok(Frame {
        writer_slot: b[13],
        status: b[14],
        lag: b[15],
        mode,
        epoch: u64_at(b, 24),
        ack_epoch: u64_at(b, 32),
        step: u64_at(b, 40),
        sim_time: f64::from_bits(u64_at(b, 48)),
        wall_clock_ns: u64_at(b, 56),
        attitude: [
            f64::from_bits(u64_at(b, 64)),
            f64::from_bits(u64_at(b, 72)),
            f64::from_bits(u64_at(b, 80)),
        ],
        message: Message::from_raw(message),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Frame {
        Frame {
            writer_slot: 3,
            status: 0x5a,
            lag: 1,
            mode: SyncMode::Lockstep,
            epoch: 0x0123_4567_89ab_cdef,
            ack_epoch: 42,
            step: 7,
            sim_time: 0.125,
            wall_clock_ns: 1_700_000_000_000_000_000,
            attitude: [0.1, -0.2, std::f64::consts::PI],
            message: Message::new("Hello RFM").unwrap(),
        }
    }

    #[test]
    fn layout_is_the_documented_little_endian_one() {
        let b = encode(&sample());
        assert_eq!(
            &b[0..4],
            &[0, 0, 0, 0],
            "sequence word is left to the seqlock"
        );
        assert_eq!(u32_at(&b, 4), crc32c::crc32c(&b[8..120]));
        assert_eq!(&b[8..12], b"RFMf");
        assert_eq!(
            (b[12], b[13], b[14], b[15], b[16]),
            (VERSION, 3, 0x5a, 1, 1)
        );
        assert_eq!(&b[17..24], &[0; 7]);
        assert_eq!(&b[24..32], &0x0123_4567_89ab_cdefu64.to_le_bytes());
        assert_eq!(&b[32..40], &42u64.to_le_bytes());
        assert_eq!(&b[40..48], &7u64.to_le_bytes());
        assert_eq!(&b[80..88], &std::f64::consts::PI.to_le_bytes());
        assert_eq!(&b[88..97], b"Hello RFM");
        // The CRC-32C check value of the standard test vector "123456789".
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(entry_offset(0), 64);
        assert_eq!(entry_offset(17), 64 + FRAME_SIZE);
    }

    #[test]
    fn round_trips() {
        assert_eq!(decode(&encode(&sample())), Ok(sample()));
    }

    #[test]
    fn reports_empty_wrong_magic_version_and_crc() {
        assert_eq!(decode(&[0u8; FRAME_SIZE]), Err(FrameError::Empty));
        let mut b = encode(&sample());
        b[8] ^= 0x01;
        assert!(matches!(decode(&b), Err(FrameError::BadMagic { .. })));
        let mut b = encode(&sample());
        b[40] ^= 0x80;
        assert!(matches!(decode(&b), Err(FrameError::BadCrc { .. })));
        // A version change that keeps a valid CRC is a real other version.
        let mut b = encode(&sample());
        b[12] = 9;
        let crc = crc32c::crc32c(&b[8..120]);
        b[4..8].copy_from_slice(&crc.to_le_bytes());
        let err = decode(&b).unwrap_err();
        assert_eq!(
            err,
            FrameError::BadVersion {
                found: 9,
                expected: VERSION
            }
        );
        assert!(err.to_string().contains("version 9"), "{err}");
    }
}
