//! Frames: what one node publishes per step, and where in the region it lives.
//!
//! The region holds one area per node, placed by the interface's memory map
//! (`rfm_interface::layout`). Each node writes only its own area (the
//! single-writer rule of reflective memory: two writers of one address race on the
//! fibre) and reads any other.
//!
//! Two layouts share that area:
//! - [`framed`]: ours. An area holds a head word and a ring of [`RING_DEPTH`](crate::area::RING_DEPTH)
//!   seqlocked, CRC-protected frames indexed by step, so a reader can ask for exactly
//!   step k of its peer (deterministic lockstep) and not only the latest.
//! - [`seed`]: the article's packed 65-byte `FlightData` at the start of the area,
//!   so programs written as in the article interoperate (attitude preset only).

mod crc;
pub mod framed;
pub mod seed;

mod message;
pub use message::{Message, MessageError, MESSAGE_LEN};

/// Which of the two layouts a node's area holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    #[default]
    Framed,
    /// The article's `FlightData`: free mode only (it has no step ring or session).
    Seed,
}

/// Each layout by the word the FMU's `layout` parameter gives it.
impl crate::names::Named for Layout {
    const KIND: &'static str = "layout";
    const NAMES: &'static [(&'static str, Layout)] =
        &[("framed", Layout::Framed), ("seed", Layout::Seed)];
}

crate::named_words!(Layout);

/// Highest slot number: RFM2g rings have at most 256 nodes.
pub const MAX_SLOT: u8 = 255;

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
    /// The writer publishes a payload of another length: another interface's frame.
    #[error("the frame carries {found} bytes of signals, this node's interface says {expected}")]
    BadLength { found: usize, expected: usize },
}
