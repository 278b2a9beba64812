//! A node's **payload** is its signals in declaration order, laid out as a C
//! compiler lays out a struct of them with natural alignment: a Real is a
//! `double`, an Integer an `int32_t`, a Boolean a `uint8_t` (0 or 1), a String of
//! size n a `char[n]` (UTF-8, NUL-padded, not necessarily NUL-terminated). The
//! payload is padded to a multiple of 8 bytes. A signal declared of a C type
//! (`uint64`, `float`…, see [`crate::packed::C_TYPES`]), or as an array of
//! `count` elements, is that C type (or array) in the struct, little-endian.
//! A C program can therefore read a peer's signals with a struct that
//! declares them in the same order.
//!
//! Below the interface files (which name the signals) and beside the area
//! (which holds the payload): both place bytes by it.

use std::fmt;

use crate::fmi::{FmiType, Value};
use crate::packed::{self, ByteOrder, CType};

/// A signal's FMI type (String signals have a fixed size in memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalType {
    Real,
    Integer,
    Boolean,
    String {
        size: u16,
    },
    /// Declared of a C type (`type = "uint64"`), or as an array of `count`
    /// elements (a `Real` with `count` is a `double` array): its elements are
    /// what a lab's struct field of that type holds, FMI 3.0's own types.
    Typed {
        ctype: CType,
        count: Option<u32>,
    },
}

impl fmt::Display for SignalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignalType::String { size } => write!(f, "String of {size} bytes"),
            SignalType::Typed { ctype, count: None } => write!(f, "{ctype}"),
            SignalType::Typed {
                ctype,
                count: Some(n),
            } => write!(f, "{ctype} array of {n}"),
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
            SignalType::Typed { ctype, .. } => ctype.fmi_type(),
        }
    }

    /// Its C type for a signal declared of one; `None` for `Real`,
    /// `Integer`, `Boolean` and `String`.
    pub fn ctype(self) -> Option<CType> {
        match self {
            SignalType::Typed { ctype, .. } => Some(ctype),
            _ => None,
        }
    }

    /// Its elements: an array's count, else 1.
    pub fn elements(self) -> usize {
        match self {
            SignalType::Typed { count: Some(n), .. } => n as usize,
            _ => 1,
        }
    }

    /// Bytes of one element.
    pub fn element_size(self) -> usize {
        match self {
            SignalType::Typed { ctype, .. } => ctype.size(),
            other => size_of_kind(other),
        }
    }

    /// The type with its article, for sentences ("an Integer", "a Real").
    pub fn with_article(&self) -> String {
        match self {
            SignalType::String { .. } => format!("a {self}"),
            SignalType::Typed { ctype, count } => {
                let article = match ctype {
                    CType::Int8 | CType::Int16 | CType::Int32 | CType::Int64 => "an",
                    _ => "a",
                };
                match count {
                    Some(_) => format!("{article} {self}"),
                    None => format!("{article} `{self}`"),
                }
            }
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
        SignalType::Typed { ctype, count } => ctype.size() * count.map_or(1, |n| n as usize),
    }
}

fn align_of_kind(kind: SignalType) -> usize {
    match kind {
        SignalType::Real => 8,
        SignalType::Integer => 4,
        SignalType::Boolean | SignalType::String { .. } => 1,
        SignalType::Typed { ctype, .. } => ctype.align(),
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
        Value::read_element(kind, payload, offset, 0)
    }

    /// Element `i` of a `kind` signal at `offset` of `payload`, as FMI 2.0
    /// holds it (a `uint64` as a Real, rounded past 2^53: see
    /// [`packed::decode_at`] for whether it was); `None` if it does not lie
    /// inside the payload or the signal has no element `i`.
    pub fn read_element(
        kind: SignalType,
        payload: &[u8],
        offset: usize,
        i: usize,
    ) -> Option<Value> {
        if i >= kind.elements() {
            return None;
        }
        if let SignalType::Typed { ctype, .. } = kind {
            let at = offset + i * ctype.size();
            return packed::decode_at(ctype, at, payload, ByteOrder::Little).map(|d| d.value);
        }
        let b = payload.get(offset..offset.checked_add(size_of_kind(kind))?)?;
        Some(match kind {
            SignalType::Real => Value::Real(f64::from_le_bytes(b.try_into().ok()?)),
            SignalType::Integer => Value::Integer(i32::from_le_bytes(b.try_into().ok()?)),
            SignalType::Boolean => Value::Boolean(b[0] != 0),
            SignalType::String { .. } => {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                Value::String(String::from_utf8_lossy(&b[..end]).into_owned())
            }
            SignalType::Typed { .. } => unreachable!("decoded above"),
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

    #[test]
    fn signals_of_c_types_and_arrays_are_laid_out_as_c_structs() {
        let typed = |name, count| SignalType::Typed {
            ctype: CType::parse(name).unwrap(),
            count,
        };
        let p = Payload::of([
            typed("uint8", Some(3)),
            typed("float", None),
            typed("uint64", Some(2)),
            typed("int16", None),
        ]);
        let offsets: Vec<usize> = p.fields.iter().map(|f| f.offset).collect();
        // struct { uint8_t a[3]; float b; uint64_t c[2]; int16_t d; }
        assert_eq!(offsets, [0, 4, 8, 24]);
        assert_eq!(p.len, 32);
        let mut bytes = vec![0u8; 32];
        bytes[16..24].copy_from_slice(&(1u64 << 60).to_le_bytes());
        bytes[4..8].copy_from_slice(&0.1f32.to_le_bytes());
        let c = typed("uint64", Some(2));
        assert_eq!(
            Value::read_element(c, &bytes, 8, 1),
            Some(Value::Real((1u64 << 60) as f64))
        );
        assert_eq!(Value::read_element(c, &bytes, 8, 2), None);
        assert_eq!(
            Value::read(typed("float", None), &bytes, 4),
            Some(Value::Real(f64::from(0.1f32)))
        );
        assert_eq!(c.to_string(), "uint64 array of 2");
        assert_eq!(c.with_article(), "a uint64 array of 2");
    }
}
