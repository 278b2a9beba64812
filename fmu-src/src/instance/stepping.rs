//! `fmi2DoStep` and `fmi3DoStep`: the master's step as this node's own steps
//! (one, or each of its period's whose grid time lies in the master's step),
//! each a step of the link; what the master's log is told once; and, where an
//! FMI 3.0 master allows it, a step that returns early while a peer is late.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use rfm_core::link::{Link, MasterStep};
use rfm_interface::Period;

use super::Instance;
use crate::error::{error, FmiError, FmiResult};
use crate::steps;
use crate::values::{write_foreign, Outcome};

/// How long a step waits in one call for a late peer before it returns
/// early, where an FMI 3.0 master allows it: the master gets control back at
/// least ten times a second while a peer is late.
pub const EARLY_RETURN_AFTER: Duration = Duration::from_millis(100);

impl Instance {
    /// `fmi2DoStep`: a node with a period takes each of its own steps whose
    /// grid time lies in [t, t + h) ([`steps`]), with the inputs the master
    /// set held over all of them; one without takes one step.
    // Always, as `Access::set_plain`: `fmi2DoStep` and `fmi3DoStep` call it.
    #[inline(always)]
    pub fn do_step(&mut self, t: f64, h: f64) -> FmiResult {
        self.check_step(t, h)?;
        if self.values.foreign_out.iter().any(|b| !b.is_empty()) {
            let link = self.values.link.as_mut().expect("StepComplete has a link");
            write_foreign(link, &self.values.foreign_out)?;
        }
        self.returned_early = false;
        self.time = match self.period {
            None => match self.node_step(self.step, t)? {
                true => t + h,
                false => t,
            },
            Some(period) => self.grid_steps(period, t, h)?,
        };
        if !self.link().foreign().is_empty() {
            self.tell_foreign();
        }
        if !self.values.inexact.is_empty() && !self.told_inexact {
            self.tell_inexact();
        }
        Ok(())
    }

    /// Warns the master's log the first time a get of a peer's 64-bit
    /// integer signal gave a Real rounded: counted in its outputs after that.
    #[cold]
    fn tell_inexact(&mut self) {
        let counts = self.values.inexact.iter();
        let Some(peer) = counts.map(|n| n.load(Relaxed)).position(|n| n > 0) else {
            return;
        };
        self.told_inexact = true;
        let name = &self.model.interface.nodes[self.model.peers[peer]].name;
        log::warn!(
            "node `{name}`: a value of its 64-bit integer signals beyond 2^53 was got, which \
             its Real output holds rounded; `{name}.link.inexact` counts such values got \
             (FMI 3.0's Int64 and UInt64 hold them exact)"
        );
    }

    /// A master's step continues from where the last ended, is of a positive
    /// size, and ends by the stop time.
    #[inline]
    fn check_step(&self, t: f64, h: f64) -> FmiResult {
        if !steps::continues(t, self.time) {
            return Err(error(format!(
                "currentCommunicationPoint {t} does not continue from {}, where \
                 the previous step ended (the first starts at startTime): a master steps on \
                 from where it was, without jumps or steps back (within 1e-9 relative plus \
                 1 ns)",
                self.time
            )));
        }
        if !(h.is_finite() && h > 0.0) {
            return Err(error(format!("communicationStepSize {h} must be > 0")));
        }
        if let Some(stop) = self.stop_time {
            if t + h > stop + steps::tolerance(stop) {
                return Err(error(format!(
                    "the step to {} passes the stop time {stop}",
                    t + h
                )));
            }
        }
        Ok(())
    }

    /// The node's own steps whose grid time lies in [t, t + h): each told
    /// which of the master's step it is when there are several. The time
    /// reached: t + h, or the time of a step that returned early.
    fn grid_steps(&mut self, period: Period, t: f64, h: f64) -> FmiResult<f64> {
        if !period.matches(h) && !self.told_master_step {
            self.told_master_step = true;
            log::warn!(
                "master step {h} s, this node's period {period} s: its steps are \
                 taken at startTime + {}, inputs held between",
                steps::grid_text(period)
            );
        }
        let taken = steps::taken(period, self.start_time, self.step, t, h);
        let several = taken.end - taken.start > 1;
        for k in taken.clone() {
            if several {
                self.link().set_master_step(Some(MasterStep {
                    index: k - taken.start,
                    steps: taken.end - taken.start,
                    size: h,
                }));
            }
            // The master's own time where it is the step's (the first
            // of a doStep on the grid), else the grid's.
            let grid = steps::grid(period, self.start_time, k);
            let time = if (grid - t).abs() <= steps::tolerance(t) {
                t
            } else {
                grid
            };
            let stepped = self.node_step(k, time);
            if several {
                self.link().set_master_step(None);
            }
            if !stepped? {
                return Ok(time);
            }
        }
        Ok(t + h)
    }

    /// Warns the master's log the first time a foreign node's read gives up
    /// or reads a 64-bit value a Real rounds: counted in its outputs after that.
    #[cold]
    fn tell_foreign(&mut self) {
        let link = self.values.link.as_ref().expect("StepComplete has a link");
        self.told_foreign
            .resize(link.foreign().len(), (false, false));
        for (peer, told) in link.foreign().iter().zip(&mut self.told_foreign) {
            let name = &link.interface().foreign[peer.node()].name;
            if peer.counts.gave_up > 0 && !told.0 {
                told.0 = true;
                log::warn!(
                    "foreign node `{name}`: no whole struct could be read at a step ({} \
                     attempts); its outputs keep the last one, and `{name}.link.gaveUp` \
                     counts such steps",
                    rfm_frames::packed::DEFAULT_ATTEMPTS
                );
            }
            // FMI 3.0's Int64 and UInt64 hold them exact: nothing to tell.
            if peer.counts.inexact > 0 && !told.1 && !self.logger.fmi3() {
                told.1 = true;
                log::warn!(
                    "foreign node `{name}`: a 64-bit integer beyond 2^53 was read, which its \
                     Real output holds rounded; `{name}.link.inexact` counts them"
                );
            }
        }
    }

    fn link(&mut self) -> &mut Link {
        self.values.link.as_mut().expect("StepComplete has a link")
    }

    /// Node step `k` at simulation time `t`: publish, wait by the rule, take.
    /// False if it returned early (an FMI 3.0 master allows it): the next
    /// call of step `k` goes on waiting.
    #[inline(always)]
    fn node_step(&mut self, k: u64, t: f64) -> FmiResult<bool> {
        let v = &mut self.values;
        v.realtime.check();
        let link = v.link.as_mut().expect("StepComplete has a link");
        let stepped = match self.patience {
            None => link.step(k, t, &mut v.frame),
            Some(patience) => match link.step_within(k, t, &mut v.frame, patience) {
                Ok(Some(report)) => Ok(report),
                Ok(None) => {
                    self.returned_early = true;
                    early_return(link, k, t);
                    return Ok(false);
                }
                Err(e) => Err(e),
            },
        };
        let report = match stepped {
            Ok(report) => report,
            Err(e) => {
                // A master may read the outputs after an error to see why: the
                // link diagnostics say what the link saw; the peers' signals keep
                // their last good values.
                v.outcome = Outcome::Failed;
                v.report = Some(link.report());
                return Err(FmiError::from(e).at(format!("step {k}, t = {t}")));
            }
        };
        if let Some(recording) = &mut v.recording {
            recording.step(link, &report, &v.frame);
        }
        v.report = Some(report);
        v.outcome = Outcome::Ok;
        self.step = k + 1;
        Ok(true)
    }

    /// Lets this node's steps return early (`earlyReturnAllowed` of an FMI
    /// 3.0 master): each waits at most [`EARLY_RETURN_AFTER`] a call.
    pub fn allow_early_return(&mut self) {
        self.patience = Some(EARLY_RETURN_AFTER);
    }

    /// Whether the last step returned early: the time it reached is
    /// [`Instance::time`].
    pub fn returned_early(&self) -> bool {
        self.returned_early
    }
}

/// Tells the master's log why step `k` (at `t`) returned early.
#[cold]
fn early_return(link: &mut Link, k: u64, t: f64) {
    let awaited = link.awaited();
    log::info!(
        "fmi3DoStep returns early at t = {t} (earlyReturnAllowed): step {k} has \
         waited {} s in this call for {awaited}; the next fmi3DoStep from t = {t} \
         goes on waiting (the step's inputs were published at its first call)",
        EARLY_RETURN_AFTER.as_secs_f64()
    );
}
