//! One node's side of the protocol, without threads, sleeps or clocks of its own.
//!
//! [`Node`] does everything a link does in single, non-blocking steps, each given
//! the time `now`: claim the slot, publish, poll the peer for a step, read it in
//! free mode. [`super::Link`] drives it with the real clock, a heartbeat thread and
//! a wait strategy; the handshake model test drives it with a virtual clock and
//! beats by hand, which makes every interleaving of two nodes reproducible.

use std::task::Poll;
use std::time::{Duration, Instant};

use super::claim::{Claim, ClaimPoll};
use super::compat;
use super::handshake::{Admit, Fault, Handshake};
use super::liveness::{self, token, Beater, Words, MIN_SILENCE};
use super::{Layout, LinkConfig, LinkError, PeerSample, Sample};
use crate::frame;
use crate::frame::framed::Frame;
use crate::frame::seed::FlightData;
use crate::health::{FrameId, Observation, PeerHealth};
use crate::region::Region;
use crate::slot::{FramedReader, FramedWriter, ReadError, SeedReader, SeedWriter, StepPoll};

enum Side {
    Framed {
        writer: FramedWriter,
        reader: FramedReader,
    },
    Seed {
        writer: SeedWriter,
        reader: SeedReader,
        own: SeedReader,
    },
}

impl Side {
    /// The seed packet id in this node's own slot: an article program writing there
    /// holds it while the id moves (framed: none).
    fn own_packet(&self) -> Option<u64> {
        match self {
            Side::Seed { own, .. } => own.read().ok().map(|p| p.packet_id),
            Side::Framed { .. } => None,
        }
    }
}

enum Phase {
    Claiming(Claim),
    Running,
    Closed,
}

/// What a poll of [`Node::poll_start`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartPoll {
    /// Still observing the slot or settling the claim: poll again.
    Pending,
    /// The owner word now holds this session's token: start beating now.
    Claimed,
    /// The slot is ours, cleared, and the initial frame is published.
    Started,
}

/// The article's packets carry no session and no heartbeat: a seed peer is live
/// while its packet id moves. The id found when this node started proves nothing.
#[derive(Debug, Clone, Copy)]
struct SeedWatch {
    baseline: Option<u64>,
    moved: Option<(u64, Instant)>,
}

/// The lockstep wait of one step.
#[derive(Debug, Clone, Copy)]
struct StepWait {
    step: u64,
    start: Instant,
    bad_seen: bool,
    /// A complete frame of the step was there, but of a session not proven live.
    unproven: Option<u64>,
}

/// One node's end of the coupling, polled.
pub struct Node {
    config: LinkConfig,
    side: Side,
    own_slot: Region,
    peer_slot: Region,
    epoch: u64,
    phase: Phase,
    handshake: Handshake,
    seed: SeedWatch,
    health: PeerHealth,
    latest: Option<PeerSample>,
    wait: Option<StepWait>,
    last_wait: Duration,
    stepped_at: Instant,
    /// See [`Node::claims_under_one_lock`].
    claim_settle: Duration,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("config", &self.config)
            .field("epoch", &self.epoch)
            .field("bound", &self.handshake.bound())
            .finish_non_exhaustive()
    }
}

impl Node {
    /// A node of session `epoch` over `region` (slots `0..=max(node, peer)`), which
    /// starts observing its own slot at `now`. Nothing is written yet.
    pub fn new(
        config: LinkConfig,
        region: &Region,
        epoch: u64,
        now: Instant,
    ) -> Result<Node, LinkError> {
        let own_slot = frame::slot(region, config.node_slot)?;
        let peer_slot = frame::slot(region, config.peer_slot)?;
        let side = match config.layout {
            Layout::Framed => Side::Framed {
                writer: FramedWriter::new(own_slot.clone())?,
                reader: FramedReader::new(peer_slot.clone())?,
            },
            Layout::Seed => Side::Seed {
                writer: SeedWriter::new(own_slot.clone())?,
                reader: SeedReader::new(peer_slot.clone())?,
                own: SeedReader::new(own_slot.clone())?,
            },
        };
        let self_loop = config.node_slot == config.peer_slot;
        let own_packet = side.own_packet();
        Ok(Node {
            handshake: Handshake::new(
                Words::read(&peer_slot)?,
                now,
                config.mode,
                config.timeout,
                self_loop.then_some(epoch),
            ),
            phase: Phase::Claiming(Claim::new(Words::read(&own_slot)?, own_packet, now)),
            config,
            side,
            own_slot,
            peer_slot,
            epoch,
            seed: SeedWatch {
                baseline: None,
                moved: None,
            },
            health: PeerHealth::new(),
            latest: None,
            wait: None,
            last_wait: Duration::ZERO,
            stepped_at: now,
            claim_settle: super::claim::CLAIM_SETTLE,
        })
    }

    /// Declares that every claimant of this memory calls [`Node::poll_start`]
    /// under one lock (memory only this process can reach): the claim then needs
    /// no settling time.
    pub fn claims_under_one_lock(&mut self) {
        self.claim_settle = Duration::ZERO;
    }

    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    pub fn health(&self) -> &PeerHealth {
        &self.health
    }

    pub fn latest(&self) -> Option<&PeerSample> {
        self.latest.as_ref()
    }

    pub fn last_wait(&self) -> Duration {
        self.last_wait
    }

    pub fn stepped_at(&self) -> Instant {
        self.stepped_at
    }

    /// The peer session frames are taken from (framed layout), once there is one.
    pub fn bound(&self) -> Option<u64> {
        self.handshake.bound()
    }

    /// The heartbeat of this session, for the thread that beats it (valid once
    /// [`Node::poll_start`] said [`StartPoll::Claimed`]).
    pub fn beater(&self) -> Result<Beater, LinkError> {
        Ok(Beater::new(self.own_slot.clone(), self.epoch)?)
    }

    /// One step of taking the slot and publishing `init` (frame 0). Never waits.
    pub fn poll_start(&mut self, now: Instant, init: &Sample) -> Result<StartPoll, LinkError> {
        let packet = self.side.own_packet();
        let Phase::Claiming(claim) = &mut self.phase else {
            return Ok(StartPoll::Started);
        };
        let words = Words::read(&self.own_slot)?;
        let c = &self.config;
        match claim.poll(words, packet, now, token(self.epoch), self.claim_settle) {
            ClaimPoll::Pending => Ok(StartPoll::Pending),
            ClaimPoll::Take => {
                liveness::write_owner(&self.own_slot, self.epoch)?;
                Ok(StartPoll::Claimed)
            }
            ClaimPoll::Held { owner, ago } => Err(LinkError::SlotInUse {
                device: c.device.clone(),
                slot: c.node_slot,
                owner,
                last_beat: ago,
            }),
            ClaimPoll::Contended { owner } => Err(LinkError::SlotContended {
                device: c.device.clone(),
                slot: c.node_slot,
                owner,
            }),
            ClaimPoll::Won => {
                match &mut self.side {
                    Side::Framed { writer, .. } => writer.clear()?,
                    Side::Seed { writer, reader, .. } => {
                        writer.clear()?;
                        self.seed.baseline = reader.read().ok().map(|p| p.packet_id);
                    }
                }
                // The peer is watched from here: what it did before proves nothing.
                let self_loop = c.node_slot == c.peer_slot;
                self.handshake = Handshake::new(
                    Words::read(&self.peer_slot)?,
                    now,
                    c.mode,
                    c.timeout,
                    self_loop.then_some(self.epoch),
                );
                self.phase = Phase::Running;
                self.publish(0, init)?;
                Ok(StartPoll::Started)
            }
        }
    }

    /// Publishes `sample` as frame `index` (step k publishes k + 1).
    pub fn publish(&mut self, index: u64, s: &Sample) -> Result<(), LinkError> {
        match &mut self.side {
            Side::Framed { writer, .. } => writer.publish(&Frame {
                writer_slot: self.config.node_slot,
                status: s.status,
                lag: self.config.lag,
                mode: self.config.mode,
                epoch: self.epoch,
                ack_epoch: self.handshake.bound().unwrap_or(0),
                step: index,
                sim_time: s.sim_time,
                wall_clock_ns: super::wall_clock_ns(),
                attitude: s.attitude,
                message: s.message,
            })?,
            Side::Seed { writer, .. } => writer.publish(&FlightData {
                packet_id: index,
                timestamp: s.sim_time,
                attitude: s.attitude.map(|a| a as f32),
                status: s.status,
                msg: s.message,
            })?,
        }
        Ok(())
    }

    fn accept(&mut self, sample: Sample, index: u64, epoch: Option<u64>, now: Instant) {
        let id = FrameId {
            epoch,
            step: index,
            digest: sample.digest(),
        };
        if matches!(
            self.health.observe(id, now),
            Observation::First | Observation::Fresh { .. } | Observation::Restarted { .. }
        ) {
            self.latest = Some(PeerSample { sample, index });
        }
    }

    fn observe_peer(&mut self, now: Instant) -> Result<(), LinkError> {
        let words = Words::read(&self.peer_slot)?;
        self.handshake.observe(words, now);
        Ok(())
    }

    /// The peer is this node itself (`nodeSlot == peerSlot`): nothing to watch.
    fn is_self_loop(&self) -> bool {
        self.config.node_slot == self.config.peer_slot
    }

    /// Lockstep step `k`, one poll at `now`: exactly the peer's frame
    /// max(k + 1 − lag, 0) once it is there and its session is live.
    pub fn poll_lockstep(&mut self, k: u64, now: Instant) -> Result<Poll<PeerSample>, LinkError> {
        let need = (k + 1).saturating_sub(u64::from(self.config.lag));
        let mut wait = match self.wait {
            Some(w) if w.step == k => w,
            _ => {
                self.stepped_at = now;
                StepWait {
                    step: k,
                    start: now,
                    bad_seen: false,
                    unproven: None,
                }
            }
        };
        if self.handshake.watch_due(now) && !self.is_self_loop() {
            self.observe_peer(now)?;
        }
        let Side::Framed { reader, .. } = &self.side else {
            unreachable!("validate() refuses lockstep with the seed layout")
        };
        match reader.poll_step(need) {
            Ok(StepPoll::Ready(f)) => match self.handshake.admit(f.epoch, now) {
                Admit::Take { bound_now } => {
                    if bound_now {
                        compat::check_frame(&self.config, &f)?;
                    }
                    self.wait = None;
                    self.last_wait = now.saturating_duration_since(wait.start);
                    let sample = Sample::from(&f);
                    self.accept(sample, f.step, Some(f.epoch), now);
                    return Ok(Poll::Ready(PeerSample {
                        sample,
                        index: f.step,
                    }));
                }
                Admit::NotLive => wait.unproven = Some(f.epoch),
                Admit::Restarted { old } => {
                    return Err(self.restarted(k, old, format!("{:#018x}", f.epoch)))
                }
            },
            Ok(StepPoll::Overwritten { found }) if self.handshake.bound().is_some() => {
                return Err(LinkError::Overwritten {
                    device: self.config.device.clone(),
                    step: k,
                    need,
                    found,
                })
            }
            Ok(StepPoll::Overwritten { .. } | StepPoll::NotYet) => {}
            Err(ReadError::Region(e)) => return Err(e.into()),
            Err(err) => {
                compat::check_readable(&self.config, &err)?;
                if let ReadError::Unreadable { rejections, .. } = &err {
                    if rejections.saw_bad_frame() && !wait.bad_seen {
                        wait.bad_seen = true;
                        self.health.observe_bad();
                    }
                }
            }
        }
        let fault = if self.is_self_loop() {
            None
        } else {
            self.handshake.fault(now)
        };
        match fault {
            Some(Fault::Stopped) => {
                return Err(LinkError::PeerStopped {
                    device: self.config.device.clone(),
                    peer_slot: self.config.peer_slot,
                    step: k,
                })
            }
            Some(Fault::Dead { silent }) => {
                return Err(LinkError::PeerDead {
                    device: self.config.device.clone(),
                    peer_slot: self.config.peer_slot,
                    step: k,
                    silent,
                })
            }
            Some(Fault::Restarted { old, owner }) => {
                // Its full epoch when its newest frame is there, else its token.
                let new = match reader.read_latest() {
                    Ok(f) if token(f.epoch) == owner => format!("{:#018x}", f.epoch),
                    _ => format!("token {owner:#010x}"),
                };
                return Err(self.restarted(k, old, new));
            }
            None => {}
        }
        if self.handshake.bound().is_none() {
            if let Err(ReadError::Empty) = reader.read_latest() {
                compat::check_layout(&self.config, &self.peer_slot, Layout::Framed)?;
            }
        }
        let limit = if self.handshake.bound().is_some() {
            self.config.timeout
        } else {
            self.config.startup_timeout
        };
        let waited = now.saturating_duration_since(wait.start);
        if waited >= limit {
            self.wait = None;
            return Err(self.timeout(&wait, waited, now));
        }
        self.wait = Some(wait);
        Ok(Poll::Pending)
    }

    fn restarted(&mut self, k: u64, old: u64, new: String) -> LinkError {
        self.health.restarts += 1;
        LinkError::PeerRestarted {
            device: self.config.device.clone(),
            peer_slot: self.config.peer_slot,
            step: k,
            old,
            new,
        }
    }

    fn timeout(&self, wait: &StepWait, waited: Duration, now: Instant) -> LinkError {
        let silent = self.handshake.life().silent_for(now);
        let why = if wait.bad_seen {
            "its slot holds corrupted frames (bad magic or CRC)".to_owned()
        } else if let Some(epoch) = wait.unproven {
            let holder = match self.handshake.life() {
                liveness::Life::Closed { .. } => "which has closed the slot".to_owned(),
                liveness::Life::Beating { owner, .. } if owner != token(epoch) => {
                    format!("while session token {owner:#010x} holds the slot")
                }
                _ => "whose heartbeat has not moved since this node started".to_owned(),
            };
            format!(
                "its slot holds a frame of session {epoch:#018x}, {holder}: frames left by an \
                 earlier run are never taken; is the peer's master running?"
            )
        } else if self.handshake.bound().is_none() {
            "nothing from the peer: is it running, on the same device, regionOffset and slots, \
             and has its master left initialization?"
                .to_owned()
        } else if silent >= MIN_SILENCE {
            // The step's timeout ran out just before the silence reached it.
            format!("the peer stopped beating {silent:.3?} ago: its process died or is stalled")
        } else {
            "the peer has not published that step: it is slower, stalled or stopped".to_owned()
        };
        LinkError::Timeout {
            device: self.config.device.clone(),
            node_slot: self.config.node_slot,
            peer_slot: self.config.peer_slot,
            step: wait.step,
            waited,
            why,
        }
    }

    /// Free mode at `now`: the newest frame of the live peer session, if any. Never waits.
    pub fn free_read(&mut self, now: Instant) -> Result<Option<PeerSample>, LinkError> {
        self.last_wait = Duration::ZERO;
        self.stepped_at = now;
        match &self.side {
            Side::Framed { .. } => self.free_read_framed(now)?,
            Side::Seed { .. } => self.free_read_seed(now)?,
        }
        Ok(self.latest)
    }

    fn free_read_framed(&mut self, now: Instant) -> Result<(), LinkError> {
        let self_loop = self.is_self_loop();
        if self.handshake.watch_due(now) && !self_loop {
            self.observe_peer(now)?;
        }
        let Side::Framed { reader, .. } = &self.side else {
            unreachable!("framed side")
        };
        match reader.read_latest() {
            Ok(f) => {
                if self.handshake.bound() != Some(f.epoch) && !self_loop {
                    // Another session than the bound one: judge it on fresh words.
                    self.observe_peer(now)?;
                }
                if let Admit::Take { bound_now } = self.handshake.admit(f.epoch, now) {
                    if bound_now {
                        compat::check_frame(&self.config, &f)?;
                    }
                    self.accept(Sample::from(&f), f.step, Some(f.epoch), now);
                }
                Ok(())
            }
            Err(err) => self.no_frame(err, Layout::Framed),
        }
    }

    /// A free-mode read of `layout` that gave no frame: a peer of another format
    /// version or layout is an error; a complete but corrupt frame is counted.
    fn no_frame(&mut self, err: ReadError, layout: Layout) -> Result<(), LinkError> {
        match err {
            ReadError::Region(e) => Err(e.into()),
            ReadError::Unreadable { rejections, .. } => {
                compat::check_readable(&self.config, &err)?;
                compat::check_layout(&self.config, &self.peer_slot, layout)?;
                if rejections.saw_bad_frame() {
                    self.health.observe_bad();
                }
                Ok(())
            }
            ReadError::Empty => compat::check_layout(&self.config, &self.peer_slot, layout),
        }
    }

    fn free_read_seed(&mut self, now: Instant) -> Result<(), LinkError> {
        let Side::Seed { reader, .. } = &self.side else {
            unreachable!("seed side")
        };
        match reader.read() {
            Ok(p) => {
                let id = p.packet_id;
                let moved = match self.seed.moved {
                    Some((last, _)) => id != last,
                    None => Some(id) != self.seed.baseline,
                };
                if moved {
                    self.seed.moved = Some((id, now));
                    self.accept(Sample::from(&p), id, None, now);
                }
                Ok(())
            }
            Err(err) => self.no_frame(err, Layout::Seed),
        }
    }

    /// Free mode's `link.ok` after a read at `now`: the peer session frames are taken
    /// from is running (heartbeat; seed layout: its packet id moved within `timeout`).
    pub fn peer_alive(&self, now: Instant) -> bool {
        if self.is_self_loop() {
            return true;
        }
        match self.side {
            Side::Framed { .. } => self.handshake.alive(now),
            Side::Seed { .. } => self.seed.moved.is_some_and(|(_, t)| {
                now.saturating_duration_since(t) < self.config.timeout.max(MIN_SILENCE)
            }),
        }
    }

    /// Marks this session's slot closed, if this session still holds it: a lockstep
    /// peer stops waiting with a clear error, and a later session may take the slot at once.
    pub fn close(&mut self) -> Result<(), LinkError> {
        let claimed = !matches!(
            self.phase,
            Phase::Closed | Phase::Claiming(Claim::Observing { .. })
        );
        self.phase = Phase::Closed;
        if claimed && Words::read(&self.own_slot)?.owner == token(self.epoch) {
            liveness::write_closed(&self.own_slot, self.epoch)?;
        }
        Ok(())
    }

    /// Leaves the slot as a killed process would: held, not closed.
    pub fn abandon(&mut self) {
        self.phase = Phase::Closed;
    }
}
