//! Reading an interface file: its TOML as written (the raw shape serde
//! derives, every value with its span), then every rule checked at the place
//! that breaks it.

use std::collections::HashMap;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::*;

mod foreign;
mod node;
mod signal;
mod syntax;

use foreign::{check_foreign, RawField};
use node::{check_node, check_node_name};

/// How many settings a file may set: the fields below, each looked up in
/// the table by its key (a key not there is refused as no setting).
const SETTINGS_IN_FILES: usize = settings::in_files();

/// A level of the file that takes the link settings ([`settings::SETTINGS`],
/// the FMU parameters' names): its own fields, then the settings' fields,
/// written once here because serde's `flatten` does not go with
/// `deny_unknown_fields`, which names a misspelt key; `settings()` lists them
/// by key.
macro_rules! level_with_settings {
    // `then`: the fields after the settings, where a message listing the keys
    // names them.
    (struct $name:ident { $($fields:tt)* } then { $($then:tt)* }) => {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $name {
            $($fields)*
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
            $($then)*
        }

        impl $name {
            /// The settings fields, by key.
            fn settings(&self) -> [(&str, &Option<Spanned<toml::Value>>); SETTINGS_IN_FILES] {
                [
                    ("device", &self.device),
                    ("lag", &self.lag),
                    ("syncMode", &self.sync_mode),
                    ("waitStrategy", &self.wait_strategy),
                    ("timeout", &self.timeout),
                    ("startupTimeout", &self.startup_timeout),
                    ("idleTimeout", &self.idle_timeout),
                    ("realTimeFactor", &self.real_time_factor),
                    ("regionOffset", &self.region_offset),
                    ("rfm2gLibrary", &self.rfm2g_library),
                ]
            }
        }
    };
}

level_with_settings!(
    struct RawInterface {
        name: Spanned<String>,
        memory_size: Option<Spanned<i64>>,
        period: Option<Spanned<toml::Value>>,
        max_lag: Option<Spanned<i64>>,
    } then {
        #[serde(default)]
        node: Vec<Spanned<RawNode>>,
    }
);

level_with_settings!(
    struct RawNode {
        name: Spanned<String>,
        slot: Option<Spanned<i64>>,
        offset: Option<Spanned<i64>>,
        period: Option<Spanned<toml::Value>>,
        free: Option<Spanned<Vec<Spanned<String>>>>,
    } then {
        #[serde(default)]
        signals: Vec<Spanned<RawSignal>>,
        // A foreign node's (foreign.rs).
        fields: Option<Spanned<Vec<Spanned<RawField>>>>,
        byte_order: Option<Spanned<String>>,
        align: Option<Spanned<String>>,
        handshake: Option<Spanned<toml::Value>>,
        writer: Option<Spanned<String>>,
        size: Option<Spanned<i64>>,
        description: Option<Spanned<String>>,
    }
);

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
    count: Option<Spanned<i64>>,
    min: Option<Spanned<toml::Value>>,
    max: Option<Spanned<toml::Value>>,
}

/// The settings one level of the file gives, each checked at its place.
fn settings_of(
    src: &Source,
    fields: [(&str, &Option<Spanned<toml::Value>>); SETTINGS_IN_FILES],
    max_lag: u8,
) -> Result<Settings, InterfaceError> {
    let mut out = Settings::default();
    for (key, field) in fields {
        if let Some(value) = field {
            out.set(key, value.get_ref(), max_lag)
                .map_err(|what| src.error(value.span(), what.to_string()))?;
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

impl Interface {
    /// Parses and checks the interface in `text`; `file` names it in errors, and
    /// no signal or node may take a name of `reserved`.
    pub fn parse(file: &str, text: &str, reserved: &Reserved) -> Result<Interface, InterfaceError> {
        let src = Source {
            file,
            text,
            reserved,
        };
        let mut raw: RawInterface = toml::from_str(text).map_err(|e| syntax::error(&src, &e))?;
        let name = raw.name.get_ref();
        if !is_identifier(name) {
            return Err(src.error(
                raw.name.span(),
                format!("interface name `{name}`: {IDENTIFIER_RULE}; FMUs are named <name>_<node>"),
            ));
        }
        let foreign_raw = split_foreign(&src, &mut raw.node)?;
        let memory_size = memory_size(&src, &raw.memory_size)?;
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
        let max_lag = max_lag(&src, &raw.max_lag)?;
        set_periods(&src, &raw, &mut nodes)?;
        // After the periods: a foreign counter's period needs them.
        let mut foreign = Vec::with_capacity(foreign_raw.len());
        for node in &foreign_raw {
            check_node_name(&src, &node.get_ref().name, &mut names)?;
            foreign.push(check_foreign(&src, node.get_ref(), node.span(), &nodes)?);
        }
        check_free(&src, &raw.node, &mut nodes)?;
        set_ring_depths(&src, &raw.node, &mut nodes, max_lag)?;
        for (spec, raw_node) in nodes.iter_mut().zip(&raw.node) {
            spec.settings = settings_of(&src, raw_node.get_ref().settings(), max_lag)?;
        }
        let interface = Interface {
            name: name.clone(),
            memory_size,
            max_lag,
            settings: settings_of(&src, raw.settings(), max_lag)?,
            nodes,
            foreign,
        };
        check_map(&src, &raw.node, &foreign_raw, &interface)?;
        Ok(interface)
    }
}

/// Takes the foreign nodes (with `fields`) out of `nodes`: the rest of
/// the rules are the FMU nodes', of which a file needs one.
fn split_foreign(
    src: &Source<'_>,
    nodes: &mut Vec<Spanned<RawNode>>,
) -> Result<Vec<Spanned<RawNode>>, InterfaceError> {
    if nodes.is_empty() {
        return Err(src.error(
            0..0,
            "no [[node]]: an interface declares the nodes on the ring and what each publishes",
        ));
    }
    let (foreign, ours): (Vec<_>, Vec<_>) = std::mem::take(nodes)
        .into_iter()
        .partition(|n| n.get_ref().fields.is_some());
    *nodes = ours;
    if nodes.is_empty() {
        return Err(src.error(
            foreign[0].span(),
            "every [[node]] of this file is foreign (has `fields`): an interface declares at \
             least one node an FMU is built for (with `slot` and `signals`)",
        ));
    }
    Ok(foreign)
}

/// `memory_size`: the bytes from regionOffset the coupling may use.
fn memory_size(src: &Source<'_>, size: &Option<Spanned<i64>>) -> Result<u64, InterfaceError> {
    let Some(size) = size else {
        return Ok(rfm_memory::DEFAULT_MEMORY_SIZE as u64);
    };
    u64::try_from(*size.get_ref())
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
        })
}

/// `max_lag`: the largest lag a node may run, which sizes the rings.
fn max_lag(src: &Source<'_>, lag: &Option<Spanned<i64>>) -> Result<u8, InterfaceError> {
    let Some(l) = lag else {
        return Ok(DEFAULT_MAX_LAG);
    };
    u8::try_from(*l.get_ref())
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
        })
}

/// Each node's period: its own, else the file's; all nodes have one or none.
fn set_periods(
    src: &Source<'_>,
    raw: &RawInterface,
    nodes: &mut [NodeSpec],
) -> Result<(), InterfaceError> {
    let default_period = (raw.period.as_ref())
        .map(|p| period_value(src, p))
        .transpose()?;
    for (spec, raw_node) in nodes.iter_mut().zip(&raw.node) {
        spec.period = match &raw_node.get_ref().period {
            Some(p) => Some(period_value(src, p)?),
            None => default_period,
        };
    }
    let Some(with) = nodes.iter().find(|n| n.period.is_some()) else {
        return Ok(());
    };
    match nodes.iter().position(|n| n.period.is_none()) {
        Some(i) => Err(src.error(
            raw.node[i].get_ref().name.span(),
            format!(
                "node `{}` has no period while `{}` has one: give every node a period, \
                 or a top-level `period` for the nodes that state none",
                nodes[i].name, with.name
            ),
        )),
        None => Ok(()),
    }
}

/// The memory map of `interface`, or its error at the node the map stops at:
/// its offset if it gave one, else its name.
fn check_map(
    src: &Source<'_>,
    raw: &[Spanned<RawNode>],
    foreign: &[Spanned<RawNode>],
    interface: &Interface,
) -> Result<(), InterfaceError> {
    let Err(e) = interface.map() else {
        return Ok(());
    };
    let node = raw
        .iter()
        .chain(foreign)
        .find(|n| n.get_ref().name.get_ref() == e.node())
        .map(Spanned::get_ref)
        .expect("the map names a node of the file");
    let span = node
        .offset
        .as_ref()
        .map_or_else(|| node.name.span(), Spanned::span);
    Err(src.error(span, e.to_string()))
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
            } else if let Some(j) = names.iter().position(|n| n == name) {
                if spec.free.contains(&j) {
                    format!("node `{}` lists `{name}` twice in its free", spec.name)
                } else {
                    spec.free.push(j);
                    continue;
                }
            } else {
                format!(
                    "node `{}` is free of `{name}`, which is no node of this file (nodes: {})",
                    spec.name,
                    names.join(", ")
                )
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
        .enumerate()
        .map(|(i, n)| rates::RateNode {
            name: &n.name,
            period: n.period,
            waits_for: (0..nodes.len())
                .filter(|&j| j != i && n.waits_for(j))
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
        rates::ring_depths(&rate_nodes, max_lag, rfm_frames::area::RING_DEPTH).map_err(|e| {
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
