//! Where an interface's signals live: each node's payload as a C struct, and each
//! node's area of the coupling region.
//!
//! A node's **payload** is its signals in declaration order, laid out as a C
//! compiler lays out a struct of them with natural alignment: a Real is a
//! `double`, an Integer an `int32_t`, a Boolean a `uint8_t` (0 or 1), a String of
//! size n a `char[n]` (UTF-8, NUL-padded, not necessarily NUL-terminated). The
//! payload is padded to a multiple of 8 bytes. A C program can therefore read a
//! peer's signals with a struct declaration that `build-fmu` prints.
//!
//! A node's **area** (offsets from the area's start; every part 64-byte aligned):
//!
//! | offset | size | part |
//! |---|---|---|
//! | 0 | 128 | head block: the framed layout's head word, or the seed layout's packet |
//! | 128 | 64 | liveness: owner, heartbeat and closed words ([`crate::link::liveness`]) |
//! | 192 | d | descriptor: what the node publishes, by name ([`super::descriptor`]) |
//! | 192 + d | 16 × e | ring: the frame of step s in entry s mod 16 |
//!
//! An entry is a 64-byte frame header followed by the payload, rounded up to 64
//! bytes so that no two entries share a cache line. Areas follow one another in
//! slot order from the start of the region (or sit at an `offset` the file gives),
//! and must neither overlap nor pass the end of the memory.

use std::fmt;

use super::{descriptor, Interface, NodeSpec, SignalType};
use crate::frame::RING_DEPTH;

/// Alignment of every part of an area, and of areas themselves.
pub const ALIGN: usize = 64;
/// Bytes of the head block at the start of every area.
pub const HEAD_BLOCK: usize = 128;
/// Offset of the liveness block within an area.
pub const LIVENESS_OFFSET: usize = HEAD_BLOCK;
/// Bytes of the liveness block.
pub const LIVENESS_LEN: usize = 64;
/// Offset of the descriptor within an area.
pub const DESCRIPTOR_OFFSET: usize = LIVENESS_OFFSET + LIVENESS_LEN;
/// Bytes of a frame's header, before the payload.
pub const FRAME_HEADER: usize = 64;

fn align_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// Where one signal sits in its node's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub kind: SignalType,
}

impl Field {
    /// Bytes the signal takes.
    pub fn size(&self) -> usize {
        size_of_kind(self.kind)
    }
}

fn size_of_kind(kind: SignalType) -> usize {
    match kind {
        SignalType::Real => 8,
        SignalType::Integer => 4,
        SignalType::Boolean => 1,
        SignalType::String { size } => usize::from(size),
    }
}

fn align_of_kind(kind: SignalType) -> usize {
    match kind {
        SignalType::Real => 8,
        SignalType::Integer => 4,
        SignalType::Boolean | SignalType::String { .. } => 1,
    }
}

/// The payload of one node: its signals' places, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    pub fields: Vec<Field>,
    /// Bytes, a multiple of 8.
    pub len: usize,
}

impl Payload {
    /// The C-struct layout of `kinds`, in order.
    pub fn of(kinds: impl IntoIterator<Item = SignalType>) -> Payload {
        let mut at = 0;
        let fields = kinds
            .into_iter()
            .map(|kind| {
                at = align_up(at, align_of_kind(kind));
                let field = Field { offset: at, kind };
                at += size_of_kind(kind);
                field
            })
            .collect();
        Payload {
            fields,
            len: align_up(at, 8),
        }
    }
}

/// One node's area: where it is and how it is divided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Area {
    /// The node's index in [`Interface::nodes`].
    pub node: usize,
    pub slot: u8,
    /// Offset of the area from the start of the coupling region.
    pub offset: u64,
    pub payload: Payload,
    /// Bytes of the descriptor part (aligned).
    pub descriptor_len: usize,
    /// Bytes of one ring entry: frame header and payload, aligned.
    pub entry_len: usize,
    /// Bytes of the whole area.
    pub len: usize,
}

impl Area {
    pub(crate) fn new(node: usize, spec: &NodeSpec, interface_name: &str, offset: u64) -> Area {
        let payload = Payload::of(spec.signals.iter().map(|s| s.kind));
        let descriptor_len = align_up(descriptor::encoded_len(interface_name, spec), ALIGN);
        let entry_len = align_up(FRAME_HEADER + payload.len, ALIGN);
        Area {
            node,
            slot: spec.slot,
            offset,
            len: DESCRIPTOR_OFFSET + descriptor_len + RING_DEPTH * entry_len,
            payload,
            descriptor_len,
            entry_len,
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
        self.ring_offset() + (step % RING_DEPTH as u64) as usize * self.entry_len
    }

    /// The end of the area, from the start of the region.
    pub fn end(&self) -> u64 {
        self.offset + self.len as u64
    }
}

/// Why an interface's areas cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error(
        "node `{node}` needs bytes {start}..{end} of the coupling region, past the end of the \
         {memory_size}-byte memory: give fewer or smaller signals, or declare the memory the \
         coupling has (memory_size = …, e.g. 67108864 for a 64 MiB RFM2g board)"
    )]
    TooLarge {
        node: String,
        start: u64,
        end: u64,
        memory_size: u64,
    },
    #[error(
        "node `{node}` (bytes {start}..{end}) overlaps node `{other}` (bytes \
         {other_start}..{other_end}): give it an offset of at least {other_end}, or none"
    )]
    Overlap {
        node: String,
        start: u64,
        end: u64,
        other: String,
        other_start: u64,
        other_end: u64,
    },
    #[error("offset {offset} of node `{node}` is not a multiple of {ALIGN} bytes")]
    Misaligned { node: String, offset: u64 },
}

impl MapError {
    /// The node the error is about.
    pub fn node(&self) -> &str {
        match self {
            MapError::TooLarge { node, .. }
            | MapError::Overlap { node, .. }
            | MapError::Misaligned { node, .. } => node,
        }
    }
}

/// Every node's area; the coupling's memory map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryMap {
    /// In slot order.
    pub areas: Vec<Area>,
    pub memory_size: u64,
}

impl MemoryMap {
    /// Places the areas of `interface`: each at the offset its node gives, or else
    /// right after the area of the node with the next lower slot.
    pub fn new(interface: &Interface) -> Result<MemoryMap, MapError> {
        let mut order: Vec<usize> = (0..interface.nodes.len()).collect();
        order.sort_by_key(|&i| interface.nodes[i].slot);
        let mut areas: Vec<Area> = Vec::with_capacity(order.len());
        let mut next = 0u64;
        for i in order {
            let spec = &interface.nodes[i];
            let offset = match spec.offset {
                Some(o) if !o.is_multiple_of(ALIGN as u64) => {
                    return Err(MapError::Misaligned {
                        node: spec.name.clone(),
                        offset: o,
                    })
                }
                Some(o) => o,
                None => next,
            };
            let area = Area::new(i, spec, &interface.name, offset);
            next = area.end();
            if area.end() > interface.memory_size {
                return Err(MapError::TooLarge {
                    node: spec.name.clone(),
                    start: area.offset,
                    end: area.end(),
                    memory_size: interface.memory_size,
                });
            }
            if let Some(other) = areas
                .iter()
                .find(|a| a.offset < area.end() && area.offset < a.end())
            {
                return Err(MapError::Overlap {
                    node: spec.name.clone(),
                    start: area.offset,
                    end: area.end(),
                    other: interface.nodes[other.node].name.clone(),
                    other_start: other.offset,
                    other_end: other.end(),
                });
            }
            areas.push(area);
        }
        Ok(MemoryMap {
            areas,
            memory_size: interface.memory_size,
        })
    }

    /// The area of node `index` (of [`Interface::nodes`]).
    pub fn area(&self, node: usize) -> &Area {
        self.areas
            .iter()
            .find(|a| a.node == node)
            .expect("every node has an area")
    }

    /// Bytes from the start of the region to the end of the last area.
    pub fn len(&self) -> u64 {
        self.areas.iter().map(Area::end).max().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.areas.is_empty()
    }
}

/// The map as `build-fmu` prints it: one line per node, in memory order.
#[derive(Debug)]
pub struct MapTable<'a> {
    pub interface: &'a Interface,
    pub map: &'a MemoryMap,
}

impl fmt::Display for MapTable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<16} {:>4} {:>10} {:>10} {:>8} {:>8}",
            "node", "slot", "offset", "bytes", "signals", "payload"
        )?;
        let mut areas: Vec<&Area> = self.map.areas.iter().collect();
        areas.sort_by_key(|a| a.offset);
        for a in areas {
            let node = &self.interface.nodes[a.node];
            writeln!(
                f,
                "{:<16} {:>4} {:>#10x} {:>10} {:>8} {:>8}",
                node.name,
                a.slot,
                a.offset,
                a.len,
                node.signals.len(),
                a.payload.len
            )?;
        }
        write!(
            f,
            "{} of {} bytes used (from regionOffset)",
            self.map.len(),
            self.map.memory_size
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_laid_out_as_c_structs() {
        let p = Payload::of([
            SignalType::Boolean,
            SignalType::Real,
            SignalType::Integer,
            SignalType::String { size: 3 },
            SignalType::Integer,
        ]);
        let offsets: Vec<usize> = p.fields.iter().map(|f| f.offset).collect();
        // struct { uint8_t a; double b; int32_t c; char d[3]; int32_t e; }
        assert_eq!(offsets, [0, 8, 16, 20, 24]);
        assert_eq!(p.len, 32);
        assert_eq!(Payload::of([]).len, 0);
    }
}
