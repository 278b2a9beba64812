//! Pacing to the wall clock (`realTimeFactor`): masters that step as fast as
//! they can (FMPy, fmusim, libcosim without its real-time option) couple with
//! labs that run in real time when one node holds the pace and the others wait
//! for it in lockstep.

use std::time::{Duration, Instant};

/// How late a step may end after its deadline before it counts as behind:
/// the scheduler's wake-up slack on a loaded PC.
pub const PACE_SLACK: Duration = Duration::from_millis(1);

/// The part of a deadline slept away; the rest is yielded, because sleeps
/// overshoot by tens of microseconds.
const SLEEP_MARGIN: Duration = Duration::from_micros(200);

/// Holds steps back until their time: step k returns no earlier than
/// `factor` × (its communication point − the first step's) after the first
/// step returned, and a step that ends late moves that origin on by its
/// lateness: the pace is kept from there, and each late step counts once.
///
/// The first step's end, not its start: a lockstep node's first step returns
/// once every peer it waits for has started, so the nodes of a lab count their
/// pace from (nearly) one moment, though their masters took different times to
/// load. A node that waits for fewer peers (one free of a slow starter) still
/// starts earlier than the others: it falls behind once, at its first wait for
/// them, and keeps their pace from then on, instead of counting every step.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    factor: f64,
    /// When the first step returned, and its communication point.
    origin: Option<(Instant, f64)>,
    /// Steps that ended more than [`PACE_SLACK`] after their deadline.
    behind: u64,
}

/// A step that fell behind its pace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Behind {
    pub late: Duration,
    /// The first time: warn.
    pub first: bool,
}

impl Pacer {
    pub(crate) fn new(factor: f64) -> Pacer {
        Pacer {
            factor,
            origin: None,
            behind: 0,
        }
    }

    /// Whether steps are paced at all (`realTimeFactor` > 0).
    #[inline]
    pub(crate) fn paces(&self) -> bool {
        self.factor > 0.0
    }

    /// The step at communication point `sim_time` has done its work: waits for
    /// its deadline, or counts it behind.
    pub(crate) fn finish(&mut self, sim_time: f64) -> Option<Behind> {
        if !self.paces() {
            return None;
        }
        let Some((start, t0)) = self.origin else {
            self.origin = Some((Instant::now(), sim_time));
            return None;
        };
        let due = Duration::try_from_secs_f64(((sim_time - t0) * self.factor).max(0.0)).ok()?;
        let deadline = start + due;
        let now = Instant::now();
        if now > deadline + PACE_SLACK {
            self.behind += 1;
            // The debt is dropped, not run off at full speed: the steps after
            // this one keep the pace from here (a node held back once by a peer
            // that started later counts once, not on every later step).
            self.origin = Some((start + (now - deadline), t0));
            return Some(Behind {
                late: now - deadline,
                first: self.behind == 1,
            });
        }
        if let Some(sleep) = deadline
            .checked_duration_since(now)
            .and_then(|d| d.checked_sub(SLEEP_MARGIN))
        {
            std::thread::sleep(sleep);
        }
        while Instant::now() < deadline {
            std::thread::yield_now();
        }
        None
    }

    /// Steps that fell behind so far.
    pub(crate) fn behind(&self) -> u64 {
        self.behind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "real-time")]
    fn steps_return_at_their_time_and_late_ones_are_counted_once_warned() {
        let mut p = Pacer::new(1.0);
        assert_eq!(p.finish(0.0), None);
        let t = Instant::now();
        for k in 1..5 {
            assert_eq!(p.finish(k as f64 * 0.01), None);
        }
        assert!(
            t.elapsed() >= Duration::from_millis(39),
            "{:?}",
            t.elapsed()
        );
        std::thread::sleep(Duration::from_millis(30));
        let late = p.finish(0.05).unwrap();
        assert!(
            late.first && late.late >= Duration::from_millis(15),
            "{late:?}"
        );
        // The pace is kept from the late step on: the next is on time again.
        let t = Instant::now();
        assert_eq!(p.finish(0.06), None);
        assert!(t.elapsed() >= Duration::from_millis(9), "{:?}", t.elapsed());
        std::thread::sleep(Duration::from_millis(30));
        assert!(!p.finish(0.07).unwrap().first);
        assert_eq!(p.behind(), 2);
        let mut off = Pacer::new(0.0);
        assert_eq!(off.finish(0.0), None);
        assert_eq!(off.finish(100.0), None);
    }
}
