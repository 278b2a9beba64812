//! [`Link`]: one node's coupling driven by the real clock: opened on its
//! device, started (the claim polled, the heartbeat and the ring watch
//! started), stepped (publish, then the peers' frames taken, waited for by the
//! wait strategy, paced, the rings told) and closed with how it ended. Every
//! method of `Link` is here, a step's in [`step`]; what it drives is
//! [`Node`]'s.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rfm_frames::frame::framed::FrameBuf;
use rfm_frames::wait::Waiter;
use rfm_interface::{self as interface, Interface};
use rfm_memory::{Events, Network, RegionError};

use super::clock::{self, new_epoch};
use super::error::open_config;
use super::liveness::Heartbeat;
use super::ownership::ending::Ended;
use super::stats::window::Recorder;
use super::{memory, pace, replay, rings};
use super::{
    EventWaits, ForeignPeer, LinkConfig, LinkError, MasterStep, Node, OpenError, Peer, RingsReport,
    StartError, StartPoll, StepReport,
};

mod step;

/// How long [`Link::start`] sleeps between polls of its claim.
const CLAIM_POLL: Duration = Duration::from_millis(1);

/// Serializes the claims of in-process (`loopback:`) memory made by this copy of
/// the library. Where no other copy can reach the memory (heap memory: Miri, or
/// a platform without a process-wide object), holding it around each claim poll
/// makes the claim atomic and Fischer's settling delay unnecessary; where other
/// copies can (see `backend::loopback`), the delay stays.
static IN_PROCESS_CLAIMS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// One node's end of the coupling: a [`Node`] driven by the real clock, with the
/// heartbeat thread that proves it alive and the wait strategy of its config.
pub struct Link {
    node: Node,
    /// The steps' clock (see `clock.rs`); slot claims read the OS's.
    clock: clock::Clock,
    /// The memory is this process's own (`loopback:`): see [`IN_PROCESS_CLAIMS`].
    in_process: bool,
    heartbeat: Option<Heartbeat>,
    /// Network interrupts (waitStrategy = event only).
    events: Option<Events>,
    /// `device = replay:PATH`: the peers' frames come from a recording.
    player: Option<replay::Player>,
    /// How the waits on network interrupts ended.
    event_waits: EventWaits,
    /// `realTimeFactor`: holds each step back until its time.
    pacer: pace::Pacer,
    /// The wait strategy, with what its adaptive waits learned.
    waiter: Waiter,
    /// How the link failed, if it did: recorded at its close for its peers.
    failed: Option<Ended>,
    /// A redundant device's two rings.
    redundant: Option<rings::Redundant>,
    /// This node's own timing, for its statistics block.
    recorder: Recorder,
    /// The card of a single RFM2g device, asked what it saw when a step
    /// fails (`rings/state.rs`).
    card: Option<rfm_memory::Device>,
    /// The structs the lab's own programs write, read after every step.
    foreign: Vec<ForeignPeer>,
    /// A step that returned early, to be resumed ([`Link::step_within`]).
    resume: Option<step::Resume>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("node", &self.node)
            .field("beating", &self.heartbeat.is_some())
            .finish_non_exhaustive()
    }
}

impl Link {
    /// Validates `config`, opens the device and maps the slots used. Writes nothing.
    pub fn open(mut config: LinkConfig) -> Result<Link, OpenError> {
        config.validate()?;
        let interface = config
            .interface
            .clone()
            .unwrap_or_else(|| Arc::new(interface::attitude(config.node_slot, config.peer_slot)));
        let map = interface
            .map()
            .map_err(|e| open_config("interface", &interface.name, e.to_string()))?;
        let memory::Opened {
            device,
            region,
            player,
            events,
            twin,
        } = memory::open(&mut config, &interface, &map)?;
        let in_process = matches!(device.spec(), rfm_memory::DeviceSpec::Loopback { .. });
        let (card, redundant) = rings::watched(&config, &interface, &map, &region, device, twin);
        let foreign = ForeignPeer::all(&region, &interface, &config)?;
        let (real_time_factor, wait) = (config.settings.real_time_factor, config.settings.wait);
        let mut node = Node::new(
            config,
            interface,
            &map,
            &region,
            new_epoch(),
            Instant::now(),
        )?;
        // The lock serializes the claims of this copy of the library only: where
        // other copies in the process share the memory, Fischer's delay stays.
        if in_process && !rfm_memory::backend::loopback::SHARED_ACROSS_COPIES {
            node.claims_under_one_lock();
        }
        let peer_slots: Vec<u8> = node.peers().iter().map(Peer::slot).collect();
        Ok(Link {
            node,
            clock: clock::Clock::new(),
            in_process,
            heartbeat: None,
            events,
            player,
            event_waits: EventWaits::default(),
            pacer: pace::Pacer::new(real_time_factor),
            waiter: Waiter::new(wait),
            failed: None,
            redundant,
            card,
            foreign,
            resume: None,
            recorder: Recorder::new(peer_slots.into_iter()),
        })
    }

    pub fn config(&self) -> &LinkConfig {
        self.node.config()
    }

    /// This node's session epoch.
    pub fn epoch(&self) -> u64 {
        self.node.epoch()
    }

    /// Every peer, with its newest frame and health.
    pub fn peers(&self) -> &[Peer] {
        self.node.peers()
    }

    pub fn interface(&self) -> &Arc<Interface> {
        self.node.interface()
    }

    /// This node's index in the interface.
    pub fn me(&self) -> usize {
        self.node.me()
    }

    /// Bytes of this node's payload: the frame lent to [`Link::start`] and
    /// [`Link::step`] is `FrameBuf::new(link.payload_len())`.
    pub fn payload_len(&self) -> usize {
        self.node.payload_len()
    }

    /// Takes this node's slot (waiting while a silent holder may still be alive, at
    /// most [`super::ownership::DEAD_AFTER`] plus [`super::CLAIM_SETTLE`]), starts the
    /// heartbeat and publishes `frame`'s payload as the initial frame (index 0) at
    /// `sim_time`. Never waits for the peer.
    pub fn start(&mut self, sim_time: f64, frame: &mut FrameBuf) -> Result<StepReport, StartError> {
        loop {
            let polled = if self.in_process {
                let _claims = IN_PROCESS_CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
                self.node.poll_start(Instant::now(), sim_time, frame)
            } else {
                self.node.poll_start(Instant::now(), sim_time, frame)
            };
            match polled {
                Ok(StartPoll::Pending) => std::thread::sleep(CLAIM_POLL),
                Ok(StartPoll::Announced) => {
                    let publisher = self.recorder.publisher(self.node.own_area().clone());
                    let beater = self.node.beater()?.publishing(publisher);
                    let realtime = self.node.config().realtime.clone();
                    self.heartbeat =
                        Some(Heartbeat::start(beater, realtime).map_err(StartError::Heartbeat)?);
                    if let Some(red) = &mut self.redundant {
                        red.start_watch().map_err(StartError::Heartbeat)?;
                    }
                }
                Ok(StartPoll::Started) => {
                    self.signal(0).map_err(StartError::Events)?;
                    return Ok(self.report());
                }
                Err(e) => {
                    self.heartbeat = None;
                    self.failed.get_or_insert(Ended::FAILED);
                    return Err(e);
                }
            }
        }
    }

    /// Step `k`: publishes `frame`'s payload (filled in by the caller, who owns
    /// it) at `sim_time`, then takes every peer's frame (lockstep: waits for
    /// exactly the matching step of each; free: the newest there is, if any). The
    /// peers' frames are then in [`Link::peers`]; the report says what else the
    /// step saw.
    pub fn step(
        &mut self,
        k: u64,
        sim_time: f64,
        frame: &mut FrameBuf,
    ) -> Result<StepReport, LinkError> {
        match self.step_once::<false>(k, sim_time, frame, Duration::ZERO) {
            Ok(Some(report)) if self.foreign.is_empty() => Ok(report),
            Ok(Some(report)) => match self.take_foreign(k, report.read_at) {
                Ok(()) => Ok(report),
                Err(e) => Err(self.failing(e)),
            },
            Ok(None) => unreachable!("a step that cannot return early waits until it ends"),
            Err(e) => Err(self.failing(e)),
        }
    }

    /// [`Link::step`], returning `None` once `patience` has passed while its
    /// lockstep wait for its peers' frames goes on (an FMI 3.0 master that
    /// allows an early return gets control back): the step is published and
    /// the wait continues at the next call for the same `k` (its `frame` is
    /// not published again), its time counted from its first call, so its
    /// timeouts hold as for one call.
    #[inline(never)]
    pub fn step_within(
        &mut self,
        k: u64,
        sim_time: f64,
        frame: &mut FrameBuf,
        patience: Duration,
    ) -> Result<Option<StepReport>, LinkError> {
        match self.step_once::<true>(k, sim_time, frame, patience) {
            Ok(Some(report)) if self.foreign.is_empty() => Ok(Some(report)),
            Ok(Some(report)) => match self.take_foreign(k, report.read_at) {
                Ok(()) => Ok(Some(report)),
                Err(e) => Err(self.failing(e)),
            },
            Ok(None) => Ok(None),
            Err(e) => Err(self.failing(e)),
        }
    }

    /// The peers a step that returned early still waits for, as a sentence
    /// names them.
    pub fn awaited(&mut self) -> String {
        self.node.exchange().awaited()
    }

    /// The lab's structs after step `k` (read at `now`): from the memory,
    /// their rings told; or, in a replay, as the recorded step read them.
    fn take_foreign(&mut self, k: u64, now: Instant) -> Result<(), LinkError> {
        let interface = self.node.interface();
        if let Some(player) = &mut self.player {
            return ForeignPeer::replay_all(&mut self.foreign, player, interface, k, now);
        }
        ForeignPeer::read_all(&mut self.foreign, &self.node, k, now)?;
        if let Some(red) = &mut self.redundant {
            let timeout = self.node.config().settings.timeout;
            red.tell_foreign(k, &mut self.foreign, interface, now, timeout);
        }
        Ok(())
    }

    /// The foreign nodes' readings, in the order of the interface's.
    pub fn foreign(&self) -> &[ForeignPeer] {
        &self.foreign
    }

    /// Writes foreign node `node`'s struct (`bytes`, whole) for the lab's
    /// programs, when this node's FMU is its writer.
    pub fn write_foreign(&mut self, node: usize, bytes: &[u8]) -> Result<(), LinkError> {
        match self.foreign[node].write(bytes) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.failing(e.into())),
        }
    }

    /// Keeps how the first failure ended the run, for [`Link::close`].
    #[cold]
    fn failing(&mut self, e: LinkError) -> LinkError {
        let e = match &self.card {
            Some(card) => rings::explain(card, e),
            None => e,
        };
        self.failed.get_or_insert(e.ending());
        e
    }

    /// Where the next steps lie in the master's doStep, when it takes several
    /// of this node's steps ([`MasterStep`]); `None` for one.
    pub fn set_master_step(&mut self, step: Option<MasterStep>) {
        self.node.exchange().set_master_step(step);
    }

    /// Steps that ended more than [`super::PACE_SLACK`] after their real-time deadline
    /// (`realTimeFactor` > 0).
    pub fn behind_pace(&self) -> u64 {
        self.pacer.behind()
    }

    /// What the last step (or the start) saw: [`Link::step`] returns it; after a
    /// step that failed, this is what the failed step saw.
    #[inline]
    pub fn report(&self) -> StepReport {
        StepReport {
            read_at: self.node.stepped_at(),
            waited: self.node.last_wait(),
            wall_ns: self.clock.last_wall_ns(),
            replay_divergence: self.player.as_ref().map(replay::Player::divergence),
        }
    }

    /// How this link's waits on network interrupts ended so far.
    pub fn event_waits(&self) -> EventWaits {
        self.event_waits
    }

    /// Whether the link runs over two rings.
    pub fn is_redundant(&self) -> bool {
        self.redundant.is_some()
    }

    /// What the rings did; for a device of one memory, ring A is it and ring
    /// B is never ok.
    pub fn rings(&self) -> RingsReport {
        match &self.redundant {
            Some(red) => red.report(&self.node),
            None => RingsReport::of_one_ring(&self.node),
        }
    }

    /// Withholds this node's stores from `ring` (or stops withholding them):
    /// as if its transmitter into that ring had failed; its peers then take
    /// its frames from the other ring. A fault for tests; without a redundant
    /// device, nothing.
    pub fn withhold(&self, ring: Network, withheld: bool) {
        if let Some(red) = &self.redundant {
            red.withhold(ring, withheld);
        }
    }

    /// After step `k`, on two rings: what they did, told to the master's log.
    #[inline]
    fn tell_rings(&mut self, k: u64) {
        if let Some(red) = &mut self.redundant {
            red.tell(k, &mut self.node);
        }
    }

    /// One line for the master's log at the end: what each ring carried.
    pub fn rings_summary(&self) -> Option<String> {
        Some(self.redundant.as_ref()?.summary(&self.node, &self.foreign))
    }

    /// Stops the heartbeat and marks this node's slot closed, with how it
    /// ended (terminated, or the first failure of its start or steps): a
    /// lockstep peer stops waiting at once and says why, and a later session
    /// may take the slot at once.
    pub fn close(&mut self) -> Result<(), RegionError> {
        if let Some(mut heartbeat) = self.heartbeat.take() {
            heartbeat.stop();
        }
        if let Some(red) = &mut self.redundant {
            red.stop_watch();
        }
        self.node.end(self.failed.unwrap_or(Ended::TERMINATED))
    }

    /// Stops the heartbeat and leaves the slot as a killed process would: held and
    /// not closed, so that others take it only after [`super::ownership::DEAD_AFTER`].
    /// For fault tests and tools that simulate a crash in one process.
    pub fn abandon(mut self) {
        self.heartbeat = None;
        self.node.abandon();
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // Best effort: the memory may already be gone (a device error brought us here).
        let _ = self.close();
    }
}
