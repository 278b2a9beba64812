//! Link health: what a reader learns about its peer from the frames it reads.
//!
//! The tracker is fed every read outcome and keeps the counters a lab asks for
//! (the article's heartbeat/CRC/watchdog advice): restarts (session epoch changed),
//! frames lost (gaps in step or packet ids), duplicates (one id, two contents),
//! frames out of order, bad frames, and the age of the newest fresh frame measured
//! on the reader's own monotonic clock (two PCs' wall clocks need not agree).

use std::time::{Duration, Instant};

/// Identity of one frame as the tracker sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameId {
    /// Session epoch; `None` for layouts without one (seed), where a packet id that
    /// goes backwards is taken as a restart (the article's sender counts from 0).
    pub epoch: Option<u64>,
    /// Step or packet id, increasing by one per frame.
    pub step: u64,
    /// A digest of the contents (every byte the peer sends: the frame's CRC), to
    /// tell a re-read from a duplicate.
    pub digest: u32,
}

/// What one observed frame meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observation {
    /// The first frame ever seen.
    First,
    /// A new frame; `lost` frames were skipped since the previous one.
    Fresh { lost: u64 },
    /// The same frame read again (the writer has not published since).
    Stale,
    /// The same id with other contents.
    Duplicate,
    /// An id older than one already seen, same session.
    OutOfOrder,
    /// The peer's session changed (it restarted): counting starts over.
    Restarted {
        old_epoch: Option<u64>,
        new_epoch: Option<u64>,
    },
}

/// Counters and freshness of one peer.
#[derive(Debug, Clone, Default)]
pub struct PeerHealth {
    last: Option<FrameId>,
    last_fresh: Option<Instant>,
    pub frames: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub out_of_order: u64,
    pub bad_frames: u64,
    pub restarts: u64,
}

impl PeerHealth {
    pub fn new() -> PeerHealth {
        PeerHealth::default()
    }

    /// Records a frame read at `now`.
    #[inline]
    pub fn observe(&mut self, id: FrameId, now: Instant) -> Observation {
        self.observe_counting(id, now, true)
    }

    /// Records a frame a lockstep reader took at `now`: exactly the one its
    /// rule names, so the frames it passed over (a faster writer's) are not
    /// lost.
    #[inline]
    pub fn observe_chosen(&mut self, id: FrameId, now: Instant) -> Observation {
        self.observe_counting(id, now, false)
    }

    #[inline]
    fn observe_counting(&mut self, id: FrameId, now: Instant, gaps_lost: bool) -> Observation {
        let Some(last) = self.last else {
            self.accept(id, now);
            return Observation::First;
        };
        let restarted = match (last.epoch, id.epoch) {
            (Some(a), Some(b)) => a != b,
            (None, None) => id.step < last.step,
            _ => true,
        };
        if restarted {
            self.restarts += 1;
            self.accept(id, now);
            return Observation::Restarted {
                old_epoch: last.epoch,
                new_epoch: id.epoch,
            };
        }
        if id.step == last.step {
            if id.digest == last.digest {
                return Observation::Stale;
            }
            self.duplicates += 1;
            return Observation::Duplicate;
        }
        if id.step < last.step {
            self.out_of_order += 1;
            return Observation::OutOfOrder;
        }
        let lost = if gaps_lost {
            id.step - last.step - 1
        } else {
            0
        };
        self.lost += lost;
        self.accept(id, now);
        Observation::Fresh { lost }
    }

    fn accept(&mut self, id: FrameId, now: Instant) {
        self.last = Some(id);
        self.last_fresh = Some(now);
        self.frames += 1;
    }

    /// Records a read that found a complete but invalid frame (magic, version, CRC).
    pub fn observe_bad(&mut self) {
        self.bad_frames += 1;
    }

    /// Time since the newest fresh frame, `None` before the first.
    pub fn age(&self, now: Instant) -> Option<Duration> {
        self.last_fresh.map(|t| now.saturating_duration_since(t))
    }

    /// The newest frame accepted.
    pub fn last(&self) -> Option<FrameId> {
        self.last
    }

    /// Forgets the peer (a new session of our own): counters are kept.
    pub fn forget_peer(&mut self) {
        self.last = None;
        self.last_fresh = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(epoch: u64, step: u64) -> FrameId {
        FrameId {
            epoch: Some(epoch),
            step,
            digest: step as u32,
        }
    }

    #[test]
    fn counts_gaps_duplicates_reorders_and_restarts() {
        let t0 = Instant::now();
        let mut h = PeerHealth::new();
        assert_eq!(h.age(t0), None);
        assert_eq!(h.observe(id(1, 0), t0), Observation::First);
        assert_eq!(h.observe(id(1, 1), t0), Observation::Fresh { lost: 0 });
        assert_eq!(h.observe(id(1, 1), t0), Observation::Stale);
        assert_eq!(
            h.observe(
                FrameId {
                    digest: 99,
                    ..id(1, 1)
                },
                t0
            ),
            Observation::Duplicate
        );
        assert_eq!(h.observe(id(1, 5), t0), Observation::Fresh { lost: 3 });
        assert_eq!(h.observe(id(1, 4), t0), Observation::OutOfOrder);
        let t1 = t0 + Duration::from_millis(5);
        assert_eq!(
            h.observe(id(2, 0), t1),
            Observation::Restarted {
                old_epoch: Some(1),
                new_epoch: Some(2)
            }
        );
        assert_eq!(h.observe(id(2, 1), t1), Observation::Fresh { lost: 0 });
        h.observe_bad();
        assert_eq!(
            (
                h.lost,
                h.duplicates,
                h.out_of_order,
                h.restarts,
                h.bad_frames
            ),
            (3, 1, 1, 1, 1)
        );
        assert_eq!(h.frames, 5);
        assert_eq!(
            h.age(t1 + Duration::from_millis(3)),
            Some(Duration::from_millis(3))
        );
    }

    #[test]
    fn seed_packets_going_backwards_are_a_restart() {
        let now = Instant::now();
        let mut h = PeerHealth::new();
        let seed = |step| FrameId {
            epoch: None,
            step,
            digest: 0,
        };
        h.observe(seed(10), now);
        assert_eq!(h.observe(seed(11), now), Observation::Fresh { lost: 0 });
        assert!(matches!(
            h.observe(seed(0), now),
            Observation::Restarted { .. }
        ));
        assert_eq!(h.restarts, 1);
    }
}
