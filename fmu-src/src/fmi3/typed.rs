//! FMI 3.0's typed accessors. A value reference names an FMI 3.0 variable of
//! the type the call names (a struct's `uint64` is a UInt64, its `float` a
//! Float32); an array field is one variable whose values are its elements',
//! the FMI 2.0 variables at the references from the array's on. Each value
//! goes through FMI 2.0's path of the type that holds it exactly and is
//! converted without rounding (an Int8 through an Integer, a Float32 or a
//! UInt32 through a Real); a 64-bit integer goes as its bits.

use fmu_model::fmi2::fmi2String;
use fmu_model::fmi3::TIME_VALUE_REFERENCE;
use fmu_model::{Fmi3Shape, Model};
use rfm_frames::fmi::Fmi3Type;

use crate::access::{Access, Boolean, Integer, Real};
use crate::error::{error, FmiError, FmiResult};

/// An FMI 3.0 type as its accessors pass it.
pub trait Typed: Copy {
    const TYPE: Fmi3Type;
    /// Element reference `vr`'s value (an FMI 2.0 variable's).
    fn get(access: &Access, vr: u32) -> FmiResult<Self>;
    fn set(access: &mut Access, vr: u32, value: Self) -> FmiResult;
}

/// A type served by FMI 2.0's `$plain` path (whose C type is `$c`): its
/// values convert both ways exactly, the C type's range being checked when
/// the element is set.
macro_rules! through {
    ($($t:ty: $ty:ident by $plain:ident as $c:ty;)*) => {$(
        // Float64 and Int32 are their FMI 2.0 type's: their casts are none.
        #[allow(clippy::unnecessary_cast)]
        impl Typed for $t {
            const TYPE: Fmi3Type = Fmi3Type::$ty;
            fn get(access: &Access, vr: u32) -> FmiResult<$t> {
                let mut c: $c = Default::default();
                access.get_plain::<$plain>(&[vr], std::slice::from_mut(&mut c))?;
                Ok(c as $t)
            }
            fn set(access: &mut Access, vr: u32, value: $t) -> FmiResult {
                access.set_plain::<$plain>(&[vr], &[value as $c])
            }
        }
    )*};
}

through! {
    f32: Float32 by Real as f64;
    f64: Float64 by Real as f64;
    u32: UInt32 by Real as f64;
    i8: Int8 by Integer as i32;
    u8: UInt8 by Integer as i32;
    i16: Int16 by Integer as i32;
    u16: UInt16 by Integer as i32;
    i32: Int32 by Integer as i32;
}

impl Typed for bool {
    const TYPE: Fmi3Type = Fmi3Type::Boolean;
    fn get(access: &Access, vr: u32) -> FmiResult<bool> {
        let mut c = 0;
        access.get_plain::<Boolean>(&[vr], std::slice::from_mut(&mut c))?;
        Ok(c != 0)
    }
    fn set(access: &mut Access, vr: u32, value: bool) -> FmiResult {
        access.set_plain::<Boolean>(&[vr], &[i32::from(value)])
    }
}

/// The 64-bit integers, as their bits ([`Access::get_bits`]).
macro_rules! wide {
    ($($t:ty: $ty:ident;)*) => {$(
        impl Typed for $t {
            const TYPE: Fmi3Type = Fmi3Type::$ty;
            fn get(access: &Access, vr: u32) -> FmiResult<$t> {
                access.get_bits(vr).map(|bits| bits as $t)
            }
            fn set(access: &mut Access, vr: u32, value: $t) -> FmiResult {
                access.set_bits(vr, value as u64)
            }
        }
    )*};
}

wide! {
    i64: Int64;
    u64: UInt64;
}

/// The shape of `vr` if it is a `ty` variable, or why it is not one.
fn shape(model: &Model, vr: u32, ty: Fmi3Type) -> FmiResult<Fmi3Shape> {
    if vr == TIME_VALUE_REFERENCE {
        return match ty {
            Fmi3Type::Float64 => Ok(Fmi3Shape { ty, values: 1 }),
            _ => Err(error(format!(
                "value reference {vr} is `time`, a Float64 variable"
            ))),
        };
    }
    match model.fmi3.get(vr as usize) {
        Some(&shape) if shape.ty == ty && shape.values > 0 => Ok(shape),
        _ => Err(not_a(model, vr)),
    }
}

/// Why `vr` is no variable of the type asked for.
#[cold]
fn not_a(model: &Model, vr: u32) -> FmiError {
    let Some(var) = model.variables.get(vr as usize) else {
        return error(format!(
            "unknown value reference {vr} (this FMU has 0..{} and {TIME_VALUE_REFERENCE}, \
             `time`)",
            model.variables.len() - 1
        ));
    };
    match var.element {
        Some(e) if e.index > 0 => error(format!(
            "value reference {vr} is `{}`, an element of an array: FMI 3.0 sets and gets \
             the array whole, at value reference {}",
            var.name,
            vr as usize - e.index
        )),
        _ => error(format!(
            "value reference {vr} is `{}`, a {} variable",
            var.fmi3_name(),
            var.fmi3_type().name()
        )),
    }
}

/// Checks that every reference of `vrs` is a `ty` variable and that their
/// values are `n_values`; whether each is one value (no array among them).
fn check(model: &Model, vrs: &[u32], ty: Fmi3Type, n_values: usize) -> FmiResult<bool> {
    let mut values = 0usize;
    for &vr in vrs {
        values += shape(model, vr, ty)?.values as usize;
    }
    if values != n_values {
        return Err(error(format!(
            "{n_values} values passed for {} value references, whose variables have {values}",
            vrs.len()
        )));
    }
    Ok(values == vrs.len())
}

/// The element references of `vrs` in order: each array's from its own on.
fn elements<'a>(model: &'a Model, vrs: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
    vrs.iter().flat_map(move |&vr| {
        let n = match vr {
            TIME_VALUE_REFERENCE => 1,
            _ => model.fmi3[vr as usize].values,
        };
        (0..n).map(move |e| vr + e)
    })
}

/// `fmi3Get<T>`: `out` holds every value of `vrs`' variables in order.
pub fn get<T: Typed>(access: &Access, vrs: &[u32], out: &mut [T]) -> FmiResult {
    let model = access.model();
    check(model, vrs, T::TYPE, out.len())?;
    for (vr, out) in elements(model, vrs).zip(out) {
        *out = T::get(access, vr)?;
    }
    Ok(())
}

/// `fmi3Set<T>`: `values` holds every value of `vrs`' variables in order.
pub fn set<T: Typed>(access: &mut Access, vrs: &[u32], values: &[T]) -> FmiResult {
    let model = access.model();
    check(model, vrs, T::TYPE, values.len())?;
    for (vr, &value) in elements(model, vrs).zip(values) {
        T::set(access, vr, value)?;
    }
    Ok(())
}

/// Whether FMI 2.0's path serves the call as it is: every reference of
/// `vrs` a scalar `ty` variable (`time` is none here), and `n_values` values.
/// The per-step check of a master's Float64s; anything else (an array, a
/// wrong type, `time`, a bad count) takes the path that says which.
#[inline(always)]
pub fn plain(model: &Model, vrs: &[u32], ty: Fmi3Type, n_values: usize) -> bool {
    let scalar = Fmi3Shape { ty, values: 1 };
    n_values == vrs.len() && (vrs.iter()).all(|&vr| model.fmi3.get(vr as usize) == Some(&scalar))
}

/// `fmi3GetString`: the strings of `vrs`' variables, each array's elements in
/// order.
pub fn get_strings(access: &mut Access, vrs: &[u32], out: &mut [fmi2String]) -> FmiResult {
    let model = access.model();
    if check(model, vrs, Fmi3Type::String, out.len())? {
        return access.get_string(vrs, out);
    }
    let all: Vec<u32> = elements(model, vrs).collect();
    access.get_string(&all, out)
}

/// `fmi3SetString`, as [`get_strings`].
pub fn set_strings(access: &mut Access, vrs: &[u32], values: &[Option<&str>]) -> FmiResult {
    let model = access.model();
    if check(model, vrs, Fmi3Type::String, values.len())? {
        return access.set_strings(vrs, values);
    }
    let all: Vec<u32> = elements(model, vrs).collect();
    access.set_strings(&all, values)
}

/// `fmi3GetFloat64` of a call with an array: `time` (at `time`) among them
/// is the independent variable's.
pub fn get_float64(access: &Access, time: f64, vrs: &[u32], out: &mut [f64]) -> FmiResult {
    let model = access.model();
    check(model, vrs, Fmi3Type::Float64, out.len())?;
    for (vr, out) in elements(model, vrs).zip(out) {
        *out = match vr {
            TIME_VALUE_REFERENCE => time,
            vr => f64::get(access, vr)?,
        };
    }
    Ok(())
}

/// Refuses a set of `time`, the independent variable, among `vrs`.
pub fn not_time(vrs: &[u32]) -> FmiResult {
    match vrs.contains(&TIME_VALUE_REFERENCE) {
        true => Err(error(format!(
            "value reference {TIME_VALUE_REFERENCE} is `time`, the independent variable: \
             it moves with fmi3DoStep and cannot be set"
        ))),
        false => Ok(()),
    }
}
