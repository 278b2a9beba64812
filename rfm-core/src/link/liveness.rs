//! Liveness: which session holds a slot, and whether it is still running.
//!
//! Memory keeps whatever dead sessions wrote, so a frame proves nothing about its
//! writer. Every slot, in both layouts, therefore ends with a liveness block of
//! three words that only the slot's holder writes, and two a bridge writes
//! ([`rfm_frames::area::LIVENESS_OFFSET`]; [`super::ownership`] has the whole block and
//! the protocol):
//!
//! | offset | word |
//! |---|---|
//! | +0 | owner: the token of the session holding the slot (0: never held) |
//! | +4 | beat: advanced every [`HEARTBEAT_PERIOD`] by the holder's heartbeat thread |
//! | +8 | closed: the owner's token once it stopped cleanly, else 0 |
//! | +12 | mirrored: the token of a session on another host, written by a bridge ([`write_mirrored`]) |
//! | +16 | mirrored by: the bridge that writes it |
//!
//! A slot whose owner word equals its mirrored word is held from another host:
//! its words and frames come from a bridge (`rfm-bridge`), which never announces
//! it as its own. A node that claims the slot later writes a new owner word and
//! so is local again without clearing the mark.
//! A token is the low 32 bits of a session epoch (epochs are odd, so a token is
//! never 0). The heartbeat runs in a thread of its own ([`Heartbeat`]), so it
//! beats while a master sits between steps, in a lockstep wait, or in another
//! instance's step in the same thread: liveness never depends on `fmi2DoStep`.
//!
//! Readers judge liveness on their own monotonic clock ([`PeerWatch`]): a session
//! is live once its beat has been seen to move since the reader started watching
//! it, and dead once the beat has not moved for a bound. No wall clocks are
//! compared across PCs.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::realtime::RealTime;
use rfm_frames::area::{DESCRIPTOR_OFFSET, LIVENESS_OFFSET};
use rfm_memory::{Network, Region, RegionError};
use rfm_thread::Thread;

/// How often a holder's heartbeat advances its beat word.
pub const HEARTBEAT_PERIOD: Duration = Duration::from_millis(10);

/// A slot whose beat has not moved for this long (on the taker's clock) may be taken
/// by another session: 50 missed beats, far beyond any scheduling delay of a live
/// heartbeat thread.
pub const DEAD_AFTER: Duration = Duration::from_millis(500);

/// The shortest silence ever judged as a peer's death, whatever `timeout` says: ten
/// beats, so that a timeout shorter than a few heartbeat periods cannot turn a live
/// peer into a dead one between two beats.
pub const MIN_SILENCE: Duration = Duration::from_millis(100);

const OWNER: usize = LIVENESS_OFFSET;
const BEAT: usize = LIVENESS_OFFSET + 4;
const CLOSED: usize = LIVENESS_OFFSET + 8;
const MIRRORED: usize = LIVENESS_OFFSET + 12;
const MIRRORED_BY: usize = LIVENESS_OFFSET + 16;

/// The token of session `epoch` in the owner and closed words.
pub fn token(epoch: u64) -> u32 {
    epoch as u32
}

/// The liveness words of one slot, as read at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Words {
    pub owner: u32,
    pub beat: u32,
    pub closed: u32,
}

impl Words {
    /// Reads the words of `slot`: on two rings each ring's, and of the two
    /// what [`Words::current`] says.
    pub fn read(slot: &Region) -> Result<Words, RegionError> {
        let a = Words::read_on(slot, Network::A)?;
        if !slot.is_redundant() {
            return Ok(a);
        }
        Ok(a.current(Words::read_on(slot, Network::B)?))
    }

    /// Reads the words of `slot` on `ring` (the owner first: a beat read
    /// after it belongs to that owner or a later one).
    pub fn read_on(slot: &Region, ring: Network) -> Result<Words, RegionError> {
        Ok(Words {
            owner: slot.load_u32_on(ring, OWNER, Ordering::Acquire)?,
            beat: slot.load_u32_on(ring, BEAT, Ordering::Acquire)?,
            closed: slot.load_u32_on(ring, CLOSED, Ordering::Acquire)?,
        })
    }

    /// Of one slot's words on the two rings of a redundant device (`self` on
    /// ring A), the current: the rule of `docs/src/design/protocol.md`,
    /// "Two rings". A ring disagrees only where it lost stores (a cut at the
    /// writer's board, or at the reader's while they were made) or has them
    /// in flight; what it then shows is what the slot held before, which its
    /// holder's heartbeat writes again at its next beat.
    ///
    /// | the rings show | current |
    /// |---|---|
    /// | one owner | that owner; the later beat; closed when either shows it closed |
    /// | two owners, one held (not 0, not closed) | the held one |
    /// | two owners, both held or neither | the later beat (a new holder's beat counts on from the slot's, so it is ahead of a stale one) |
    pub fn current(self, other: Words) -> Words {
        let later = other.beat.wrapping_sub(self.beat) as i32 > 0;
        if self.owner == other.owner {
            return Words {
                owner: self.owner,
                beat: if later { other.beat } else { self.beat },
                closed: if other.is_closed() {
                    other.closed
                } else {
                    self.closed
                },
            };
        }
        let rank = |w: &Words| (w.is_held(), w.owner != 0);
        match rank(&other).cmp(&rank(&self)) {
            std::cmp::Ordering::Greater => other,
            std::cmp::Ordering::Less => self,
            std::cmp::Ordering::Equal if later => other,
            std::cmp::Ordering::Equal => self,
        }
    }

    /// The owner stopped cleanly.
    pub fn is_closed(&self) -> bool {
        self.owner != 0 && self.closed == self.owner
    }

    /// A session holds the slot and has not closed it (alive or not: only a
    /// beat seen moving proves that, see [`PeerWatch`]).
    pub fn is_held(&self) -> bool {
        self.owner != 0 && !self.is_closed()
    }
}

/// The bridge that writes the holder of `slot` from another host (its id), or
/// `None` when the holder is of this host: a remote holder's token is in the
/// mirrored word as well as in the owner word.
pub fn remote_holder(slot: &Region) -> Result<Option<u32>, RegionError> {
    let owner = slot.load_u32(OWNER, Ordering::Acquire)?;
    let mirrored = slot.load_u32(MIRRORED, Ordering::Acquire)?;
    if owner == 0 || owner != mirrored {
        return Ok(None);
    }
    Ok(Some(slot.load_u32(MIRRORED_BY, Ordering::Relaxed)?))
}

/// Writes the words of a session of another host into `slot`, as `bridge`
/// mirrors them: the mark first, so that no reader of this memory (a bridge
/// restarted here) ever sees that owner without it, then the words in the
/// order their writer stores them (owner, closed, beat).
pub fn write_mirrored(slot: &Region, words: Words, bridge: u32) -> Result<(), RegionError> {
    slot.store_u32(MIRRORED_BY, bridge, Ordering::Relaxed)?;
    slot.store_u32(MIRRORED, words.owner, Ordering::Release)?;
    slot.store_u32(OWNER, words.owner, Ordering::Release)?;
    slot.store_u32(CLOSED, words.closed, Ordering::Release)?;
    slot.store_u32(BEAT, words.beat, Ordering::Release)
}

/// A mirrored session's later words: its beat, then whether it closed.
pub fn write_mirrored_beat(slot: &Region, words: Words) -> Result<(), RegionError> {
    slot.store_u32(BEAT, words.beat, Ordering::Release)?;
    slot.store_u32(CLOSED, words.closed, Ordering::Release)
}

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
        let mut count = slot.load_u32_on(Network::A, BEAT, Ordering::Relaxed)?;
        if slot.is_redundant() {
            let b = slot.load_u32_on(Network::B, BEAT, Ordering::Relaxed)?;
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
        for &ring in self.slot.rings() {
            let owner = self.slot.load_u32_on(ring, OWNER, Ordering::Acquire)?;
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
            self.slot.write(DESCRIPTOR_OFFSET, &a.described)?;
            self.slot.store_u32(OWNER, self.token, Ordering::Release)?;
            self.slot.store_u32(CLOSED, 0, Ordering::Release)?;
        }
        self.count = self.count.wrapping_add(1);
        self.slot.store_u32(BEAT, self.count, Ordering::Release)?;
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
