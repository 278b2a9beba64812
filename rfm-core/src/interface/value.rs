//! One signal's value as it lies in a payload, for tools that show memory.

use super::SignalType;
use std::fmt;

/// A value of any signal type.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Real(f64),
    Integer(i32),
    Boolean(bool),
    String(String),
}

impl Value {
    /// The value of a `kind` signal at `offset` of `payload`; `None` if it does not
    /// lie inside the payload.
    pub fn read(kind: SignalType, payload: &[u8], offset: usize) -> Option<Value> {
        let size = match kind {
            SignalType::Real => 8,
            SignalType::Integer => 4,
            SignalType::Boolean => 1,
            SignalType::String { size } => usize::from(size),
        };
        let b = payload.get(offset..offset.checked_add(size)?)?;
        Some(match kind {
            SignalType::Real => Value::Real(f64::from_le_bytes(b.try_into().ok()?)),
            SignalType::Integer => Value::Integer(i32::from_le_bytes(b.try_into().ok()?)),
            SignalType::Boolean => Value::Boolean(b[0] != 0),
            SignalType::String { .. } => {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                Value::String(String::from_utf8_lossy(&b[..end]).into_owned())
            }
        })
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Real(x) => write!(f, "{x}"),
            Value::Integer(i) => write!(f, "{i}"),
            Value::Boolean(b) => write!(f, "{b}"),
            Value::String(s) => write!(f, "{s:?}"),
        }
    }
}
