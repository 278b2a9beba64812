//! One value of FMI's types: what a payload's signal or a packed struct's
//! field holds, for the FMU, interface files and the tools that show memory.

use crate::payload::{FmiType, SignalType};
use std::fmt;

/// A value of one of FMI's types: a signal's start value and its value in a
/// payload, a setting of an interface file, a parameter's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Real(f64),
    Integer(i32),
    Boolean(bool),
    String(String),
}

impl Value {
    /// The value a `kind` signal starts from when its file gives none: its
    /// type's zero.
    pub fn zero(kind: SignalType) -> Value {
        Value::zero_of(kind.fmi_type())
    }

    /// The zero of FMI type `kind`.
    pub fn zero_of(kind: FmiType) -> Value {
        match kind {
            FmiType::Real => Value::Real(0.0),
            FmiType::Integer => Value::Integer(0),
            FmiType::Boolean => Value::Boolean(false),
            FmiType::String => Value::String(String::new()),
        }
    }

    pub fn fmi_type(&self) -> FmiType {
        match self {
            Value::Real(_) => FmiType::Real,
            Value::Integer(_) => FmiType::Integer,
            Value::Boolean(_) => FmiType::Boolean,
            Value::String(_) => FmiType::String,
        }
    }

    /// The value as a number, for range checks (a Boolean or a String has none).
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Real(x) => Some(*x),
            Value::Integer(i) => Some(f64::from(*i)),
            Value::Boolean(_) | Value::String(_) => None,
        }
    }

    /// The value as modelDescription.xml's `start` writes it: a Real as Rust
    /// reads it back (`0.0`, `-1.0`, `0.1`), a String unquoted.
    pub fn written(&self) -> String {
        match self {
            Value::Real(x) => format!("{x:?}"),
            Value::Integer(i) => i.to_string(),
            Value::Boolean(b) => b.to_string(),
            Value::String(s) => s.clone(),
        }
    }

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
