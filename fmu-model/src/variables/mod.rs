//! The variables of one FMU: the parameters, one input per signal the node
//! publishes, and per other node its signals, time, step and link diagnostics.
//! Value references are the positions in this list.

use crate::FmuKind;
use rfm_frames::fmi::{Fmi3Type, FmiType, Value};
use rfm_frames::packed::CType;
use rfm_interface::Interface;
use rfm_memory::Network;

mod foreign;
mod peer;
mod signal;

use super::params::{self, Param, ParamValues};
use foreign::{foreign_inputs, foreign_outputs};
pub use foreign::{ForeignLink, ForeignValue, FOREIGN_ROOTS};
use peer::peer_outputs;
use signal::signal_elements;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    Parameter,
    Input,
    Output,
}

/// One of a peer's link diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkField {
    Ok,
    Age,
    Lost,
    BadFrames,
    Restarts,
    Wait,
    /// Values of the peer's `int64` and `uint64` signals that FMI 2.0's
    /// Real held rounded when got (beyond 2^53): only a peer with such
    /// signals has it.
    Inexact,
}

/// What a peer output shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerValue {
    /// A signal at `offset` of its payload (`size` bytes for a String).
    Signal {
        offset: usize,
        size: usize,
    },
    /// The simulation time of the frame taken.
    Time,
    /// The step of the frame taken (-1: its initial values).
    Step,
    Link(LinkField),
}

/// Where a variable's value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Param(Param),
    /// In this node's payload.
    Input {
        offset: usize,
        size: usize,
    },
    /// From peer `peer` (an index of [`super::Model::peers`]).
    Output {
        peer: usize,
        value: PeerValue,
    },
    /// `record.dropped`: records the recording lost.
    RecordDropped,
    /// `replay.divergence`: steps whose inputs differed from the replayed recording's.
    ReplayDivergence,
    /// `pace.behind`: steps that ended after their real-time deadline.
    PaceBehind,
    /// `cpu.offCore`: steps that ran on a core outside `cpuAffinity`.
    OffCore,
    /// `ring.*`: what the rings of a redundant device did.
    Ring(RingField),
    /// From foreign node `node` (an index of the interface's foreign nodes).
    Foreign {
        node: usize,
        value: ForeignValue,
    },
    /// Element `index` of field `field` of foreign node `node`, which this
    /// node's FMU writes for the lab's programs.
    ForeignInput {
        node: usize,
        field: usize,
        index: usize,
    },
}

/// One of the `ring.*` outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingField {
    /// Whether the ring held every peer's newest frame within timeout.
    Ok(Network),
    /// The peers' frames taken from the ring.
    Frames(Network),
    /// Moves of a peer's frames from ring A to ring B.
    Failovers,
}

/// One `ScalarVariable`.
#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    pub name: String,
    pub kind: FmiType,
    pub causality: Causality,
    /// Of type [`Var::kind`].
    pub start: Value,
    pub unit: Option<String>,
    /// `min` and `max` of a Real or an Integer.
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub description: String,
    pub place: Place,
    /// For an element of a foreign node's field, or of a signal of a C
    /// type: what FMI 3.0 makes of it.
    pub element: Option<Element>,
}

/// A value reference as the FMI 3.0 accessors check it: the type of its
/// variable, and the values it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fmi3Shape {
    pub ty: Fmi3Type,
    /// 1, an array's elements, or 0 for a later element of an array, which
    /// is no FMI 3.0 variable of its own.
    pub values: u32,
}

impl Var {
    /// Whether it is a peer's `link.inexact` (a peer with 64-bit signals).
    pub fn is_inexact_count(&self) -> bool {
        matches!(
            self.place,
            Place::Output {
                value: PeerValue::Link(LinkField::Inexact),
                ..
            }
        )
    }

    pub fn fmi3_shape(&self) -> Fmi3Shape {
        Fmi3Shape {
            ty: self.fmi3_type(),
            values: self.fmi3_values().map_or(0, |n| n as u32),
        }
    }
}

/// An element of a packed struct's field. FMI 2.0 has a variable of each;
/// FMI 3.0 one of the field, of the C type's own type: an array of `count`
/// whose value reference is its first element's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    pub ctype: CType,
    /// Its index in its field (0 for a scalar).
    pub index: usize,
    /// The field's elements, for an array (`count` in the file).
    pub count: Option<usize>,
}

impl Var {
    /// `continuous` for Reals other than parameters, `fixed` for parameters,
    /// `discrete` otherwise (FMI 2.0 allows continuous only for Reals).
    pub fn variability(&self) -> &'static str {
        match (self.causality, self.kind) {
            (Causality::Parameter, _) => "fixed",
            (_, FmiType::Real) => "continuous",
            _ => "discrete",
        }
    }

    /// The values a set of an input is checked against. A parameter's `min`
    /// and `max` are its rule's, checked at fmi2ExitInitializationMode with a
    /// message that says what it accepts.
    #[inline]
    pub fn bounds(&self) -> (f64, f64) {
        match self.causality {
            Causality::Input => (
                self.min.unwrap_or(f64::NEG_INFINITY),
                self.max.unwrap_or(f64::INFINITY),
            ),
            Causality::Parameter | Causality::Output => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// Its FMI 3.0 type: its C type's own for an element of a packed
    /// struct, else the one of its FMI 2.0 type's values.
    pub fn fmi3_type(&self) -> Fmi3Type {
        self.element
            .map_or(self.kind.fmi3(), |e| e.ctype.fmi3_type())
    }

    /// The values of its FMI 3.0 variable: 1, an array field's count for its
    /// first element, `None` for a later element (part of the first's array).
    pub fn fmi3_values(&self) -> Option<usize> {
        match self.element {
            Some(e) if e.index > 0 => None,
            Some(Element { count: Some(n), .. }) => Some(n),
            _ => Some(1),
        }
    }

    /// The name of its FMI 3.0 variable: an array's first element names the
    /// array (`motion.u16[0]` is `motion.u16`).
    pub fn fmi3_name(&self) -> &str {
        match self.element {
            Some(Element { count: Some(_), .. }) => {
                self.name.strip_suffix("[0]").unwrap_or(&self.name)
            }
            _ => &self.name,
        }
    }

    /// A bound as modelDescription.xml writes it: in the variable's type.
    pub fn bound_text(&self, x: f64) -> String {
        match self.kind {
            FmiType::Integer => (x as i64).to_string(),
            _ => format!("{x:?}"),
        }
    }
}

/// The start values of the parameters of node `me`: its file's settings over
/// the table's.
pub fn param_starts(interface: &Interface, me: usize) -> ParamValues {
    let mut values = ParamValues::default();
    for (setting, value) in interface.settings_of(me).iter() {
        values
            .set(params::of_setting(setting.setting).param, value.clone())
            .expect("every setting has its parameter's type (a test of params.rs)");
    }
    values
}

/// Every variable of the FMU of node `me` of `interface`; the attitude `kind` names the
/// outputs as the attitude FMU does (`peer.*`, `link.*`) and keeps its slot
/// parameters. `starts` are the parameters' start values ([`param_starts`]):
/// the file's settings, so a master that sets nothing couples as the file says.
pub fn variables(
    interface: &Interface,
    me: usize,
    peers: &[usize],
    kind: FmuKind,
    starts: &ParamValues,
) -> Vec<Var> {
    let mut vars = parameters(interface, kind, starts);
    let map = interface.map().expect("a parsed interface has a map");
    let node = &interface.nodes[me];
    for (s, f) in node.signals.iter().zip(&map.area(me).payload.fields) {
        vars.extend(signal_elements(s, f).map(|e| {
            Var {
                name: e.name,
                kind: s.kind.fmi_type(),
                causality: Causality::Input,
                start: s.start.clone(),
                unit: s.unit.clone(),
                min: s.min,
                max: s.max,
                description: s
                    .description
                    .clone()
                    .unwrap_or_else(|| format!("Published by node `{}`", node.name)),
                place: Place::Input {
                    offset: e.offset,
                    size: e.size,
                },
                element: e.element,
            }
        }));
    }
    for (p, &i) in peers.iter().enumerate() {
        vars.extend(peer_outputs(
            interface,
            i,
            p,
            kind,
            &map.area(i).payload.fields,
        ));
    }
    for (n, node) in interface.foreign.iter().enumerate() {
        if node.writer == Some(me) {
            vars.extend(foreign_inputs(node, n));
        } else {
            vars.extend(foreign_outputs(node, n));
        }
    }
    // This node's own outputs, after every peer's.
    vars.extend(own_outputs());
    vars
}

/// The FMU's parameters, starting at `starts`.
fn parameters(interface: &Interface, kind: FmuKind, starts: &ParamValues) -> Vec<Var> {
    params::fmu_params(kind)
        .map(|p| Var {
            name: p.name.to_owned(),
            kind: p.kind,
            causality: Causality::Parameter,
            start: starts.get(p.param),
            unit: p.unit.map(str::to_owned),
            min: p.min(),
            max: p.max(interface.max_lag),
            description: p.description.to_owned(),
            place: Place::Param(p.param),
            element: None,
        })
        .collect()
}

/// This node's own outputs ([`OWN_OUTPUTS`]): its pace, its coupling.
fn own_outputs() -> impl Iterator<Item = Var> {
    OWN_OUTPUTS.iter().flat_map(|group| {
        group
            .outputs
            .iter()
            .map(|(field, start, description, place)| Var {
                name: format!("{}.{field}", group.prefix),
                kind: start.fmi_type(),
                causality: Causality::Output,
                start: start.clone(),
                unit: None,
                min: None,
                max: None,
                description: (*description).into(),
                place: *place,
                element: None,
            })
    })
}

/// Outputs sharing one prefix (`pace.behind`): the prefix no node may take.
pub struct OwnGroup {
    pub prefix: &'static str,
    /// (field, start and so type, description, where its value lives)
    pub outputs: &'static [(&'static str, Value, &'static str, Place)],
}

/// The FMU's own outputs, in the description's order after every peer's: the one
/// table both the variables and the node names the parser refuses
/// ([`crate::RESERVED`]) come from.
pub const OWN_OUTPUTS: [OwnGroup; 5] = [
    OwnGroup {
        prefix: "record",
        outputs: &[(
            "dropped",
            Value::Integer(0),
            "Records the recording (parameter recordFile) lost: dropped because its writer fell \
             behind, or lost because writing the file failed (a full disk; the log says when \
             it began and ended): a step never waits for the disk",
            Place::RecordDropped,
        )],
    },
    OwnGroup {
        prefix: "replay",
        outputs: &[(
            "divergence",
            Value::Integer(0),
            "With device = replay:PATH: the steps whose inputs differed from the ones recorded \
             (the first is logged with its signal); 0 otherwise",
            Place::ReplayDivergence,
        )],
    },
    OwnGroup {
        prefix: "pace",
        outputs: &[(
            "behind",
            Value::Integer(0),
            "With realTimeFactor > 0: the steps that ended more than 1 ms after their real-time \
             deadline (the first is logged as a warning); 0 otherwise",
            Place::PaceBehind,
        )],
    },
    OwnGroup {
        prefix: "cpu",
        outputs: &[(
            "offCore",
            Value::Integer(0),
            "With cpuAffinity set: the steps that ran on a core outside it (the system refused \
             the affinity, or another program changed it); 0 otherwise",
            Place::OffCore,
        )],
    },
    OwnGroup {
        prefix: "ring",
        outputs: &[
            (
                "a.ok",
                Value::Boolean(false),
                "With a redundant device (A+B): whether ring A held every peer's newest frame \
                 within timeout; with one memory, true",
                Place::Ring(RingField::Ok(Network::A)),
            ),
            (
                "b.ok",
                Value::Boolean(false),
                "With a redundant device (A+B): whether ring B held every peer's newest frame \
                 within timeout (looked at every 10 ms while frames come from A); with one \
                 memory, false",
                Place::Ring(RingField::Ok(Network::B)),
            ),
            (
                "a.frames",
                Value::Integer(0),
                "The peers' frames taken from ring A (with one memory: from it)",
                Place::Ring(RingField::Frames(Network::A)),
            ),
            (
                "b.frames",
                Value::Integer(0),
                "With a redundant device: the peers' frames taken from ring B, because ring A \
                 did not hold them whole",
                Place::Ring(RingField::Frames(Network::B)),
            ),
            (
                "failovers",
                Value::Integer(0),
                "With a redundant device: the times a peer's frames moved from ring A to ring B \
                 (each is logged as a warning, naming the peer and the ring)",
                Place::Ring(RingField::Failovers),
            ),
        ],
    },
];

/// The prefixes of [`OWN_OUTPUTS`], for [`crate::RESERVED`].
pub const OWN_PREFIXES: [&str; OWN_OUTPUTS.len()] = {
    let mut out = [""; OWN_OUTPUTS.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = OWN_OUTPUTS[i].prefix;
        i += 1;
    }
    out
};
