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

use std::collections::HashMap;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

pub mod descriptor;
mod discover;
pub mod layout;
mod preset;
pub mod rates;
pub mod settings;
mod value;

pub use discover::{descriptor_at, discover, Found, Scan};
pub use layout::{MapError, MemoryMap};
pub use preset::{attitude, attitude_area, attitude_region_len, ATTITUDE_NAME, ATTITUDE_STRIDE};
pub use rates::{Period, StepRatio};
pub use settings::{SettingValue, Settings};
pub use value::Value;

pub use crate::payload::SignalType;

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
}

impl Reserved {
    /// No name reserved: the file's own rules only.
    pub const NONE: Reserved = Reserved {
        outputs: &[],
        parameters: &[],
        prefixes: &[],
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
}

pub use rfm_memory::MAX_MEMORY_SIZE;

/// The largest lag rings are sized for when a file does not say.
pub const DEFAULT_MAX_LAG: u8 = crate::area::MAX_LAG;

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
    /// The peers (by name) it does not wait for: it takes their newest frame.
    pub free: Vec<String>,
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
            ring_depth: crate::area::RING_DEPTH,
            settings: Settings::default(),
        }
    }

    /// Whether this node waits for `peer` in lockstep (when it runs lockstep).
    pub fn waits_for(&self, peer: &NodeSpec) -> bool {
        peer.name != self.name && !self.free.contains(&peer.name)
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
    pub start: Start,
    /// Smallest value a Real or Integer may be set to (`min`).
    pub min: Option<f64>,
    /// Largest value a Real or Integer may be set to (`max`).
    pub max: Option<f64>,
    pub description: Option<String>,
}

/// A signal's start value (its type's zero when the file gives none).
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    Real(f64),
    Integer(i32),
    Boolean(bool),
    String(String),
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInterface {
    name: Spanned<String>,
    memory_size: Option<Spanned<i64>>,
    period: Option<Spanned<toml::Value>>,
    max_lag: Option<Spanned<i64>>,
    // The link settings ([`settings::SETTINGS`]): the FMU parameters' names.
    device: Option<Spanned<toml::Value>>,
    lag: Option<Spanned<toml::Value>>,
    #[serde(rename = "syncMode")]
    sync_mode: Option<Spanned<toml::Value>>,
    #[serde(rename = "waitStrategy")]
    wait_strategy: Option<Spanned<toml::Value>>,
    timeout: Option<Spanned<toml::Value>>,
    #[serde(rename = "startupTimeout")]
    startup_timeout: Option<Spanned<toml::Value>>,
    #[serde(rename = "idleTimeout")]
    idle_timeout: Option<Spanned<toml::Value>>,
    #[serde(rename = "realTimeFactor")]
    real_time_factor: Option<Spanned<toml::Value>>,
    #[serde(rename = "regionOffset")]
    region_offset: Option<Spanned<toml::Value>>,
    #[serde(rename = "rfm2gLibrary")]
    rfm2g_library: Option<Spanned<toml::Value>>,
    #[serde(default)]
    node: Vec<Spanned<RawNode>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    name: Spanned<String>,
    slot: Spanned<i64>,
    offset: Option<Spanned<i64>>,
    period: Option<Spanned<toml::Value>>,
    free: Option<Spanned<Vec<Spanned<String>>>>,
    // The link settings ([`settings::SETTINGS`]): the FMU parameters' names.
    device: Option<Spanned<toml::Value>>,
    lag: Option<Spanned<toml::Value>>,
    #[serde(rename = "syncMode")]
    sync_mode: Option<Spanned<toml::Value>>,
    #[serde(rename = "waitStrategy")]
    wait_strategy: Option<Spanned<toml::Value>>,
    timeout: Option<Spanned<toml::Value>>,
    #[serde(rename = "startupTimeout")]
    startup_timeout: Option<Spanned<toml::Value>>,
    #[serde(rename = "idleTimeout")]
    idle_timeout: Option<Spanned<toml::Value>>,
    #[serde(rename = "realTimeFactor")]
    real_time_factor: Option<Spanned<toml::Value>>,
    #[serde(rename = "regionOffset")]
    region_offset: Option<Spanned<toml::Value>>,
    #[serde(rename = "rfm2gLibrary")]
    rfm2g_library: Option<Spanned<toml::Value>>,
    #[serde(default)]
    signals: Vec<Spanned<RawSignal>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSignal {
    name: Spanned<String>,
    #[serde(rename = "type")]
    kind: Spanned<String>,
    unit: Option<Spanned<String>>,
    start: Option<Spanned<toml::Value>>,
    description: Option<String>,
    size: Option<Spanned<i64>>,
    min: Option<Spanned<toml::Value>>,
    max: Option<Spanned<toml::Value>>,
}

/// The settings fields of a raw level (the top or a node), by key.
macro_rules! raw_settings {
    ($raw:expr) => {
        [
            ("device", &$raw.device),
            ("lag", &$raw.lag),
            ("syncMode", &$raw.sync_mode),
            ("waitStrategy", &$raw.wait_strategy),
            ("timeout", &$raw.timeout),
            ("startupTimeout", &$raw.startup_timeout),
            ("idleTimeout", &$raw.idle_timeout),
            ("realTimeFactor", &$raw.real_time_factor),
            ("regionOffset", &$raw.region_offset),
            ("rfm2gLibrary", &$raw.rfm2g_library),
        ]
    };
}

/// The settings one level of the file gives, each checked at its place.
fn settings_of(
    src: &Source,
    fields: [(&str, &Option<Spanned<toml::Value>>); settings::SETTINGS.len()],
    max_lag: u8,
) -> Result<Settings, InterfaceError> {
    let mut out = Settings::default();
    for (key, field) in fields {
        if let Some(value) = field {
            out.set(key, value.get_ref(), max_lag)
                .map_err(|what| src.error(value.span(), what))?;
        }
    }
    Ok(out)
}

/// Positions in one file's text, for messages.
struct Source<'a> {
    file: &'a str,
    text: &'a str,
    reserved: &'a Reserved,
}

impl Source<'_> {
    fn error(&self, span: Range<usize>, what: impl Into<String>) -> InterfaceError {
        let before = &self.text[..span.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        InterfaceError {
            file: self.file.to_owned(),
            line,
            column,
            what: what.into(),
        }
    }

    fn line_of(&self, span: &Range<usize>) -> usize {
        self.text[..span.start.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }
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
    /// Parses and checks the interface in `text`; `file` names it in errors, and
    /// no signal or node may take a name of `reserved`.
    pub fn parse(file: &str, text: &str, reserved: &Reserved) -> Result<Interface, InterfaceError> {
        let src = Source {
            file,
            text,
            reserved,
        };
        let raw: RawInterface = toml::from_str(text).map_err(|e| {
            let what = e.message().trim_end().to_owned();
            src.error(e.span().unwrap_or(0..0), what)
        })?;
        let name = raw.name.get_ref();
        if !is_identifier(name) {
            return Err(src.error(
                raw.name.span(),
                format!("interface name `{name}`: {IDENTIFIER_RULE}; FMUs are named <name>_<node>"),
            ));
        }
        if raw.node.is_empty() {
            return Err(src.error(
                0..0,
                "no [[node]]: an interface declares the nodes on the ring and what each publishes",
            ));
        }
        let memory_size = match &raw.memory_size {
            None => crate::DEFAULT_MEMORY_SIZE as u64,
            Some(size) => u64::try_from(*size.get_ref())
                .ok()
                .filter(|&n| n > 0 && n.is_multiple_of(4) && n <= MAX_MEMORY_SIZE)
                .ok_or_else(|| {
                    src.error(
                        size.span(),
                        format!(
                            "memory_size {}: expected the bytes of memory the coupling may use \
                             from regionOffset, a positive multiple of 4, at most \
                             {MAX_MEMORY_SIZE} (256 MiB, the largest RFM2g board)",
                            size.get_ref()
                        ),
                    )
                })?,
        };
        let mut names: HashMap<&str, Range<usize>> = HashMap::new();
        let mut slots: HashMap<i64, Range<usize>> = HashMap::new();
        let mut nodes = Vec::with_capacity(raw.node.len());
        for node in &raw.node {
            nodes.push(check_node(
                &src,
                node.get_ref(),
                node.span(),
                &mut names,
                &mut slots,
            )?);
        }
        let max_lag = match &raw.max_lag {
            None => DEFAULT_MAX_LAG,
            Some(l) => u8::try_from(*l.get_ref())
                .ok()
                .filter(|&l| l <= 127)
                .ok_or_else(|| {
                    src.error(
                        l.span(),
                        format!(
                            "max_lag {}: expected the largest lag (steps) a node may run, 0..127",
                            l.get_ref()
                        ),
                    )
                })?,
        };
        let default_period = raw
            .period
            .as_ref()
            .map(|p| period_value(&src, p))
            .transpose()?;
        for (spec, raw_node) in nodes.iter_mut().zip(&raw.node) {
            let raw_node = raw_node.get_ref();
            spec.period = match &raw_node.period {
                Some(p) => Some(period_value(&src, p)?),
                None => default_period,
            };
        }
        if let Some(with) = nodes.iter().find(|n| n.period.is_some()) {
            if let Some((i, _)) = nodes.iter().enumerate().find(|(_, n)| n.period.is_none()) {
                return Err(src.error(
                    raw.node[i].get_ref().name.span(),
                    format!(
                        "node `{}` has no period while `{}` has one: give every node a period, \
                         or a top-level `period` for the nodes that state none",
                        nodes[i].name, with.name
                    ),
                ));
            }
        }
        check_free(&src, &raw.node, &mut nodes)?;
        set_ring_depths(&src, &raw.node, &mut nodes, max_lag)?;
        for (spec, raw_node) in nodes.iter_mut().zip(&raw.node) {
            spec.settings = settings_of(&src, raw_settings!(raw_node.get_ref()), max_lag)?;
        }
        let interface = Interface {
            name: name.clone(),
            memory_size,
            max_lag,
            settings: settings_of(&src, raw_settings!(raw), max_lag)?,
            nodes,
        };
        if let Err(e) = interface.map() {
            // At the node the map stops at: its offset if it gave one, else its name.
            let node = raw
                .node
                .iter()
                .find(|n| n.get_ref().name.get_ref() == e.node())
                .map(Spanned::get_ref)
                .expect("the map names a node of the file");
            let span = node
                .offset
                .as_ref()
                .map_or_else(|| node.name.span(), Spanned::span);
            return Err(src.error(span, e.to_string()));
        }
        Ok(interface)
    }

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

    /// A 64-bit fingerprint of what peers must agree on: the interface name, and
    /// each node's name, slot and signals (name, type, size, unit). Start values
    /// and descriptions are each node's own business and are left out.
    pub fn fingerprint(&self) -> u64 {
        // FNV-1a: stable across builds and platforms (unlike std's hasher).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes.iter().chain(&[0xff]) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        };
        eat(self.name.as_bytes());
        let mut nodes: Vec<&NodeSpec> = self.nodes.iter().collect();
        nodes.sort_by_key(|n| n.slot);
        for n in nodes {
            eat(n.name.as_bytes());
            eat(&[n.slot]);
            if let Some(offset) = n.offset {
                eat(&offset.to_le_bytes());
            }
            for s in &n.signals {
                eat(s.name.as_bytes());
                eat(s.kind.to_string().as_bytes());
                eat(s.unit.as_deref().unwrap_or("").as_bytes());
            }
            // Rates place the rings and decide who waits: peers must agree on
            // them. A file without them keeps the fingerprint it always had.
            if let Some(p) = n.period {
                eat(b"period");
                eat(&p.num().to_le_bytes());
                eat(&p.den().to_le_bytes());
            }
            for f in &n.free {
                eat(b"free");
                eat(f.as_bytes());
            }
        }
        if self.max_lag != DEFAULT_MAX_LAG {
            eat(b"max_lag");
            eat(&[self.max_lag]);
        }
        h
    }

    /// The first thing two interfaces disagree on, as a sentence naming the
    /// signal and both nodes' views, or `None` when they agree on everything the
    /// fingerprint covers.
    pub fn first_difference(&self, theirs: &Interface) -> Option<String> {
        if self.name != theirs.name {
            return Some(format!(
                "the interfaces are named `{}` here and `{}` there",
                self.name, theirs.name
            ));
        }
        for mine in &self.nodes {
            let Some(other) = theirs.node(&mine.name) else {
                return Some(format!("node `{}` is missing there", mine.name));
            };
            if mine.slot != other.slot {
                return Some(format!(
                    "node `{}` writes slot {} here and slot {} there",
                    mine.name, mine.slot, other.slot
                ));
            }
            if mine.offset != other.offset {
                let show =
                    |o: Option<u64>| o.map_or("no offset".to_owned(), |o| format!("offset {o}"));
                return Some(format!(
                    "node `{}` has {} here and {} there",
                    mine.name,
                    show(mine.offset),
                    show(other.offset)
                ));
            }
            if mine.period != other.period {
                let show = |p: Option<Period>| p.map_or("none".to_owned(), |p| format!("{p} s"));
                return Some(format!(
                    "node `{}` has period {} here and {} there",
                    mine.name,
                    show(mine.period),
                    show(other.period)
                ));
            }
            if mine.free != other.free {
                return Some(format!(
                    "node `{}` is free of {:?} here and of {:?} there",
                    mine.name, mine.free, other.free
                ));
            }
            for (i, s) in mine.signals.iter().enumerate() {
                let node = &mine.name;
                match other.signals.get(i) {
                    None => return Some(format!("signal `{node}.{}` is missing there", s.name)),
                    Some(o) if o.name != s.name => {
                        return Some(format!(
                            "signal {} of node `{node}` is `{}` here and `{}` there",
                            i + 1,
                            s.name,
                            o.name
                        ))
                    }
                    Some(o) if o.kind != s.kind => {
                        return Some(format!(
                            "signal `{node}.{}` is {} here and {} there",
                            s.name,
                            s.kind.with_article(),
                            o.kind.with_article()
                        ))
                    }
                    Some(o) if o.unit != s.unit => {
                        return Some(format!(
                            "signal `{node}.{}` has unit {:?} here and {:?} there",
                            s.name, s.unit, o.unit
                        ))
                    }
                    Some(_) => {}
                }
            }
            if let Some(extra) = other.signals.get(mine.signals.len()) {
                return Some(format!(
                    "signal `{}.{}` is missing here",
                    mine.name, extra.name
                ));
            }
        }
        if let Some(n) = theirs.nodes.iter().find(|n| self.node(&n.name).is_none()) {
            return Some(format!("node `{}` is missing here", n.name));
        }
        (self.max_lag != theirs.max_lag).then(|| {
            format!(
                "max_lag is {} here and {} there",
                self.max_lag, theirs.max_lag
            )
        })
    }
}

fn check_node<'a>(
    src: &Source<'_>,
    node: &'a RawNode,
    span: Range<usize>,
    names: &mut HashMap<&'a str, Range<usize>>,
    slots: &mut HashMap<i64, Range<usize>>,
) -> Result<NodeSpec, InterfaceError> {
    let name = node.name.get_ref();
    if !is_identifier(name) {
        return Err(src.error(
            node.name.span(),
            format!("node name `{name}`: {IDENTIFIER_RULE}"),
        ));
    }
    let prefixes = src.reserved.prefixes;
    if prefixes.contains(&name.as_str()) {
        return Err(src.error(
            node.name.span(),
            format!(
                "node name `{name}` is the prefix of the FMU's own outputs ({} are taken): \
                 rename it",
                prefixes.join(", ")
            ),
        ));
    }
    if let Some(first) = names.insert(name, node.name.span()) {
        return Err(src.error(
            node.name.span(),
            format!(
                "node `{name}` is declared twice (first at line {}): every node has its own name",
                src.line_of(&first)
            ),
        ));
    }
    let slot = *node.slot.get_ref();
    let slot_u8 = u8::try_from(slot).map_err(|_| {
        src.error(
            node.slot.span(),
            format!("slot {slot} of node `{name}`: expected 0..255 (an RFM2g ring has at most 256 nodes)"),
        )
    })?;
    if let Some(first) = slots.insert(slot, node.slot.span()) {
        return Err(src.error(
            node.slot.span(),
            format!(
                "slot {slot} of node `{name}` is taken by another node (line {}): each node writes its own slot",
                src.line_of(&first)
            ),
        ));
    }
    let offset = match &node.offset {
        None => None,
        Some(o) => Some(u64::try_from(*o.get_ref()).map_err(|_| {
            src.error(
                o.span(),
                format!(
                    "offset {} of node `{name}`: expected bytes from regionOffset, ≥ 0 and a \
                     multiple of {}",
                    o.get_ref(),
                    crate::area::ALIGN
                ),
            )
        })?),
    };
    if node.signals.is_empty() {
        return Err(src.error(
            span,
            format!("node `{name}` publishes no signal: give it at least one in `signals`"),
        ));
    }
    if node.signals.len() > MAX_SIGNALS {
        return Err(src.error(
            span,
            format!(
                "node `{name}` publishes {} signals: at most {MAX_SIGNALS} (its descriptor in \
                 memory counts them in 16 bits); split it into several nodes",
                node.signals.len()
            ),
        ));
    }
    let mut seen: HashMap<&str, Range<usize>> = HashMap::new();
    let mut signals = Vec::with_capacity(node.signals.len());
    for s in &node.signals {
        signals.push(check_signal(src, name, s.get_ref(), &mut seen)?);
    }
    Ok(NodeSpec::new(name.clone(), slot_u8, offset, signals))
}

/// A `period` value: a number as written (its digits, not the float TOML makes
/// of them) or a string such as "1/60".
fn period_value(src: &Source<'_>, value: &Spanned<toml::Value>) -> Result<Period, InterfaceError> {
    let text = match value.get_ref() {
        toml::Value::String(s) => s.clone(),
        _ => src.text[value.span()]
            .trim_start_matches('+')
            .replace('_', ""),
    };
    Period::parse(&text).map_err(|e| src.error(value.span(), e))
}

/// Every name in a node's `free` is another node of the file, once.
fn check_free(
    src: &Source<'_>,
    raw: &[Spanned<RawNode>],
    nodes: &mut [NodeSpec],
) -> Result<(), InterfaceError> {
    let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    for (spec, raw_node) in nodes.iter_mut().zip(raw) {
        let Some(free) = &raw_node.get_ref().free else {
            continue;
        };
        for peer in free.get_ref() {
            let name = peer.get_ref();
            let what = if *name == spec.name {
                format!("node `{name}` lists itself in its free: it never waits for itself")
            } else if !names.contains(name) {
                format!(
                    "node `{}` is free of `{name}`, which is no node of this file (nodes: {})",
                    spec.name,
                    names.join(", ")
                )
            } else if spec.free.contains(name) {
                format!("node `{}` lists `{name}` twice in its free", spec.name)
            } else {
                spec.free.push(name.clone());
                continue;
            };
            return Err(src.error(peer.span(), what));
        }
    }
    Ok(())
}

/// Sizes every node's ring for its slowest lockstep reader ([`rates`]).
fn set_ring_depths(
    src: &Source<'_>,
    raw: &[Spanned<RawNode>],
    nodes: &mut [NodeSpec],
    max_lag: u8,
) -> Result<(), InterfaceError> {
    let rate_nodes: Vec<rates::RateNode> = nodes
        .iter()
        .map(|n| rates::RateNode {
            name: &n.name,
            period: n.period,
            waits_for: (0..nodes.len())
                .filter(|&j| n.waits_for(&nodes[j]))
                .collect(),
        })
        .collect();
    let at = |name: &str| {
        let i = nodes.iter().position(|n| n.name == name).unwrap_or(0);
        let node = raw[i].get_ref();
        node.period
            .as_ref()
            .map_or_else(|| node.name.span(), Spanned::span)
    };
    let depths =
        rates::ring_depths(&rate_nodes, max_lag, crate::area::RING_DEPTH).map_err(|e| {
            let node = match &e {
                rates::RateError::Unbounded { reader, .. } => reader.clone(),
                rates::RateError::Incommensurable { b, .. } => b.clone(),
                rates::RateError::TooDeep { node, .. } => node.clone(),
            };
            src.error(at(&node), e.to_string())
        })?;
    for (node, depth) in nodes.iter_mut().zip(depths) {
        node.ring_depth = depth;
    }
    Ok(())
}

fn check_signal<'a>(
    src: &Source<'_>,
    node: &str,
    s: &'a RawSignal,
    seen: &mut HashMap<&'a str, Range<usize>>,
) -> Result<Signal, InterfaceError> {
    let name = s.name.get_ref();
    if !is_identifier(name) {
        return Err(src.error(
            s.name.span(),
            format!("signal name `{name}`: {IDENTIFIER_RULE}"),
        ));
    }
    let Reserved {
        outputs,
        parameters,
        ..
    } = src.reserved;
    if outputs.contains(&name.as_str()) {
        return Err(src.error(
            s.name.span(),
            format!(
                "signal name `{name}` collides with the output `{node}.{name}` every peer's FMU \
                 has ({} are taken): rename it",
                outputs.join(", ")
            ),
        ));
    }
    if parameters.contains(&name.as_str()) {
        return Err(src.error(
            s.name.span(),
            format!(
                "signal name `{name}` collides with the FMU parameter `{name}` ({} are taken): \
                 rename it",
                parameters.join(", ")
            ),
        ));
    }
    if let Some(first) = seen.insert(name, s.name.span()) {
        return Err(src.error(
            s.name.span(),
            format!(
                "node `{node}` publishes `{name}` twice (first at line {})",
                src.line_of(&first)
            ),
        ));
    }
    let kind = match (s.kind.get_ref().as_str(), &s.size) {
        ("String", None) => {
            return Err(src.error(
                s.kind.span(),
                format!(
                    "String `{node}.{name}` needs its size in bytes (UTF-8), 1 to \
                     {MAX_STRING_SIZE}: e.g. size = 16"
                ),
            ))
        }
        ("String", Some(size)) => {
            let n = *size.get_ref();
            let size = u16::try_from(n)
                .ok()
                .filter(|n| (1..=MAX_STRING_SIZE).contains(n))
                .ok_or_else(|| {
                    src.error(
                        size.span(),
                        format!(
                            "size {n} of String `{node}.{name}`: expected 1 to {MAX_STRING_SIZE} bytes"
                        ),
                    )
                })?;
            SignalType::String { size }
        }
        (kind @ ("Real" | "Integer" | "Boolean"), Some(size)) => {
            return Err(src.error(
                size.span(),
                format!(
                    "`{node}.{name}` is {} {kind}: only String signals have a size",
                    if kind == "Integer" { "an" } else { "a" }
                ),
            ))
        }
        ("Real", None) => SignalType::Real,
        ("Integer", None) => SignalType::Integer,
        ("Boolean", None) => SignalType::Boolean,
        (other, _) => {
            return Err(src.error(
                s.kind.span(),
                format!("unknown type `{other}` of `{node}.{name}`: expected Real, Integer, Boolean or String"),
            ))
        }
    };
    let start = match &s.start {
        None => match kind {
            SignalType::Real => Start::Real(0.0),
            SignalType::Integer => Start::Integer(0),
            SignalType::Boolean => Start::Boolean(false),
            SignalType::String { .. } => Start::String(String::new()),
        },
        Some(value) => start_value(src, node, name, kind, value)?,
    };
    if let Some(unit) = &s.unit {
        if unit.get_ref().len() > MAX_NAME_LEN {
            return Err(src.error(
                unit.span(),
                format!(
                    "unit of `{node}.{name}` is {} bytes: at most {MAX_NAME_LEN}",
                    unit.get_ref().len()
                ),
            ));
        }
    }
    let bound =
        |b: &Option<Spanned<toml::Value>>, which: &str| -> Result<Option<f64>, InterfaceError> {
            let Some(b) = b else { return Ok(None) };
            match (kind, b.get_ref()) {
                (SignalType::Real, toml::Value::Float(x)) if x.is_finite() => Ok(Some(*x)),
                (SignalType::Real | SignalType::Integer, toml::Value::Integer(i))
                    if kind == SignalType::Real || i32::try_from(*i).is_ok() =>
                {
                    Ok(Some(*i as f64))
                }
                (SignalType::Real | SignalType::Integer, _) => Err(src.error(
                    b.span(),
                    format!(
                        "{which} of `{node}.{name}`: expected {}",
                        if kind == SignalType::Real {
                            "a finite number"
                        } else {
                            "a 32-bit integer"
                        }
                    ),
                )),
                _ => Err(src.error(
                    b.span(),
                    format!(
                        "`{node}.{name}` is {}: only Real and Integer signals have a {which}",
                        kind.with_article()
                    ),
                )),
            }
        };
    let (min, max) = (bound(&s.min, "min")?, bound(&s.max, "max")?);
    if let (Some(lo), Some(hi)) = (min, max) {
        if lo > hi {
            let span = s.max.as_ref().expect("max given").span();
            return Err(src.error(
                span,
                format!("max {hi} of `{node}.{name}` is below its min {lo}"),
            ));
        }
    }
    let x = match start {
        Start::Real(x) => Some(x),
        Start::Integer(i) => Some(f64::from(i)),
        _ => None,
    };
    if let Some(x) = x {
        if min.is_some_and(|lo| x < lo) || max.is_some_and(|hi| x > hi) {
            let span = s.start.as_ref().map_or_else(|| s.name.span(), |v| v.span());
            return Err(src.error(
                span,
                format!(
                    "start {x} of `{node}.{name}` is outside its min..max ({}..{}): the FMU \
                     would refuse its own start value",
                    min.map_or(String::new(), |v| v.to_string()),
                    max.map_or(String::new(), |v| v.to_string())
                ),
            ));
        }
    }
    Ok(Signal {
        name: name.clone(),
        kind,
        unit: s.unit.as_ref().map(|u| u.get_ref().clone()),
        start,
        min,
        max,
        description: s.description.clone(),
    })
}

fn start_value(
    src: &Source<'_>,
    node: &str,
    name: &str,
    kind: SignalType,
    value: &Spanned<toml::Value>,
) -> Result<Start, InterfaceError> {
    let bad = |what: String| src.error(value.span(), what);
    match (kind, value.get_ref()) {
        (SignalType::Real, toml::Value::Float(x)) if x.is_finite() => Ok(Start::Real(*x)),
        (SignalType::Real, toml::Value::Integer(i)) => Ok(Start::Real(*i as f64)),
        (SignalType::Integer, toml::Value::Integer(i)) => {
            i32::try_from(*i).map(Start::Integer).map_err(|_| {
                bad(format!(
                    "start {i} of Integer `{node}.{name}`: an Integer is 32 bits"
                ))
            })
        }
        (SignalType::Boolean, toml::Value::Boolean(b)) => Ok(Start::Boolean(*b)),
        (SignalType::String { size }, toml::Value::String(text)) => {
            if text.len() > usize::from(size) || text.contains('\0') {
                Err(bad(format!(
                    "start of String `{node}.{name}` is {} bytes or holds a NUL; it has room for \
                     {size} bytes of text",
                    text.len()
                )))
            } else {
                Ok(Start::String(text.clone()))
            }
        }
        (kind, _) => Err(bad(format!(
            "start {} of `{node}.{name}` is not {} value (finite, for a Real)",
            src.text.get(value.span()).unwrap_or("?"),
            kind.with_article()
        ))),
    }
}
