//! Where every variable's value lives ([`Values`]): the parameters, this node's
//! signals in the payload of the frame the instance lends its link, the peers'
//! frames where the link keeps them, and what the last step reported (nothing is
//! copied per step to serve a get).

use std::ffi::CString;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use fmu_model::{ForeignLink, ForeignValue, LinkField, ParamValues, PeerValue, Place, Var};
use rfm_core::link::{Link, StepReport};
use rfm_frames::fmi::FmiType;
use rfm_frames::frame::framed::{FrameBuf, SyncMode};
use rfm_frames::packed::{self, ByteOrder};
use rfm_frames::payload::SignalType;

use crate::error::FmiError;
use crate::realtime::StepThread;
use crate::recording::Recording;

pub(crate) use rfm_frames::fmi::Value;

/// The sources of an instance's variables.
#[derive(Debug)]
pub struct Values {
    pub params: ParamValues,
    /// This node's frame: the master's sets store into its payload, and each
    /// step lends it to the link, which seals and publishes it as it is.
    pub frame: FrameBuf,
    /// Kept after an error (closed), so that the outputs still say what the link saw.
    pub link: Option<Link>,
    /// What the last step (or the start) reported.
    pub report: Option<StepReport>,
    /// How the last step went, for `link.ok`.
    pub outcome: Outcome,
    /// The recording of `recordFile`, if one is made.
    pub recording: Option<Recording>,
    /// Strings handed out by the last fmi2GetString (valid until the next call).
    pub returned: Vec<CString>,
    /// The stepping thread's real-time settings, undone at terminate.
    pub realtime: StepThread,
    /// Per foreign node of the interface, the struct this node's FMU writes
    /// for the lab's programs (the master's sets store into it); empty for
    /// the others.
    pub foreign_out: Vec<Vec<u8>>,
    /// Per peer, values of its 64-bit integer signals got rounded
    /// (`PEER.link.inexact`); counted by gets, which borrow the values shared.
    /// Empty when no peer has such signals (the step looks no further).
    pub inexact: Vec<AtomicU64>,
}

/// The value of `var`, of `size` bytes at `offset` of payload `p`: an
/// element of a signal of a C type as FMI 2.0 holds it (a `uint64` as a Real).
pub fn load(p: &[u8], offset: usize, var: &Var, size: usize) -> Value {
    if let Some(e) = var.element {
        return packed::decode_at(e.ctype, offset, p, ByteOrder::Little)
            .expect("the layout places every signal inside its payload")
            .value;
    }
    let t = match var.kind {
        FmiType::Real => SignalType::Real,
        FmiType::Integer => SignalType::Integer,
        FmiType::Boolean => SignalType::Boolean,
        FmiType::String => SignalType::String {
            size: u16::try_from(size).expect("the parser bounds String sizes"),
        },
    };
    Value::read(t, p, offset).expect("the layout places every signal inside its payload")
}

/// Writes `value` (of `var`'s kind) into `p` at `offset`, `size` bytes, as
/// `var`'s C type when it is an element of a signal of one; or says why that
/// C type cannot hold it, and writes nothing.
pub fn store(
    p: &mut [u8],
    (offset, size): (usize, usize),
    var: &Var,
    value: &Value,
) -> Result<(), packed::EncodeError> {
    if let Some(e) = var.element {
        return packed::encode_at(e.ctype, offset, value, p, ByteOrder::Little, || {
            var.name.clone()
        });
    }
    match value {
        Value::Real(x) => p[offset..offset + 8].copy_from_slice(&x.to_le_bytes()),
        Value::Integer(i) => p[offset..offset + 4].copy_from_slice(&i.to_le_bytes()),
        Value::Boolean(b) => p[offset] = u8::from(*b),
        Value::String(s) => {
            let field = &mut p[offset..offset + size];
            field.fill(0);
            let n = s.len().min(size);
            field[..n].copy_from_slice(&s.as_bytes()[..n]);
        }
    }
    Ok(())
}

impl Values {
    /// What an output shows now: the link's newest frame of its peer, or its
    /// start value before the link has taken one.
    pub fn output(&self, var: &Var) -> Value {
        let Place::Output { peer, value } = var.place else {
            unreachable!("outputs only")
        };
        let (Some(link), Some(report)) = (&self.link, &self.report) else {
            return var.start.clone();
        };
        let p = &link.peers()[peer];
        match value {
            PeerValue::Link(LinkField::Inexact) => {
                count(self.inexact.get(peer).map_or(0, |n| n.load(Relaxed)))
            }
            PeerValue::Link(field) => link_field(link, report, self.outcome, peer, field),
            _ if p.observed().latest().is_none() => var.start.clone(),
            PeerValue::Time => Value::Real(p.observed().latest().map_or(0.0, |h| h.sim_time)),
            PeerValue::Step => Value::Integer(
                p.observed()
                    .latest()
                    .map_or(-1, |h| h.writer_step().min(i64::from(i32::MAX)) as i32),
            ),
            PeerValue::Signal { offset, .. } if var.element.is_some() => {
                self.c_typed_element(var, peer, p.observed().payload(), offset)
            }
            PeerValue::Signal { offset, size } => load(p.observed().payload(), offset, var, size),
        }
    }
}

impl Values {
    /// Element `var` of a peer's signal of a C type at `offset` of its
    /// payload, as FMI 2.0 holds it: a 64-bit integer beyond 2^53 is counted
    /// (`PEER.link.inexact`; the step after the first says so in the
    /// master's log, as a get logs nothing).
    fn c_typed_element(&self, var: &Var, peer: usize, payload: &[u8], offset: usize) -> Value {
        let e = var.element.expect("an element");
        let d = packed::decode_at(e.ctype, offset, payload, ByteOrder::Little)
            .expect("the layout places every signal inside its payload");
        if !d.exact {
            if let Some(n) = self.inexact.get(peer) {
                n.fetch_add(1, Relaxed);
            }
        }
        d.value
    }
}

impl Values {
    /// What foreign node `node`'s output shows now: its newest whole struct's
    /// element, or what reading it took; the start value before a link.
    pub fn foreign(&self, var: &Var, node: usize, value: ForeignValue) -> Value {
        let (Some(link), Some(report)) = (&self.link, &self.report) else {
            return var.start.clone();
        };
        let peer = &link.foreign()[node];
        let spec = &link.interface().foreign[node];
        match value {
            ForeignValue::Element { field, index } => peer
                .value(spec, field, index)
                .unwrap_or_else(|| var.start.clone()),
            ForeignValue::Link(ForeignLink::Ok) => {
                Value::Boolean(peer.alive(report.read_at, link.config().settings.timeout))
            }
            ForeignValue::Link(ForeignLink::Age) => {
                Value::Real(peer.age(report.read_at).map_or(-1.0, |a| a.as_secs_f64()))
            }
            ForeignValue::Link(ForeignLink::Retries) => count(peer.counts.retries),
            ForeignValue::Link(ForeignLink::GaveUp) => count(peer.counts.gave_up),
            ForeignValue::Link(ForeignLink::Inexact) => count(peer.counts.inexact),
            ForeignValue::Link(ForeignLink::Failovers) => count(peer.rings().failovers()),
        }
    }
}

/// Writes the structs this node's FMU writes for the lab's programs
/// (`foreign_out`, [`Values::foreign_out`]).
pub fn write_foreign(link: &mut Link, foreign_out: &[Vec<u8>]) -> Result<(), FmiError> {
    for (node, bytes) in foreign_out.iter().enumerate() {
        if !bytes.is_empty() {
            link.write_foreign(node, bytes)?;
        }
    }
    Ok(())
}

/// How the last step went, for `link.ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// No step yet.
    None,
    Ok,
    Failed,
}

fn link_field(
    link: &Link,
    report: &StepReport,
    outcome: Outcome,
    peer: usize,
    field: LinkField,
) -> Value {
    let p = &link.peers()[peer];
    let health = p.observed().health();
    match field {
        // Lockstep: the frame of the last step arrived. Free: the peer session
        // frames are taken from is running (its heartbeat), however old its
        // newest frame.
        LinkField::Ok => Value::Boolean(match outcome {
            Outcome::Ok if link.config().settings.mode == SyncMode::Free => {
                p.alive(report.read_at, link.config().settings.timeout)
            }
            Outcome::Ok => true,
            Outcome::None | Outcome::Failed => false,
        }),
        LinkField::Age => Value::Real(health.age(report.read_at).map_or(-1.0, |a| a.as_secs_f64())),
        LinkField::Lost => count(health.lost),
        LinkField::BadFrames => count(health.bad_frames),
        LinkField::Restarts => count(health.restarts),
        LinkField::Wait => Value::Real(report.waited.as_secs_f64()),
        LinkField::Inexact => unreachable!("counted by the instance: Values::output"),
    }
}

/// A count as an Integer output: `i32::MAX` once it no longer fits.
pub fn count(n: u64) -> Value {
    Value::Integer(i32::try_from(n).unwrap_or(i32::MAX))
}
