//! A foreign node's declaration as facts that every node of a lab must
//! agree on, one table ([`facts`]): the interface's fingerprint covers them,
//! each FMU node's descriptor carries them, and two declarations that differ
//! are refused by the first fact that differs, named.

use rfm_frames::packed::{ByteOrder, Counting};

use super::foreign::{ForeignNode, Handshake};
use super::Interface;

/// A foreign node as descriptors carry it: its name and its facts, each
/// the words of a sentence "foreign node `NAME` WHAT VALUE here and … there".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub name: String,
    /// (what, value), in the order of [`facts`].
    pub facts: Vec<(String, String)>,
}

/// Every fact of `node`'s declaration that peers and tools must agree on:
/// where it lies, its size and byte order, its handshake (marker, counting,
/// value, period), who writes it, and each field's name, C type, count and
/// offset (which the file's `align` decided). Units and descriptions are each
/// file's own.
pub fn facts(interface: &Interface, node: &ForeignNode) -> Vec<(String, String)> {
    let order = match node.layout.order {
        ByteOrder::Little => "little-endian",
        ByteOrder::Big => "big-endian",
    };
    let marker = |field: &usize| &node.layout.fields[*field].name;
    let handshake = match &node.handshake {
        Handshake::Counter {
            field,
            counts,
            period,
        } => {
            let counts = match counts {
                Counting::Seqlock => "seqlock",
                Counting::AfterData => "after-data",
            };
            match period {
                Some(p) => format!("counter `{}` ({counts}, period {p} s)", marker(field)),
                None => format!("counter `{}` ({counts})", marker(field)),
            }
        }
        Handshake::Flag { field, value } => format!("flag `{}` = {value:#x}", marker(field)),
        Handshake::None => "none".to_owned(),
    };
    let writer = match node.writer {
        Some(w) => format!("node `{}`", interface.nodes[w].name),
        None => "a lab's program".to_owned(),
    };
    let mut facts = vec![
        ("lies at offset".to_owned(), format!("{:#x}", node.offset)),
        ("is".to_owned(), format!("{} bytes", node.layout.size)),
        ("is".to_owned(), order.to_owned()),
        ("has handshake".to_owned(), handshake),
        ("is written by".to_owned(), writer),
        (
            "has".to_owned(),
            format!("{} fields", node.layout.fields.len()),
        ),
    ];
    for (i, f) in node.layout.fields.iter().enumerate() {
        let count = f.count.map_or(String::new(), |n| format!(" × {n}"));
        facts.push((
            format!("has as field {}", i + 1),
            format!("`{}` ({}{count}) at byte {}", f.name, f.ctype, f.offset),
        ));
    }
    facts
}

impl Interface {
    /// Its foreign nodes as descriptors carry them.
    pub fn declared(&self) -> Vec<Declared> {
        (self.foreign.iter())
            .map(|n| Declared {
                name: n.name.clone(),
                facts: facts(self, n),
            })
            .collect()
    }
}

/// The first way the foreign nodes `theirs` (another node's, or another
/// file's) differ from `ours`, as a phrase: a struct missing on one side, or
/// its first fact that differs; `None` when they agree.
pub fn first_difference(ours: &[Declared], theirs: &[Declared]) -> Option<String> {
    for mine in ours {
        let Some(other) = theirs.iter().find(|t| t.name == mine.name) else {
            return Some(format!("foreign node `{}` is missing there", mine.name));
        };
        let pairs = mine.facts.iter().zip(&other.facts);
        for ((what, here), (_, there)) in pairs {
            if here != there {
                return Some(format!(
                    "foreign node `{}` {what} {here} here and {there} there",
                    mine.name
                ));
            }
        }
        if mine.facts.len() != other.facts.len() {
            return Some(format!(
                "foreign node `{}` has {} facts here and {} there",
                mine.name,
                mine.facts.len(),
                other.facts.len()
            ));
        }
    }
    (theirs.iter())
        .find(|t| !ours.iter().any(|o| o.name == t.name))
        .map(|t| format!("foreign node `{}` is missing here", t.name))
}
