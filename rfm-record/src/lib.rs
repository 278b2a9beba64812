//! Recordings: every frame a node published and every peer frame it took, in one
//! file, so that a run can be inspected, compared and replayed without the other
//! PC.
//!
//! The format (version 3), little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `"RFMrec\r\n"` (a text-mode copy breaks it visibly) |
//! | 4 | format version |
//! | 4 | header length H (at most [`MAX_HEADER`]) |
//! | H | header: see below |
//! | 4 | CRC-32C of the 8 + H bytes from the version on |
//!
//! then records until the end of the file:
//!
//! | bytes | field |
//! |---|---|
//! | 4 | body length B (16 to [`Header::largest_body`]) |
//! | 1 | kind: 0 a frame this node published, 1 a peer frame it took, 2 frames a recorder missed or a writer lost, 3 a foreign struct it read whole (the first, then each one its program moved) |
//! | 1 | slot of the frame's writer; for kind 3 the struct's index in the header |
//! | 2 | reserved, 0 |
//! | 8 | wall clock (ns since 1970) when the recorder got it (a node: the time its step read after publishing, within 64 polls of taking a peer's frame) |
//! | B - 12 | the frame as it was in memory (64-byte header with its own CRC, then the payload; its first 4 bytes, the seqlock's sequence word and no part of the frame, as zero), or for kind 2 the count missed (8 bytes), or for kind 3 the struct's bytes |
//! | 4 | CRC-32C of the B bytes from the kind on |
//!
//! The header: the interface's fingerprint (8), the recording node's slot (2;
//! 0xFFFF for a recorder that is no node), the number of nodes described (2),
//! the wall clock at the start (8), then the interface name and the parameters
//! (`key=value` lines) as a u32 length and UTF-8, then each node's descriptor
//! ([`rfm_interface::descriptor`]) as a u32 length and its bytes, then the
//! number of foreign structs described (2) and each as a u32 length and its
//! bytes ([`structs`]). Version 2 (read still) had no structs; version 1 had
//! one byte each for the slot (255: no node) and the count, then two
//! reserved: it could not describe 256 nodes.
//!
//! The writer writes whatever it finds queued every millisecond; a file cut
//! anywhere (a master killed) reads up to its last complete record, and the
//! reader says how many bytes it left. A write that fails (a full disk) is cut
//! back to the last whole record, its records counted as lost; when writing
//! works again a kind-2 record per slot says how many are missing there.
//!
//! The limits are the ones below and in [`Header`], which writer and reader
//! share: what a writer accepts to record, the reader reads back.

mod drain;
mod error;
mod file;
mod reader;
pub mod structs;
mod writer;

pub use drain::Sink;
pub use file::{expand_file_name, START_PLACEHOLDER};
pub use reader::{Reader, RecordError};
pub use structs::RecordedStruct;
pub use writer::{in_flight_len, queue_capacity, LossNews, Recorder, RecorderError};

use rfm_interface::descriptor::{self, Descriptor};
use rfm_interface::Interface;

/// The file's first bytes.
pub const MAGIC: [u8; 8] = *b"RFMrec\r\n";
/// The format version this build writes (and the newest it reads).
pub const VERSION: u32 = 3;
/// Foreign structs a header describes, at most: a record's slot byte names one.
pub const MAX_STRUCTS: usize = 256;
/// The largest header: 256 descriptors of the largest nodes an interface may
/// have (65,535 signals with names and units of 64 bytes) would not fit, but
/// a coupling that large does not fit a memory either.
pub const MAX_HEADER: u32 = 256 << 20;
/// A record's body length is a u32: the largest frame a recording holds.
pub const MAX_FRAME: usize = u32::MAX as usize - RECORD_HEAD;
/// The header's slot of a recorder that is no node (`rfmctl record`).
const NO_NODE: u16 = 0xFFFF;
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
    /// A foreign struct read whole (the slot is its index in the header).
    Struct,
}

impl Kind {
    fn code(self) -> u8 {
        match self {
            Kind::Published => 0,
            Kind::Taken => 1,
            Kind::Missed => 2,
            Kind::Struct => 3,
        }
    }

    fn of(code: u8) -> Option<Kind> {
        match code {
            0 => Some(Kind::Published),
            1 => Some(Kind::Taken),
            2 => Some(Kind::Missed),
            3 => Some(Kind::Struct),
            _ => None,
        }
    }
}

/// What a recording says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub fingerprint: u64,
    /// The recording node's slot; `None` for a recorder that is no node.
    pub node: Option<u8>,
    /// Wall clock at the start, ns since 1970.
    pub started_ns: u64,
    pub interface: String,
    /// `key=value` lines: the recording node's parameters.
    pub parameters: String,
    /// Each node's descriptor, as it wrote it into memory.
    pub descriptors: Vec<Vec<u8>>,
    /// The foreign structs, the first [`MAX_STRUCTS`] of the interface's.
    pub structs: Vec<RecordedStruct>,
}

impl Header {
    /// The header of a recording made by the node in `slot` (`None`: a
    /// recorder that is no node) of `interface`, starting now: every node's
    /// descriptor, as each writes it.
    pub fn for_interface(interface: &Interface, slot: Option<u8>, parameters: String) -> Header {
        let map = interface.map().expect("a link's interface has a map");
        let fingerprint = interface.fingerprint();
        Header {
            fingerprint,
            node: slot,
            started_ns: rfm_frames::wall::now_ns(),
            interface: interface.name.clone(),
            parameters,
            descriptors: (0..interface.nodes.len())
                .map(|i| {
                    descriptor::encode(
                        &interface.name,
                        fingerprint,
                        (&interface.nodes[i], &interface.declared()),
                        &map.area(i).payload,
                        // A recording is of no session.
                        None,
                    )
                })
                .collect(),
            structs: (interface.foreign.iter().take(MAX_STRUCTS))
                .map(RecordedStruct::of)
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

    /// The largest frame a record of this recording holds: a frame of its
    /// largest node (header and payload); 0 if no descriptor decodes.
    pub fn largest_frame(&self) -> usize {
        self.descriptors
            .iter()
            .filter_map(|d| descriptor::decode(d).ok()?.area(0))
            .map(|a| rfm_frames::frame::framed::HEADER_SIZE + a.payload.len)
            .max()
            .unwrap_or(0)
    }

    /// The largest record body of this recording: one of its largest frame
    /// or struct, or a count of missed frames. What the reader accepts is
    /// what the writer may write.
    pub fn largest_body(&self) -> usize {
        RECORD_HEAD + self.largest_record().max(8)
    }

    /// The largest frame or foreign struct a record of it holds: what a
    /// recorder's queue must fit.
    pub fn largest_record(&self) -> usize {
        let largest_struct = self.structs.iter().map(|s| s.layout.size).max();
        self.largest_frame().max(largest_struct.unwrap_or(0))
    }

    /// The header's bytes, between the length and the CRC.
    fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&self.fingerprint.to_le_bytes());
        b.extend_from_slice(&self.node.map_or(NO_NODE, u16::from).to_le_bytes());
        // A u16: slots are 0..=255, so at most 256 nodes are described.
        b.extend_from_slice(&(self.descriptors.len() as u16).to_le_bytes());
        b.extend_from_slice(&self.started_ns.to_le_bytes());
        for text in [&self.interface, &self.parameters] {
            b.extend_from_slice(&(text.len() as u32).to_le_bytes());
            b.extend_from_slice(text.as_bytes());
        }
        for d in &self.descriptors {
            b.extend_from_slice(&(d.len() as u32).to_le_bytes());
            b.extend_from_slice(d);
        }
        b.extend_from_slice(&(self.structs.len() as u16).to_le_bytes());
        for s in &self.structs {
            let mut bytes = Vec::new();
            s.encode(&mut bytes);
            b.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            b.extend_from_slice(&bytes);
        }
        b
    }
}

/// One record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub kind: Kind,
    /// The slot of the frame's writer; of a [`Kind::Struct`], the struct's
    /// index in [`Header::structs`].
    pub slot: u8,
    /// When the recorder got it, ns since 1970.
    pub recorded_ns: u64,
    /// The frame's bytes (header and payload), the count missed, or the
    /// foreign struct's bytes.
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

// Not under Miri: the module has no unsafe code, its writer reads the wall clock
// (which Miri's isolation refuses), and the byte-by-byte cases would take it minutes.
#[cfg(all(test, not(miri)))]
mod tests;
