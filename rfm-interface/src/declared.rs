//! A foreign node's declaration as every node of a lab must agree on it
//! ([`Declared`]), and its facts, one table ([`Declared::facts`]): the
//! interface's fingerprint covers them, each FMU node's descriptor carries the
//! declaration, and two that differ are refused by the first fact that
//! differs, named.

use rfm_frames::packed::{ByteOrder, Counting, PlacedField};

use super::foreign::{ForeignNode, Handshake};
use super::Interface;

/// A foreign node's declaration as descriptors carry it: what peers must
/// agree on (units and descriptions are each file's own). Its encoding in a
/// descriptor has the same length whatever the offset, byte order, handshake,
/// writer, or a field's type, count or offset say, so that two files that
/// differ only there lay out their nodes' areas alike (and refuse each other
/// by the fingerprint, not by writing over each other).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub name: String,
    pub offset: u64,
    pub size: usize,
    pub order: ByteOrder,
    pub handshake: Handshake,
    /// The slot of the FMU node that writes it; `None`: a lab's program.
    pub writer: Option<u8>,
    pub fields: Vec<PlacedField>,
}

impl Declared {
    pub fn of(interface: &Interface, node: &ForeignNode) -> Declared {
        Declared {
            name: node.name.clone(),
            offset: node.offset,
            size: node.layout.size,
            order: node.layout.order,
            handshake: node.handshake.clone(),
            writer: node.writer.map(|w| interface.nodes[w].slot),
            fields: node.layout.fields.clone(),
        }
    }

    /// Every fact of the declaration, as the words of a sentence "foreign
    /// node `NAME` WHAT VALUE here and … there": the one table the
    /// fingerprint eats and differences are named by.
    pub fn facts(&self) -> Vec<(String, String)> {
        let order = match self.order {
            ByteOrder::Little => "little-endian",
            ByteOrder::Big => "big-endian",
        };
        let marker = |field: &usize| {
            self.fields
                .get(*field)
                .map_or("?", |f| f.name.as_str())
                .to_owned()
        };
        let handshake = match &self.handshake {
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
            Handshake::Flag { field, value } => {
                format!("flag `{}` = {value:#x}", marker(field))
            }
            Handshake::None => "none".to_owned(),
        };
        let writer = match self.writer {
            Some(slot) => format!("the FMU node of slot {slot}"),
            None => "a lab's program".to_owned(),
        };
        let mut facts = vec![
            ("lies at offset".to_owned(), format!("{:#x}", self.offset)),
            ("is".to_owned(), format!("{} bytes", self.size)),
            ("is".to_owned(), order.to_owned()),
            ("has handshake".to_owned(), handshake),
            ("is written by".to_owned(), writer),
            ("has".to_owned(), format!("{} fields", self.fields.len())),
        ];
        for (i, f) in self.fields.iter().enumerate() {
            let count = f.count.map_or(String::new(), |n| format!(" × {n}"));
            facts.push((
                format!("has as field {}", i + 1),
                format!("`{}` ({}{count}) at byte {}", f.name, f.ctype, f.offset),
            ));
        }
        facts
    }
}

impl Interface {
    /// Its foreign nodes as descriptors carry them.
    pub fn declared(&self) -> Vec<Declared> {
        (self.foreign.iter())
            .map(|n| Declared::of(self, n))
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
        let (here, there) = (mine.facts(), other.facts());
        for ((what, here), (_, there)) in here.iter().zip(&there) {
            if here != there {
                return Some(format!(
                    "foreign node `{}` {what} {here} here and {there} there",
                    mine.name
                ));
            }
        }
    }
    (theirs.iter())
        .find(|t| !ours.iter().any(|o| o.name == t.name))
        .map(|t| format!("foreign node `{}` is missing here", t.name))
}
