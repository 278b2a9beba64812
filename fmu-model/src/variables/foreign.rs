//! A foreign node's variables: one input per element its struct holds that
//! this node's FMU writes, or one output per element it reads, and the link
//! outputs of each (one table, [`FOREIGN_LINK`]).

use rfm_frames::fmi::Value;
use rfm_interface::ForeignNode;

use super::{Causality, Element, Place, Var};

/// What a foreign node's output shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForeignValue {
    /// Element `index` of field `field` of its newest whole struct.
    Element {
        field: usize,
        index: usize,
    },
    Link(ForeignLink),
}

/// One of a foreign node's link outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForeignLink {
    Ok,
    Age,
    Retries,
    GaveUp,
    Inexact,
    Failovers,
}

/// The first parts of [`FOREIGN_LINK`]'s names: no field of a foreign node may
/// be named so (or by a path under them).
pub const FOREIGN_ROOTS: [&str; 2] = ["age", "link"];

/// The foreign nodes' link outputs: name (after `NODE.`), start (and so type),
/// unit and what each says, one table. `NODE.age` is the name labs' acceptance
/// of foreign nodes spells (issue 46); `ok` and the counts sit under `link`, as
/// a peer's do.
const FOREIGN_LINK: [(ForeignLink, &str, Value, Option<&str>, &str); 6] = [
    (
        ForeignLink::Ok,
        "link.ok",
        Value::Boolean(false),
        None,
        "Its program is running: the struct's marker (or, with no handshake, its bytes) moved \
         within timeout",
    ),
    (
        ForeignLink::Age,
        "age",
        Value::Real(-1.0),
        Some("s"),
        "Seconds since its program last moved the struct's marker or bytes (-1: never seen)",
    ),
    (
        ForeignLink::Retries,
        "link.retries",
        Value::Integer(0),
        None,
        "Copies beyond the first its reads needed (the writer was writing)",
    ),
    (
        ForeignLink::GaveUp,
        "link.gaveUp",
        Value::Integer(0),
        None,
        "Steps at which no whole struct could be read: its outputs kept the one before",
    ),
    (
        ForeignLink::Inexact,
        "link.inexact",
        Value::Integer(0),
        None,
        "64-bit integers read beyond 2^53 in magnitude, which a Real holds rounded",
    ),
    (
        ForeignLink::Failovers,
        "link.failovers",
        Value::Integer(0),
        None,
        "On a redundant device (A+B): times its structs came from ring B after ring A \
         (ring A did not give the newest whole struct)",
    ),
];

/// The inputs of foreign node `n`, which this node's FMU writes: one per
/// element of each field but the handshake's marker, which the FMU keeps.
pub(super) fn foreign_inputs(node: &ForeignNode, n: usize) -> Vec<Var> {
    foreign_elements(node, |field, index, what| {
        (node.marker() != Some(field)).then(|| {
            (
                Causality::Input,
                format!(
                    "{what}, written at every step into foreign node `{}` for the lab's programs",
                    node.name
                ),
                Place::ForeignInput {
                    node: n,
                    field,
                    index,
                },
            )
        })
    })
}

/// A variable per element of each field of `node` that `role` gives a role
/// (causality, description, place), from the field's index, the element's
/// and what the field is (`roll (float)`).
fn foreign_elements(
    node: &ForeignNode,
    role: impl Fn(usize, usize, &str) -> Option<(Causality, String, Place)>,
) -> Vec<Var> {
    let mut out = Vec::new();
    for (field, (f, info)) in node.layout.fields.iter().zip(&node.info).enumerate() {
        let kind = f.ctype.fmi_type();
        let what = format!(
            "{} ({})",
            info.description.as_deref().unwrap_or(&f.name),
            f.ctype
        );
        for index in 0..f.elements() {
            let Some((causality, description, place)) = role(field, index, &what) else {
                continue;
            };
            out.push(Var {
                name: format!("{}.{}", node.name, f.element_name(index)),
                kind,
                causality,
                start: Value::zero_of(kind),
                unit: info.unit.clone(),
                min: None,
                max: None,
                description,
                place,
                element: Some(Element {
                    ctype: f.ctype,
                    index,
                    count: f.count.map(|n| n as usize),
                }),
            });
        }
    }
    out
}

/// The outputs of foreign node `n`: one per element of each field
/// (`flight.attitude[0]`), then `NODE.age` and `NODE.link.*`.
pub(super) fn foreign_outputs(node: &ForeignNode, n: usize) -> Vec<Var> {
    let whose = match &node.description {
        Some(d) => format!("foreign node `{}` ({d})", node.name),
        None => format!("foreign node `{}`", node.name),
    };
    let mut out = foreign_elements(node, |field, index, what| {
        Some((
            Causality::Output,
            format!("{what}, as the lab's program of {whose} wrote it"),
            Place::Foreign {
                node: n,
                value: ForeignValue::Element { field, index },
            },
        ))
    });
    for (link, name, start, unit, description) in FOREIGN_LINK {
        out.push(Var {
            name: format!("{}.{name}", node.name),
            kind: start.fmi_type(),
            causality: Causality::Output,
            start,
            unit: unit.map(str::to_owned),
            min: None,
            max: None,
            description: description.to_owned(),
            place: Place::Foreign {
                node: n,
                value: ForeignValue::Link(link),
            },
            element: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_foreign_output_lies_under_a_reserved_root() {
        for (_, name, ..) in FOREIGN_LINK {
            let root = name.split('.').next().unwrap();
            assert!(FOREIGN_ROOTS.contains(&root), "{name}");
        }
    }
}
