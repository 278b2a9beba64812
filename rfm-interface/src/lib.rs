//! Interface files: the signals a lab exchanges, written down as an interface
//! control document (TOML), and the contract every node's FMU is built from.
//!
//! ```toml
//! name = "cockpit_link"            # FMUs are named <name>_<node>
//! [[node]]
//! name = "cockpit"                 # [A-Za-z][A-Za-z0-9_]*
//! slot = 0                         # 0..255
//! signals = [
//!   { name = "roll", type = "Real", unit = "rad", start = 0.0, description = "bank angle" },
//!   { name = "gear_down", type = "Boolean" },
//!   { name = "callsign", type = "String", size = 16 },   # bytes, UTF-8
//! ]
//! ```
//!
//! [`Interface::parse`] checks every rule and names the file, line and column of
//! what breaks one, with what is allowed, including that the nodes' areas fit the
//! memory without overlapping ([`layout`]). Optional keys: `memory_size` (bytes
//! the coupling may use from `regionOffset`, default 1 MiB, the size of a `shm:`
//! object), `period` (the default of the nodes') and `max_lag` (the largest
//! `lag` a node may run, default 7: the rings are sized for it) at the top;
//! `offset` (of the node's area), `period` (its step in seconds: `0.001` or
//! `"1/60"`) and `free` (the peers it takes the newest frame of instead of
//! waiting) in a node ([`rates`]); at either level, the link settings every
//! node's FMU starts with ([`settings`]).

mod compare;
pub mod declared;
pub mod descriptor;
mod discover;
pub mod foreign;
pub mod layout;
mod parse;
mod preset;
pub mod rates;
pub mod settings;

pub use discover::{descriptor_at, discover, Found, Scan};
pub use foreign::{ForeignNode, Handshake};
pub use layout::{MapError, MemoryMap};
pub use preset::{attitude, attitude_area, attitude_region_len, ATTITUDE_NAME, ATTITUDE_STRIDE};
pub use rates::{Period, StepRatio};
pub use settings::Settings;

use rfm_frames::fmi::Value;
use rfm_frames::payload::SignalType;

/// Longest String signal, in bytes.
pub const MAX_STRING_SIZE: u16 = 1024;

/// Most signals one node publishes: its descriptor in memory (what rfmctl and
/// every peer read it by) counts them in 16 bits.
pub const MAX_SIGNALS: usize = u16::MAX as usize;

/// Names a program that turns interfaces into variables keeps for itself, so
/// that no signal or node of a file collides with them. The FMU's are
/// `fmu_model::RESERVED`; this crate knows none of its own.
#[derive(Debug, Clone, Copy)]
pub struct Reserved {
    /// Signal names every peer already has as outputs (`<node>.time`).
    pub outputs: &'static [&'static str],
    /// Signal names taken by the program's parameters (a node's signals become
    /// inputs of the same namespace).
    pub parameters: &'static [&'static str],
    /// Node names that prefix the program's own outputs (`record.dropped`).
    pub prefixes: &'static [&'static str],
    /// The first parts of a foreign node's own outputs (`flight.age`,
    /// `flight.link.ok`), which its fields' names may not take.
    pub foreign_outputs: &'static [&'static str],
}

impl Reserved {
    /// No name reserved: the file's own rules only.
    pub const NONE: Reserved = Reserved {
        outputs: &[],
        parameters: &[],
        prefixes: &[],
        foreign_outputs: &[],
    };
}

/// Longest name (of the interface, a node or a signal) and unit, in bytes: the
/// descriptor in memory stores each behind one length byte, and FMI tools show them.
pub const MAX_NAME_LEN: usize = 64;

/// A whole interface: its name and the nodes on the ring.
#[derive(Debug, Clone, PartialEq)]
pub struct Interface {
    pub name: String,
    /// Bytes of memory the coupling may use, from `regionOffset`.
    pub memory_size: u64,
    /// The largest `lag` a node of the coupling may run: the rings are deep
    /// enough for it.
    pub max_lag: u8,
    /// The link settings of every node's FMU the file gives at its top
    /// (a node's own override them: [`NodeSpec::settings`]).
    pub settings: Settings,
    pub nodes: Vec<NodeSpec>,
    /// The memory the lab's own programs write ([`foreign`]).
    pub foreign: Vec<ForeignNode>,
}

use rfm_memory::MAX_MEMORY_SIZE;

/// The largest lag rings are sized for when a file does not say.
pub const DEFAULT_MAX_LAG: u8 = rfm_frames::area::MAX_LAG;

/// One node: the slot it writes and the signals it publishes.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    pub name: String,
    pub slot: u8,
    /// Where its area starts in the region, if the file says (else: packed).
    pub offset: Option<u64>,
    pub signals: Vec<Signal>,
    /// Its step, when the file gives periods (every node then has one).
    pub period: Option<Period>,
    /// The peers (their indices in [`Interface::nodes`]) it does not wait for:
    /// it takes their newest frame.
    pub free: Vec<usize>,
    /// Frames its ring holds: a power of two, deep enough for its slowest
    /// lockstep reader ([`rates::ring_depths`]).
    pub ring_depth: usize,
    /// The link settings of this node's FMU the file gives in its `[[node]]`.
    pub settings: Settings,
}

impl NodeSpec {
    /// A node of no period that waits for every peer, with the ring of a file
    /// without periods.
    pub fn new(name: String, slot: u8, offset: Option<u64>, signals: Vec<Signal>) -> NodeSpec {
        NodeSpec {
            name,
            slot,
            offset,
            signals,
            period: None,
            free: Vec::new(),
            ring_depth: rfm_frames::area::RING_DEPTH,
            settings: Settings::default(),
        }
    }

    /// Whether this node waits for node `peer` (another node's index) in
    /// lockstep, when it runs lockstep.
    pub fn waits_for(&self, peer: usize) -> bool {
        !self.free.contains(&peer)
    }
}

impl Interface {
    /// The settings of node `i`'s FMU: its own over the file's.
    pub fn settings_of(&self, i: usize) -> Settings {
        self.nodes[i].settings.over(&self.settings)
    }
}

/// One published signal.
#[derive(Debug, Clone, PartialEq)]
pub struct Signal {
    pub name: String,
    pub kind: SignalType,
    pub unit: Option<String>,
    /// Its type's zero when the file gives none ([`Value::zero`]).
    pub start: Value,
    /// Smallest value a Real or Integer may be set to (`min`).
    pub min: Option<f64>,
    /// Largest value a Real or Integer may be set to (`max`).
    pub max: Option<f64>,
    pub description: Option<String>,
}

/// What is wrong with an interface file, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {what}")]
pub struct InterfaceError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub what: String,
}

/// `[A-Za-z][A-Za-z0-9_]*`: a C identifier without a leading underscore, usable
/// in FMI variable names and as an FMU's model identifier.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= MAX_NAME_LEN
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

const IDENTIFIER_RULE: &str = "a name starts with a letter, holds only letters, digits and `_` \
     ([A-Za-z][A-Za-z0-9_]*) and has at most 64 characters";

impl Interface {
    /// Where every node's area lies in the region.
    pub fn map(&self) -> Result<MemoryMap, MapError> {
        MemoryMap::new(self)
    }

    /// The index of the node called `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// The node called `name`.
    pub fn node(&self, name: &str) -> Option<&NodeSpec> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The foreign node called `name`.
    pub fn foreign_node(&self, name: &str) -> Option<&ForeignNode> {
        self.foreign.iter().find(|n| n.name == name)
    }
}
