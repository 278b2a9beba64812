//! One FMU instance: the FMI 2.0 co-simulation life cycle over an rfm-core link.
//!
//! Every method returns a `Result`; the exported C functions turn it into an
//! `fmi2Status` once, at the boundary (`component::call`). An error moves the instance to
//! `Error` (only Get*, Terminate, Reset and FreeInstance are then legal); a fatal
//! error makes every later call but FreeInstance fail. Variable access is in
//! `access/`, over the instance's [`Values`].

use std::sync::Arc;

use rfm_core::link::Link;
use rfm_frames::frame::framed::FrameBuf;
use rfm_frames::wait::WaitStrategy;
use rfm_interface::Period;

mod stepping;

use crate::access::Access;
use crate::config::link_config;
use crate::error::{end_each, error, Failure, FmiError, FmiResult};
use crate::logger::Logger;
use crate::recording::Recording;
use crate::state_machine::{states, Call, State};
use crate::values::{store, write_foreign, Outcome, Values};
use fmu_model::fmi2::*;
use fmu_model::{Model, Place};

#[derive(Debug)]
pub struct Instance {
    pub logger: Logger,
    model: Arc<Model>,
    state: State,
    values: Values,
    time: f64,
    /// The experiment's start time: a node with a period steps from it.
    start_time: f64,
    /// This node's period, if its interface gives one (the model's, kept here
    /// because every step reads it).
    period: Option<Period>,
    stop_time: Option<f64>,
    /// The next of this node's own steps.
    step: u64,
    /// Whether the master's log was told how a master step other than the
    /// period is taken (once).
    told_master_step: bool,
    /// Per foreign node, whether the log was told of a read given up and of
    /// an inexact value (once each).
    told_foreign: Vec<(bool, bool)>,
    /// Whether the master's log heard of a peer's 64-bit signal got rounded.
    told_inexact: bool,
    /// How long a step may wait in one call before it returns early (an
    /// FMI 3.0 master's `earlyReturnAllowed`); `None`: until it ends.
    patience: Option<std::time::Duration>,
    /// Whether the last step returned early.
    returned_early: bool,
}

impl Instance {
    pub fn new(logger: Logger, model: Arc<Model>) -> Instance {
        let map = model
            .interface
            .map()
            .expect("a model's interface has a map");
        // The frame this node publishes, from instantiation on: the master's
        // sets store into its payload, and each step lends it to the link.
        let mut frame = FrameBuf::new(map.area(model.node).payload.len);
        for v in &model.variables {
            if let Place::Input { offset, size } = v.place {
                store(frame.payload_mut(), (offset, size), v, &v.start)
                    .expect("the parser checks every start against its C type");
            }
        }
        let foreign_out = (model.interface.foreign.iter())
            .map(|f| match f.writer == Some(model.node) {
                true => vec![0; f.layout.size],
                false => Vec::new(),
            })
            .collect();
        let period = model.period();
        Instance {
            logger,
            values: Values {
                params: model.param_starts.clone(),
                frame,
                link: None,
                report: None,
                outcome: Outcome::None,
                recording: None,
                returned: Vec::new(),
                realtime: Default::default(),
                foreign_out,
                inexact: match model.variables.iter().any(|v| v.is_inexact_count()) {
                    true => model.peers.iter().map(|_| Default::default()).collect(),
                    false => Vec::new(),
                },
            },
            model,
            state: State::Instantiated,
            time: 0.0,
            start_time: 0.0,
            period,
            stop_time: None,
            step: 0,
            told_master_step: false,
            told_foreign: Vec::new(),
            told_inexact: false,
            patience: None,
            returned_early: false,
        }
    }

    /// Set and get of variables, over the values of this instance.
    #[inline]
    pub fn access(&mut self) -> Access<'_> {
        Access::new(&self.model, self.state, &mut self.values)
    }

    /// Checks that `call` may be made now, by the state machine's one table.
    #[inline]
    pub fn require(&self, call: Call) -> FmiResult {
        // `permits` is false in Fatal, for every call.
        if call.permits(self.state) {
            Ok(())
        } else {
            Err(self.refusal(call))
        }
    }

    #[cold]
    fn refusal(&self, call: Call) -> FmiError {
        if self.state == State::Fatal {
            return FmiError {
                status: Failure::Fatal,
                ..error("the instance had a fatal error; only fmi2FreeInstance is allowed")
            };
        }
        error(format!(
            "illegal call sequence (the instance is in state {:?}; allowed in {:?})",
            self.state,
            states(call.allowed())
        ))
    }

    /// Records the outcome of a call: logs an error and moves to Error or Fatal.
    #[inline]
    pub fn conclude(&mut self, result: FmiResult) -> fmi2Status {
        match result {
            Ok(()) => fmi2OK,
            Err(e) => self.fail(e),
        }
    }

    #[cold]
    fn fail(&mut self, e: FmiError) -> fmi2Status {
        self.logger.log(e.status.category(), &e.message);
        match e.status {
            Failure::Fatal => self.state = State::Fatal,
            Failure::Error if self.state != State::Fatal => {
                self.state = State::Error;
                // A failed link must not leave a peer waiting on a live slot.
                if let Some(link) = self.values.link.as_mut() {
                    let _ = link.close();
                }
            }
            Failure::Error | Failure::Discard => {}
        }
        e.status.status()
    }

    pub fn set_debug_logging(&mut self, on: bool, categories: &[String]) -> FmiResult {
        self.logger
            .set_debug(on, categories)
            .map_err(|e| error(e.to_string()))
    }

    pub fn setup_experiment(&mut self, start: f64, stop: Option<f64>) -> FmiResult {
        if !start.is_finite() {
            return Err(error(format!("startTime {start} is not a finite number")));
        }
        if let Some(stop) = stop {
            if !(stop.is_finite() && stop >= start) {
                return Err(error(format!(
                    "stopTime {stop} is before startTime {start}"
                )));
            }
        }
        self.time = start;
        self.start_time = start;
        self.stop_time = stop;
        Ok(())
    }

    pub fn enter_initialization_mode(&mut self) -> FmiResult {
        self.state = State::Initialization;
        Ok(())
    }

    /// Opens the device and publishes this node's initial frame, without waiting.
    pub fn exit_initialization_mode(&mut self) -> FmiResult {
        let v = &mut self.values;
        let mut config = link_config(&self.model, &v.params)?;
        // The step's thread first: the link's own threads take what it got.
        config.realtime = v.realtime.start(&config.realtime);
        log::debug!("opening the link: {config}");
        let mut link = Link::open(config)?;
        // The lab's programs read this node's structs from its start on.
        write_foreign(&mut link, &v.foreign_out)?;
        let mut recording = match v.params.record_file.is_empty() {
            true => None,
            false => Some(Recording::create(
                &self.model,
                &v.params,
                &link,
                &self.logger.instance_name(),
                (&v.params.record_file, v.params.record_overwrite),
            )?),
        };
        let report = match link.start(self.time, &mut v.frame) {
            Ok(report) => report,
            Err(e) => {
                if let Some(recording) = recording {
                    recording.discard();
                }
                return Err(e.into());
            }
        };
        if let Some(recording) = &mut recording {
            recording.started(&link, &report, &v.frame);
        }
        v.recording = recording;
        log::info!(
            "node `{}` (slot {}) on {} published its initial frame (session {:#018x})",
            link.interface().nodes[link.me()].name,
            link.config().node_slot,
            link.config().settings.device,
            link.epoch()
        );
        v.link = Some(link);
        v.report = Some(report);
        v.outcome = Outcome::None;
        self.step = 0;
        self.state = State::StepComplete;
        Ok(())
    }

    pub fn terminate(&mut self) -> FmiResult {
        if let Some(link) = self
            .values
            .link
            .as_ref()
            .filter(|l| l.config().settings.wait == WaitStrategy::Event)
        {
            let waits = link.event_waits();
            log::info!(
                "waitStrategy event: {} waits woken by a network interrupt, {} ran out their \
                 10 ms slice without one",
                waits.woken,
                waits.timed_out
            );
        }
        if let Some(summary) = self.values.link.as_ref().and_then(|l| l.rings_summary()) {
            log::info!("{summary}");
        }
        let v = &mut self.values;
        end_each([
            &mut || match v.link.as_mut() {
                Some(link) => link.close().map_err(FmiError::from),
                None => Ok(()),
            },
            &mut || {
                v.realtime.end();
                Ok(())
            },
            &mut || match v.recording.take() {
                Some(recording) => recording.finish(),
                None => Ok(()),
            },
        ])?;
        if self.state != State::Error {
            self.state = State::Terminated;
        }
        Ok(())
    }

    pub fn reset(&mut self) -> FmiResult {
        let (logger, patience) = (self.logger.clone(), self.patience);
        *self = Instance::new(logger, self.model.clone());
        // The master's permission is the instantiation's.
        self.patience = patience;
        Ok(())
    }

    pub fn time(&self) -> f64 {
        self.time
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(mut link) = self.values.link.take() {
            let _ = link.close();
        }
        self.values.realtime.end();
    }
}
