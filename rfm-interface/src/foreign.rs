//! Foreign nodes: memory a lab's own programs write, each a packed C struct at
//! a fixed offset, declared in the interface file next to the FMU nodes so
//! that the map keeps the two apart and FMUs and tools read it by field name.
//!
//! ```toml
//! [[node]]
//! name = "flight"                   # a foreign node has `fields`, no `slot`
//! offset = 0x8000                   # bytes from regionOffset (0 by default:
//!                                   # the card's own addresses)
//! byte_order = "little"             # or "big"
//! align = "packed"                  # or "natural", the default (C's)
//! handshake = { kind = "flag", field = "header", value = 0x55AA55AA }
//! # writer = "sim"                 # an FMU node writes it, for the lab's
//!                                   # programs to read (none: a program does)
//! fields = [
//!   { name = "header", type = "uint32" },
//!   { name = "packetId", type = "uint64" },
//!   { name = "attitude", type = "float", count = 3, unit = "rad" },
//!   { name = "msg", type = "char[32]" },
//!   { name = "spare", type = "uint8", offset = 72 },   # an explicit offset
//! ]
//! ```

use rfm_frames::packed::{CType, Counting, Mark, StructLayout};

use super::Period;

/// How a foreign writer marks a whole struct: the reader's way of never taking
/// a torn one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handshake {
    /// A sequence word (field `field` of the layout).
    Counter {
        field: usize,
        counts: Counting,
        /// The writer's step, when the counter counts steps at a fixed rate:
        /// a lockstep reader may then wait for it.
        period: Option<Period>,
    },
    /// The article's: a marker word holding `value` while the struct is whole,
    /// cleared before a rewrite and set after it.
    Flag { field: usize, value: u64 },
    /// No marker: the struct is taken when two reads agree.
    None,
}

/// The words a file writes for each [`Counting`]: one table.
pub const COUNTINGS: [(&str, Counting); 2] = [
    ("seqlock", Counting::Seqlock),
    ("after-data", Counting::AfterData),
];

/// The words a file writes for each handshake kind.
pub const HANDSHAKES: [&str; 3] = ["counter", "flag", "none"];

/// A field of a foreign node's struct: what the file says of it beyond its
/// place (which [`StructLayout`] holds, in the same order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldInfo {
    pub unit: Option<String>,
    pub description: Option<String>,
}

/// One foreign node.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignNode {
    pub name: String,
    /// Where its struct starts, in bytes from regionOffset.
    pub offset: u64,
    pub layout: StructLayout,
    /// Per field of `layout`, in its order.
    pub info: Vec<FieldInfo>,
    pub handshake: Handshake,
    /// The FMU node (an index of [`crate::Interface::nodes`]) whose FMU writes
    /// the struct, for the lab's programs to read; `None`: a lab's program
    /// writes it.
    pub writer: Option<usize>,
    pub description: Option<String>,
}

impl ForeignNode {
    /// Its handshake as a reader uses it: the marker's place and width.
    pub fn mark(&self) -> Mark {
        let at = |field: &usize| {
            let f = &self.layout.fields[*field];
            (f.offset, f.ctype.size())
        };
        match &self.handshake {
            Handshake::Counter { field, counts, .. } => {
                let (at, width) = at(field);
                Mark::Counter {
                    at,
                    width,
                    counting: *counts,
                }
            }
            Handshake::Flag { field, value } => {
                let (at, width) = at(field);
                Mark::Flag {
                    at,
                    width,
                    value: *value,
                }
            }
            Handshake::None => Mark::None,
        }
    }

    /// The field its handshake marks whole structs by, if any: the one that
    /// reads or writes it manages it (it is no variable of an FMU).
    pub fn marker(&self) -> Option<usize> {
        match self.handshake {
            Handshake::Counter { field, .. } | Handshake::Flag { field, .. } => Some(field),
            Handshake::None => None,
        }
    }

    /// Bytes of memory its struct takes, from `offset`.
    pub fn len(&self) -> u64 {
        self.layout.size as u64
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size == 0
    }

    pub fn end(&self) -> u64 {
        self.offset + self.len()
    }
}

/// Whether a field of `ctype` can be a handshake's marker: a whole-number
/// scalar (or a one-byte boolean flag) that one aligned load reads.
pub fn can_mark(ctype: CType) -> bool {
    !matches!(ctype, CType::Float | CType::Double | CType::Char(_))
}

/// A foreign node's struct in a few words, for the map `build-fmu` prints:
/// `packed big-endian, flag on header`.
pub fn describe(node: &ForeignNode) -> String {
    let order = node.layout.order.words();
    let mark = |field: &usize| &node.layout.fields[*field].name;
    let handshake = match &node.handshake {
        Handshake::Counter { field, .. } => format!("counter {}", mark(field)),
        Handshake::Flag { field, .. } => format!("flag {}", mark(field)),
        Handshake::None => "no handshake".to_owned(),
    };
    let fields = match node.layout.fields.len() {
        1 => "1 field".to_owned(),
        n => format!("{n} fields"),
    };
    format!("{fields}, {order}, {handshake}")
}
