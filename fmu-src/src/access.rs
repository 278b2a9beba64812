//! fmi2Set* and fmi2Get*: each value reference is looked up in the model's one
//! variable list and served from where its value lives (see `values.rs`).
//!
//! Numbers (Real, Integer, Boolean) of this node's inputs and of the peers'
//! signals take the per-step path: the reference's [`Route`] says where its
//! bytes are, and a set or get is one checked store or load there. Everything
//! else (parameters, Strings, link diagnostics, and every error) goes through
//! the variable itself.

use std::ffi::CString;

use crate::fmi2::*;
use crate::instance::{error, FmiError, FmiResult, Instance};
use crate::model::{At, Causality, Kind, Model, Place, Route, Var};
use crate::state_machine::fixed_parameters_settable;
use crate::values::{load, output, store, Value};

/// A numeric FMI type, as the master passes it and as the payload holds it.
pub trait Plain {
    const KIND: Kind;
    /// The C type of the master's array.
    type C: Copy;
    /// The value as a number, for the finiteness and bounds checks.
    fn number(c: Self::C) -> f64;
    fn store(c: Self::C, p: &mut [u8], offset: usize);
    fn load(p: &[u8], offset: usize) -> Self::C;
    fn from_value(v: Value) -> Self::C;
    /// For the general path.
    fn value(c: Self::C) -> Value;
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
            const KIND: Kind = Kind::$kind;
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
        }
    };
}

number!(Real, fmi2Real, Real);
number!(Integer, fmi2Integer, Integer);

impl Plain for Boolean {
    const KIND: Kind = Kind::Boolean;
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
}

impl Instance {
    fn variable(&self, function: &str, vr: fmi2ValueReference, kind: Kind) -> FmiResult<&Var> {
        match self.model.variables.get(vr as usize) {
            Some(var) if var.kind == kind => Ok(var),
            _ => Err(Self::not_a(&self.model, function, vr)),
        }
    }

    /// The route of `vr`, a `kind` variable. By reference: a copy of it on the
    /// stack, stored as vectors and loaded back as words, stalled every set.
    fn route<'m>(
        model: &'m Model,
        function: &str,
        vr: fmi2ValueReference,
        kind: Kind,
    ) -> FmiResult<&'m Route> {
        match model.routes.get(vr as usize) {
            Some(route) if route.kind == kind => Ok(route),
            _ => Err(Self::not_a(model, function, vr)),
        }
    }

    /// Why `vr` is not a variable of the kind asked for.
    #[cold]
    fn not_a(model: &Model, function: &str, vr: fmi2ValueReference) -> FmiError {
        match model.variables.get(vr as usize) {
            None => error(format!(
                "{function}: unknown value reference {vr} (this FMU has 0..{})",
                model.variables.len() - 1
            )),
            Some(var) => error(format!(
                "{function}: value reference {vr} is `{}`, a {:?} variable",
                var.name, var.kind
            )),
        }
    }

    /// Whether `var` may be set now; fixed parameters only before initialization ends.
    fn check_settable(state: crate::instance::State, function: &str, var: &Var) -> FmiResult {
        match var.causality {
            Causality::Output => Err(error(format!(
                "{function}: `{}` is an output and cannot be set",
                var.name
            ))),
            Causality::Parameter if !fixed_parameters_settable(state) => Err(error(format!(
                "{function}: `{}` is a fixed parameter: set it before fmi2ExitInitializationMode",
                var.name
            ))),
            _ => Ok(()),
        }
    }

    /// The one rule for a number set: finite, and inside `lo..=hi`.
    #[inline]
    fn check_number(model: &Model, function: &str, vr: u32, x: f64, lo: f64, hi: f64) -> FmiResult {
        if x.is_finite() && lo <= x && x <= hi {
            Ok(())
        } else {
            Err(Self::refused(&model.variables[vr as usize], function, x))
        }
    }

    #[cold]
    fn refused(var: &Var, function: &str, x: f64) -> FmiError {
        if x.is_finite() {
            error(format!(
                "{function}: `{}` = {x}: expected {}..{}",
                var.name,
                var.min.as_deref().unwrap_or(""),
                var.max.as_deref().unwrap_or("")
            ))
        } else {
            error(format!(
                "{function}: `{}` = {x} is not a finite number",
                var.name
            ))
        }
    }

    /// `fmi2SetReal`, `fmi2SetInteger`, `fmi2SetBoolean`: an input is a checked
    /// store into the payload; anything else goes through its variable.
    pub fn set_plain<T: Plain>(
        &mut self,
        function: &str,
        vrs: &[fmi2ValueReference],
        values: &[T::C],
    ) -> FmiResult {
        for (&r, &c) in vrs.iter().zip(values) {
            let route = Self::route(&self.model, function, r, T::KIND)?;
            if route.at == At::Input {
                // Inputs are settable in every state a set is legal in (the call table).
                let (lo, hi) = match route.bounded {
                    true => self.model.variables[r as usize].bounds,
                    false => (f64::NEG_INFINITY, f64::INFINITY),
                };
                Self::check_number(&self.model, function, r, T::number(c), lo, hi)?;
                T::store(c, &mut self.inputs, route.offset as usize);
            } else {
                self.set_variable(function, r, T::value(c))?;
            }
        }
        Ok(())
    }

    /// `fmi2SetString`: `None` for a NULL or non-UTF-8 string.
    pub fn set_strings(
        &mut self,
        function: &str,
        vrs: &[fmi2ValueReference],
        values: &[Option<&str>],
    ) -> FmiResult {
        for (&r, text) in vrs.iter().zip(values) {
            self.variable(function, r, Kind::String)?;
            let text = text.ok_or_else(|| {
                error(format!(
                    "{function}: the value for `{}` is NULL or not UTF-8",
                    self.model.variables[r as usize].name
                ))
            })?;
            self.set_variable(function, r, Value::String(text.to_owned()))?;
        }
        Ok(())
    }

    /// Sets `vr` (of `value`'s kind) through its variable: a parameter, a String
    /// input, or the error an output gives.
    fn set_variable(&mut self, function: &str, vr: u32, value: Value) -> FmiResult {
        let var = &self.model.variables[vr as usize];
        Self::check_settable(self.state, function, var)?;
        let number = match value {
            Value::Real(x) => Some(x),
            Value::Integer(i) => Some(f64::from(i)),
            Value::Boolean(_) | Value::String(_) => None,
        };
        if let Some(x) = number {
            let (lo, hi) = var.bounds;
            Self::check_number(&self.model, function, vr, x, lo, hi)?;
        }
        match (var.place, &value) {
            (Place::Param(q), _) => self.params[q as usize] = value,
            (Place::Input { offset, size }, Value::String(text)) => {
                if text.len() > size {
                    return Err(error(format!(
                        "{function}: `{}`: {text:?} is {} bytes of UTF-8; at most {size} fit",
                        var.name,
                        text.len()
                    )));
                }
                store(&mut self.inputs, offset, size, &value);
            }
            (Place::Input { .. }, _) => unreachable!("numeric inputs take the plain path"),
            (Place::Output { .. }, _) => unreachable!("check_settable refuses outputs"),
        }
        Ok(())
    }

    /// The value of `var` now.
    fn value(&self, var: &Var) -> Value {
        match var.place {
            Place::Param(p) => self.params[p as usize].clone(),
            Place::Input { offset, size } => load(&self.inputs, offset, var.kind, size),
            Place::Output { .. } => output(self.link.as_ref(), self.outcome, var),
        }
    }

    /// The payload of peer `peer`'s taken frame, if the link has taken one.
    fn taken(&self, peer: u8) -> Option<&[u8]> {
        self.link.as_ref()?.peers()[usize::from(peer)].taken_payload()
    }

    /// `fmi2GetReal`, `fmi2GetInteger`, `fmi2GetBoolean`: an input or a peer's
    /// signal is a load from its payload; anything else is computed by its variable.
    pub fn get_plain<T: Plain>(
        &self,
        function: &str,
        vrs: &[fmi2ValueReference],
        out: &mut [T::C],
    ) -> FmiResult {
        // The payload of the peer last looked up: finding one is a chain of
        // dependent loads, and a master gets a peer's signals together.
        let mut last: Option<(u8, Option<&[u8]>)> = None;
        for (&r, o) in vrs.iter().zip(out) {
            let route = Self::route(&self.model, function, r, T::KIND)?;
            let offset = route.offset as usize;
            *o = match route.at {
                At::Input => T::load(&self.inputs, offset),
                At::Signal => {
                    let payload = match last {
                        Some((peer, payload)) if peer == route.peer => payload,
                        _ => {
                            let payload = self.taken(route.peer);
                            last = Some((route.peer, payload));
                            payload
                        }
                    };
                    match payload {
                        Some(p) => T::load(p, offset),
                        None => T::from_value(self.value(&self.model.variables[r as usize])),
                    }
                }
                At::Other => T::from_value(self.value(&self.model.variables[r as usize])),
            };
        }
        Ok(())
    }

    /// The strings of `vrs`; the pointers stay valid until the next call on this instance.
    pub fn get_string(
        &mut self,
        function: &str,
        vrs: &[fmi2ValueReference],
        out: &mut [fmi2String],
    ) -> FmiResult {
        self.returned.clear();
        for &r in vrs {
            let var = self.variable(function, r, Kind::String)?;
            let Value::String(text) = self.value(var) else {
                unreachable!("checked kind")
            };
            self.returned
                .push(CString::new(text.replace('\0', "\u{fffd}")).expect("NULs replaced"));
        }
        for (o, s) in out.iter_mut().zip(&self.returned) {
            *o = s.as_ptr();
        }
        Ok(())
    }
}
