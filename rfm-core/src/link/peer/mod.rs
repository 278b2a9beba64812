//! One peer as a node sees it: its area observed ([`Observer`]: the newest frame
//! taken, kept in place because outputs are read from it, and its health), and
//! the session its frames are taken from (the handshake).

use rfm_frames::slot::WaitPoll;
use std::time::{Duration, Instant};

use super::handshake::{Admit, Fault, Handshake};
use super::liveness::MIN_SILENCE;
use super::observer::Observer;
use super::ownership::{Held, Life, Verdict};
use super::{Late, LeftBy, LinkConfig};
use rfm_frames::area::Area;
use rfm_frames::frame::framed::Header;
use rfm_frames::session::Token;
use rfm_frames::slot::ReadError;
use rfm_interface::descriptor::Descriptor;
use rfm_interface::Interface;
use rfm_memory::{Region, RegionError};

mod rate;

pub(crate) use rate::Rate;

/// The article's packets carry no session and no heartbeat: a seed peer is live
/// while its packet id moves. The id found when this node started proves nothing.
#[derive(Debug, Clone, Copy, Default)]
struct SeedWatch {
    baseline: Option<u64>,
    moved: Option<(u64, Instant)>,
}

/// One peer's state in this node.
pub struct Peer {
    /// Its index in the interface's nodes.
    node: usize,
    slot: u8,
    observed: Observer,
    handshake: Handshake,
    seed: SeedWatch,
    /// This node waits for the peer's frames (lockstep), or takes the newest.
    rate: Rate,
    /// What this lockstep step has of the peer.
    step: StepState,
}

/// What one lockstep step has of a peer: new with every step
/// ([`Peer::begin_step`]).
#[derive(Debug, Clone, Copy, Default)]
struct StepState {
    /// The frame this step needs (`None`: the newest is taken).
    need: Option<u64>,
    /// This step's frame was taken.
    got: bool,
    /// This step took a frame not taken before (its latency is the time
    /// since its store: a slow peer's frame held over steps is not).
    fresh: bool,
    /// A complete frame of the step was there, but of a session not proven live.
    unproven: Option<u64>,
    /// This step's wait saw a corrupt frame (counted once per step).
    bad_seen: bool,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("slot", &self.slot)
            .field("bound", &self.handshake.bound())
            .field("latest", &self.observed.latest())
            .finish_non_exhaustive()
    }
}

impl Peer {
    pub(crate) fn new(
        config: &LinkConfig,
        region: &Region,
        node: usize,
        geometry: &Area,
        rate: Rate,
        own_epoch: Option<u64>,
        now: Instant,
    ) -> Result<Peer, RegionError> {
        // On a redundant device each peer's frames come from either ring,
        // whichever holds them: its window switches alone.
        let mut observed = Observer::new(
            rfm_frames::area::window(region, geometry)?.own_source(),
            geometry,
            config.settings.layout,
        )?;
        observed.set_poll(config.card.poll.unwrap_or(WaitPoll::Head));
        let handshake = Handshake::new(
            observed.words()?,
            now,
            rate.mode(),
            config.settings.timeout,
            own_epoch,
        );
        observed.expect(handshake.life().owner());
        Ok(Peer {
            node,
            slot: geometry.slot,
            handshake,
            observed,
            seed: SeedWatch::default(),
            rate,
            step: StepState::default(),
        })
    }

    /// Starts watching again from `now`: what the peer did before proves nothing.
    pub(crate) fn rewatch(&mut self, own_epoch: u64, now: Instant) -> Result<(), RegionError> {
        self.handshake = self
            .handshake
            .rewatched(self.observed.words()?, now, own_epoch);
        self.observed.expect(self.handshake.life().owner());
        self.seed.baseline = self.observed.seed_packet();
        Ok(())
    }

    /// The interface index of the peer node.
    pub fn node(&self) -> usize {
        self.node
    }

    pub fn slot(&self) -> u8 {
        self.slot
    }

    /// The token of the session last seen holding the peer's slot, if any.
    pub(crate) fn session(&self) -> Option<Token> {
        self.handshake.life().owner()
    }

    /// The peer's node name, for messages.
    pub(crate) fn name<'i>(&self, interface: &'i Interface) -> &'i str {
        &interface.nodes[self.node].name
    }

    /// Whether this node waits for the peer's frames (lockstep) rather than
    /// taking its newest.
    #[inline]
    pub fn waited_for(&self) -> bool {
        matches!(self.rate, Rate::Lockstep(_))
    }

    /// Lockstep: the frame this step needs, as [`Peer::begin_step`] worked it
    /// out (`None` for a peer whose newest frame is taken).
    #[inline]
    pub(crate) fn need(&self) -> Option<u64> {
        self.step.need
    }

    /// Lockstep: the frame index step `k` takes with lag `lag` (`None` for a
    /// peer whose newest frame is taken).
    #[inline]
    pub(crate) fn frame_needed(&self, k: u64, lag: u8) -> Option<u64> {
        match self.rate {
            Rate::Lockstep(ratio) => Some(ratio.frame_needed(k, lag)),
            Rate::Newest => None,
        }
    }

    /// The peer's area as observed: the newest frame taken, its payload, the
    /// health of the link to it.
    #[inline]
    pub fn observed(&self) -> &Observer {
        &self.observed
    }

    /// Replay and free mode: the observer, to read into and take from.
    pub(crate) fn observer(&mut self) -> &mut Observer {
        &mut self.observed
    }

    /// The peer session frames are taken from (framed layout), once there is one.
    pub fn bound(&self) -> Option<u64> {
        self.handshake.bound()
    }

    /// Out of line: [`Peer::watch`] runs every step and calls this about once
    /// a millisecond; inlined into it, it made the step's call of `watch` one
    /// call more (26 instructions a step of the FMU's own, by callgrind).
    #[inline(never)]
    fn observe(&mut self, now: Instant) -> Result<(), RegionError> {
        rfm_memory::counts::watch();
        let words = self.observed.words()?;
        self.handshake.observe(words, now);
        self.observed.expect(self.handshake.life().owner());
        Ok(())
    }

    /// Free mode, seed layout: takes the article's packet if its id moved.
    pub(crate) fn read_seed(&mut self, now: Instant) -> Result<(), ReadError> {
        let h = self.observed.read_seed()?;
        let id = h.step;
        let moved = match self.seed.moved {
            Some((last, _)) => id != last,
            None => Some(id) != self.seed.baseline,
        };
        if moved {
            self.seed.moved = Some((id, now));
            self.observed.accept(h, None, now);
        }
        Ok(())
    }

    /// Free mode's `link.ok` after a read at `now`: the peer session frames are
    /// taken from is running (heartbeat; seed layout: its packet id moved within
    /// `timeout`).
    pub fn alive(&self, now: Instant, timeout: Duration) -> bool {
        if self.observed.is_seed() && !self.handshake.is_itself() {
            self.seed
                .moved
                .is_some_and(|(_, t)| now.saturating_duration_since(t) < timeout.max(MIN_SILENCE))
        } else {
            self.handshake.alive(now)
        }
    }

    /// A new lockstep step `k` at lag `lag`: nothing of it taken or seen yet,
    /// and the frame it needs worked out once for all its polls.
    #[inline]
    pub(crate) fn begin_step(&mut self, k: u64, lag: u8) {
        self.step = StepState {
            need: self.frame_needed(k, lag),
            ..StepState::default()
        };
    }

    /// This step's wait saw a corrupt frame of the peer.
    pub(crate) fn saw_bad_frame(&self) -> bool {
        self.step.bad_seen
    }

    /// Lockstep: this step's frame was taken.
    #[inline]
    pub(crate) fn got(&self) -> bool {
        self.step.got
    }

    /// Reads the peer's liveness words when the handshake is due to look again.
    #[inline]
    pub(crate) fn watch(&mut self, now: Instant) -> Result<(), RegionError> {
        if self.handshake.watch_due(now) {
            self.observe(now)?;
        }
        Ok(())
    }

    /// Whether a frame of session `epoch` may be taken now.
    #[inline]
    pub(crate) fn admit(&mut self, epoch: u64, now: Instant) -> Admit {
        self.handshake.admit(epoch, now)
    }

    /// A complete frame of this step was there, of session `epoch`, which is
    /// not proven live (the timeout's diagnosis names it).
    pub(crate) fn mark_unproven(&mut self, epoch: u64) {
        self.step.unproven = Some(epoch);
    }

    /// Takes the frame read into the scratch frame (header `h`) as this step's.
    #[inline]
    pub(crate) fn take(&mut self, h: Header, now: Instant) {
        self.step.fresh = self.observed.accept_chosen(h, Some(h.epoch), now);
        self.step.got = true;
    }

    /// Whether this step's read took a frame not taken before.
    #[inline]
    pub(crate) fn fresh(&self) -> bool {
        self.step.fresh
    }

    /// Says what a free read (of the newest frame) took.
    #[inline]
    pub(crate) fn set_fresh(&mut self, fresh: bool) {
        self.step.fresh = fresh;
    }

    /// Counts a corrupt frame that `err` reports, once per lockstep step.
    pub(crate) fn count_bad_once(&mut self, err: &ReadError) {
        if let ReadError::Unreadable { rejections, .. } = err {
            if rejections.saw_bad_frame() && !self.step.bad_seen {
                self.step.bad_seen = true;
                self.observed.observe_bad();
            }
        }
    }

    /// Counts a restart of the peer.
    pub(crate) fn count_restart(&mut self) {
        self.observed.count_restart();
    }

    /// What the liveness words say is wrong with the peer, if anything (a
    /// self-loop is never faulted).
    pub(crate) fn fault(&self, now: Instant) -> Option<Fault> {
        self.handshake.fault(now)
    }

    /// Whether the peer's area may be being written now: its holder is of this
    /// run and not closed, or it holds no liveness words (an article program's).
    pub(crate) fn may_be_writing(&self) -> bool {
        match self.handshake.life() {
            Life::Absent => true,
            Life::Closed { .. } => false,
            life => life
                .owner()
                .is_some_and(|owner| self.handshake.of_this_run(owner)),
        }
    }

    /// How the session holding the peer's slot ended, if it recorded it.
    pub(crate) fn ended(&self) -> Result<Option<super::ownership::ending::Ended>, RegionError> {
        let owner = self.observed.words()?.owner;
        super::ownership::block::ended(self.observed.area(), owner)
    }

    /// An unbound peer whose slot holds a session that closed before this
    /// node started (not one of this run): what the wait's warning says of
    /// it, with how that session ended, if it recorded it.
    pub(crate) fn closed_before(&self, interface: &Interface) -> Option<String> {
        let Life::Closed { owner } = self.handshake.life() else {
            return None;
        };
        if self.handshake.of_this_run(owner) {
            return None;
        }
        let how = match self.ended() {
            Ok(Some(ended)) => format!(" ({})", ended.describe(interface)),
            _ => String::new(),
        };
        Some(format!(
            "whose last session closed before this node started{how}"
        ))
    }

    /// The descriptor of the peer's slot's holder, if its session ran since
    /// this node started (a live one, or one of this run that has stopped):
    /// what an earlier run left there says nothing of the peer.
    pub(crate) fn live_descriptor(&self) -> Option<Descriptor> {
        let d = super::ownership::holder_descriptor(self.observed.area()).ok()??;
        d.session
            .is_some_and(|s| self.handshake.of_this_run(s))
            .then_some(d)
    }

    /// The session that now holds the peer's slot under token `owner`: its full
    /// epoch when its newest frame is there, else its token.
    pub(crate) fn session_of(&self, owner: Token) -> String {
        match self.observed.peek_latest() {
            Ok(h) if owner.is_of(h.epoch) => format!("{:#018x}", h.epoch),
            _ => format!("token {owner}"),
        }
    }

    /// Whether the peer's ring holds no frame at all (read into the scratch
    /// frame, which the next read overwrites anyway: this runs on every poll
    /// before a peer is bound, and a buffer of its own cost an allocation and
    /// the CRC table lookup, a lock, each time).
    pub(crate) fn holds_nothing(&mut self) -> bool {
        matches!(self.observed.read_latest(), Err(ReadError::Empty))
    }

    /// Free mode, framed layout: the newest frame, if its session is live, with
    /// whether that session is the one frames are taken from as of now.
    #[inline]
    pub(crate) fn read_newest(
        &mut self,
        now: Instant,
    ) -> Result<Option<(Header, bool)>, ReadError> {
        let h = self.observed.read_latest()?;
        if self.handshake.judges(h.epoch) {
            // Another session than the bound one: judge it on fresh words.
            self.observe(now).map_err(ReadError::Region)?;
        }
        Ok(match self.handshake.admit(h.epoch, now) {
            Admit::Take { bound_now } => Some((h, bound_now)),
            Admit::NotLive | Admit::Restarted { .. } => None,
        })
    }

    /// Why a lockstep step waited out its timeout for this peer;
    /// `interface` and `fingerprint` are this node's.
    pub(crate) fn why_late(&self, now: Instant, interface: &Interface, fingerprint: u64) -> Late {
        let silent = self.handshake.life().silent_for(now);
        if self.step.bad_seen {
            Late::Corrupt
        } else if let Some(epoch) = self.step.unproven {
            let holder = match self.handshake.verdict(Token::of(epoch)) {
                Verdict::Its(Life::Closed { .. }) | Verdict::Other(Life::Closed { .. }) => {
                    LeftBy::Closed
                }
                Verdict::Other(Life::Beating { owner, .. }) => LeftBy::Other(owner),
                _ => LeftBy::Still,
            };
            Late::LeftOver { epoch, holder }
        } else if self.bound().is_none() {
            Late::Nothing {
                node: interface.nodes[self.node].name.clone(),
                interface: interface.name.clone(),
                fingerprint,
            }
        } else if silent >= MIN_SILENCE {
            // The step's timeout ran out just before the silence reached it.
            Late::Silent { silent }
        } else {
            Late::Paused
        }
    }
}
