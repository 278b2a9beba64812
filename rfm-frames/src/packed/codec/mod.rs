//! A packed struct's bytes as FMI values and back, by the edges of
//! [`super::C_TYPES`]: nothing rounded without a count, nothing out of range
//! written.

use super::{ByteOrder, CType, PlacedField};
use crate::fmi::FmiType;
use crate::fmi::Value;

/// Largest magnitude up to which every integer is a Real (an `f64`).
pub const EXACT_LIMIT: u64 = 1 << 53;

/// One element read.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub value: Value,
    /// False for a 64-bit integer beyond 2^53 in magnitude, which the Real
    /// holds rounded: the reader counts and logs it.
    pub exact: bool,
}

/// Why a value cannot be written to a field's element.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EncodeError {
    #[error("`{element}` is a {ctype} ({fmi}); {given} cannot be written to it")]
    Type {
        element: String,
        ctype: CType,
        fmi: &'static str,
        given: &'static str,
    },
    #[error(
        "{} is outside the range of `{element}`: a {ctype} holds {} to {}",
        written(.value), bound(.min, .ctype), bound(.max, .ctype)
    )]
    OutOfRange {
        element: String,
        ctype: CType,
        value: f64,
        min: f64,
        max: f64,
    },
    #[error("{value} written to `{element}`, a {ctype}, is not a whole number")]
    NotWhole {
        element: String,
        ctype: CType,
        value: f64,
    },
    #[error(
        "`{element}` is a {ctype}: a string of at most {capacity} bytes, and {len} were given"
    )]
    TooLong {
        element: String,
        ctype: CType,
        len: usize,
        capacity: usize,
    },
}

fn array<const N: usize>(b: &[u8], order: ByteOrder) -> [u8; N] {
    let mut a: [u8; N] = b[..N].try_into().expect("the field's bytes");
    if order == ByteOrder::Big {
        a.reverse();
    }
    a
}

fn put<const N: usize>(out: &mut [u8], mut bytes: [u8; N], order: ByteOrder) {
    if order == ByteOrder::Big {
        bytes.reverse();
    }
    out[..N].copy_from_slice(&bytes);
}

/// Element `i` of `field` in `bytes` (the whole struct); `None` if it does not
/// lie inside `bytes`.
pub fn decode(field: &PlacedField, i: usize, bytes: &[u8], order: ByteOrder) -> Option<Decoded> {
    decode_at(field.ctype, field.element_offset(i), bytes, order)
}

/// The `ctype` element at byte `at` of `bytes` (a struct, or a node's
/// payload, whose signals of C types are its elements too); `None` if it does
/// not lie inside `bytes`.
pub fn decode_at(ctype: CType, at: usize, bytes: &[u8], order: ByteOrder) -> Option<Decoded> {
    let b = bytes.get(at..at.checked_add(ctype.size())?)?;
    let exact_real = |x: f64| Decoded {
        value: Value::Real(x),
        exact: true,
    };
    Some(match ctype {
        CType::Int8 => int(i32::from(b[0] as i8)),
        CType::Uint8 => int(i32::from(b[0])),
        CType::Int16 => int(i32::from(i16::from_le_bytes(array(b, order)))),
        CType::Uint16 => int(i32::from(u16::from_le_bytes(array(b, order)))),
        CType::Int32 => int(i32::from_le_bytes(array(b, order))),
        CType::Uint32 => exact_real(f64::from(u32::from_le_bytes(array(b, order)))),
        CType::Int64 => {
            let v = i64::from_le_bytes(array(b, order));
            Decoded {
                value: Value::Real(v as f64),
                exact: v.unsigned_abs() <= EXACT_LIMIT,
            }
        }
        CType::Uint64 => {
            let v = u64::from_le_bytes(array(b, order));
            Decoded {
                value: Value::Real(v as f64),
                exact: v <= EXACT_LIMIT,
            }
        }
        CType::Float => exact_real(f64::from(f32::from_le_bytes(array(b, order)))),
        CType::Double => exact_real(f64::from_le_bytes(array(b, order))),
        CType::Bool => Decoded {
            value: Value::Boolean(b[0] != 0),
            exact: true,
        },
        CType::Char(_) => {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            Decoded {
                value: Value::String(String::from_utf8_lossy(&b[..end]).into_owned()),
                exact: true,
            }
        }
    })
}

fn int(v: i32) -> Decoded {
    Decoded {
        value: Value::Integer(v),
        exact: true,
    }
}

/// Writes `value` to element `i` of `field` in `bytes` (the whole struct, long
/// enough for it), or says why it cannot and writes nothing.
pub fn encode(
    field: &PlacedField,
    i: usize,
    value: &Value,
    bytes: &mut [u8],
    order: ByteOrder,
) -> Result<(), EncodeError> {
    let at = field.element_offset(i);
    encode_at(field.ctype, at, value, bytes, order, || {
        field.element_name(i)
    })
}

/// Writes `value` as the `ctype` element at byte `at` of `bytes` (long enough
/// for it), or says why it cannot, naming it `element()`, and writes nothing.
pub fn encode_at(
    ctype: CType,
    at: usize,
    value: &Value,
    bytes: &mut [u8],
    order: ByteOrder,
    element: impl Fn() -> String,
) -> Result<(), EncodeError> {
    let out = &mut bytes[at..at + ctype.size()];
    let type_error = |given: FmiType| EncodeError::Type {
        element: element(),
        ctype,
        fmi: ctype.fmi_type().name(),
        given: given.with_article(),
    };
    match (ctype, value) {
        (CType::Bool, Value::Boolean(b)) => out[0] = u8::from(*b),
        (CType::Char(n), Value::String(s)) => {
            if s.len() > usize::from(n) {
                return Err(EncodeError::TooLong {
                    element: element(),
                    ctype,
                    len: s.len(),
                    capacity: usize::from(n),
                });
            }
            out.fill(0);
            out[..s.len()].copy_from_slice(s.as_bytes());
        }
        (CType::Float, Value::Real(x)) => {
            if x.is_finite() && x.abs() > f64::from(f32::MAX) {
                return Err(out_of_range(element(), ctype, *x));
            }
            put(out, (*x as f32).to_le_bytes(), order);
        }
        (CType::Double, Value::Real(x)) => put(out, x.to_le_bytes(), order),
        (_, Value::Integer(v)) if ctype.fmi_type() == FmiType::Integer => {
            integer(ctype, f64::from(*v), out, order)
                .ok_or_else(|| out_of_range(element(), ctype, f64::from(*v)))?
        }
        (_, Value::Real(x)) if ctype.fmi_type() == FmiType::Real => {
            if x.fract() != 0.0 || !x.is_finite() {
                return Err(EncodeError::NotWhole {
                    element: element(),
                    ctype,
                    value: *x,
                });
            }
            integer(ctype, *x, out, order).ok_or_else(|| out_of_range(element(), ctype, *x))?
        }
        (_, v) => return Err(type_error(v.fmi_type())),
    }
    Ok(())
}

/// The range of an integer C type, as Reals (`u64`'s top rounds up, which the
/// strict comparison below allows for).
fn range(ctype: CType) -> (f64, f64) {
    match ctype {
        CType::Int8 => (f64::from(i8::MIN), f64::from(i8::MAX)),
        CType::Uint8 => (0.0, f64::from(u8::MAX)),
        CType::Int16 => (f64::from(i16::MIN), f64::from(i16::MAX)),
        CType::Uint16 => (0.0, f64::from(u16::MAX)),
        CType::Int32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
        CType::Uint32 => (0.0, f64::from(u32::MAX)),
        CType::Int64 => (i64::MIN as f64, i64::MAX as f64),
        CType::Uint64 => (0.0, u64::MAX as f64),
        CType::Float => (-f64::from(f32::MAX), f64::from(f32::MAX)),
        CType::Double => (f64::MIN, f64::MAX),
        CType::Bool | CType::Char(_) => (0.0, 0.0),
    }
}

/// A number as people write it: `1e40`, not its forty digits; whole numbers
/// below 10^16 in full.
fn written(x: &f64) -> String {
    if x.is_finite() && *x != 0.0 && (x.abs() >= 1e16 || x.abs() < 1e-4) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A bound of `ctype`'s range: a `float`'s as the `float` it is
/// (3.4028235e38), others as [`written`].
fn bound(x: &f64, ctype: &CType) -> String {
    match ctype {
        CType::Float => format!("{:e}", *x as f32),
        _ => written(x),
    }
}

fn out_of_range(element: String, ctype: CType, value: f64) -> EncodeError {
    let (min, max) = range(ctype);
    EncodeError::OutOfRange {
        element,
        ctype,
        value,
        min,
        max,
    }
}

/// Writes the whole number `v` as `ctype`; `None` if it is outside its range.
fn integer(ctype: CType, v: f64, out: &mut [u8], order: ByteOrder) -> Option<()> {
    let (min, max) = range(ctype);
    // 2^63 and 2^64 are the first Reals past i64's and u64's tops.
    let past_top = matches!(ctype, CType::Int64 | CType::Uint64) && v >= max;
    if v < min || v > max || past_top {
        return None;
    }
    match ctype {
        CType::Int8 => out[0] = v as i8 as u8,
        CType::Uint8 => out[0] = v as u8,
        CType::Int16 => put(out, (v as i16).to_le_bytes(), order),
        CType::Uint16 => put(out, (v as u16).to_le_bytes(), order),
        CType::Int32 => put(out, (v as i32).to_le_bytes(), order),
        CType::Uint32 => put(out, (v as u32).to_le_bytes(), order),
        CType::Int64 => put(out, (v as i64).to_le_bytes(), order),
        CType::Uint64 => put(out, (v as u64).to_le_bytes(), order),
        CType::Float | CType::Double | CType::Bool | CType::Char(_) => return None,
    }
    Some(())
}

#[cfg(test)]
mod tests;
