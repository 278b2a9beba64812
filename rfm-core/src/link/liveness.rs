//! Liveness: whether the session holding a slot still runs.
//!
//! Memory keeps whatever dead sessions wrote, so a frame proves nothing about its
//! writer. Every slot, in both layouts, therefore holds a liveness block whose
//! words ([`super::ownership::block`], where each is defined) only the slot's holder (and,
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
//! Readers judge liveness on their own monotonic clock
//! ([`super::ownership::PeerWatch`]): a session is live once its beat has been
//! seen to move since the reader started watching it, and dead once the beat
//! has not moved for a bound. No wall clocks are compared across PCs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use super::ownership::block;
use super::ownership::RingOwner;
use super::stats::window::Publisher;
use crate::realtime::RealTime;
use rfm_frames::area::HEARTBEAT_PERIOD;
use rfm_frames::session::Token;
use rfm_memory::{Network, Region, RegionError};
use rfm_thread::Thread;

/// The shortest silence ever judged as a peer's death, whatever `timeout` says: ten
/// beats, so that a timeout shorter than a few heartbeat periods cannot turn a live
/// peer into a dead one between two beats.
pub const MIN_SILENCE: Duration = Duration::from_millis(100);

/// One session's beat: what its heartbeat thread runs every period.
#[derive(Debug, Clone)]
pub struct Beater {
    slot: Region,
    token: Token,
    count: u32,
    announce: Option<Announce>,
    /// Stores the node's statistics block (every tenth beat).
    stats: Option<Publisher>,
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
    before: [Option<Token>; 2],
    /// The claim held: from then on a ring that missed the announce is
    /// written again (before, it is the claim's verify that weighs it).
    won: Arc<AtomicBool>,
}

impl Beater {
    /// The beat of session `epoch`, continuing from what the slot holds (so the first
    /// beat always changes the word, whoever held the slot before); on two
    /// rings from the later of theirs, so that its beat is ahead of a stale
    /// ring's ([`super::ownership::block::Words::current`]).
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
            token: Token::of(epoch),
            count,
            announce: None,
            stats: None,
        })
    }

    /// Stores the node's statistics block with its beats.
    pub(crate) fn publishing(mut self, stats: Publisher) -> Beater {
        self.stats = Some(stats);
        self
    }

    /// Writes the announce (`described`, then the owner word) again on a ring
    /// that shows the owner it held `before` (per ring), once `won` is set.
    pub(crate) fn writing_again(
        mut self,
        described: Vec<u8>,
        before: [Option<Token>; 2],
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
    /// on reflective memory). Returns what the owner word holds when this
    /// session no longer does: it was taken over while it was silent. On two
    /// rings, each ring's owner word is looked at: a ring that missed this
    /// session's announce is written again, not taken for a take-over.
    pub fn beat(&mut self) -> Result<Option<TakenBy>, RegionError> {
        let mut missed = false;
        for (ring, owner) in block::owners(&self.slot)? {
            let before = self.announce.as_ref().map(|a| a.before[ring.index()]);
            match RingOwner::of(owner, self.token, before) {
                RingOwner::Its => {}
                RingOwner::Missed(_) => missed = true,
                RingOwner::Other(owner) => return Ok(Some(TakenBy(owner))),
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
        if let Some(stats) = &mut self.stats {
            stats.beat(std::time::Instant::now())?;
        }
        Ok(None)
    }
}

/// The owner word a beat found where its session's token should be: another
/// session's token, or none (the slot was cleared).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TakenBy(pub Option<Token>);

/// A thread beating one session's heartbeat until stopped or dropped.
#[derive(Debug)]
pub struct Heartbeat {
    stop: Arc<(Mutex<bool>, Condvar)>,
    /// What the owner word held when the slot was taken, once it was.
    taken_by: Arc<OnceLock<TakenBy>>,
    thread: Option<Thread>,
}

impl Heartbeat {
    /// Starts beating at once, then every [`HEARTBEAT_PERIOD`], on the cores
    /// and above the priority of the step (`realtime`): a beat that waited
    /// behind a spinning real-time step would make its node look dead.
    pub fn start(mut beater: Beater, realtime: RealTime) -> std::io::Result<Heartbeat> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let taken_by = Arc::new(OnceLock::new());
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
                            let _ = taken_by.set(other);
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
    pub fn taken_by(&self) -> Option<TakenBy> {
        self.taken_by.get().copied()
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
