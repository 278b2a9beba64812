//! A node's area of the coupling region: how it is divided, the ring of frames
//! it holds, and how deep that ring is. One module owns these facts; the memory
//! map (`rfm_interface::layout`) places areas, the frame layouts
//! ([`crate::frame`]) and the liveness words (`rfm_core::link::ownership::block`) fill
//! them in.
//!
//! | offset | size | part |
//! |---|---|---|
//! | 0 | 128 | head block: the framed layout's head word, or the seed layout's packet (and our writer's sequence word at 124) |
//! | 128 | 64 | liveness: owner, heartbeat and closed words (`rfm_core::link::ownership::block`) |
//! | 192 | 256 | statistics: the node's own step, wait and latency figures (`rfm_core::link::stats`) |
//! | 448 | d | descriptor: what the node publishes, by name (`rfm_interface::descriptor`) |
//! | 448 + d | n × e | ring: the frame of step s in entry s mod n (n a power of two, 16 unless rates need more) |
//!
//! An entry is a 64-byte frame header followed by the payload, rounded up to 64
//! bytes so that no two entries share a cache line.

use crate::payload::Payload;
use rfm_memory::{Region, RegionError};

/// Alignment of every part of an area, and of areas themselves.
pub const ALIGN: usize = 64;
/// Bytes of the head block at the start of every area.
pub const HEAD_BLOCK: usize = 128;
/// Offset of the liveness block within an area.
pub const LIVENESS_OFFSET: usize = HEAD_BLOCK;
/// Bytes of the liveness block.
pub const LIVENESS_LEN: usize = 64;
/// How often a holder's heartbeat advances the beat word of its liveness
/// block: the one rate every reader's liveness bounds and the ring's budget
/// count in.
pub const HEARTBEAT_PERIOD: std::time::Duration = std::time::Duration::from_millis(10);
/// Offset of the statistics block within an area: the node's own timing,
/// stored by it at a low rate for whoever watches the lab.
pub const STATS_OFFSET: usize = LIVENESS_OFFSET + LIVENESS_LEN;
/// Bytes of the statistics block.
pub const STATS_LEN: usize = 256;
/// Offset of the descriptor within an area.
pub const DESCRIPTOR_OFFSET: usize = STATS_OFFSET + STATS_LEN;
/// Bytes of a frame's header, before the payload.
pub const FRAME_HEADER: usize = 64;

/// Frames a ring holds at least, and every ring of a file without periods:
/// 2L + 2 for lag L = [`MAX_LAG`], what two nodes stepping alike need.
///
/// With lag L, a peer stepping concurrently can run up to L steps ahead and publish
/// one more before it blocks, while this node still needs its frame from L steps
/// back: 2L + 2 frames must coexist. Nodes at other rates get deeper rings
/// (`rfm_interface::rates`).
pub const RING_DEPTH: usize = 16;

/// The largest lag the rings are sized for unless an interface file says
/// (`max_lag`): L ≤ (RING_DEPTH − 2) / 2.
pub const MAX_LAG: u8 = ((RING_DEPTH - 2) / 2) as u8;

fn align_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// One node's area: where it is and how it is divided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Area {
    /// The node's index in `rfm_interface::Interface::nodes`.
    pub node: usize,
    pub slot: u8,
    /// Offset of the area from the start of the coupling region.
    pub offset: u64,
    pub payload: Payload,
    /// Bytes of the descriptor part (aligned).
    pub descriptor_len: usize,
    /// Bytes of one ring entry: frame header and payload, aligned.
    pub entry_len: usize,
    /// Entries of the ring: a power of two.
    pub depth: usize,
    /// Bytes of the whole area.
    pub len: usize,
}

impl Area {
    /// The area of node `node` (in `slot`, publishing `payload`) at `offset`,
    /// whose descriptor takes `descriptor_bytes` (the caller encodes it: the
    /// descriptor's format is not this module's), with a ring of `depth` entries
    /// (a power of two).
    pub fn new(
        node: usize,
        slot: u8,
        payload: Payload,
        descriptor_bytes: usize,
        offset: u64,
        depth: usize,
    ) -> Area {
        debug_assert!(depth.is_power_of_two());
        let descriptor_len = align_up(descriptor_bytes, ALIGN);
        let entry_len = align_up(FRAME_HEADER + payload.len, ALIGN);
        Area {
            node,
            slot,
            offset,
            len: DESCRIPTOR_OFFSET + descriptor_len + depth * entry_len,
            payload,
            descriptor_len,
            entry_len,
            depth,
        }
    }

    /// Bytes of a frame (header and payload, not the entry's padding).
    pub fn frame_len(&self) -> usize {
        FRAME_HEADER + self.payload.len
    }

    /// Offset of the ring within the area.
    pub fn ring_offset(&self) -> usize {
        DESCRIPTOR_OFFSET + self.descriptor_len
    }

    /// Offset within the area of the ring entry that holds `step`.
    pub fn entry_offset(&self, step: u64) -> usize {
        self.ring_offset() + (step & (self.depth as u64 - 1)) as usize * self.entry_len
    }

    /// The end of the area, from the start of the region.
    pub fn end(&self) -> u64 {
        self.offset + self.len as u64
    }

    /// Whether the area shares a byte with bytes `start..end` of the region.
    pub fn overlaps_bytes(&self, start: u64, end: u64) -> bool {
        self.offset < end && start < self.end()
    }

    /// Whether two areas share a byte.
    pub fn overlaps(&self, other: &Area) -> bool {
        self.overlaps_bytes(other.offset, other.end())
    }
}

/// The window of `area` within a coupling region.
pub fn window(region: &Region, area: &Area) -> Result<Region, RegionError> {
    let offset = usize::try_from(area.offset).map_err(|_| RegionError::OutOfBounds {
        offset: usize::MAX,
        len: area.len,
        region_len: region.len(),
    })?;
    region.subregion(offset, area.len)
}
