//! One FMU instance: the FMI 2.0 co-simulation state machine over an rfm-core link.
//!
//! Every method returns a `Result`; the exported C functions turn it into an
//! `fmi2Status` once, at the boundary (see lib.rs). An error moves the instance to
//! `Error` (only Get*, Terminate, Reset and FreeInstance are then legal); a fatal
//! error makes every later call but FreeInstance fail.

use std::ffi::CString;
use std::time::Duration;

use rfm_core::frame::framed::SyncMode;
use rfm_core::frame::{Message, MAX_LAG};
use rfm_core::link::{Layout, Link, LinkConfig, Sample};
use rfm_core::wait::WaitStrategy;

use crate::fmi2::*;
use crate::logger::{Category, Logger};
use crate::model::{vr, Causality, Kind, Var, VARIABLES};
use crate::state_machine::{fixed_parameters_settable, states, Call};

/// The longest `timeout`/`startupTimeout` accepted, in seconds.
const MAX_SECONDS: f64 = 1e9;

pub use crate::state_machine::State;

/// A failed call: the status it returns and the message logged.
#[derive(Debug, Clone, PartialEq)]
pub struct FmiError {
    pub status: fmi2Status,
    pub message: String,
}

pub type FmiResult<T = ()> = Result<T, FmiError>;

pub fn error(message: impl Into<String>) -> FmiError {
    FmiError {
        status: fmi2Error,
        message: message.into(),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Real(f64),
    Integer(i32),
    Boolean(bool),
    String(String),
}

fn start_value(v: &Var) -> Value {
    match v.kind {
        Kind::Real => Value::Real(v.start.parse().expect("numeric start in the XML")),
        Kind::Integer => Value::Integer(v.start.parse().expect("integer start in the XML")),
        Kind::Boolean => Value::Boolean(v.start == "true" || v.start == "1"),
        Kind::String => Value::String(v.start.to_owned()),
    }
}

#[derive(Debug)]
pub struct Instance {
    pub logger: Logger,
    state: State,
    values: Vec<Value>,
    /// The `message` input, checked when set.
    message: Message,
    /// The raw `peer.message` last delivered.
    peer_message: Message,
    time: f64,
    stop_time: Option<f64>,
    step: u64,
    link: Option<Link>,
    /// Strings handed out by the last fmi2GetString (valid until the next call).
    returned: Vec<CString>,
}

impl Instance {
    pub fn new(logger: Logger) -> Instance {
        Instance {
            logger,
            state: State::Instantiated,
            values: VARIABLES.iter().map(start_value).collect(),
            message: Message::default(),
            peer_message: Message::default(),
            time: 0.0,
            stop_time: None,
            step: 0,
            link: None,
            returned: Vec::new(),
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// Checks that `call` may be made now, by the state machine's one table.
    pub fn require(&self, call: Call) -> FmiResult {
        let function = call.name();
        if self.state == State::Fatal {
            return Err(FmiError {
                status: fmi2Fatal,
                message: format!(
                    "{function}: the instance had a fatal error; only fmi2FreeInstance is allowed"
                ),
            });
        }
        if !call.permits(self.state) {
            return Err(error(format!(
                "{function}: illegal call sequence (the instance is in state {:?}; allowed in {:?})",
                self.state,
                states(call.allowed())
            )));
        }
        Ok(())
    }

    /// Records the outcome of a call: logs an error and moves to Error or Fatal.
    pub fn conclude(&mut self, result: FmiResult) -> fmi2Status {
        match result {
            Ok(()) => fmi2OK,
            Err(e) => {
                let category = if e.status >= fmi2Fatal {
                    Category::Fatal
                } else if e.status == fmi2Error {
                    Category::Error
                } else if e.status == fmi2Discard {
                    Category::Discard
                } else {
                    Category::Warning
                };
                self.logger.log(category, &e.message);
                if e.status >= fmi2Fatal {
                    self.state = State::Fatal;
                } else if e.status == fmi2Error && self.state != State::Fatal {
                    self.state = State::Error;
                    // A failed link must not leave a peer waiting on a live slot.
                    if let Some(mut link) = self.link.take() {
                        let _ = link.close();
                    }
                }
                e.status
            }
        }
    }

    pub fn set_debug_logging(&mut self, on: bool, categories: &[String]) -> FmiResult {
        self.logger
            .set_debug(on, categories)
            .map_err(|e| error(format!("fmi2SetDebugLogging: {e}")))
    }

    pub fn setup_experiment(&mut self, start: f64, stop: Option<f64>) -> FmiResult {
        if !start.is_finite() {
            return Err(error(format!(
                "fmi2SetupExperiment: startTime {start} is not a finite number"
            )));
        }
        if let Some(stop) = stop {
            if !(stop.is_finite() && stop >= start) {
                return Err(error(format!(
                    "fmi2SetupExperiment: stopTime {stop} is before startTime {start}"
                )));
            }
        }
        self.time = start;
        self.stop_time = stop;
        Ok(())
    }

    pub fn enter_initialization_mode(&mut self) -> FmiResult {
        self.state = State::Initialization;
        Ok(())
    }

    /// Opens the device and publishes this node's initial frame, without waiting.
    pub fn exit_initialization_mode(&mut self) -> FmiResult {
        let config = self.link_config()?;
        log::debug!("opening {config:?}");
        let mut link =
            Link::open(config).map_err(|e| error(format!("fmi2ExitInitializationMode: {e}")))?;
        link.start(&self.sample())
            .map_err(|e| error(format!("fmi2ExitInitializationMode: {e}")))?;
        log::info!(
            "node slot {} on {} published its initial frame (session {:#018x})",
            link.config().node_slot,
            link.config().device,
            link.epoch()
        );
        self.link = Some(link);
        self.step = 0;
        self.state = State::StepComplete;
        Ok(())
    }

    pub fn terminate(&mut self) -> FmiResult {
        if let Some(link) = self.link.as_mut() {
            link.close()
                .map_err(|e| error(format!("fmi2Terminate: {e}")))?;
        }
        if self.state != State::Error {
            self.state = State::Terminated;
        }
        Ok(())
    }

    pub fn reset(&mut self) -> FmiResult {
        let logger = self.logger.clone();
        *self = Instance::new(logger);
        Ok(())
    }

    fn string(&self, vr: u32) -> &str {
        match &self.values[vr as usize] {
            Value::String(s) => s,
            other => unreachable!("generated table: vr {vr} is {other:?}"),
        }
    }

    fn integer(&self, vr: u32) -> i32 {
        match self.values[vr as usize] {
            Value::Integer(i) => i,
            ref other => unreachable!("generated table: vr {vr} is {other:?}"),
        }
    }

    fn real(&self, vr: u32) -> f64 {
        match self.values[vr as usize] {
            Value::Real(r) => r,
            ref other => unreachable!("generated table: vr {vr} is {other:?}"),
        }
    }

    fn sample(&self) -> Sample {
        Sample {
            sim_time: self.time,
            attitude: [
                self.real(vr::ROLL),
                self.real(vr::PITCH),
                self.real(vr::YAW),
            ],
            status: self.integer(vr::STATUS) as u8,
            message: self.message,
        }
    }

    /// The parameters as a link configuration; each error names the parameter and
    /// the values it accepts.
    fn link_config(&self) -> FmiResult<LinkConfig> {
        let bad = |name: &str, value: &dyn std::fmt::Display, accepted: &str| {
            error(format!(
                "fmi2ExitInitializationMode: parameter {name} = {value}: {accepted}"
            ))
        };
        let slot = |name: &str, vr: u32| {
            let v = self.integer(vr);
            u8::try_from(v).map_err(|_| bad(name, &v, "expected a slot number 0..255"))
        };
        let seconds = |name: &str, vr: u32| {
            let v = self.real(vr);
            if v.is_finite() && v > 0.0 && v <= MAX_SECONDS {
                Ok(Duration::from_secs_f64(v))
            } else {
                Err(bad(
                    name,
                    &v,
                    &format!("expected seconds greater than 0 and at most {MAX_SECONDS:e} (about 31 years)"),
                ))
            }
        };
        let device = self.string(vr::DEVICE).to_owned();
        if device.is_empty() {
            return Err(bad("device", &"\"\"", rfm_core::DEVICE_FORMS));
        }
        // A String parameter parsed by its rfm-core type, or named with what it takes.
        fn parsed<T: std::str::FromStr>(
            text: &str,
            bad: impl Fn(&str, &dyn std::fmt::Display, &str) -> FmiError,
            name: &str,
            accepted: &str,
        ) -> FmiResult<T> {
            text.parse()
                .map_err(|_| bad(name, &format!("{text:?}"), accepted))
        }
        let mode: SyncMode = parsed(
            self.string(vr::SYNC_MODE),
            bad,
            "syncMode",
            "expected lockstep or free",
        )?;
        let wait: WaitStrategy = parsed(
            self.string(vr::WAIT_STRATEGY),
            bad,
            "waitStrategy",
            "expected spin, yield, sleep or event",
        )?;
        let layout: Layout = parsed(
            self.string(vr::LAYOUT),
            bad,
            "layout",
            "expected framed or seed",
        )?;
        let lag = self.integer(vr::LAG);
        let lag = u8::try_from(lag)
            .ok()
            .filter(|l| *l <= MAX_LAG)
            .ok_or_else(|| {
                bad(
                    "lag",
                    &lag,
                    &format!("expected 0..{MAX_LAG} steps (the frame ring bounds it)"),
                )
            })?;
        let offset = self.integer(vr::REGION_OFFSET);
        let region_offset = u64::try_from(offset)
            .map_err(|_| bad("regionOffset", &offset, "expected bytes ≥ 0"))?;
        let library = self.string(vr::RFM2G_LIBRARY);
        Ok(LinkConfig {
            interface: None,
            device,
            rfm2g_library: (!library.is_empty()).then(|| library.into()),
            region_offset,
            node_slot: slot("nodeSlot", vr::NODE_SLOT)?,
            peer_slot: slot("peerSlot", vr::PEER_SLOT)?,
            mode,
            lag,
            wait,
            layout,
            timeout: seconds("timeout", vr::TIMEOUT)?,
            startup_timeout: seconds("startupTimeout", vr::STARTUP_TIMEOUT)?,
        })
    }

    pub fn do_step(&mut self, t: f64, h: f64) -> FmiResult {
        let tolerance = 1e-9 * t.abs().max(1.0);
        if !t.is_finite() || (t - self.time).abs() > tolerance {
            return Err(error(format!(
                "fmi2DoStep: currentCommunicationPoint {t} is not the current time {}",
                self.time
            )));
        }
        if !(h.is_finite() && h > 0.0) {
            return Err(error(format!(
                "fmi2DoStep: communicationStepSize {h} must be > 0"
            )));
        }
        if let Some(stop) = self.stop_time {
            if t + h > stop + tolerance {
                return Err(error(format!(
                    "fmi2DoStep: the step to {} passes the stop time {stop}",
                    t + h
                )));
            }
        }
        // The master's own time for this step: what the peer reads as peer.time.
        let sample = Sample {
            sim_time: t,
            ..self.sample()
        };
        let k = self.step;
        let link = self.link.as_mut().expect("StepComplete has a link");
        let got = match link.step(k, &sample) {
            Ok(got) => got,
            Err(e) => {
                // A master may read the outputs after an error to see why: the link
                // diagnostics say what the link saw; peer.* keep the last good values.
                self.update_link_outputs(None);
                return Err(error(format!("fmi2DoStep (step {k}, t = {t}): {e}")));
            }
        };
        if let Some(peer) = got {
            let s = peer.sample;
            self.values[vr::PEER_ROLL as usize] = Value::Real(s.attitude[0]);
            self.values[vr::PEER_PITCH as usize] = Value::Real(s.attitude[1]);
            self.values[vr::PEER_YAW as usize] = Value::Real(s.attitude[2]);
            self.values[vr::PEER_STATUS as usize] = Value::Integer(i32::from(s.status));
            self.values[vr::PEER_TIME as usize] = Value::Real(s.sim_time);
            self.values[vr::PEER_STEP as usize] =
                Value::Integer(peer.index.min(i32::MAX as u64) as i32 - 1);
            // The text is rebuilt only when the 32 bytes change: never, in the
            // per-step hot path of a constant message.
            if s.message != self.peer_message {
                self.peer_message = s.message;
                self.values[vr::PEER_MESSAGE as usize] = Value::String(s.message.to_string_lossy());
            }
        }
        self.update_link_outputs(Some(got.is_some()));
        self.step += 1;
        self.time = t + h;
        Ok(())
    }

    /// The `link.*` outputs from the link's health after a step: `received` is
    /// whether the step got the peer's frame, `None` when the step failed.
    fn update_link_outputs(&mut self, received: Option<bool>) {
        let link = self.link.as_ref().expect("called after a step");
        let health = link.health();
        let age = health.age(link.stepped_at());
        // Lockstep: the frame of this step arrived. Free: the peer session frames
        // are taken from is running (its heartbeat), however old its newest frame.
        let ok = match received {
            None => false,
            Some(got) if link.config().mode == SyncMode::Lockstep => got,
            Some(_) => link.peer_alive(),
        };
        let clamp = |n: u64| Value::Integer(n.min(i32::MAX as u64) as i32);
        self.values[vr::LINK_OK as usize] = Value::Boolean(ok);
        self.values[vr::LINK_AGE as usize] = Value::Real(age.map_or(-1.0, |a| a.as_secs_f64()));
        self.values[vr::LINK_LOST as usize] = clamp(health.lost);
        self.values[vr::LINK_BAD_FRAMES as usize] = clamp(health.bad_frames);
        self.values[vr::LINK_RESTARTS as usize] = clamp(health.restarts);
        self.values[vr::LINK_WAIT as usize] = Value::Real(link.last_wait().as_secs_f64());
    }

    fn variable(
        &self,
        function: &str,
        vr: fmi2ValueReference,
        kind: Kind,
    ) -> FmiResult<&'static Var> {
        let var = VARIABLES.get(vr as usize).ok_or_else(|| {
            error(format!(
                "{function}: unknown value reference {vr} (this FMU has 0..{})",
                VARIABLES.len() - 1
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
    fn check_settable(&self, function: &str, var: &Var) -> FmiResult {
        match var.causality {
            Causality::Output => Err(error(format!(
                "{function}: `{}` is an output and cannot be set",
                var.name
            ))),
            Causality::Parameter if !fixed_parameters_settable(self.state) => Err(error(format!(
                "{function}: `{}` is a fixed parameter: set it before fmi2ExitInitializationMode",
                var.name
            ))),
            _ => Ok(()),
        }
    }

    pub fn set(
        &mut self,
        function: &str,
        vrs: &[fmi2ValueReference],
        kind: Kind,
        values: SetValues<'_>,
    ) -> FmiResult {
        for (i, &r) in vrs.iter().enumerate() {
            let var = self.variable(function, r, kind)?;
            self.check_settable(function, var)?;
            let value = match &values {
                SetValues::Real(v) => {
                    let x = v[i];
                    if !x.is_finite() {
                        return Err(error(format!(
                            "{function}: `{}` = {x} is not a finite number",
                            var.name
                        )));
                    }
                    Value::Real(x)
                }
                SetValues::Integer(v) => {
                    let x = v[i];
                    if r == vr::STATUS && !(0..=255).contains(&x) {
                        return Err(error(format!(
                            "{function}: `status` = {x}: expected 0..255"
                        )));
                    }
                    Value::Integer(x)
                }
                SetValues::Boolean(v) => Value::Boolean(v[i] != fmi2False),
                SetValues::String(v) => {
                    let text = v[i].as_deref().ok_or_else(|| {
                        error(format!(
                            "{function}: the value for `{}` is NULL or not UTF-8",
                            var.name
                        ))
                    })?;
                    if r == vr::MESSAGE {
                        self.message = Message::new(text)
                            .map_err(|e| error(format!("{function}: `message`: {e}")))?;
                    }
                    Value::String(text.to_owned())
                }
            };
            self.values[r as usize] = value;
        }
        Ok(())
    }

    pub fn get_real(&self, vrs: &[fmi2ValueReference], out: &mut [f64]) -> FmiResult {
        for (&r, o) in vrs.iter().zip(out) {
            self.variable("fmi2GetReal", r, Kind::Real)?;
            *o = self.real(r);
        }
        Ok(())
    }

    pub fn get_integer(&self, vrs: &[fmi2ValueReference], out: &mut [fmi2Integer]) -> FmiResult {
        for (&r, o) in vrs.iter().zip(out) {
            self.variable("fmi2GetInteger", r, Kind::Integer)?;
            *o = self.integer(r);
        }
        Ok(())
    }

    pub fn get_boolean(&self, vrs: &[fmi2ValueReference], out: &mut [fmi2Boolean]) -> FmiResult {
        for (&r, o) in vrs.iter().zip(out) {
            self.variable("fmi2GetBoolean", r, Kind::Boolean)?;
            let Value::Boolean(b) = self.values[r as usize] else {
                unreachable!("checked kind")
            };
            *o = if b { fmi2True } else { fmi2False };
        }
        Ok(())
    }

    /// The strings of `vrs`; the pointers stay valid until the next call on this instance.
    pub fn get_string(&mut self, vrs: &[fmi2ValueReference], out: &mut [fmi2String]) -> FmiResult {
        self.returned.clear();
        for &r in vrs {
            self.variable("fmi2GetString", r, Kind::String)?;
            let text = self.string(r).replace('\0', "\u{fffd}");
            self.returned
                .push(CString::new(text).expect("NULs replaced"));
        }
        for (o, s) in out.iter_mut().zip(&self.returned) {
            *o = s.as_ptr();
        }
        Ok(())
    }

    pub fn time(&self) -> f64 {
        self.time
    }
}

/// The values of one fmi2Set* call, borrowed from the master (strings converted).
#[derive(Debug)]
pub enum SetValues<'a> {
    Real(&'a [f64]),
    Integer(&'a [i32]),
    Boolean(&'a [i32]),
    /// `None`: a NULL or non-UTF-8 string.
    String(Vec<Option<String>>),
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(mut link) = self.link.take() {
            let _ = link.close();
        }
    }
}
