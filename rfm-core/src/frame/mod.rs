//! Frames: what one node publishes per step, and where in the region it lives.
//!
//! The region is divided into slots of [`SLOT_SIZE`] bytes; node slot `s` starts at
//! `regionOffset + s * SLOT_SIZE`. Each node writes only its own slot (the
//! single-writer rule of reflective memory: two writers of one address race on the
//! fibre) and reads any other.
//!
//! Two layouts share that slot grid:
//! - [`framed`]: ours. A slot holds a head word and a ring of [`RING_DEPTH`]
//!   seqlocked, CRC-protected frames indexed by step, so a reader can ask for exactly
//!   step k of its peer (deterministic lockstep) and not only the latest.
//! - [`seed`]: the article's packed 65-byte `FlightData` at the start of the slot, so
//!   programs written as in the article interoperate.

use crate::region::{Region, RegionError};

pub mod framed;
pub mod seed;

mod message;
pub use message::{Message, MessageError, MESSAGE_LEN};

/// Bytes per node slot (both layouts). 256 slots (RFM2g node ids 0..=255) take 512 KiB.
pub const SLOT_SIZE: usize = 2048;

/// Offset within every slot, in both layouts, of the liveness block (the slot's last
/// 64 bytes, which neither layout's data reaches: the framed ring ends there, the
/// seed packet is 65 bytes). See [`crate::link::liveness`].
pub const LIVENESS_OFFSET: usize = SLOT_SIZE - 64;

/// Highest slot number: RFM2g rings have at most 256 nodes.
pub const MAX_SLOT: u8 = 255;

/// Frames kept per slot by the framed layout.
pub const RING_DEPTH: usize = 16;

/// Largest lockstep lag the ring supports.
///
/// With lag L, a peer stepping concurrently can run up to L steps ahead and publish
/// one more before it blocks, while this node still needs its frame from L steps
/// back: 2L + 2 frames must coexist, so L ≤ (RING_DEPTH − 2) / 2.
pub const MAX_LAG: u8 = ((RING_DEPTH - 2) / 2) as u8;

/// Offset of node slot `slot` from the start of the coupling region.
pub fn slot_offset(slot: u8) -> usize {
    usize::from(slot) * SLOT_SIZE
}

/// Bytes a coupling region needs to hold slots `0..=highest`.
pub fn region_len(highest: u8) -> usize {
    slot_offset(highest) + SLOT_SIZE
}

/// The window of node slot `slot` within a coupling region.
pub fn slot(region: &Region, slot: u8) -> Result<Region, RegionError> {
    region.subregion(slot_offset(slot), SLOT_SIZE)
}

/// Why bytes read from a slot are not a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Magic is zero: nothing was ever written here (or the writer cleared it).
    #[error("slot is empty (never written, or cleared by its writer)")]
    Empty,
    #[error("wrong magic {found:#010x} (expected {expected:#010x}): not a frame of this layout, or corrupted")]
    BadMagic { found: u32, expected: u32 },
    #[error("frame format version {found}, this build reads version {expected}")]
    BadVersion { found: u8, expected: u8 },
    #[error("CRC mismatch: frame says {stored:#010x}, contents give {computed:#010x} (corrupted in memory or on the link)")]
    BadCrc { stored: u32, computed: u32 },
}
