//! Recordings: every frame a node published and every peer frame it took, in one
//! file, so that a run can be inspected, compared and replayed without the other
//! PC.
//!
//! The format (version 1), little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `"RFMrec\r\n"` (a text-mode copy breaks it visibly) |
//! | 4 | format version |
//! | 4 | header length H |
//! | H | header: see below |
//! | 4 | CRC-32C of the 8 + H bytes from the version on |
//!
//! then records until the end of the file:
//!
//! | bytes | field |
//! |---|---|
//! | 4 | body length B (16 to [`MAX_RECORD`]) |
//! | 1 | kind: 0 a frame this node published, 1 a peer frame it took, 2 frames a recorder missed |
//! | 1 | slot of the frame's writer |
//! | 2 | reserved, 0 |
//! | 8 | wall clock (ns since 1970) when the recorder got it (a node: the time its step read after publishing, within 64 polls of taking a peer's frame) |
//! | B - 12 | the frame as it was in memory (64-byte header with its own CRC, then the payload; its first 4 bytes, the seqlock's sequence word and no part of the frame, as zero), or for kind 2 the count missed (8 bytes) |
//! | 4 | CRC-32C of the B bytes from the kind on |
//!
//! The header: the interface's fingerprint (8), the recording node's slot (1;
//! 255 for a recorder that is no node), the number of nodes described (1), 2
//! reserved, the wall clock at the start (8), then the interface name and the
//! parameters (`key=value` lines) as a u32 length and UTF-8, then each node's
//! descriptor ([`crate::interface::descriptor`]) as a u32 length and its bytes.
//!
//! The writer writes whatever it finds queued every millisecond; a file cut
//! anywhere (a master killed) reads up to its last complete record, and the
//! reader says how many bytes it left.

mod reader;
mod writer;

pub use reader::{Reader, RecordError};
pub use writer::{in_flight_len, queue_capacity, Recorder, RecorderError};

use crate::interface::descriptor::{self, Descriptor};
use crate::interface::Interface;

/// The file's first bytes.
pub const MAGIC: [u8; 8] = *b"RFMrec\r\n";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// The largest record body: a frame of the largest memory an interface may use.
pub const MAX_RECORD: u32 = 16 << 20;
/// The slot of a recorder that is no node (`rfmctl record`).
pub const NO_NODE: u8 = 255;
/// Bytes of a record body before the frame.
pub const RECORD_HEAD: usize = 12;
/// A frame's first bytes, the memory's sequence word: recorded as zero.
pub(crate) const SEQUENCE_WORD: usize = 4;

/// What a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A frame the recording node published.
    Published,
    /// A peer's frame the recording node took.
    Taken,
    /// Frames a recorder missed between two reads (the body is the count).
    Missed,
}

impl Kind {
    fn code(self) -> u8 {
        match self {
            Kind::Published => 0,
            Kind::Taken => 1,
            Kind::Missed => 2,
        }
    }

    fn of(code: u8) -> Option<Kind> {
        match code {
            0 => Some(Kind::Published),
            1 => Some(Kind::Taken),
            2 => Some(Kind::Missed),
            _ => None,
        }
    }
}

/// What a recording says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub fingerprint: u64,
    /// The recording node's slot, or [`NO_NODE`].
    pub node: u8,
    /// Wall clock at the start, ns since 1970.
    pub started_ns: u64,
    pub interface: String,
    /// `key=value` lines: the recording node's parameters.
    pub parameters: String,
    /// Each node's descriptor, as it wrote it into memory.
    pub descriptors: Vec<Vec<u8>>,
}

impl Header {
    /// The header of a recording made by the node in `slot` (or [`NO_NODE`]) of
    /// `interface`, starting now: every node's descriptor, as each writes it.
    pub fn for_interface(interface: &Interface, slot: u8, parameters: String) -> Header {
        let map = interface.map().expect("a link's interface has a map");
        let fingerprint = interface.fingerprint();
        Header {
            fingerprint,
            node: slot,
            started_ns: wall_ns(),
            interface: interface.name.clone(),
            parameters,
            descriptors: (0..interface.nodes.len())
                .map(|i| {
                    descriptor::encode(
                        &interface.name,
                        fingerprint,
                        &interface.nodes[i],
                        &map.area(i).payload,
                    )
                })
                .collect(),
        }
    }

    /// The descriptors, decoded (they were checked when the file was read).
    pub fn nodes(&self) -> Vec<Descriptor> {
        self.descriptors
            .iter()
            .map(|d| descriptor::decode(d).expect("checked by the reader"))
            .collect()
    }

    /// The header's bytes, between the length and the CRC.
    fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&self.fingerprint.to_le_bytes());
        b.push(self.node);
        b.push(u8::try_from(self.descriptors.len()).expect("at most 255 nodes described"));
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&self.started_ns.to_le_bytes());
        for text in [&self.interface, &self.parameters] {
            b.extend_from_slice(&(text.len() as u32).to_le_bytes());
            b.extend_from_slice(text.as_bytes());
        }
        for d in &self.descriptors {
            b.extend_from_slice(&(d.len() as u32).to_le_bytes());
            b.extend_from_slice(d);
        }
        b
    }
}

/// One record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub kind: Kind,
    /// The slot of the frame's writer.
    pub slot: u8,
    /// When the recorder got it, ns since 1970.
    pub recorded_ns: u64,
    /// The frame's bytes (header and payload), or the count missed.
    pub body: Vec<u8>,
}

impl Record {
    /// For [`Kind::Missed`]: how many frames were missed.
    pub fn missed(&self) -> Option<u64> {
        match self.kind {
            Kind::Missed => Some(u64::from_le_bytes(self.body[..8].try_into().ok()?)),
            _ => None,
        }
    }
}

/// Wall clock now, ns since 1970.
pub fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

// Not under Miri: the module has no unsafe code, its writer reads the wall clock
// (which Miri's isolation refuses), and the byte-by-byte cases would take it minutes.
#[cfg(all(test, not(miri)))]
mod tests;
