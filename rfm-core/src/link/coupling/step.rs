//! A step of the link: the publish, the peers' frames taken (free: the
//! newest; lockstep: exactly step k's, waited for), a sample of its timing
//! now and then, and its real-time pace. The path every `fmi2DoStep` takes.

use std::task::Poll;
use std::time::{Duration, Instant};

use super::Link;
use crate::link::liveness::Heartbeat;
use crate::link::stats::window::{Counts, Sample};
use crate::link::stats::Card;
use crate::link::{rings, LinkError, StepReport};
use rfm_frames::frame::framed::{FrameBuf, SyncMode};
use rfm_frames::wait::WaitStrategy;
use rfm_memory::DeviceError;

/// A step that returned before its peers' frames were all there
/// ([`Link::step_within`]): published at `start`, waiting since `published`;
/// the next call for the same step goes on waiting.
#[derive(Debug, Clone, Copy)]
pub(super) struct Resume {
    k: u64,
    start: Instant,
    published: Instant,
    sampled: bool,
}

impl Link {
    /// Wakes peers waiting on network interrupts (waitStrategy = event).
    pub(super) fn signal(&self, index: u64) -> Result<(), DeviceError> {
        if let Some(events) = &self.events {
            let data = u32::from(self.node.config().node_slot) << 24 | (index as u32 & 0x00ff_ffff);
            events.broadcast(data)?;
        }
        Ok(())
    }

    /// Step `k`; with `EARLY`, `None` when `patience` passed before its
    /// peers' frames were all there (see [`Resume`]). Without, none of that
    /// is compiled in: FMI 2.0's step (and an FMI 3.0 step without early
    /// return) pays nothing for it.
    #[inline]
    pub(super) fn step_once<const EARLY: bool>(
        &mut self,
        k: u64,
        sim_time: f64,
        frame: &mut FrameBuf,
        patience: Duration,
    ) -> Result<Option<StepReport>, LinkError> {
        if let Some(owner) = self.heartbeat.as_ref().and_then(Heartbeat::taken_by) {
            let c = self.node.config();
            return Err(LinkError::SlotTakenOver {
                device: c.settings.device.to_string(),
                slot: c.node_slot,
                owner,
            });
        }
        // A resumed step polls from now (its wait's start is the exchange's).
        let resumed = match self.resume {
            Some(r) if EARLY && r.k == k => {
                self.resume = None;
                Some((r.start, r.published, r.sampled, self.clock.now()))
            }
            _ => None,
        };
        let (start, published, sampled, polled) = match resumed {
            Some(resumed) => resumed,
            None => {
                // One clock read per step (while spinning, more only every 64
                // polls), before the publish: the frame is stamped with it.
                let start = self.clock.now();
                let wall_ns = self.clock.last_wall_ns();
                self.node.publish(k + 1, (sim_time, wall_ns), frame)?;
                if let Some(player) = &mut self.player {
                    player.play(&mut self.node, k, start, frame.payload())?;
                    return Ok(Some(self.report()));
                }
                self.signal(k + 1).map_err(LinkError::Events)?;
                // A sampled step (at most one a millisecond) reads the time
                // after its publish and at its end as well (stats/window.rs).
                let sampled = self.recorder.due(start);
                let published = if sampled { self.clock.now() } else { start };
                (start, published, sampled, published)
            }
        };
        if self.node.config().settings.mode == SyncMode::Free {
            self.node.exchange().free_read(published)?;
        } else if self
            .wait_lockstep::<EARLY>(k, polled, patience)?
            .is_pending()
        {
            self.resume = Some(Resume {
                k,
                start,
                published,
                sampled,
            });
            return Ok(None);
        }
        self.tell_rings(k);
        if sampled {
            self.sample(k, start, published);
        }
        self.pace(k, sim_time);
        Ok(Some(self.report()))
    }

    /// Lockstep: polls for step `k`'s frames of every peer, from `now` on,
    /// as the wait strategy says; with `EARLY`, pending once `patience` has
    /// passed.
    #[inline]
    fn wait_lockstep<const EARLY: bool>(
        &mut self,
        k: u64,
        mut now: Instant,
        patience: Duration,
    ) -> Result<Poll<()>, LinkError> {
        let mut polls: u64 = 0;
        let mut deadline = None;
        loop {
            if let Poll::Ready(()) = self.node.exchange().poll_lockstep(k, now)? {
                self.waiter.waited(polls);
                return Ok(Poll::Ready(()));
            }
            if polls == 0 {
                self.waiter.begin();
                if EARLY {
                    deadline = Some(self.clock.now() + patience);
                }
            }
            match (self.waiter.strategy(), &self.events) {
                (WaitStrategy::Event, Some(events)) => {
                    // Slices of at most 10 ms: the driver queues one event per type, so
                    // a wake-up that raced the last poll costs at most one slice.
                    match events.wait(10).map_err(|e| LinkError::Events(e.into()))? {
                        Some(_) => self.event_waits.woken += 1,
                        None => self.event_waits.timed_out += 1,
                    }
                }
                _ => self.waiter.pause(polls),
            }
            if !self.waiter.spins(polls) || polls.is_multiple_of(64) {
                now = self.clock.now();
                if EARLY && deadline.is_some_and(|d| now >= d) {
                    return Ok(Poll::Pending);
                }
            }
            polls += 1;
        }
    }

    /// Adds step `k` to the node's statistics: it started at `start`, took
    /// its peers' frames from `published`, and ends now.
    #[cold]
    #[inline(never)]
    fn sample(&mut self, k: u64, start: Instant, published: Instant) {
        let end = self.clock.now();
        let taken = self
            .node
            .peers()
            .iter()
            .filter(|p| p.fresh())
            .filter_map(|p| Some((p.slot(), p.observed().latest()?.wall_clock_ns)));
        let sample = Sample {
            start,
            published,
            end,
        };
        let rings = self.rings();
        let counts = Counts {
            steps: k + 1,
            late: self.node.lates(),
            failovers: rings.failovers,
            cards: self
                .redundant
                .as_ref()
                .map_or([Card::Unwatched; 2], rings::Redundant::cards),
            boards: self
                .redundant
                .as_ref()
                .map_or([None; 2], rings::Redundant::boards),
        };
        self.recorder
            .add(sample, self.clock.last_wall_ns(), taken, counts);
    }

    /// `realTimeFactor`: holds step `k` (at `sim_time`) back until its time;
    /// warns the first time a step ends behind it. Unpaced, one comparison.
    #[inline]
    fn pace(&mut self, k: u64, sim_time: f64) {
        if self.pacer.paces() {
            self.pace_step(k, sim_time);
        }
    }

    #[inline(never)]
    fn pace_step(&mut self, k: u64, sim_time: f64) {
        if let Some(behind) = self.pacer.finish(sim_time) {
            if behind.first {
                let c = self.node.config();
                log::warn!(
                    "node `{}` fell behind its real-time pace (realTimeFactor {}) at step {k} \
                     (t = {sim_time}): it ended {:.3} ms after its time; pace.behind counts \
                     such steps",
                    self.node.interface().nodes[self.node.me()].name,
                    c.settings.real_time_factor,
                    behind.late.as_secs_f64() * 1e3
                );
            }
        }
    }
}
