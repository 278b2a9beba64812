//! Liveness: whether the session holding a slot still runs.
//!
//! Memory keeps whatever dead sessions wrote, so a frame proves nothing about its
//! writer. Every slot, in both layouts, therefore holds a liveness block whose
//! words ([`super::block`], where each is defined) only the slot's holder (and,
//! for another host's session, a bridge) writes. A slot whose owner word equals
//! its mirrored word is held from another host: its words and frames come from
//! a bridge (`rfm-bridge`), which never announces it as its own. A node that
//! claims the slot later writes a new owner word and so is local again without
//! clearing the mark.
//!
//! The heartbeat runs in a thread of its own ([`Heartbeat`]), so it beats while
//! a master sits between steps, in a lockstep wait, or in another instance's
//! step in the same thread: liveness never depends on `fmi2DoStep`.
//!
//! Readers judge liveness on their own monotonic clock ([`PeerWatch`]): a session
//! is live once its beat has been seen to move since the reader started watching
//! it, and dead once the beat has not moved for a bound. No wall clocks are
//! compared across PCs.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::block::{self, token, Words};
use crate::realtime::RealTime;
use rfm_frames::area::HEARTBEAT_PERIOD;
use rfm_memory::{Network, Region, RegionError};
use rfm_thread::Thread;

/// A slot whose beat has not moved for this long (on the taker's clock) may be taken
/// by another session: 50 missed beats, far beyond any scheduling delay of a live
/// heartbeat thread.
pub const DEAD_AFTER: Duration = Duration::from_millis(500);

/// The shortest silence ever judged as a peer's death, whatever `timeout` says: ten
/// beats, so that a timeout shorter than a few heartbeat periods cannot turn a live
/// peer into a dead one between two beats.
pub const MIN_SILENCE: Duration = Duration::from_millis(100);

/// One session's beat: what its heartbeat thread runs every period.
#[derive(Debug, Clone)]
pub struct Beater {
    slot: Region,
    token: u32,
    count: u32,
    announce: Option<Announce>,
}

/// A session's announce as its beat writes it again on a ring that missed it
/// (protocol.md, "Two rings"): a ring cut at this node's board while it
/// announced shows, once mended, what the slot held before, and every reader
/// would judge the slot another session's.
#[derive(Debug, Clone)]
struct Announce {
    /// The descriptor as announced.
    described: Vec<u8>,
    /// The owner word on each ring before the announce: a ring that shows it
    /// missed the announce; any other token is another claimant's.
    before: [u32; 2],
    /// The claim held: from then on a ring that missed the announce is
    /// written again (before, it is the claim's verify that weighs it).
    won: Arc<AtomicBool>,
}

impl Beater {
    /// The beat of session `epoch`, continuing from what the slot holds (so the first
    /// beat always changes the word, whoever held the slot before); on two
    /// rings from the later of theirs, so that its beat is ahead of a stale
    /// ring's ([`Words::current`]).
    pub fn new(slot: Region, epoch: u64) -> Result<Beater, RegionError> {
        let mut count = block::beat_on(&slot, Network::A)?;
        if slot.is_redundant() {
            let b = block::beat_on(&slot, Network::B)?;
            if b.wrapping_sub(count) as i32 > 0 {
                count = b;
            }
        }
        Ok(Beater {
            slot,
            token: token(epoch),
            count,
            announce: None,
        })
    }

    /// Writes the announce (`described`, then the owner word) again on a ring
    /// that shows the owner it held `before` (per ring), once `won` is set.
    pub(crate) fn writing_again(
        mut self,
        described: Vec<u8>,
        before: [u32; 2],
        won: Arc<AtomicBool>,
    ) -> Beater {
        self.announce = Some(Announce {
            described,
            before,
            won,
        });
        self
    }

    /// Advances the beat (a plain store of a private counter: no read-modify-write
    /// on reflective memory). Returns the owner word's token when another session
    /// holds the slot now: this one was taken over while it was silent. On two
    /// rings, each ring's owner word is looked at: a ring that missed this
    /// session's announce is written again, not taken for a take-over.
    pub fn beat(&mut self) -> Result<Option<u32>, RegionError> {
        let mut missed = false;
        for (ring, owner) in block::owners(&self.slot)? {
            if owner == self.token {
                continue;
            }
            match &self.announce {
                Some(a) if a.before[ring.index()] == owner => missed = true,
                _ => return Ok(Some(owner)),
            }
        }
        if let Some(a) = self
            .announce
            .as_ref()
            .filter(|a| missed && a.won.load(Ordering::Acquire))
        {
            block::announce_again(&self.slot, &a.described, self.token)?;
        }
        self.count = self.count.wrapping_add(1);
        block::store_beat(&self.slot, self.count)?;
        Ok(None)
    }
}

/// A thread beating one session's heartbeat until stopped or dropped.
#[derive(Debug)]
pub struct Heartbeat {
    stop: Arc<(Mutex<bool>, Condvar)>,
    /// The token found in the owner word when another session took the slot (0: none).
    taken_by: Arc<AtomicU32>,
    thread: Option<Thread>,
}

impl Heartbeat {
    /// Starts beating at once, then every [`HEARTBEAT_PERIOD`], on the cores
    /// and above the priority of the step (`realtime`): a beat that waited
    /// behind a spinning real-time step would make its node look dead.
    pub fn start(mut beater: Beater, realtime: RealTime) -> std::io::Result<Heartbeat> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let taken_by = Arc::new(AtomicU32::new(0));
        let thread = {
            let (stop, taken_by) = (stop.clone(), taken_by.clone());
            Thread::spawn("rfm-heartbeat", move || {
                realtime.apply_to_own_thread();
                let (lock, wake) = &*stop;
                let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
                while !*stopped {
                    match beater.beat() {
                        Ok(None) => {}
                        Ok(Some(other)) => {
                            // Another session holds the slot: beating on would
                            // write into its slot. Stop, and let the link say why.
                            taken_by.store(other.max(1), Ordering::Release);
                            return;
                        }
                        // The words lie inside the slot the node checked when it
                        // opened: out of bounds cannot happen. Were it to, the beat
                        // stops and peers see the node silent, never a wrong beat.
                        Err(_) => return,
                    }
                    stopped = wake
                        .wait_timeout(stopped, HEARTBEAT_PERIOD)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            })?
        };
        Ok(Heartbeat {
            stop,
            taken_by,
            thread: Some(thread),
        })
    }

    /// The owner token of the session that took this one's slot, if one did.
    pub fn taken_by(&self) -> Option<u32> {
        match self.taken_by.load(Ordering::Acquire) {
            0 => None,
            t => Some(t),
        }
    }

    /// Stops beating (waits for the thread, at most one beat).
    pub fn stop(&mut self) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            thread.join();
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What a reader knows of a slot's holder, from the words it watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    /// Nobody ever held the slot (or an older build wrote it).
    Absent,
    /// The holder `owner` stopped cleanly.
    Closed { owner: u32 },
    /// The beat of `owner` has not moved since the reader began watching it.
    Unproven { owner: u32, since: Instant },
    /// The beat of `owner` was last seen moving at `last`.
    Beating { owner: u32, last: Instant },
}

impl Life {
    /// The holder's token, if any.
    pub fn owner(&self) -> Option<u32> {
        match *self {
            Life::Absent => None,
            Life::Closed { owner } | Life::Unproven { owner, .. } | Life::Beating { owner, .. } => {
                Some(owner)
            }
        }
    }

    /// The holder is `owner`, not closed, and beat within `bound` before `now`.
    pub fn is_live(&self, owner: u32, now: Instant, bound: Duration) -> bool {
        matches!(*self, Life::Beating { owner: o, last } if o == owner && now.saturating_duration_since(last) < bound)
    }

    /// How long the holder's beat has not been seen to move (zero when closed or absent).
    pub fn silent_for(&self, now: Instant) -> Duration {
        match *self {
            Life::Unproven { since: t, .. } | Life::Beating { last: t, .. } => {
                now.saturating_duration_since(t)
            }
            Life::Absent | Life::Closed { .. } => Duration::ZERO,
        }
    }
}

/// Watches one slot's liveness words over time, on the reader's monotonic clock.
#[derive(Debug, Clone)]
pub struct PeerWatch {
    words: Words,
    life: Life,
}

impl PeerWatch {
    /// Starts watching at `now` with the words read then. A beat already there
    /// proves nothing: only a move seen from here on does.
    pub fn new(words: Words, now: Instant) -> PeerWatch {
        PeerWatch {
            words,
            life: Self::first_sight(&words, now),
        }
    }

    fn first_sight(w: &Words, now: Instant) -> Life {
        if w.owner == 0 {
            Life::Absent
        } else if w.is_closed() {
            Life::Closed { owner: w.owner }
        } else {
            Life::Unproven {
                owner: w.owner,
                since: now,
            }
        }
    }

    /// Takes a new reading at `now`.
    pub fn observe(&mut self, w: Words, now: Instant) -> Life {
        let before = std::mem::replace(&mut self.words, w);
        self.life = if w.owner != before.owner || w.owner == 0 || w.is_closed() {
            Self::first_sight(&w, now)
        } else if w.beat != before.beat {
            Life::Beating {
                owner: w.owner,
                last: now,
            }
        } else {
            self.life
        };
        self.life
    }

    /// The verdict of the last reading.
    pub fn life(&self) -> Life {
        self.life
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(owner: u32, beat: u32, closed: u32) -> Words {
        Words {
            owner,
            beat,
            closed,
        }
    }

    #[test]
    fn a_holder_is_live_only_once_its_beat_is_seen_to_move() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut w = PeerWatch::new(words(7, 41, 0), t0);
        assert_eq!(
            w.life(),
            Life::Unproven {
                owner: 7,
                since: t0
            }
        );
        assert!(!w.life().is_live(7, t0, MIN_SILENCE));
        assert_eq!(
            w.observe(words(7, 41, 0), ms(300)).silent_for(ms(300)),
            ms(300) - t0
        );
        let life = w.observe(words(7, 42, 0), ms(301));
        assert!(life.is_live(7, ms(301), MIN_SILENCE));
        assert!(!life.is_live(9, ms(301), MIN_SILENCE), "another session");
        assert!(
            !life.is_live(7, ms(401), MIN_SILENCE),
            "silent for the bound"
        );
        // A new holder starts unproven again; a closed one is closed at once.
        assert!(matches!(
            w.observe(words(9, 42, 0), ms(402)),
            Life::Unproven { owner: 9, .. }
        ));
        assert_eq!(
            w.observe(words(9, 43, 9), ms(403)),
            Life::Closed { owner: 9 }
        );
        assert_eq!(PeerWatch::new(Words::default(), t0).life(), Life::Absent);
    }
}
