//! fmi2Set* and fmi2Get*: each value reference is looked up in the model's one
//! variable list and served from where its value lives (see `values.rs`).
//!
//! Numbers (Real, Integer, Boolean) of this node's inputs and of the peers'
//! signals take the per-step path: the reference's [`Route`] says where its
//! bytes are, and a set or get is one checked store or load there; a call of
//! 8 references or more serves each run of them in order with one copy
//! (`runs.rs`). Everything else (parameters, Strings, link diagnostics, and every error) goes through
//! the variable itself.

use std::ffi::CString;

use crate::error::{error, FmiError, FmiResult};
use crate::state_machine::{fixed_parameters_settable, State};
use crate::values::{count, load, store, Value, Values};
use fmu_model::fmi2::*;
use fmu_model::{Causality, Model, Place, Reach, RingField, Route, Var};
use rfm_frames::fmi::FmiType;
use rfm_frames::packed;

mod plain;
mod runs;
mod wide;

pub use plain::{Boolean, Integer, Plain, Real};
use runs::{long_run, run_length, CHUNK};

/// One instance's variables as a call sees them: its model, its state, and its
/// values, borrowed for the call.
pub struct Access<'i> {
    model: &'i Model,
    state: State,
    values: &'i mut Values,
}

impl<'i> Access<'i> {
    #[inline]
    pub fn new(model: &'i Model, state: State, values: &'i mut Values) -> Access<'i> {
        Access {
            model,
            state,
            values,
        }
    }

    /// The model the instance plays (FMI 3.0's accessors check their
    /// references against its FMI 3.0 variables).
    #[inline]
    pub fn model(&self) -> &'i Model {
        self.model
    }

    fn variable(&self, vr: fmi2ValueReference, kind: FmiType) -> FmiResult<&Var> {
        match self.model.variables.get(vr as usize) {
            Some(var) if var.kind == kind => Ok(var),
            _ => Err(Self::not_a(self.model, vr)),
        }
    }

    /// The route of `vr`, a `kind` variable. By reference: a copy of it on the
    /// stack, stored as vectors and loaded back as words, stalled every set.
    fn route(model: &Model, vr: fmi2ValueReference, kind: FmiType) -> FmiResult<&Route> {
        match model.routes.get(vr as usize) {
            Some(route) if route.kind == kind => Ok(route),
            _ => Err(Self::not_a(model, vr)),
        }
    }

    /// Why `vr` is not a variable of the kind asked for.
    #[cold]
    fn not_a(model: &Model, vr: fmi2ValueReference) -> FmiError {
        match model.variables.get(vr as usize) {
            None => error(format!(
                "unknown value reference {vr} (this FMU has 0..{})",
                model.variables.len() - 1
            )),
            Some(var) => error(format!(
                "value reference {vr} is `{}`, {} variable",
                var.name,
                var.kind.with_article()
            )),
        }
    }

    /// Whether `var` may be set now; fixed parameters only before initialization ends.
    fn check_settable(state: State, var: &Var) -> FmiResult {
        match var.causality {
            Causality::Output => Err(error(format!(
                "`{}` is an output and cannot be set",
                var.name
            ))),
            Causality::Parameter if !fixed_parameters_settable(state) => Err(error(format!(
                "`{}` is a fixed parameter: set it before fmi2ExitInitializationMode",
                var.name
            ))),
            _ => Ok(()),
        }
    }

    /// The one rule for a number set: finite, and inside `lo..=hi`.
    #[inline]
    fn check_number(model: &Model, vr: u32, x: f64, lo: f64, hi: f64) -> FmiResult {
        if x.is_finite() && lo <= x && x <= hi {
            Ok(())
        } else {
            Err(Self::refused(&model.variables[vr as usize], x))
        }
    }

    #[cold]
    fn refused(var: &Var, x: f64) -> FmiError {
        if x.is_finite() {
            error(format!(
                "`{}` = {x}: expected {}..{}",
                var.name,
                var.min.map(|x| var.bound_text(x)).unwrap_or_default(),
                var.max.map(|x| var.bound_text(x)).unwrap_or_default()
            ))
        } else {
            error(format!("`{}` = {x} is not a finite number", var.name))
        }
    }

    /// `fmi2SetReal`, `fmi2SetInteger`, `fmi2SetBoolean`: an input is a checked
    /// store into the payload; anything else goes through its variable.
    // Always: both faces call it (FMI 2.0's and FMI 3.0's setters), and a
    // second caller made LLVM keep it out of line, 4 % more instructions a
    // step (case 5).
    #[inline(always)]
    pub fn set_plain<T: Plain>(
        &mut self,
        vrs: &[fmi2ValueReference],
        values: &[T::C],
    ) -> FmiResult {
        if vrs.len() >= CHUNK {
            return self.set_runs::<T>(vrs, values);
        }
        for (&r, &c) in vrs.iter().zip(values) {
            self.set_one::<T>(r, c)?;
        }
        Ok(())
    }

    /// [`Access::set_plain`] of enough values to hold a run: each run the
    /// master passes in order is stored at once. Apart, so that the loop over a
    /// few values stays as short as before: in one loop, the attitude's six
    /// values cost 10 ns a step more.
    #[inline(never)]
    fn set_runs<T: Plain>(&mut self, vrs: &[fmi2ValueReference], values: &[T::C]) -> FmiResult {
        // One count in the C API: the slices are as long as each other.
        let n = vrs.len().min(values.len());
        let (vrs, values) = (&vrs[..n], &values[..n]);
        let mut i = 0;
        while i < n {
            let r = vrs[i];
            let route = Self::route(self.model, r, T::KIND)?;
            if route.reach == Reach::Input && long_run(&self.model.runs, r) {
                let run = run_length(&self.model.runs, &vrs[i..]);
                if run > 1 {
                    let (offset, these) = (route.offset as usize, &values[i..i + run]);
                    if !T::store_run(these, self.values.frame.payload_mut(), offset) {
                        return Err(self.first_refused::<T>(&vrs[i..], these));
                    }
                    i += run;
                    continue;
                }
            }
            self.set_one::<T>(r, values[i])?;
            i += 1;
        }
        Ok(())
    }

    #[inline(always)]
    fn set_one<T: Plain>(&mut self, r: fmi2ValueReference, c: T::C) -> FmiResult {
        let route = Self::route(self.model, r, T::KIND)?;
        if route.reach == Reach::Input {
            // Inputs are settable in every state a set is legal in (the call table).
            let (lo, hi) = match route.bounded {
                true => self.model.variables[r as usize].bounds(),
                false => (f64::NEG_INFINITY, f64::INFINITY),
            };
            Self::check_number(self.model, r, T::number(c), lo, hi)?;
            T::store(c, self.values.frame.payload_mut(), route.offset as usize);
            Ok(())
        } else {
            self.set_variable(r, T::value(c))
        }
    }

    /// Why a run was refused: its first value that is not finite, by name.
    #[cold]
    fn first_refused<T: Plain>(&self, vrs: &[fmi2ValueReference], values: &[T::C]) -> FmiError {
        let (j, &c) = (values.iter().enumerate())
            .find(|(_, &c)| !T::number(c).is_finite())
            .expect("store_run refuses only a run with a value that is not finite");
        Self::refused(&self.model.variables[vrs[j] as usize], T::number(c))
    }

    /// `fmi2SetString`: `None` for a NULL or non-UTF-8 string.
    pub fn set_strings(
        &mut self,
        vrs: &[fmi2ValueReference],
        values: &[Option<&str>],
    ) -> FmiResult {
        for (&r, text) in vrs.iter().zip(values) {
            self.variable(r, FmiType::String)?;
            let text = text.ok_or_else(|| {
                error(format!(
                    "the value for `{}` is NULL or not UTF-8",
                    self.model.variables[r as usize].name
                ))
            })?;
            self.set_variable(r, Value::String(text.to_owned()))?;
        }
        Ok(())
    }

    /// Sets `vr` (of `value`'s kind) through its variable: a parameter, a String
    /// input, or the error an output gives.
    fn set_variable(&mut self, vr: u32, value: Value) -> FmiResult {
        let var = &self.model.variables[vr as usize];
        Self::check_settable(self.state, var)?;
        if let Some(x) = value.number() {
            let (lo, hi) = var.bounds();
            Self::check_number(self.model, vr, x, lo, hi)?;
        }
        match (var.place, &value) {
            (Place::Param(q), _) => {
                crate::config::setting_rule(self.model, q, &value)?;
                self.values.params.set(q, value).map_err(|value| {
                    error(format!(
                        "`{}` is {}, not {}",
                        var.name,
                        var.kind.with_article(),
                        value.fmi_type().with_article()
                    ))
                })?
            }
            (Place::Input { offset, size }, Value::String(text)) => {
                if text.len() > size {
                    return Err(error(format!(
                        "`{}`: {text:?} is {} bytes of UTF-8; at most {size} fit",
                        var.name,
                        text.len()
                    )));
                }
                store(self.values.frame.payload_mut(), (offset, size), var, &value)
                    .map_err(|e| error(format!("`{}`: {e}", var.name)))?;
            }
            // Those of a C type the payload does not hold as FMI 2.0's
            // plain path stores them (a `float`, a `uint64`): converted here.
            (Place::Input { offset, size }, _) if var.element.is_some() => {
                store(self.values.frame.payload_mut(), (offset, size), var, &value)
                    .map_err(|e| error(format!("`{}`: {e}", var.name)))?;
            }
            (Place::Input { .. }, _) => unreachable!("numeric inputs take the plain path"),
            (Place::ForeignInput { node, field, index }, _) => {
                let spec = &self.model.interface.foreign[node];
                let f = &spec.layout.fields[field];
                let bytes = &mut self.values.foreign_out[node];
                packed::encode(f, index, &value, bytes, spec.layout.order)
                    .map_err(|e| error(format!("`{}`: {e}", var.name)))?;
            }
            (
                Place::Output { .. }
                | Place::RecordDropped
                | Place::ReplayDivergence
                | Place::PaceBehind
                | Place::OffCore
                | Place::Ring(_)
                | Place::Foreign { .. },
                _,
            ) => {
                unreachable!("check_settable refuses outputs")
            }
        }
        Ok(())
    }

    /// The value of `var` now.
    fn value(&self, var: &Var) -> Value {
        match var.place {
            Place::Param(p) => self.values.params.get(p),
            Place::Input { offset, size } => load(self.values.frame.payload(), offset, var, size),
            Place::Output { .. } => self.values.output(var),
            Place::Foreign { node, value } => self.values.foreign(var, node, value),
            Place::ForeignInput { node, field, index } => {
                let spec = &self.model.interface.foreign[node];
                let f = &spec.layout.fields[field];
                packed::decode(f, index, &self.values.foreign_out[node], spec.layout.order)
                    .map_or_else(|| var.start.clone(), |d| d.value)
            }
            Place::RecordDropped => {
                count((self.values.recording.as_ref()).map_or(0, |r| r.dropped()))
            }
            Place::ReplayDivergence => count(
                (self.values.report)
                    .and_then(|r| r.replay_divergence)
                    .unwrap_or(0),
            ),
            Place::PaceBehind => count(self.values.link.as_ref().map_or(0, |l| l.behind_pace())),
            Place::OffCore => count(self.values.realtime.off_core()),
            Place::Ring(field) => {
                let rings =
                    (self.values.link.as_ref()).map_or_else(Default::default, |l| l.rings());
                match field {
                    RingField::Ok(ring) => Value::Boolean(rings.ok[ring.index()]),
                    RingField::Frames(ring) => count(rings.frames[ring.index()]),
                    RingField::Failovers => count(rings.failovers),
                }
            }
        }
    }

    /// The payload of peer `peer`'s taken frame, if the link has taken one.
    #[inline]
    fn taken(&self, peer: u8) -> Option<&[u8]> {
        self.values.link.as_ref()?.peers()[usize::from(peer)]
            .observed()
            .taken_payload()
    }

    /// `fmi2GetReal`, `fmi2GetInteger`, `fmi2GetBoolean`: an input or a peer's
    /// signal is a load from its payload; anything else is computed by its variable.
    // Always, as `set_plain`.
    #[inline(always)]
    pub fn get_plain<T: Plain>(&self, vrs: &[fmi2ValueReference], out: &mut [T::C]) -> FmiResult {
        if vrs.len() >= CHUNK {
            return self.get_runs::<T>(vrs, out);
        }
        let mut last = None;
        for (&r, o) in vrs.iter().zip(out) {
            let route = Self::route(self.model, r, T::KIND)?;
            *o = match self.payload(route, &mut last) {
                Some(p) => T::load(p, route.offset as usize),
                None => T::from_value(self.value(&self.model.variables[r as usize])),
            };
        }
        Ok(())
    }

    /// [`Access::get_plain`] of enough values to hold a run: each run the
    /// master asks for in order is loaded at once. Apart, like [`Access::set_runs`].
    #[inline(never)]
    fn get_runs<T: Plain>(&self, vrs: &[fmi2ValueReference], out: &mut [T::C]) -> FmiResult {
        let n = vrs.len().min(out.len());
        let (vrs, out) = (&vrs[..n], &mut out[..n]);
        let mut last = None;
        let mut i = 0;
        while i < n {
            let r = vrs[i];
            let route = Self::route(self.model, r, T::KIND)?;
            match self.payload(route, &mut last) {
                Some(p) => {
                    let offset = route.offset as usize;
                    if long_run(&self.model.runs, r) {
                        let run = run_length(&self.model.runs, &vrs[i..]);
                        if run > 1 {
                            T::load_run(p, offset, &mut out[i..i + run]);
                            i += run;
                            continue;
                        }
                    }
                    out[i] = T::load(p, offset);
                }
                None => out[i] = T::from_value(self.value(&self.model.variables[r as usize])),
            }
            i += 1;
        }
        Ok(())
    }

    /// The payload that holds `route`'s bytes, if a number is a load from one:
    /// this node's inputs, or the peer's taken frame. `last` keeps the payload
    /// of the peer last looked up: finding one is a chain of dependent loads,
    /// and a master gets a peer's signals together.
    #[inline(always)]
    fn payload<'s>(
        &'s self,
        route: &Route,
        last: &mut Option<(u8, Option<&'s [u8]>)>,
    ) -> Option<&'s [u8]> {
        match route.reach {
            Reach::Input => Some(self.values.frame.payload()),
            Reach::Signal => match *last {
                Some((peer, payload)) if peer == route.peer => payload,
                _ => {
                    let payload = self.taken(route.peer);
                    *last = Some((route.peer, payload));
                    payload
                }
            },
            Reach::Other => None,
        }
    }

    /// The strings of `vrs`; the pointers stay valid until the next call on this instance.
    pub fn get_string(&mut self, vrs: &[fmi2ValueReference], out: &mut [fmi2String]) -> FmiResult {
        self.values.returned.clear();
        for &r in vrs {
            let var = self.variable(r, FmiType::String)?;
            let Value::String(text) = self.value(var) else {
                unreachable!("checked kind")
            };
            self.values
                .returned
                .push(CString::new(text.replace('\0', "\u{fffd}")).expect("NULs replaced"));
        }
        for (o, s) in out.iter_mut().zip(&self.values.returned) {
            *o = s.as_ptr();
        }
        Ok(())
    }
}
