//! A peer node's outputs: its signals as it published them, then what the
//! frame read took (its time and step) and the link's diagnostics of it.

use crate::FmuKind;
use rfm_frames::fmi::Value;
use rfm_frames::packed::CType;
use rfm_interface::{Interface, NodeSpec};

use super::signal::signal_elements;
use super::{Causality, LinkField, PeerValue, Place, Var};

/// The link outputs: name, start (and so type) and unit.
const LINK_FIELDS: [(LinkField, &str, Value, Option<&str>); 6] = [
    (LinkField::Ok, "ok", Value::Boolean(false), None),
    (LinkField::Age, "age", Value::Real(-1.0), Some("s")),
    (LinkField::Lost, "lost", Value::Integer(0), None),
    (LinkField::BadFrames, "badFrames", Value::Integer(0), None),
    (LinkField::Restarts, "restarts", Value::Integer(0), None),
    (LinkField::Wait, "wait", Value::Real(0.0), Some("s")),
];

/// What a link output says about `whose` (e.g. "the peer", "node `visual`").
fn link_description(field: LinkField, whose: &str) -> String {
    match field {
        LinkField::Ok => format!(
            "Lockstep: the last step got {whose}'s frame; free: {whose} is running (its heartbeat moved within timeout)"
        ),
        LinkField::Age => format!("Seconds since {whose}'s last fresh frame (-1: none yet)"),
        LinkField::Lost => format!("Frames of {whose} skipped (gaps in step numbers)"),
        LinkField::BadFrames => {
            format!("Reads that found a corrupt frame of {whose} (wrong magic, length or CRC)")
        }
        LinkField::Restarts => format!("Restarts of {whose} seen (new session epoch)"),
        LinkField::Wait => "Seconds the last doStep waited for the peers".to_owned(),
        LinkField::Inexact => format!(
            "Values of {whose}'s 64-bit integer signals got beyond 2^53, which a Real holds \
             rounded (FMI 3.0's Int64 and UInt64 hold them exact)"
        ),
    }
}

/// The outputs of peer number `peer` (node `node`): its signals, then what
/// its frame read took (time, step) and the link's counts.
pub(super) fn peer_outputs(
    interface: &Interface,
    node: usize,
    peer: usize,
    kind: FmuKind,
    fields: &[rfm_frames::payload::Field],
) -> Vec<Var> {
    let spec: &NodeSpec = &interface.nodes[node];
    let (prefix, whose) = if kind == FmuKind::Attitude {
        ("peer".to_owned(), "the peer".to_owned())
    } else {
        (spec.name.clone(), format!("node `{}`", spec.name))
    };
    let mut out: Vec<Var> = (spec.signals.iter().zip(fields))
        .flat_map(|(s, f)| {
            let what = s.description.clone().unwrap_or_else(|| s.name.clone());
            let whose = &whose;
            let prefix = &prefix;
            signal_elements(s, f).map(move |e| Var {
                element: e.element,
                ..peer_output(
                    peer,
                    format!("{prefix}.{}", e.name),
                    s.start.clone(),
                    s.unit.clone(),
                    format!("{what}, as {whose} published it"),
                    PeerValue::Signal {
                        offset: e.offset,
                        size: e.size,
                    },
                )
            })
        })
        .collect();
    out.extend(read_outputs(peer, &prefix, &whose, kind));
    let wide =
        |s: &rfm_interface::Signal| matches!(s.kind.ctype(), Some(CType::Int64 | CType::Uint64));
    if spec.signals.iter().any(wide) {
        out.push(peer_output(
            peer,
            format!("{prefix}.link.inexact"),
            Value::Integer(0),
            None,
            link_description(LinkField::Inexact, &whose),
            PeerValue::Link(LinkField::Inexact),
        ));
    }
    out
}

/// What a peer's frame read took (its time and step), then the link's
/// diagnostics of the peer.
fn read_outputs(peer: usize, prefix: &str, whose: &str, kind: FmuKind) -> Vec<Var> {
    let mut out = vec![
        peer_output(
            peer,
            format!("{prefix}.time"),
            Value::Real(0.0),
            Some("s".into()),
            format!("The simulation time of {whose}'s frame read"),
            PeerValue::Time,
        ),
        peer_output(
            peer,
            format!("{prefix}.step"),
            Value::Integer(-1),
            None,
            format!("The step of {whose}'s frame read (-1: its initial values)"),
            PeerValue::Step,
        ),
    ];
    let link = if kind == FmuKind::Attitude {
        "link".to_owned()
    } else {
        format!("{prefix}.link")
    };
    out.extend(LINK_FIELDS.into_iter().map(|(field, name, start, unit)| {
        peer_output(
            peer,
            format!("{link}.{name}"),
            start,
            unit.map(str::to_owned),
            link_description(field, whose),
            PeerValue::Link(field),
        )
    }));
    out
}

fn peer_output(
    peer: usize,
    name: String,
    start: Value,
    unit: Option<String>,
    description: String,
    value: PeerValue,
) -> Var {
    Var {
        name,
        kind: start.fmi_type(),
        causality: Causality::Output,
        start,
        unit,
        min: None,
        max: None,
        description,
        place: Place::Output { peer, value },
        element: None,
    }
}
