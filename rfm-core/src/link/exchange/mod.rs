//! Reading the peers' frames: the lockstep wait for exactly the frame a step
//! needs (with the diagnosis when it does not come), the free-mode read of the
//! newest, and the frames a replay hands in. The node publishes and holds the
//! slot; this is the other half of a step.

use rfm_frames::slot::WaitPoll;
use std::task::Poll;
use std::time::{Duration, Instant};

mod late;

use super::compat::{self, Expected};
use super::handshake::{Admit, Fault};
use super::lookout::Lookout;
use super::peer::Peer;
use super::LinkError;
use rfm_frames::frame::Layout;
use rfm_frames::slot::{ReadError, StepPoll};
use rfm_memory::RegionError;

/// The lockstep wait of one step.
#[derive(Debug, Clone, Copy)]
pub(super) struct StepWait {
    step: u64,
    start: Instant,
    /// Warnings given so far that a live peer is late (one per [`LATE_WARNING`]).
    warned: u32,
}

/// How often a lockstep wait for a live but late peer tells the master's logger
/// that it still waits.
pub const LATE_WARNING: Duration = Duration::from_secs(5);

/// Every peer of one node, and the state of the step that reads them.
pub struct Exchange {
    /// The node's configuration and interface, which its peers must agree with.
    expected: Expected,
    peers: Vec<Peer>,
    /// The memory and this file's map of it: where a peer never seen may be
    /// found written from another file.
    lookout: Lookout,
    wait: Option<StepWait>,
    last_wait: Duration,
    stepped_at: Instant,
    /// Where the step being taken lies in the master's doStep, when that
    /// takes several of this node's steps.
    master_step: Option<MasterStep>,
    /// Warnings given since the start that a live peer is late.
    lates: u32,
}

/// A step of this node taken inside a master's step that takes several
/// (a master stepping every FMU by one step longer than this node's period).
///
/// A master that steps its FMUs one after the other in one thread cannot let
/// a peer publish while this node's doStep runs: a lockstep wait at a later
/// step of the doStep for a frame the peer has not published can never be
/// met. Such a wait for a peer whose heartbeat beats ends after `timeout`, not
/// `idleTimeout` (a paused master is waited for at the doStep's first step),
/// and says what would work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MasterStep {
    /// This step's place in the doStep: 0 for the first.
    pub index: u64,
    /// How many of this node's steps the doStep takes.
    pub steps: u64,
    /// The master's communicationStepSize, in seconds.
    pub size: f64,
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange")
            .field("peers", &self.peers)
            .finish_non_exhaustive()
    }
}

impl Exchange {
    pub(crate) fn new(
        expected: Expected,
        peers: Vec<Peer>,
        lookout: Lookout,
        now: Instant,
    ) -> Exchange {
        Exchange {
            expected,
            peers,
            lookout,
            wait: None,
            last_wait: Duration::ZERO,
            stepped_at: now,
            master_step: None,
            lates: 0,
        }
    }

    /// Where the next steps lie in the master's doStep ([`MasterStep`]).
    pub fn set_master_step(&mut self, step: Option<MasterStep>) {
        self.master_step = step;
    }

    pub fn peers(&self) -> &[Peer] {
        &self.peers
    }

    pub(crate) fn peers_mut(&mut self) -> &mut [Peer] {
        &mut self.peers
    }

    /// What this node is: its configuration and interface.
    pub(crate) fn expected(&self) -> &Expected {
        &self.expected
    }

    pub fn last_wait(&self) -> Duration {
        self.last_wait
    }

    /// Warnings given since the start that a live peer is late.
    pub fn lates(&self) -> u32 {
        self.lates
    }

    pub fn stepped_at(&self) -> Instant {
        self.stepped_at
    }

    /// Starts watching every peer again from `now` (this node, of session
    /// `own_epoch`, has just taken its slot): what they did before proves nothing.
    pub(crate) fn rewatch(&mut self, own_epoch: u64, now: Instant) -> Result<(), RegionError> {
        for peer in &mut self.peers {
            peer.rewatch(own_epoch, now)?;
        }
        Ok(())
    }

    /// Replay: takes the recorded `frame` (header and payload) as peer `i`'s
    /// frame of this step, as [`Exchange::poll_lockstep`] takes one from memory.
    pub(crate) fn take_recorded(
        &mut self,
        i: usize,
        frame: &[u8],
        now: Instant,
    ) -> Result<(), rfm_frames::frame::FrameError> {
        let scratch = self.peers[i].observer().scratch();
        if scratch.len() != frame.len() {
            return Err(rfm_frames::frame::FrameError::BadLength {
                found: frame
                    .len()
                    .saturating_sub(rfm_frames::frame::framed::HEADER_SIZE),
                expected: scratch.len() - rfm_frames::frame::framed::HEADER_SIZE,
            });
        }
        scratch.bytes_mut().copy_from_slice(frame);
        let h = scratch.check()?;
        self.peers[i].observer().accept(h, Some(h.epoch), now);
        self.stepped_at = now;
        self.last_wait = Duration::ZERO;
        Ok(())
    }

    /// Lockstep step `k`, one poll at `now`: exactly the frame the step needs of
    /// every peer it waits for ([`rfm_interface::rates`]), once it is there
    /// and its session is live; then the newest frame of every other peer.
    pub fn poll_lockstep(&mut self, k: u64, now: Instant) -> Result<Poll<()>, LinkError> {
        let wait = self.step_wait(k, now);
        let mut all = true;
        for i in 0..self.peers.len() {
            let peer = &self.peers[i];
            if peer.got() {
                continue;
            }
            if let Some(need) = peer.need() {
                self.poll_peer(i, k, need, now)?;
                all &= self.peers[i].got();
            }
        }
        if !all {
            return self.keep_waiting(k, wait, now);
        }
        self.wait = None;
        self.last_wait = now.saturating_duration_since(wait.start);
        for i in 0..self.peers.len() {
            if !self.peers[i].waited_for() {
                self.free_read_framed(i, now)?;
            }
        }
        Ok(Poll::Ready(()))
    }

    /// The wait of step `k`: the one under way, or a new one, for which every
    /// peer begins the step.
    #[inline]
    fn step_wait(&mut self, k: u64, now: Instant) -> StepWait {
        match self.wait {
            Some(w) if w.step == k => w,
            _ => {
                self.stepped_at = now;
                let lag = self.expected.config.settings.lag;
                for peer in &mut self.peers {
                    peer.begin_step(k, lag);
                }
                StepWait {
                    step: k,
                    start: now,
                    warned: 0,
                }
            }
        }
    }

    /// Step `k` still lacks a frame: a timeout once a peer waited for is past
    /// its limit; else pending, with a warning in the log each
    /// `LATE_WARNING` it waits.
    fn keep_waiting(
        &mut self,
        k: u64,
        mut wait: StepWait,
        now: Instant,
    ) -> Result<Poll<()>, LinkError> {
        let waited = now.saturating_duration_since(wait.start);
        let c = &self.expected.config;
        for i in 0..self.peers.len() {
            let peer = &self.peers[i];
            if peer.got() || !peer.waited_for() {
                continue;
            }
            // Late is not dead: a bound peer is waited for up to idleTimeout (its
            // heartbeat's silence, checked on every poll, finds it dead within
            // `timeout`); corrupt frames, and a peer not bound yet, are not late.
            let later = self.master_step.filter(|m| m.index > 0);
            let limit = match (peer.bound(), peer.saw_bad_frame()) {
                (Some(_), false) if later.is_some() => {
                    c.settings.timeout.min(c.settings.idle_timeout)
                }
                (Some(_), false) => c.settings.idle_timeout,
                (Some(_), true) => c.settings.timeout,
                (None, _) => c.settings.startup_timeout,
            };
            if waited >= limit {
                self.wait = None;
                return Err(self.timeout(i, &wait, waited, now));
            }
        }
        if waited >= LATE_WARNING * (wait.warned + 1) {
            wait.warned += 1;
            self.lates = self.lates.saturating_add(1);
            self.warn_late(k, waited);
        }
        self.wait = Some(wait);
        Ok(Poll::Pending)
    }

    /// One poll of peer `i` for frame `need` of step `k`: the frame taken, or
    /// what the peer's state says when it is not there yet.
    fn poll_peer(&mut self, i: usize, k: u64, need: u64, now: Instant) -> Result<(), LinkError> {
        if self.try_take(i, k, need, now)? {
            return Ok(());
        }
        self.check_fault(i, k, now)?;
        if self.peers[i].bound().is_none() {
            self.check_unseen(i, now)?;
        }
        Ok(())
    }

    /// Reads peer `i`'s entry for frame `need` and takes the frame if it is
    /// there and of the peer's live session: whether it was taken.
    #[inline]
    fn try_take(&mut self, i: usize, k: u64, need: u64, now: Instant) -> Result<bool, LinkError> {
        let peer = &mut self.peers[i];
        rfm_memory::counts::poll();
        peer.watch(now)?;
        let began = rfm_memory::counts::try_began();
        // Until a peer's frame was taken once, a try reads its entry: what a
        // node built from another file has where this map puts its head word
        // tells nothing, its entries name it (compat).
        let unbound = peer.bound().is_none();
        let observer = peer.observer();
        let poll = if unbound {
            WaitPoll::Entry
        } else {
            observer.poll()
        };
        let polled = observer.poll_step(need, poll);
        if !matches!(polled, Ok(StepPoll::Ready(_))) {
            rfm_memory::counts::try_found_nothing(began);
        }
        match polled {
            Ok(StepPoll::Ready(h)) => match peer.admit(h.epoch, now) {
                Admit::Take { bound_now } => {
                    if bound_now || h.fingerprint != self.expected.fingerprint {
                        compat::check_frame(&self.expected, &self.peers[i], &h)?;
                    }
                    self.peers[i].take(h, now);
                    return Ok(true);
                }
                Admit::NotLive => peer.mark_unproven(h.epoch),
                Admit::Restarted { old } => {
                    return Err(self.restarted(i, k, old, format!("{:#018x}", h.epoch)))
                }
            },
            // The entry holds a later frame of the bound session: the one
            // needed was overwritten. (One of another session is what an
            // earlier run left, where a bridge has not yet written the
            // bound session's ring.)
            Ok(StepPoll::Overwritten { found, epoch }) if peer.bound() == Some(epoch) => {
                return Err(LinkError::Overwritten {
                    device: self.expected.config.settings.device.to_string(),
                    peer: peer.name(&self.expected.interface).to_owned(),
                    depth: peer.observed().geometry().depth,
                    step: k,
                    need,
                    found,
                })
            }
            Ok(StepPoll::Overwritten { .. } | StepPoll::NotYet) => {}
            Err(ReadError::Region(e)) => return Err(e.into()),
            Err(err) => {
                compat::check_readable(&self.expected, &self.peers[i], &err)?;
                self.peers[i].count_bad_once(&err);
            }
        }
        Ok(false)
    }

    /// Peer `i` stopped, died or restarted (its heartbeat and owner word say):
    /// the error of step `k` that names it.
    fn check_fault(&mut self, i: usize, k: u64, now: Instant) -> Result<(), LinkError> {
        let peer = &self.peers[i];
        let name = || peer.name(&self.expected.interface).to_owned();
        let fault = peer.fault(now);
        if matches!(fault, Some(Fault::Stopped | Fault::Dead { .. })) && peer.bound().is_none() {
            compat::check_described(&self.expected, peer)?;
        }
        match fault {
            Some(Fault::Stopped) => Err(LinkError::PeerStopped {
                device: self.expected.config.settings.device.to_string(),
                peer: name(),
                peer_slot: peer.slot(),
                step: k,
                ended: peer.ended()?.map(|e| e.describe(&self.expected.interface)),
            }),
            Some(Fault::Dead { silent }) => Err(LinkError::PeerDead {
                device: self.expected.config.settings.device.to_string(),
                peer: name(),
                peer_slot: peer.slot(),
                step: k,
                silent,
                also: String::new(),
            }),
            Some(Fault::Restarted { old, owner }) => {
                let new = peer.session_of(owner);
                Err(self.restarted(i, k, old, new))
            }
            None => Ok(()),
        }
    }

    /// Peer `i` was never seen: its area here may hold another layout, or the
    /// peer may be written from another file, elsewhere (what its area holds
    /// here is then not its frames either).
    fn check_unseen(&mut self, i: usize, now: Instant) -> Result<(), LinkError> {
        if self.peers[i].holds_nothing() {
            compat::check_layout(&self.expected, &self.peers[i], Layout::Framed)?;
        }
        let node = self.peers[i].node();
        if let Some(found) = self.lookout.look_for(&self.expected.interface, node, now)? {
            return Err(compat::misplaced(&self.expected, &self.peers[i], &found));
        }
        Ok(())
    }

    /// Free mode at `now`: each peer's newest frame of its live session, if any.
    /// Never waits.
    pub fn free_read(&mut self, now: Instant) -> Result<(), LinkError> {
        self.last_wait = Duration::ZERO;
        self.stepped_at = now;
        for i in 0..self.peers.len() {
            match self.expected.config.settings.layout {
                Layout::Framed => self.free_read_framed(i, now)?,
                Layout::Seed => {
                    // The words too: a peer's layout is judged only while its
                    // holder may be writing (compat::check_layout).
                    self.peers[i].watch(now)?;
                    if let Err(err) = self.peers[i].read_seed(now) {
                        self.no_frame(i, err, Layout::Seed)?;
                    }
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn free_read_framed(&mut self, i: usize, now: Instant) -> Result<(), LinkError> {
        let peer = &mut self.peers[i];
        peer.watch(now)?;
        peer.set_fresh(false);
        match peer.read_newest(now) {
            Ok(Some((header, bound_now))) => {
                if bound_now || header.fingerprint != self.expected.fingerprint {
                    compat::check_frame(&self.expected, &self.peers[i], &header)?;
                }
                let peer = &mut self.peers[i];
                let fresh = peer.observer().accept(header, Some(header.epoch), now);
                peer.set_fresh(fresh);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(err) => self.no_frame(i, err, Layout::Framed),
        }
    }

    /// A free-mode read of `layout` that gave no frame: a peer of another format
    /// version, interface or layout is an error; a complete but corrupt frame is
    /// counted.
    fn no_frame(&mut self, i: usize, err: ReadError, layout: Layout) -> Result<(), LinkError> {
        match err {
            ReadError::Region(e) => Err(e.into()),
            ReadError::Unreadable { rejections, .. } => {
                compat::check_readable(&self.expected, &self.peers[i], &err)?;
                compat::check_layout(&self.expected, &self.peers[i], layout)?;
                if rejections.saw_bad_frame() {
                    self.peers[i].observer().observe_bad();
                }
                Ok(())
            }
            ReadError::Empty => compat::check_layout(&self.expected, &self.peers[i], layout),
        }
    }
}
