//! One peer's frames over a redundant device (`A+B`: the same coupling on two
//! rings, every node writing both): from which ring each frame was taken,
//! the failovers, and when each ring last held the newest frame, from which
//! the link says whether a ring still delivers.
//!
//! The rule is per peer and per frame: the frame is taken from ring A when A
//! holds it whole (seqlock and CRC), else from B. A broken fibre that stops one
//! peer's frames on A (a ring cut between that peer and this node) costs that
//! peer nothing and the others not even a second read.

use std::time::{Duration, Instant};

use rfm_frames::slot::StepPoll;
use rfm_memory::Network;

/// How often the ring a peer's frames did not come from is looked at (its
/// head word: one load), to tell whether it still carries them.
pub const PROBE_INTERVAL: Duration = Duration::from_millis(10);

/// What a peer's frames did over the two rings.
#[derive(Debug, Clone, Default)]
pub struct RingStats {
    taken: [u64; 2],
    failovers: u64,
    last: Option<Network>,
    /// When each ring last held the newest frame taken (or a newer one).
    current_at: [Option<Instant>; 2],
    probed_at: Option<Instant>,
    /// A change of ring not yet told: the ring frames come from now.
    changed: Option<Network>,
}

impl RingStats {
    /// A frame was taken from `ring` at `now`.
    pub(crate) fn took(&mut self, ring: Network, now: Instant) {
        self.taken[ring.index()] += 1;
        self.current_at[ring.index()] = Some(now);
        if let Some(last) = self.last.filter(|l| *l != ring) {
            if last == Network::A {
                self.failovers += 1;
            }
            self.changed = Some(ring);
        }
        self.last = Some(ring);
    }

    /// `ring` held the newest frame taken (or a newer one) at `now`.
    pub(crate) fn saw_current(&mut self, ring: Network, now: Instant) {
        self.current_at[ring.index()] = Some(now);
    }

    /// Whether the ring the frames did not come from is due a look.
    pub(crate) fn probe_due(&mut self, now: Instant) -> bool {
        let due = self
            .probed_at
            .is_none_or(|t| now.saturating_duration_since(t) >= PROBE_INTERVAL);
        if due {
            self.probed_at = Some(now);
        }
        due
    }

    /// Frames taken from `ring`.
    pub fn taken(&self, ring: Network) -> u64 {
        self.taken[ring.index()]
    }

    /// Times the frames moved from ring A to ring B.
    pub fn failovers(&self) -> u64 {
        self.failovers
    }

    /// The ring the last frame came from.
    pub fn last(&self) -> Option<Network> {
        self.last
    }

    /// Whether `ring` held the newest frame within `timeout` of `now` (true
    /// before the first frame: nothing says otherwise yet).
    pub fn delivers(&self, ring: Network, now: Instant, timeout: Duration) -> bool {
        match (self.last, self.current_at[ring.index()]) {
            (None, _) => true,
            (Some(_), Some(t)) => now.saturating_duration_since(t) < timeout,
            (Some(_), None) => false,
        }
    }

    /// The ring frames come from now, if it changed since the last call.
    pub(crate) fn take_change(&mut self) -> Option<Network> {
        self.changed.take()
    }
}

/// Of a poll of both rings for one frame, the result to act on: a frame,
/// else that it was overwritten (an error of the step), else a frame that
/// could not be read, else not yet there.
pub(crate) fn better(
    a: Result<StepPoll, rfm_frames::slot::ReadError>,
    b: Result<StepPoll, rfm_frames::slot::ReadError>,
) -> Result<StepPoll, rfm_frames::slot::ReadError> {
    let rank = |r: &Result<StepPoll, _>| match r {
        Ok(StepPoll::Ready(_)) => 3,
        Ok(StepPoll::Overwritten { .. }) => 2,
        Err(_) => 1,
        Ok(StepPoll::NotYet) => 0,
    };
    if rank(&b) > rank(&a) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_to_b_is_a_failover_and_each_change_is_told_once() {
        let now = Instant::now();
        let mut s = RingStats::default();
        assert!(
            s.delivers(Network::B, now, Duration::from_secs(1)),
            "nothing yet"
        );
        s.took(Network::A, now);
        s.took(Network::A, now);
        assert_eq!(s.take_change(), None);
        s.took(Network::B, now);
        assert_eq!((s.failovers(), s.take_change()), (1, Some(Network::B)));
        assert_eq!(s.take_change(), None, "told once");
        s.took(Network::A, now);
        assert_eq!((s.failovers(), s.take_change()), (1, Some(Network::A)));
        assert_eq!((s.taken(Network::A), s.taken(Network::B)), (3, 1));
        let later = now + Duration::from_secs(2);
        s.took(Network::A, later);
        assert!(s.delivers(Network::A, later, Duration::from_secs(1)));
        assert!(!s.delivers(Network::B, later, Duration::from_secs(1)));
    }
}
