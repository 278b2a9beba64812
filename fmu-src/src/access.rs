//! fmi2Set* and fmi2Get*: each value reference is looked up in the model's one
//! variable list and served from where its value lives (see `values.rs`).

use std::ffi::CString;

use crate::fmi2::*;
use crate::instance::{error, FmiResult, Instance};
use crate::model::{Causality, Kind, Model, PeerValue, Place, Var};
use crate::state_machine::fixed_parameters_settable;
use crate::values::{integer_at, load, output, real_at, store, Value};

/// The values of one fmi2Set* call, borrowed from the master (strings converted).
#[derive(Debug)]
pub enum SetValues<'a> {
    Real(&'a [f64]),
    Integer(&'a [i32]),
    Boolean(&'a [i32]),
    /// `None`: a NULL or non-UTF-8 string.
    String(Vec<Option<String>>),
}

impl Instance {
    fn variable(&self, function: &str, vr: fmi2ValueReference, kind: Kind) -> FmiResult<&Var> {
        Self::variable_of(&self.model, function, vr, kind)
    }

    fn variable_of<'m>(
        model: &'m Model,
        function: &str,
        vr: fmi2ValueReference,
        kind: Kind,
    ) -> FmiResult<&'m Var> {
        let n = model.variables.len();
        let var = model.variables.get(vr as usize).ok_or_else(|| {
            error(format!(
                "{function}: unknown value reference {vr} (this FMU has 0..{})",
                n - 1
            ))
        })?;
        if var.kind != kind {
            return Err(error(format!(
                "{function}: value reference {vr} is `{}`, a {:?} variable",
                var.name, var.kind
            )));
        }
        Ok(var)
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

    /// `x` is inside the bounds of `var`, or the error naming both.
    fn in_bounds(function: &str, var: &Var, x: f64) -> FmiResult {
        let (lo, hi) = var.bounds;
        if x < lo || x > hi {
            return Err(error(format!(
                "{function}: `{}` = {x}: expected {}..{}",
                var.name,
                var.min.as_deref().unwrap_or(""),
                var.max.as_deref().unwrap_or("")
            )));
        }
        Ok(())
    }

    /// Sets one variable: into the payload for an input (a plain store at its
    /// offset), into the parameters otherwise; checked against its declaration.
    fn set_one(&mut self, function: &str, r: u32, values: &SetValues<'_>, i: usize) -> FmiResult {
        let kind = match values {
            SetValues::Real(_) => Kind::Real,
            SetValues::Integer(_) => Kind::Integer,
            SetValues::Boolean(_) => Kind::Boolean,
            SetValues::String(_) => Kind::String,
        };
        let var = Self::variable_of(&self.model, function, r, kind)?;
        Self::check_settable(self.state, function, var)?;
        let p = &mut self.inputs;
        match (values, var.place) {
            (SetValues::Real(v), place) => {
                let x = v[i];
                if !x.is_finite() {
                    return Err(error(format!(
                        "{function}: `{}` = {x} is not a finite number",
                        var.name
                    )));
                }
                match place {
                    Place::Input { offset, .. } => {
                        Self::in_bounds(function, var, x)?;
                        p[offset..offset + 8].copy_from_slice(&x.to_le_bytes());
                    }
                    Place::Param(q) => self.params[q as usize] = Value::Real(x),
                    Place::Output { .. } => unreachable!("check_settable refuses outputs"),
                }
            }
            (SetValues::Integer(v), place) => {
                let x = v[i];
                match place {
                    Place::Input { offset, .. } => {
                        Self::in_bounds(function, var, f64::from(x))?;
                        p[offset..offset + 4].copy_from_slice(&x.to_le_bytes());
                    }
                    Place::Param(q) => self.params[q as usize] = Value::Integer(x),
                    Place::Output { .. } => unreachable!("check_settable refuses outputs"),
                }
            }
            (SetValues::Boolean(v), place) => {
                let b = v[i] != fmi2False;
                match place {
                    Place::Input { offset, .. } => p[offset] = u8::from(b),
                    Place::Param(q) => self.params[q as usize] = Value::Boolean(b),
                    Place::Output { .. } => unreachable!("check_settable refuses outputs"),
                }
            }
            (SetValues::String(v), place) => {
                let text = v[i].as_deref().ok_or_else(|| {
                    error(format!(
                        "{function}: the value for `{}` is NULL or not UTF-8",
                        var.name
                    ))
                })?;
                match place {
                    Place::Input { offset, size } => {
                        if text.len() > size {
                            return Err(error(format!(
                                "{function}: `{}`: {text:?} is {} bytes of UTF-8; at most {size} fit",
                                var.name,
                                text.len()
                            )));
                        }
                        store(p, offset, size, &Value::String(text.to_owned()));
                    }
                    Place::Param(q) => self.params[q as usize] = Value::String(text.to_owned()),
                    Place::Output { .. } => unreachable!("check_settable refuses outputs"),
                }
            }
        }
        Ok(())
    }

    pub fn set(
        &mut self,
        function: &str,
        vrs: &[fmi2ValueReference],
        values: SetValues<'_>,
    ) -> FmiResult {
        for (i, &r) in vrs.iter().enumerate() {
            self.set_one(function, r, &values, i)?;
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

    /// The payload `var` is read from and its offset there, when that is a plain
    /// load: an input, or a signal of a peer the link has taken a frame of.
    fn signal_bytes(&self, var: &Var) -> Option<(&[u8], usize)> {
        match var.place {
            Place::Input { offset, .. } => Some((&self.inputs, offset)),
            Place::Output {
                peer,
                value: PeerValue::Signal { offset, .. },
            } => {
                let p = &self.link.as_ref()?.peers()[peer];
                p.latest()?;
                Some((p.payload(), offset))
            }
            _ => None,
        }
    }

    pub fn get_real(&self, vrs: &[fmi2ValueReference], out: &mut [f64]) -> FmiResult {
        for (&r, o) in vrs.iter().zip(out) {
            let var = self.variable("fmi2GetReal", r, Kind::Real)?;
            *o = match self.signal_bytes(var) {
                Some((b, offset)) => real_at(b, offset),
                None => {
                    let Value::Real(x) = self.value(var) else {
                        unreachable!("checked kind")
                    };
                    x
                }
            };
        }
        Ok(())
    }

    pub fn get_integer(&self, vrs: &[fmi2ValueReference], out: &mut [fmi2Integer]) -> FmiResult {
        for (&r, o) in vrs.iter().zip(out) {
            let var = self.variable("fmi2GetInteger", r, Kind::Integer)?;
            *o = match self.signal_bytes(var) {
                Some((b, offset)) => integer_at(b, offset),
                None => {
                    let Value::Integer(x) = self.value(var) else {
                        unreachable!("checked kind")
                    };
                    x
                }
            };
        }
        Ok(())
    }

    pub fn get_boolean(&self, vrs: &[fmi2ValueReference], out: &mut [fmi2Boolean]) -> FmiResult {
        for (&r, o) in vrs.iter().zip(out) {
            let var = self.variable("fmi2GetBoolean", r, Kind::Boolean)?;
            let b = match self.signal_bytes(var) {
                Some((b, offset)) => b[offset] != 0,
                None => {
                    let Value::Boolean(b) = self.value(var) else {
                        unreachable!("checked kind")
                    };
                    b
                }
            };
            *o = if b { fmi2True } else { fmi2False };
        }
        Ok(())
    }

    /// The strings of `vrs`; the pointers stay valid until the next call on this instance.
    pub fn get_string(&mut self, vrs: &[fmi2ValueReference], out: &mut [fmi2String]) -> FmiResult {
        self.returned.clear();
        for &r in vrs {
            let var = self.variable("fmi2GetString", r, Kind::String)?;
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
