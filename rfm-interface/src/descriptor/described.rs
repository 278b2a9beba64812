//! What a decoded descriptor says of its node without the file: its signals'
//! elements and their values in a payload, the area it describes, and where
//! a file's view of the node differs from it.

use super::{encoded_len, Described, Descriptor};
use crate::{NodeSpec, Signal, SignalType, Value};
use rfm_frames::area::Area;
use rfm_frames::payload::Payload;

impl Described {
    /// Element `i`'s name, as the FMU's variables name it: the signal's, or
    /// an array's `NAME[i]`.
    pub fn element_name(&self, i: usize) -> String {
        match self.kind {
            SignalType::Typed { count: Some(_), .. } => format!("{}[{i}]", self.name),
            _ => self.name.clone(),
        }
    }

    /// Whether its values are numbers (not a String nor a `char[N]`).
    pub fn is_number(&self) -> bool {
        self.kind.fmi_type() != rfm_frames::fmi::FmiType::String
    }
}

impl Descriptor {
    /// Every signal's elements in order (one of a scalar): what a recording's
    /// columns and a plot's traces are, as the FMU's variables.
    pub fn elements(&self) -> impl Iterator<Item = (&Described, usize)> {
        (self.signals.iter()).flat_map(|d| (0..d.kind.elements()).map(move |i| (d, i)))
    }

    /// The value of each of [`Descriptor::elements`] in `payload` (`None`
    /// where it does not lie inside it), as FMI 2.0 holds it.
    pub fn element_values(&self, payload: &[u8]) -> Vec<Option<Value>> {
        (self.elements())
            .map(|(d, i)| Value::read_element(d.kind, payload, d.offset, i))
            .collect()
    }

    /// The node as its writer's file declares it, as far as memory needs (start
    /// values and descriptions are not in the descriptor).
    pub fn node_spec(&self) -> NodeSpec {
        NodeSpec {
            period: self.period,
            ring_depth: self.ring_depth,
            ..NodeSpec::new(
                self.node.clone(),
                self.slot,
                None,
                self.signals
                    .iter()
                    .map(|d| Signal {
                        name: d.name.clone(),
                        kind: d.kind,
                        unit: (!d.unit.is_empty()).then(|| d.unit.clone()),
                        start: Value::zero(d.kind),
                        min: None,
                        max: None,
                        description: None,
                    })
                    .collect(),
            )
        }
    }

    /// The area this descriptor's node writes, when the descriptor lies at
    /// `offset` + [`rfm_frames::area::DESCRIPTOR_OFFSET`] of the region; `None` if
    /// its signal offsets are not the layout's (a writer of another layout).
    pub fn area(&self, offset: u64) -> Option<Area> {
        let spec = self.node_spec();
        let payload = Payload::of(spec.signals.iter().map(|s| s.kind));
        let area = Area::new(
            0,
            spec.slot,
            payload,
            encoded_len(&self.interface, &spec, &self.foreign),
            offset,
            self.ring_depth,
        );
        let laid_out = area.payload.fields.iter().map(|f| f.offset);
        laid_out
            .eq(self.signals.iter().map(|d| d.offset))
            .then_some(area)
    }

    /// The first signal whose value differs between two payloads of this
    /// node, by the name of its element (an array's `NAME[i]`), with its
    /// value in each (`None` where it cannot be read); `None` if the payloads
    /// differ only between signals, or not at all.
    pub fn first_changed(
        &self,
        a: &[u8],
        b: &[u8],
    ) -> Option<(String, Option<Value>, Option<Value>)> {
        self.elements().find_map(|(s, i)| {
            let (va, vb) = (
                Value::read_element(s.kind, a, s.offset, i),
                Value::read_element(s.kind, b, s.offset, i),
            );
            (va != vb).then(|| (s.element_name(i), va, vb))
        })
    }

    /// The first way `expected` (this node's view of the writer, from its file)
    /// differs from what the writer describes, as a phrase, or `None`.
    pub fn first_difference(&self, expected: &NodeSpec, payload: &Payload) -> Option<String> {
        let node = &expected.name;
        if self.node != *node {
            return Some(format!(
                "slot {} is node `{}` there and `{node}` here",
                expected.slot, self.node
            ));
        }
        for (i, (s, field)) in expected.signals.iter().zip(&payload.fields).enumerate() {
            let Some(d) = self.signals.get(i) else {
                return Some(format!(
                    "signal `{node}.{}` is missing there (it publishes {} signals, this file says {})",
                    s.name,
                    self.signals.len(),
                    expected.signals.len()
                ));
            };
            if d.name != s.name {
                return Some(format!(
                    "signal {} of `{node}` is `{}` there and `{}` here",
                    i + 1,
                    d.name,
                    s.name
                ));
            }
            if d.kind != s.kind {
                return Some(format!(
                    "signal `{node}.{}` is {} there and {} here",
                    s.name,
                    d.kind.with_article(),
                    s.kind.with_article()
                ));
            }
            let unit = s.unit.as_deref().unwrap_or("");
            if d.unit != unit {
                return Some(format!(
                    "signal `{node}.{}` has unit {:?} there and {unit:?} here",
                    s.name, d.unit
                ));
            }
            if d.offset != field.offset {
                return Some(format!(
                    "signal `{node}.{}` is at payload offset {} there and {} here",
                    s.name, d.offset, field.offset
                ));
            }
        }
        self.signals
            .get(expected.signals.len())
            .map(|extra| format!("signal `{node}.{}` is missing here", extra.name))
    }
}
