//! The handshake: which session of the peer this node takes frames from.
//!
//! Memory keeps what dead sessions wrote, so a frame is taken only from a session
//! that holds the peer slot and is proven live by its heartbeat
//! ([`super::liveness`]): its beat seen moving since this node started watching,
//! and no closed mark. Whether the peer's slot is held by the session a frame
//! is of is the ownership verdict ([`super::ownership::Verdict`]), the one
//! every reader of an area asks, given here of the words alone ([`Life`]):
//! the handshake reads them on the step's path, and nothing more. No acknowledgement is needed, so a peer's initial frame is
//! taken as soon as its heartbeat is seen, in whatever order two masters (or one
//! master with two instances) initialize and step.
//!
//! States and transitions (one table; `e` is the bound session):
//!
//! | state | what is seen | lockstep | free |
//! |---|---|---|---|
//! | Seeking | a frame of the live holder | bind to it, take it | same |
//! | Seeking | a frame of any other session (dead, closed, unproven) | not taken | same |
//! | Bound(e) | a frame of e | take it | take it |
//! | Bound(e) | a frame of another session f | error: restarted | when f is the live holder: bind to f (a restart, counted), take it |
//! | Bound(e) | e closed (while waiting) | error: stopped | link down |
//! | Bound(e) | e's beat silent for `timeout` (≥ [`MIN_SILENCE`]) | error: dead | link down |
//! | Bound(e) | another holder (while waiting) | error: restarted | seek again |
//! | Seeking | the holder seen beating since this node started, or any session not closed when it started, closes | error: stopped (with how it ended) | link down |
//! | Seeking | the holder seen beating since this node started falls silent for `timeout` | error: dead | link down |
//!
//! A self-loop (`nodeSlot == peerSlot`) is bound to its own session from the start.
//! After a bind, frames of e are taken without reading the liveness words again:
//! a session clears its ring when it claims the slot, so a frame of another session
//! seen later can only be newer, never stale.

use std::time::{Duration, Instant};

use super::liveness::MIN_SILENCE;
use super::ownership::block::Words;
use super::ownership::{Held, Life, PeerWatch, Verdict};
use rfm_frames::frame::framed::SyncMode;
use rfm_frames::session::Token;

/// How often a bound link reads the peer's liveness words: a tenth of a heartbeat
/// period, so that a beat is seen within a millisecond of happening while the
/// per-step path reads them about once per thousand microsecond steps.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(1);

/// Which session of the peer's slot this node is bound to (its frames are
/// taken as the peer's only while bound to that session).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Binding {
    Seeking,
    Bound {
        epoch: u64,
    },
    /// The peer is this node (a self-loop: the attitude preset's `nodeSlot ==
    /// peerSlot`): bound to its own session from the start, and never judged
    /// by the slot's liveness words, which are its own.
    Itself {
        epoch: u64,
    },
}

/// Whether a frame may be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Take it; `bound_now` when this frame bound a new session (check it is compatible).
    Take { bound_now: bool },
    /// Its session is not the live holder of the peer slot.
    NotLive,
    /// Lockstep only: the frame belongs to a session other than the bound one.
    Restarted { old: u64 },
}

/// Why a bound lockstep wait cannot succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    Stopped,
    Dead { silent: Duration },
    Restarted { old: u64, owner: Token },
}

/// One node's view of its peer's session.
#[derive(Debug, Clone)]
pub(crate) struct Handshake {
    state: Binding,
    watch: PeerWatch,
    watched_at: Instant,
    mode: SyncMode,
    /// How long a silent beat means death: `timeout`, at least [`MIN_SILENCE`].
    silence: Duration,
    /// The holder last seen beating since this node began watching, bound or not:
    /// when it closes or falls silent, the wait for its frames is over.
    seen_beating: Option<Token>,
    /// The words when this node began watching: a session that closes and was
    /// not closed then ran since (the peer of this run that failed before this
    /// node saw it beat), and its close ends the wait at once.
    first: Words,
}

impl Handshake {
    /// Starts watching the peer slot, whose words are `words` at `now`. `own` is this
    /// node's epoch when the peer is itself (a self-loop).
    pub(crate) fn new(
        words: Words,
        now: Instant,
        mode: SyncMode,
        timeout: Duration,
        own: Option<u64>,
    ) -> Handshake {
        Handshake {
            state: own.map_or(Binding::Seeking, |epoch| Binding::Itself { epoch }),
            watch: PeerWatch::new(words, now),
            watched_at: now,
            mode,
            silence: timeout.max(MIN_SILENCE),
            seen_beating: None,
            first: words,
        }
    }

    /// Watches the peer slot again from `now` (its words `words`), after this
    /// node's session became `own_epoch`: a self-loop stays one, of the new session.
    pub(crate) fn rewatched(&self, words: Words, now: Instant, own_epoch: u64) -> Handshake {
        let own = self.is_itself().then_some(own_epoch);
        // `silence` is the timeout already raised to MIN_SILENCE: `new` keeps it.
        Handshake::new(words, now, self.mode, self.silence, own)
    }

    /// Whether the peer is this node.
    pub(crate) fn is_itself(&self) -> bool {
        matches!(self.state, Binding::Itself { .. })
    }

    /// The session frames are taken from, once there is one.
    pub(crate) fn bound(&self) -> Option<u64> {
        match self.state {
            Binding::Seeking => None,
            Binding::Bound { epoch } | Binding::Itself { epoch } => Some(epoch),
        }
    }

    /// Whether the liveness words should be read again at `now`.
    pub(crate) fn watch_due(&self, now: Instant) -> bool {
        match self.state {
            Binding::Seeking => true,
            Binding::Bound { .. } => {
                now.saturating_duration_since(self.watched_at) >= WATCH_INTERVAL
            }
            Binding::Itself { .. } => false,
        }
    }

    /// Whether a frame of session `epoch` is judged on fresh liveness words
    /// before [`Handshake::admit`]: it is not the bound session's, and the
    /// words are not this node's own.
    pub(crate) fn judges(&self, epoch: u64) -> bool {
        match self.state {
            Binding::Seeking => true,
            Binding::Bound { epoch: e } => e != epoch,
            Binding::Itself { .. } => false,
        }
    }

    /// Records the peer slot's words read at `now`.
    pub(crate) fn observe(&mut self, words: Words, now: Instant) -> Life {
        self.watched_at = now;
        let life = self.watch.observe(words, now);
        if let Life::Beating { owner, .. } = life {
            self.seen_beating = Some(owner);
        }
        life
    }

    /// Whether session `session` ran since this node began watching: seen
    /// beating, claimed since, or closed since (it was not closed then).
    pub(crate) fn of_this_run(&self, session: Token) -> bool {
        match self.verdict(session) {
            Verdict::Its(Life::Beating { .. }) => true,
            Verdict::Its(Life::Unproven { .. }) if !self.held_at_first(session) => true,
            Verdict::Its(Life::Closed { .. }) if self.closed_since(session) => true,
            _ => Verdict::of(self.seen_beating, session).is_its(),
        }
    }

    /// Whether `owner` held the slot when this node began watching.
    fn held_at_first(&self, owner: Token) -> bool {
        Verdict::of(self.first.owner, owner).is_its()
    }

    /// Whether `owner`'s closed mark was not there when this node began watching.
    fn closed_since(&self, owner: Token) -> bool {
        !self.held_at_first(owner) || !self.first.is_closed()
    }

    /// The verdict of the last reading.
    pub(crate) fn life(&self) -> Life {
        self.watch.life()
    }

    /// The last reading judged for session `session`.
    pub(crate) fn verdict(&self, session: impl Into<Option<Token>>) -> Verdict<Life> {
        Verdict::of(self.life(), session)
    }

    /// The last reading judged for the session whose token is that of the
    /// seen beating one (if one was).
    fn seen_beating_verdict(&self) -> Verdict<Life> {
        self.verdict(self.seen_beating)
    }

    /// Decides on a frame of session `epoch` found at `now`. Unless it is the bound
    /// session's, the caller must have observed the words at `now` first.
    pub(crate) fn admit(&mut self, epoch: u64, now: Instant) -> Admit {
        match self.state {
            Binding::Bound { epoch: e } | Binding::Itself { epoch: e } if e == epoch => {
                Admit::Take { bound_now: false }
            }
            Binding::Bound { epoch: e } | Binding::Itself { epoch: e }
                if self.mode == SyncMode::Lockstep =>
            {
                Admit::Restarted { old: e }
            }
            // This node's slot holds only its own session's frames.
            Binding::Itself { .. } => Admit::NotLive,
            _ if self.verdict(Token::of(epoch)).is_live(now, self.silence) => {
                self.state = Binding::Bound { epoch };
                Admit::Take { bound_now: true }
            }
            _ => Admit::NotLive,
        }
    }

    /// What the last reading says about the bound session, if anything is wrong.
    pub(crate) fn fault(&self, now: Instant) -> Option<Fault> {
        let epoch = match self.state {
            Binding::Bound { epoch } => epoch,
            Binding::Itself { .. } => return None,
            Binding::Seeking => return self.fault_unbound(now),
        };
        match self.verdict(Token::of(epoch)) {
            Verdict::Its(Life::Closed { .. }) => Some(Fault::Stopped),
            Verdict::Free => None,
            Verdict::Other(life) => life
                .owner()
                .map(|owner| Fault::Restarted { old: epoch, owner }),
            Verdict::Its(life) => {
                let silent = life.silent_for(now);
                (silent >= self.silence).then_some(Fault::Dead { silent })
            }
        }
    }

    /// Not bound yet: a holder seen beating since this node started, whose
    /// frame was not taken, that closes or falls silent will not send one.
    fn fault_unbound(&self, now: Instant) -> Option<Fault> {
        match (self.life(), self.seen_beating_verdict()) {
            (Life::Closed { .. }, Verdict::Its(_)) => Some(Fault::Stopped),
            (Life::Closed { owner }, _) if self.closed_since(owner) => Some(Fault::Stopped),
            (life @ Life::Beating { .. }, Verdict::Its(_)) => {
                let silent = life.silent_for(now);
                (silent >= self.silence).then_some(Fault::Dead { silent })
            }
            _ => None,
        }
    }

    /// The bound session is running (free mode's `link.ok`); this node always is.
    pub(crate) fn alive(&self, now: Instant) -> bool {
        match self.state {
            Binding::Seeking => false,
            Binding::Bound { epoch } => self.verdict(Token::of(epoch)).is_live(now, self.silence),
            Binding::Itself { .. } => true,
        }
    }
}
