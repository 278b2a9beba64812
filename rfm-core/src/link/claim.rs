//! Taking a slot: only when its holder is gone, and never by two nodes at once.
//!
//! Reflective memory has no compare-and-swap across the ring, so the claim is
//! Fischer's timed mutual exclusion (Lamport, "A fast mutual exclusion algorithm",
//! 1987, credits it to Fischer) over the owner word:
//!
//! 1. **Observing**: watch the slot's liveness words. A slot that was never held,
//!    or whose holder closed it, is free at once. One whose beat moves is held: the
//!    claim fails, naming the slot and when it last beat. One whose beat does not
//!    move for [`DEAD_AFTER`] is free. (Seed layout: an article program beats no
//!    heartbeat, so a packet id that moves also holds the slot.)
//! 2. **Settling**: in the same call that found the slot free, write this session's
//!    token into the owner word (the caller starts beating now), then wait
//!    [`CLAIM_SETTLE`] (no time for `loopback:` memory that only this copy of the
//!    library reaches, whose claims poll under one lock, which makes read and
//!    write one step).
//! 3. **Verify**: if the owner word still holds this token, the slot is ours;
//!    otherwise another node claimed it in the same moment and the claim fails.
//!
//! Two claimants both win only if one of them is descheduled for longer than
//! [`CLAIM_SETTLE`] between the read that found the slot free and its write. The
//! loser's heartbeat then finds another token in the owner word at its next beat
//! and the link fails with [`super::LinkError::SlotTakenOver`]: never two silent
//! writers of one slot.

use std::time::{Duration, Instant};

use super::liveness::{Life, PeerWatch, Words, DEAD_AFTER};

/// How long a claimant waits between writing its token and checking it is still
/// there: far above the ring's propagation delay (microseconds) and a read-to-write
/// gap of one call.
pub const CLAIM_SETTLE: Duration = Duration::from_millis(20);

/// Where a claim stands.
#[derive(Debug, Clone)]
pub(crate) enum Claim {
    Observing {
        watch: PeerWatch,
        since: Instant,
        /// Seed layout: the packet id first seen, and whether it has moved.
        packet: Option<u64>,
        packet_moved: bool,
    },
    Settling {
        at: Instant,
    },
    Won,
}

/// What one poll of a claim decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClaimPoll {
    /// Keep polling.
    Pending,
    /// The slot is free: write the owner word and start beating now.
    Take,
    /// The owner word held this session's token after settling: the slot is ours.
    Won,
    /// Another session holds the slot; its beat last moved `ago` before (zero when
    /// an article program's packet id moved).
    Held { owner: u32, ago: Duration },
    /// Another session claimed the slot at the same moment.
    Contended { owner: u32 },
}

impl Claim {
    pub(crate) fn new(words: Words, packet: Option<u64>, now: Instant) -> Claim {
        Claim::Observing {
            watch: PeerWatch::new(words, now),
            since: now,
            packet,
            packet_moved: false,
        }
    }

    /// One step of the claim with the slot's words read at `now`; `packet` is the
    /// seed packet id in the slot (seed layout only).
    /// `settle` is [`CLAIM_SETTLE`], or zero where every claimant of this memory
    /// polls under one lock (in-process memory: the read and the write are then
    /// atomic together, and Fischer's delay is not needed).
    pub(crate) fn poll(
        &mut self,
        words: Words,
        packet: Option<u64>,
        now: Instant,
        token: u32,
        settle: Duration,
    ) -> ClaimPoll {
        match self {
            Claim::Observing {
                watch,
                since,
                packet: first,
                packet_moved,
            } => {
                *packet_moved |= packet != *first;
                let life = watch.observe(words, now);
                let holder_gone = match life {
                    Life::Absent | Life::Closed { .. } => true,
                    Life::Beating { owner, last } => {
                        return ClaimPoll::Held {
                            owner,
                            ago: now.saturating_duration_since(last),
                        }
                    }
                    Life::Unproven { .. } => now.saturating_duration_since(*since) >= DEAD_AFTER,
                };
                if *packet_moved {
                    return ClaimPoll::Held {
                        owner: words.owner,
                        ago: Duration::ZERO,
                    };
                }
                // An article program's packet (no owner) must stay still for the bound.
                let packet_quiet = first.is_none()
                    || life != Life::Absent
                    || now.saturating_duration_since(*since) >= DEAD_AFTER;
                if holder_gone && packet_quiet {
                    *self = Claim::Settling { at: now };
                    ClaimPoll::Take
                } else {
                    ClaimPoll::Pending
                }
            }
            Claim::Settling { at } => {
                if now.saturating_duration_since(*at) < settle {
                    ClaimPoll::Pending
                } else if words.owner == token {
                    *self = Claim::Won;
                    ClaimPoll::Won
                } else {
                    ClaimPoll::Contended { owner: words.owner }
                }
            }
            Claim::Won => ClaimPoll::Won,
        }
    }
}

/// The token in a slot's owner word, for messages.
pub(crate) fn describe(owner: u32) -> String {
    format!("{owner:#010x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(owner: u32, beat: u32, closed: u32) -> Words {
        Words {
            owner,
            beat,
            closed,
        }
    }

    #[test]
    fn a_free_or_closed_slot_is_taken_at_once_and_verified() {
        let t0 = Instant::now();
        for words in [w(0, 0, 0), w(5, 9, 5)] {
            let mut c = Claim::new(words, None, t0);
            assert_eq!(c.poll(words, None, t0, 3, CLAIM_SETTLE), ClaimPoll::Take);
            assert_eq!(
                c.poll(w(3, 9, 0), None, t0, 3, CLAIM_SETTLE),
                ClaimPoll::Pending
            );
            assert_eq!(
                c.poll(w(3, 10, 0), None, t0 + CLAIM_SETTLE, 3, CLAIM_SETTLE),
                ClaimPoll::Won
            );
        }
    }

    #[test]
    fn a_beating_holder_keeps_its_slot_and_a_silent_one_loses_it_after_the_bound() {
        let t0 = Instant::now();
        let mut c = Claim::new(w(5, 1, 0), None, t0);
        assert_eq!(
            c.poll(w(5, 1, 0), None, t0, 3, CLAIM_SETTLE),
            ClaimPoll::Pending
        );
        let t1 = t0 + Duration::from_millis(10);
        assert_eq!(
            c.poll(w(5, 2, 0), None, t1, 3, CLAIM_SETTLE),
            ClaimPoll::Held {
                owner: 5,
                ago: Duration::ZERO
            }
        );
        let mut c = Claim::new(w(5, 1, 0), None, t0);
        let almost = t0 + DEAD_AFTER - Duration::from_millis(1);
        assert_eq!(
            c.poll(w(5, 1, 0), None, almost, 3, CLAIM_SETTLE),
            ClaimPoll::Pending
        );
        assert_eq!(
            c.poll(w(5, 1, 0), None, t0 + DEAD_AFTER, 3, CLAIM_SETTLE),
            ClaimPoll::Take
        );
    }

    #[test]
    fn the_second_of_two_simultaneous_claimants_wins_and_the_first_knows_it_lost() {
        let t0 = Instant::now();
        let (mut a, mut b) = (
            Claim::new(w(0, 0, 0), None, t0),
            Claim::new(w(0, 0, 0), None, t0),
        );
        assert_eq!(
            a.poll(w(0, 0, 0), None, t0, 3, CLAIM_SETTLE),
            ClaimPoll::Take
        );
        assert_eq!(
            b.poll(w(0, 0, 0), None, t0, 7, CLAIM_SETTLE),
            ClaimPoll::Take
        );
        // b's write landed last.
        let later = t0 + CLAIM_SETTLE;
        assert_eq!(
            a.poll(w(7, 0, 0), None, later, 3, CLAIM_SETTLE),
            ClaimPoll::Contended { owner: 7 }
        );
        assert_eq!(
            b.poll(w(7, 0, 0), None, later, 7, CLAIM_SETTLE),
            ClaimPoll::Won
        );
    }

    #[test]
    fn an_article_writer_whose_packet_id_moves_holds_a_seed_slot() {
        let t0 = Instant::now();
        let mut c = Claim::new(w(0, 0, 0), Some(10), t0);
        assert_eq!(
            c.poll(w(0, 0, 0), Some(10), t0, 3, CLAIM_SETTLE),
            ClaimPoll::Pending
        );
        assert!(matches!(
            c.poll(w(0, 0, 0), Some(11), t0, 3, CLAIM_SETTLE),
            ClaimPoll::Held { .. }
        ));
        let mut c = Claim::new(w(0, 0, 0), Some(10), t0);
        assert_eq!(
            c.poll(w(0, 0, 0), Some(10), t0 + DEAD_AFTER, 3, CLAIM_SETTLE),
            ClaimPoll::Take
        );
    }
}
