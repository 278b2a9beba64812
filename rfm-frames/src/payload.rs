//! A node's **payload** is its signals in declaration order, laid out as a C
//! compiler lays out a struct of them with natural alignment: a Real is a
//! `double`, an Integer an `int32_t`, a Boolean a `uint8_t` (0 or 1), a String of
//! size n a `char[n]` (UTF-8, NUL-padded, not necessarily NUL-terminated). The
//! payload is padded to a multiple of 8 bytes. A C program can therefore read a
//! peer's signals with a struct declaration that `build-fmu` prints.
//!
//! Below the interface files (which name the signals) and beside the area
//! (which holds the payload): both place bytes by it.

use std::fmt;

use crate::fmi::{FmiType, Value};

/// A signal's FMI type (String signals have a fixed size in memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalType {
    Real,
    Integer,
    Boolean,
    String { size: u16 },
}

impl fmt::Display for SignalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignalType::String { size } => write!(f, "String of {size} bytes"),
            other => f.write_str(other.fmi_type().name()),
        }
    }
}

impl SignalType {
    /// The FMI type of a signal of this type.
    pub fn fmi_type(self) -> FmiType {
        match self {
            SignalType::Real => FmiType::Real,
            SignalType::Integer => FmiType::Integer,
            SignalType::Boolean => FmiType::Boolean,
            SignalType::String { .. } => FmiType::String,
        }
    }

    /// The type with its article, for sentences ("an Integer", "a Real").
    pub fn with_article(&self) -> String {
        match self {
            SignalType::String { .. } => format!("a {self}"),
            other => other.fmi_type().with_article().to_owned(),
        }
    }
}

fn align_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// Where one signal sits in its node's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub kind: SignalType,
}

impl Field {
    /// Bytes the signal takes.
    pub fn size(&self) -> usize {
        size_of_kind(self.kind)
    }
}

fn size_of_kind(kind: SignalType) -> usize {
    match kind {
        SignalType::Real => 8,
        SignalType::Integer => 4,
        SignalType::Boolean => 1,
        SignalType::String { size } => usize::from(size),
    }
}

fn align_of_kind(kind: SignalType) -> usize {
    match kind {
        SignalType::Real => 8,
        SignalType::Integer => 4,
        SignalType::Boolean | SignalType::String { .. } => 1,
    }
}

/// The payload of one node: its signals' places, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    pub fields: Vec<Field>,
    /// Bytes, a multiple of 8.
    pub len: usize,
}

impl Payload {
    /// The C-struct layout of `kinds`, in order.
    pub fn of(kinds: impl IntoIterator<Item = SignalType>) -> Payload {
        let mut at = 0;
        let fields = kinds
            .into_iter()
            .map(|kind| {
                at = align_up(at, align_of_kind(kind));
                let field = Field { offset: at, kind };
                at += size_of_kind(kind);
                field
            })
            .collect();
        Payload {
            fields,
            len: align_up(at, 8),
        }
    }
}

/// A value as a payload holds it: typed by the signal's [`SignalType`].
impl Value {
    /// The value a `kind` signal starts from when its file gives none: its
    /// type's zero.
    pub fn zero(kind: SignalType) -> Value {
        Value::zero_of(kind.fmi_type())
    }

    /// The value of a `kind` signal at `offset` of `payload`; `None` if it does not
    /// lie inside the payload.
    pub fn read(kind: SignalType, payload: &[u8], offset: usize) -> Option<Value> {
        let b = payload.get(offset..offset.checked_add(size_of_kind(kind))?)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_laid_out_as_c_structs() {
        let p = Payload::of([
            SignalType::Boolean,
            SignalType::Real,
            SignalType::Integer,
            SignalType::String { size: 3 },
            SignalType::Integer,
        ]);
        let offsets: Vec<usize> = p.fields.iter().map(|f| f.offset).collect();
        // struct { uint8_t a; double b; int32_t c; char d[3]; int32_t e; }
        assert_eq!(offsets, [0, 8, 16, 20, 24]);
        assert_eq!(p.len, 32);
        assert_eq!(Payload::of([]).len, 0);
    }
}
