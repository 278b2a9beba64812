//! Variable values: parameters held by the instance, this node's signals in its
//! payload, and the peers' outputs read where the link keeps them (nothing is
//! copied per step to serve a get).

use rfm_core::link::Link;

use crate::model::{Kind, LinkField, PeerValue, Place, Var};

/// A value of any variable type.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Real(f64),
    Integer(i32),
    Boolean(bool),
    String(String),
}

impl Value {
    /// The value a start text of the description stands for.
    pub fn parse(kind: Kind, text: &str) -> Value {
        match kind {
            Kind::Real => Value::Real(text.parse().unwrap_or(0.0)),
            Kind::Integer => Value::Integer(text.parse().unwrap_or(0)),
            Kind::Boolean => Value::Boolean(text == "true" || text == "1"),
            Kind::String => Value::String(text.to_owned()),
        }
    }
}

/// A payload: 8-byte aligned bytes, as the link's own.
#[derive(Debug, Clone)]
pub struct Payload {
    words: Vec<u64>,
    len: usize,
}

impl Payload {
    pub fn new(len: usize) -> Payload {
        Payload {
            words: vec![0; len.div_ceil(8)],
            len,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `words` holds at least `len` initialized bytes, and u8 has no
        // alignment or validity requirement.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and the borrow is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), self.len) }
    }
}

/// Writes `value` (of the variable's kind) into `p` at `offset`, `size` bytes.
pub fn store(p: &mut [u8], offset: usize, size: usize, value: &Value) {
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
}

pub fn real_at(p: &[u8], offset: usize) -> f64 {
    f64::from_le_bytes(p[offset..offset + 8].try_into().expect("8 bytes"))
}

pub fn integer_at(p: &[u8], offset: usize) -> i32 {
    i32::from_le_bytes(p[offset..offset + 4].try_into().expect("4 bytes"))
}

/// The text of a String field: up to its first NUL, invalid UTF-8 replaced.
pub fn string_at(p: &[u8], offset: usize, size: usize) -> String {
    let field = &p[offset..offset + size];
    let end = field.iter().position(|&b| b == 0).unwrap_or(size);
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// What an output shows now: the link's newest frame of its peer, or its start
/// value before the link has taken one.
pub fn output(link: Option<&Link>, outcome: Outcome, var: &Var) -> Value {
    let Place::Output { peer, value } = var.place else {
        unreachable!("outputs only")
    };
    let Some(link) = link else {
        return Value::parse(var.kind, &var.start);
    };
    let p = &link.peers()[peer];
    match value {
        PeerValue::Link(field) => link_field(link, outcome, peer, field),
        _ if p.latest().is_none() => Value::parse(var.kind, &var.start),
        PeerValue::Time => Value::Real(p.latest().map_or(0.0, |h| h.sim_time)),
        PeerValue::Step => Value::Integer(
            p.latest()
                .map_or(-1, |h| h.step.min(i32::MAX as u64) as i32 - 1),
        ),
        PeerValue::Signal { offset, size } => {
            let b = p.payload();
            match var.kind {
                Kind::Real => Value::Real(real_at(b, offset)),
                Kind::Integer => Value::Integer(integer_at(b, offset)),
                Kind::Boolean => Value::Boolean(b[offset] != 0),
                Kind::String => Value::String(string_at(b, offset, size)),
            }
        }
    }
}

/// How the last step went, for `link.ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// No step yet.
    None,
    Ok,
    Failed,
}

fn link_field(link: &Link, outcome: Outcome, peer: usize, field: LinkField) -> Value {
    let health = link.peers()[peer].health();
    let clamp = |n: u64| Value::Integer(n.min(i32::MAX as u64) as i32);
    match field {
        // Lockstep: the frame of the last step arrived. Free: the peer session
        // frames are taken from is running (its heartbeat), however old its
        // newest frame.
        LinkField::Ok => Value::Boolean(match outcome {
            Outcome::Ok if link.config().mode == rfm_core::frame::framed::SyncMode::Free => {
                link.peer_alive_at(peer)
            }
            Outcome::Ok => true,
            Outcome::None | Outcome::Failed => false,
        }),
        LinkField::Age => Value::Real(
            health
                .age(link.stepped_at())
                .map_or(-1.0, |a| a.as_secs_f64()),
        ),
        LinkField::Lost => clamp(health.lost),
        LinkField::BadFrames => clamp(health.bad_frames),
        LinkField::Restarts => clamp(health.restarts),
        LinkField::Wait => Value::Real(link.last_wait().as_secs_f64()),
    }
}
