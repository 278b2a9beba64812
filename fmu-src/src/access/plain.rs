//! The numeric FMI types as the per-step path stores and loads them: one value,
//! or a run of them side by side in a payload.

use crate::values::Value;
use fmu_model::fmi2::*;
use rfm_frames::fmi::FmiType;

/// A numeric FMI type, as the master passes it and as the payload holds it.
pub trait Plain {
    const KIND: FmiType;
    /// The C type of the master's array.
    type C: Copy;
    /// The value as a number, for the finiteness and bounds checks.
    fn number(c: Self::C) -> f64;
    fn store(c: Self::C, p: &mut [u8], offset: usize);
    fn load(p: &[u8], offset: usize) -> Self::C;
    fn from_value(v: Value) -> Self::C;
    /// For the general path.
    fn value(c: Self::C) -> Value;
    /// Stores a run of values ([`fmu_model::Model::runs`]) from `offset`,
    /// in one pass: false, and nothing stored, if one of them is not finite.
    fn store_run(cs: &[Self::C], p: &mut [u8], offset: usize) -> bool;
    /// Loads a run of values from `offset` in one pass.
    fn load_run(p: &[u8], offset: usize, out: &mut [Self::C]);
}

/// `fmi2Real`: a `double` in the payload.
pub struct Real;
/// `fmi2Integer`: an `int32_t` in the payload.
pub struct Integer;
/// `fmi2Boolean`: a `uint8_t` (0 or 1) in the payload.
pub struct Boolean;

/// Real and Integer: a little-endian number of their C type in the payload.
macro_rules! number {
    ($marker:ident, $c:ty, $kind:ident) => {
        impl Plain for $marker {
            const KIND: FmiType = FmiType::$kind;
            type C = $c;
            fn number(c: $c) -> f64 {
                f64::from(c)
            }
            fn store(c: $c, p: &mut [u8], offset: usize) {
                let n = std::mem::size_of::<$c>();
                p[offset..offset + n].copy_from_slice(&c.to_le_bytes());
            }
            fn load(p: &[u8], offset: usize) -> $c {
                let n = std::mem::size_of::<$c>();
                <$c>::from_le_bytes(p[offset..offset + n].try_into().expect("n bytes"))
            }
            fn from_value(v: Value) -> $c {
                match v {
                    Value::$kind(x) => x,
                    _ => unreachable!(concat!("a ", stringify!($kind), " variable's value is one")),
                }
            }
            fn value(c: $c) -> Value {
                Value::$kind(c)
            }
            fn store_run(cs: &[$c], p: &mut [u8], offset: usize) -> bool {
                // Not `all`: its early exit keeps the loop from being vectorised.
                if !cs.iter().fold(true, |ok, &c| ok & f64::from(c).is_finite()) {
                    return false;
                }
                let n = std::mem::size_of::<$c>();
                let to = &mut p[offset..offset + n * cs.len()];
                for (bytes, c) in to.chunks_exact_mut(n).zip(cs) {
                    bytes.copy_from_slice(&c.to_le_bytes());
                }
                true
            }
            fn load_run(p: &[u8], offset: usize, out: &mut [$c]) {
                let n = std::mem::size_of::<$c>();
                let from = &p[offset..offset + n * out.len()];
                for (o, bytes) in out.iter_mut().zip(from.chunks_exact(n)) {
                    *o = <$c>::from_le_bytes(bytes.try_into().expect("n bytes"));
                }
            }
        }
    };
}

number!(Real, fmi2Real, Real);
number!(Integer, fmi2Integer, Integer);

impl Plain for Boolean {
    const KIND: FmiType = FmiType::Boolean;
    type C = fmi2Boolean;
    fn number(c: fmi2Boolean) -> f64 {
        f64::from(u8::from(c != fmi2False))
    }
    fn store(c: fmi2Boolean, p: &mut [u8], offset: usize) {
        p[offset] = u8::from(c != fmi2False);
    }
    fn load(p: &[u8], offset: usize) -> fmi2Boolean {
        if p[offset] != 0 {
            fmi2True
        } else {
            fmi2False
        }
    }
    fn from_value(v: Value) -> fmi2Boolean {
        match v {
            Value::Boolean(true) => fmi2True,
            Value::Boolean(false) => fmi2False,
            _ => unreachable!("a Boolean variable's value is a Boolean"),
        }
    }
    fn value(c: fmi2Boolean) -> Value {
        Value::Boolean(c != fmi2False)
    }
    fn store_run(_: &[fmi2Boolean], _: &mut [u8], _: usize) -> bool {
        unreachable!("a Boolean is never part of a run: one byte in the payload, an int in C")
    }
    fn load_run(_: &[u8], _: usize, _: &mut [fmi2Boolean]) {
        unreachable!("a Boolean is never part of a run: one byte in the payload, an int in C")
    }
}
