//! The link: one node coupled to one peer through a device, step by step.
//!
//! Frame indices: the frame published at start is index 0; step k (k = 0, 1, …)
//! publishes index k + 1. In lockstep with lag L, step k returns exactly the peer's
//! index max(k + 1 − L, 0): the peer's inputs of its step k − L, or its initial
//! values while k < L.
//!
//! Reflective memory (and a `shm:` object) keeps its contents across runs, so a
//! reader may find frames a dead session left behind. Lockstep therefore takes a
//! frame only if it acknowledges this session: every frame carries the writer's
//! random epoch and the epoch of the peer it is bound to (`ack_epoch`). Until the
//! first acknowledged frame arrives, each side follows the epoch of the newest frame
//! in the other's slot and republishes its recent frames with that acknowledgement;
//! a live peer clears its slot before publishing, so both sides converge on each
//! other's live sessions while no stale frame can ever be acknowledged. After that
//! first exchange, an epoch change is a peer restart.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::backend::rfm2g::Events;
use crate::frame::framed::{Frame, SyncMode};
use crate::frame::seed::FlightData;
use crate::frame::{self, Message, MAX_LAG, RING_DEPTH};
use crate::health::{FrameId, Observation, PeerHealth};
use crate::slot::{FramedReader, FramedWriter, ReadError, SeedReader, SeedWriter, StepPoll};
use crate::wait::WaitStrategy;
use crate::{Device, DeviceError, OpenOptions, RegionError, WORD};

/// A node that wrote its slot within this long, and has not closed it, is live.
/// (Compared with the writer's wall clock: PCs sharing a ring keep NTP time.)
pub const LIVE_WINDOW: Duration = Duration::from_secs(2);

/// Which frame layout the link speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    #[default]
    Framed,
    /// The article's `FlightData`: free mode only (it has no step ring or session).
    Seed,
}

/// Everything a link needs; the FMU's parameters map onto it one to one.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    pub device: String,
    pub rfm2g_library: Option<PathBuf>,
    pub region_offset: u64,
    pub node_slot: u8,
    pub peer_slot: u8,
    pub mode: SyncMode,
    pub lag: u8,
    pub wait: WaitStrategy,
    pub layout: Layout,
    /// Longest wait for a peer frame once the link runs (free mode: the age after
    /// which the link is reported down).
    pub timeout: Duration,
    /// Longest wait for the peer's first frame.
    pub startup_timeout: Duration,
}

impl Default for LinkConfig {
    fn default() -> LinkConfig {
        LinkConfig {
            device: "/dev/rfm2g0".into(),
            rfm2g_library: None,
            region_offset: 0,
            node_slot: 0,
            peer_slot: 1,
            mode: SyncMode::Lockstep,
            lag: 0,
            wait: WaitStrategy::Spin,
            layout: Layout::Framed,
            timeout: Duration::from_secs(1),
            startup_timeout: Duration::from_secs(30),
        }
    }
}

/// What one node contributes per step.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sample {
    pub sim_time: f64,
    pub attitude: [f64; 3],
    pub status: u8,
    pub message: Message,
}

impl From<&Frame> for Sample {
    fn from(f: &Frame) -> Sample {
        Sample {
            sim_time: f.sim_time,
            attitude: f.attitude,
            status: f.status,
            message: f.message,
        }
    }
}

impl From<&FlightData> for Sample {
    fn from(p: &FlightData) -> Sample {
        Sample {
            sim_time: p.timestamp,
            attitude: p.attitude.map(f64::from),
            status: p.status,
            message: p.msg,
        }
    }
}

impl Sample {
    /// Distinguishes a re-read of one frame from a second frame with the same
    /// index (a [`crate::health::FrameId`] digest).
    pub fn digest(&self) -> u32 {
        let mut h = self.sim_time.to_bits() ^ u64::from(self.status);
        for a in self.attitude {
            h = h.rotate_left(17) ^ a.to_bits();
        }
        (h ^ (h >> 32)) as u32
    }
}

/// A frame received from the peer.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PeerSample {
    pub sample: Sample,
    /// The frame's index (packet id for the seed layout).
    pub index: u64,
}

/// Why the link failed.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("parameter {parameter} = {value}: {problem}")]
    Config {
        parameter: &'static str,
        value: String,
        problem: String,
    },
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Region(#[from] RegionError),
    #[error(
        "{device}: slot {slot} is being written by another node (session {epoch:#018x}, last \
         frame {age_ms} ms ago): give every node its own nodeSlot; if that program has just \
         stopped without closing, retry after {} s",
        LIVE_WINDOW.as_secs()
    )]
    SlotInUse {
        device: String,
        slot: u8,
        epoch: u64,
        age_ms: u64,
    },
    #[error(
        "{device}: no frame of step {step} from peer slot {peer_slot} (this node: slot \
         {node_slot}) within {waited:.3?}: {why}"
    )]
    Timeout {
        device: String,
        node_slot: u8,
        peer_slot: u8,
        step: u64,
        waited: Duration,
        why: String,
    },
    #[error(
        "{device}: the peer in slot {peer_slot} restarted (session {old:#018x} became \
         {new:#018x}) at step {step}; a lockstep run cannot continue across a restart"
    )]
    PeerRestarted {
        device: String,
        peer_slot: u8,
        step: u64,
        old: u64,
        new: u64,
    },
    #[error(
        "{device}: the peer in slot {peer_slot} stopped (its master terminated) before step {step}"
    )]
    PeerStopped {
        device: String,
        peer_slot: u8,
        step: u64,
    },
    #[error("{device}: peer in slot {peer_slot} is incompatible: {what}")]
    Incompatible {
        device: String,
        peer_slot: u8,
        what: String,
    },
    #[error(
        "{device}: the peer's frame of step {step} was already overwritten (it holds step \
         {found}): the peer ran more than the ring's {RING_DEPTH} frames ahead"
    )]
    Overwritten {
        device: String,
        step: u64,
        found: u64,
    },
}

fn config_error(
    parameter: &'static str,
    value: impl ToString,
    problem: impl Into<String>,
) -> LinkError {
    LinkError::Config {
        parameter,
        value: value.to_string(),
        problem: problem.into(),
    }
}

impl LinkConfig {
    /// Checks the combination before anything is opened.
    pub fn validate(&self) -> Result<(), LinkError> {
        if self.lag > MAX_LAG {
            return Err(config_error(
                "lag",
                self.lag,
                format!("at most {MAX_LAG} (the ring holds {RING_DEPTH} frames per slot)"),
            ));
        }
        if !self.region_offset.is_multiple_of(WORD as u64) {
            return Err(config_error(
                "regionOffset",
                self.region_offset,
                "must be a multiple of 4 bytes",
            ));
        }
        if self.layout == Layout::Seed && self.mode == SyncMode::Lockstep {
            return Err(config_error(
                "layout",
                "seed",
                "the seed layout (the article's FlightData) has no step ring: use syncMode = free with it, or layout = framed for lockstep",
            ));
        }
        for (name, value) in [
            ("timeout", self.timeout),
            ("startupTimeout", self.startup_timeout),
        ] {
            if value.is_zero() {
                return Err(config_error(
                    name,
                    format!("{value:?}"),
                    "must be greater than 0 s",
                ));
            }
        }
        Ok(())
    }
}

enum Side {
    Framed {
        writer: FramedWriter,
        reader: FramedReader,
        own: FramedReader,
    },
    Seed {
        writer: SeedWriter,
        reader: SeedReader,
    },
}

/// One node's end of the coupling.
pub struct Link {
    config: LinkConfig,
    side: Side,
    /// Network interrupts (waitStrategy = event only).
    events: Option<Events>,
    epoch: u64,
    /// The peer session this node acknowledges.
    bound: Option<u64>,
    /// A frame acknowledging this session has arrived: epoch changes are restarts.
    confirmed: bool,
    /// The last frames published (≤ RING_DEPTH), for republishing on a rebind.
    recent: VecDeque<Frame>,
    health: PeerHealth,
    latest: Option<PeerSample>,
    last_wait: Duration,
    /// When the last step took the peer's frame (one clock read per step).
    stepped_at: Instant,
    started: bool,
    closed: bool,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("config", &self.config)
            .field("epoch", &self.epoch)
            .field("bound", &self.bound)
            .field("confirmed", &self.confirmed)
            .finish_non_exhaustive()
    }
}

/// A random, odd session epoch (odd: its low word is never 0, see the closed word).
fn new_epoch() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish() | 1
}

/// The wall clock for the frame's `wall_clock_ns`, which only the slot liveness
/// check (2 s window) reads. On Linux the coarse clock (a few ms of resolution) is
/// read without a syscall or a TSC read: this runs every step.
fn wall_clock_ns() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out pointer; CLOCK_REALTIME_COARSE always exists on Linux.
        if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) } == 0 {
            return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        }
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Link {
    /// Validates `config`, opens the device and maps the slots used.
    pub fn open(config: LinkConfig) -> Result<Link, LinkError> {
        config.validate()?;
        let device = Device::open(
            &config.device,
            &OpenOptions {
                rfm2g_library: config.rfm2g_library.clone(),
                ..OpenOptions::default()
            },
        )?;
        let events = if config.wait == WaitStrategy::Event {
            let events = device.events()?.ok_or_else(|| {
                config_error(
                    "waitStrategy",
                    "event",
                    format!(
                        "RFM2g network interrupts need an RFM2g device whose library has the event \
                         functions; `{}` has none: use spin, yield or sleep",
                        config.device
                    ),
                )
            })?;
            Some(events)
        } else {
            None
        };
        let highest = config.node_slot.max(config.peer_slot);
        let len = frame::region_len(highest);
        let region = device.map(config.region_offset, len).map_err(|e| match e {
            DeviceError::WindowOutOfRange { size, .. } => config_error(
                "regionOffset",
                config.region_offset,
                format!(
                    "slots 0..={highest} (nodeSlot {}, peerSlot {}) need {len} bytes from \
                         there, which does not fit the {size}-byte memory of `{}`: lower \
                         regionOffset or the slot numbers ({e})",
                    config.node_slot, config.peer_slot, config.device
                ),
            ),
            other => other.into(),
        })?;
        let own = frame::slot(&region, config.node_slot)?;
        let peer = frame::slot(&region, config.peer_slot)?;
        let side = match config.layout {
            Layout::Framed => Side::Framed {
                writer: FramedWriter::new(own.clone())?,
                reader: FramedReader::new(peer)?,
                own: FramedReader::new(own)?,
            },
            Layout::Seed => Side::Seed {
                writer: SeedWriter::new(own)?,
                reader: SeedReader::new(peer)?,
            },
        };
        Ok(Link {
            config,
            side,
            events,
            epoch: new_epoch(),
            bound: None,
            confirmed: false,
            recent: VecDeque::with_capacity(RING_DEPTH),
            health: PeerHealth::new(),
            latest: None,
            last_wait: Duration::ZERO,
            stepped_at: Instant::now(),
            started: false,
            closed: false,
        })
    }

    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// This node's session epoch.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    pub fn health(&self) -> &PeerHealth {
        &self.health
    }

    /// The newest peer frame taken (lockstep: the one of the last step).
    pub fn latest(&self) -> Option<&PeerSample> {
        self.latest.as_ref()
    }

    /// When the last step read the peer (lockstep: before its wait; the age of a
    /// frame taken then is measured from here).
    pub fn stepped_at(&self) -> Instant {
        self.stepped_at
    }

    /// Time the last step spent waiting for the peer.
    pub fn last_wait(&self) -> Duration {
        self.last_wait
    }

    /// Takes this node's slot and publishes its initial frame (index 0). Never waits.
    pub fn start(&mut self, init: &Sample) -> Result<(), LinkError> {
        if let Side::Framed {
            own,
            writer,
            reader,
        } = &mut self.side
        {
            // The single-writer rule: a slot another live node writes is not ours.
            if let Ok(f) = own.read_latest() {
                let age = Duration::from_nanos(wall_clock_ns().saturating_sub(f.wall_clock_ns));
                if f.epoch != self.epoch && own.closed()? != f.epoch as u32 && age < LIVE_WINDOW {
                    return Err(LinkError::SlotInUse {
                        device: self.config.device.clone(),
                        slot: self.config.node_slot,
                        epoch: f.epoch,
                        age_ms: age.as_millis() as u64,
                    });
                }
            }
            writer.clear()?;
            if self.config.node_slot == self.config.peer_slot {
                self.bound = Some(self.epoch);
                self.confirmed = true;
            } else if let Ok(f) = reader.read_latest() {
                self.bound = Some(f.epoch);
            }
        }
        self.started = true;
        self.publish(0, init)
    }

    fn publish(&mut self, index: u64, s: &Sample) -> Result<(), LinkError> {
        match &mut self.side {
            Side::Framed { writer, .. } => {
                let frame = Frame {
                    writer_slot: self.config.node_slot,
                    status: s.status,
                    lag: self.config.lag,
                    mode: self.config.mode,
                    epoch: self.epoch,
                    ack_epoch: self.bound.unwrap_or(0),
                    step: index,
                    sim_time: s.sim_time,
                    wall_clock_ns: wall_clock_ns(),
                    attitude: s.attitude,
                    message: s.message,
                };
                writer.publish(&frame)?;
                Self::signal(&self.events, self.config.node_slot, index)?;
                // Only a rebind republishes, and only before the first acknowledged
                // frame: a confirmed link keeps no copies.
                if !self.confirmed {
                    if self.recent.len() == RING_DEPTH {
                        self.recent.pop_front();
                    }
                    self.recent.push_back(frame);
                }
            }
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

    /// Wakes peers waiting on network interrupts (waitStrategy = event).
    fn signal(events: &Option<Events>, slot: u8, index: u64) -> Result<(), LinkError> {
        if let Some(events) = events {
            let data = u32::from(slot) << 24 | (index as u32 & 0x00ff_ffff);
            events.broadcast(data).map_err(DeviceError::from)?;
        }
        Ok(())
    }

    /// Acknowledges peer session `epoch` from now on, in the frames already out too.
    fn rebind(&mut self, epoch: u64) -> Result<(), LinkError> {
        self.bound = Some(epoch);
        if let Side::Framed { writer, .. } = &mut self.side {
            for frame in &mut self.recent {
                frame.ack_epoch = epoch;
                writer.publish(frame)?;
            }
            if let Some(last) = self.recent.back() {
                Self::signal(&self.events, self.config.node_slot, last.step)?;
            }
        }
        Ok(())
    }

    fn check_compatible(&self, f: &Frame) -> Result<(), LinkError> {
        let c = &self.config;
        let what = if f.writer_slot != c.peer_slot {
            format!("a frame in its slot says it was written by slot {}: two nodes use the same nodeSlot", f.writer_slot)
        } else if f.mode != c.mode {
            format!(
                "it runs syncMode {:?}, this node {:?}: both must use the same",
                f.mode, c.mode
            )
        } else if c.mode == SyncMode::Lockstep && f.lag != c.lag {
            format!(
                "it runs lag {}, this node lag {}: both must use the same",
                f.lag, c.lag
            )
        } else {
            return Ok(());
        };
        Err(LinkError::Incompatible {
            device: c.device.clone(),
            peer_slot: c.peer_slot,
            what,
        })
    }

    fn incompatible(&self, what: String) -> LinkError {
        LinkError::Incompatible {
            device: self.config.device.clone(),
            peer_slot: self.config.peer_slot,
            what,
        }
    }

    /// A frame of another format version shows as a complete frame that does not decode.
    fn check_readable(&self, err: &ReadError) -> Result<(), LinkError> {
        if let ReadError::Unreadable { rejections, .. } = err {
            if let Some(crate::frame::FrameError::BadVersion { found, expected }) = rejections.last
            {
                return Err(self.incompatible(format!(
                    "it writes frame format version {found}, this build reads version {expected}"
                )));
            }
        }
        Ok(())
    }

    /// A peer writing the other layout leaves that layout's signature in its slot:
    /// the seed header at the slot's start, or `RFMf` in a framed ring entry.
    fn check_layout(&self) -> Result<(), LinkError> {
        use std::sync::atomic::Ordering::Relaxed;
        let found = match &self.side {
            Side::Framed { reader, .. } => {
                let word = reader.region().load_u32(0, Relaxed)?;
                (u32::from_le(word) == crate::frame::seed::MAGIC)
                    .then_some(("seed (the article's FlightData)", "framed"))
            }
            Side::Seed { reader, .. } => {
                let mut framed = false;
                for i in 0..RING_DEPTH as u64 {
                    let word = reader
                        .region()
                        .load_u32(crate::frame::framed::entry_offset(i) + 8, Relaxed)?;
                    framed |= u32::from_le(word) == crate::frame::framed::MAGIC;
                }
                framed.then_some(("framed", "seed"))
            }
        };
        match found {
            Some((theirs, ours)) => {
                Err(self.incompatible(format!("it uses layout {theirs}, this node layout {ours}")))
            }
            None => Ok(()),
        }
    }

    /// Step `k`: publishes this node's sample, then takes the peer's (lockstep: waits
    /// for exactly the matching step; free: the newest there is, if any).
    pub fn step(&mut self, k: u64, sample: &Sample) -> Result<Option<PeerSample>, LinkError> {
        self.publish(k + 1, sample)?;
        // One clock read per step: the health age and the lockstep wait share it.
        self.stepped_at = Instant::now();
        match self.config.mode {
            SyncMode::Lockstep => self.lockstep(k).map(Some),
            SyncMode::Free => {
                self.free_read()?;
                Ok(self.latest)
            }
        }
    }

    fn accept(&mut self, sample: Sample, index: u64, epoch: Option<u64>) -> Observation {
        let id = FrameId {
            epoch,
            step: index,
            digest: sample.digest(),
        };
        let seen = self.health.observe(id, self.stepped_at);
        if matches!(
            seen,
            Observation::First | Observation::Fresh { .. } | Observation::Restarted { .. }
        ) {
            self.latest = Some(PeerSample { sample, index });
        }
        seen
    }

    fn free_read(&mut self) -> Result<(), LinkError> {
        self.last_wait = Duration::ZERO;
        let read = match &self.side {
            Side::Framed { reader, .. } => reader
                .read_latest()
                .map(|f| (Sample::from(&f), f.step, Some(f), Some(f.epoch))),
            Side::Seed { reader, .. } => reader
                .read()
                .map(|p| (Sample::from(&p), p.packet_id, None, None)),
        };
        match read {
            Ok((sample, index, frame, epoch)) => {
                match frame {
                    // Surely live (it acknowledges this session): it must be compatible.
                    Some(f) if f.ack_epoch == self.epoch => self.check_compatible(&f)?,
                    _ => {}
                }
                if let Observation::Restarted { .. } | Observation::First =
                    self.accept(sample, index, epoch)
                {
                    self.bound = epoch;
                }
                Ok(())
            }
            Err(ReadError::Region(e)) => Err(e.into()),
            Err(err @ ReadError::Unreadable { .. }) => {
                self.check_readable(&err)?;
                self.check_layout()?;
                if let ReadError::Unreadable { rejections, .. } = err {
                    if rejections.saw_bad_frame() {
                        self.health.observe_bad();
                    }
                }
                Ok(())
            }
            Err(ReadError::Empty) => self.check_layout(),
        }
    }

    fn lockstep(&mut self, k: u64) -> Result<PeerSample, LinkError> {
        let need = (k + 1).saturating_sub(u64::from(self.config.lag));
        let limit = if self.confirmed {
            self.config.timeout
        } else {
            self.config.startup_timeout
        };
        let start = self.stepped_at; // read once per step, in step()
        let mut polls: u64 = 0;
        let mut bad_seen = false;
        let mut unacked: Option<u64> = None;
        loop {
            let Side::Framed { reader, .. } = &self.side else {
                unreachable!("validate() refuses lockstep with the seed layout")
            };
            match reader.poll_step(need) {
                Ok(StepPoll::Ready(f)) => {
                    if f.ack_epoch == self.epoch {
                        // Only a frame that acknowledges this session is surely live:
                        // a dead session's frames may differ in anything.
                        self.check_compatible(&f)?;
                        if self.bound != Some(f.epoch) {
                            if self.confirmed {
                                return Err(self.restarted(k, f.epoch));
                            }
                            self.rebind(f.epoch)?;
                        }
                        self.confirmed = true;
                        self.last_wait = start.elapsed();
                        let sample = Sample::from(&f);
                        self.accept(sample, f.step, Some(f.epoch));
                        return Ok(PeerSample {
                            sample,
                            index: f.step,
                        });
                    }
                    unacked = Some(f.ack_epoch);
                }
                Ok(StepPoll::Overwritten { found }) if self.confirmed => {
                    return Err(LinkError::Overwritten {
                        device: self.config.device.clone(),
                        step: k,
                        found,
                    })
                }
                Ok(StepPoll::Overwritten { .. } | StepPoll::NotYet) => {}
                Err(ReadError::Region(e)) => return Err(e.into()),
                Err(err) => {
                    self.check_readable(&err)?;
                    if let ReadError::Unreadable { rejections, .. } = &err {
                        if rejections.saw_bad_frame() && !bad_seen {
                            bad_seen = true;
                            self.health.observe_bad();
                        }
                    }
                }
            }
            polls += 1;
            // Handshake (until confirmed) and watchdog (now and then): the peer's
            // newest frame tells its live session, and whether it stopped.
            if !self.confirmed || polls.is_multiple_of(1024) {
                self.watch_peer(k)?;
            }
            let check_clock = self.config.wait != WaitStrategy::Spin || polls.is_multiple_of(64);
            if check_clock && start.elapsed() >= limit {
                return Err(self.timeout(k, start.elapsed(), bad_seen, unacked));
            }
            match (self.config.wait, &self.events) {
                (WaitStrategy::Event, Some(events)) => {
                    // Slices of at most 10 ms: the driver queues one event per type, so
                    // a wake-up that raced the last poll costs at most one slice.
                    let left = limit
                        .saturating_sub(start.elapsed())
                        .as_millis()
                        .clamp(1, 10) as u32;
                    events.wait(left).map_err(DeviceError::from)?;
                }
                (strategy, _) => strategy.pause(),
            }
        }
    }

    fn watch_peer(&mut self, k: u64) -> Result<(), LinkError> {
        let Side::Framed { reader, .. } = &self.side else {
            return Ok(());
        };
        let latest = match reader.read_latest() {
            Ok(latest) => latest,
            Err(ReadError::Empty) if !self.confirmed => return self.check_layout(),
            Err(_) => return Ok(()),
        };
        let closed = reader.closed()?;
        if self.bound == Some(latest.epoch) {
            if self.confirmed && closed == latest.epoch as u32 {
                return Err(LinkError::PeerStopped {
                    device: self.config.device.clone(),
                    peer_slot: self.config.peer_slot,
                    step: k,
                });
            }
            return Ok(());
        }
        if self.confirmed {
            return Err(self.restarted(k, latest.epoch));
        }
        if closed != latest.epoch as u32 {
            self.rebind(latest.epoch)?;
        }
        Ok(())
    }

    fn restarted(&mut self, k: u64, new: u64) -> LinkError {
        self.health.restarts += 1;
        LinkError::PeerRestarted {
            device: self.config.device.clone(),
            peer_slot: self.config.peer_slot,
            step: k,
            old: self.bound.unwrap_or(0),
            new,
        }
    }

    fn timeout(&self, k: u64, waited: Duration, bad_seen: bool, unacked: Option<u64>) -> LinkError {
        let why = if bad_seen {
            "its slot holds corrupted frames (bad magic or CRC)".to_owned()
        } else if let Some(ack) = unacked {
            format!(
                "its frame is there but acknowledges session {ack:#018x}, not this node's {:#018x}: \
                 it is a frame left by an earlier run, or the peer has not seen this node yet",
                self.epoch
            )
        } else if self.bound.is_none() {
            "nothing from the peer: is it running, on the same device, regionOffset and slots?"
                .to_owned()
        } else {
            "the peer has not published that step: it is slower, stalled or stopped".to_owned()
        };
        LinkError::Timeout {
            device: self.config.device.clone(),
            node_slot: self.config.node_slot,
            peer_slot: self.config.peer_slot,
            step: k,
            waited,
            why,
        }
    }

    /// Marks this node's slot closed: a lockstep peer stops waiting with a clear
    /// error, and a later session may take the slot at once.
    pub fn close(&mut self) -> Result<(), LinkError> {
        if self.closed || !self.started {
            return Ok(());
        }
        self.closed = true;
        if let Side::Framed { writer, .. } = &mut self.side {
            writer.close(self.epoch)?;
        }
        Ok(())
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // Best effort: the memory may already be gone (a device error brought us here).
        let _ = self.close();
    }
}
