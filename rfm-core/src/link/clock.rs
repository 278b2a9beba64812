//! The clock a step reads: the CPU's time-stamp counter, kept on the OS's clock.
//!
//! A step reads the time at least once (the start of its wait, `link.age`,
//! liveness), so that read is on every step: the OS clock (`clock_gettime`,
//! vDSO) took 30 ns on the 2-core VM the benchmarks run on, the time-stamp counter
//! 11 ns. quanta reads the counter where it is invariant (falling back to the OS
//! clock where it is not) and scales it by a calibration it makes once per
//! process.
//!
//! That calibration is not to be trusted alone: it is measured over about a
//! millisecond, and a preemption inside that window skews it. On an idle machine
//! it was within 1.2 ppm of the OS clock, but under a loaded CI run a slot claim
//! timed by it ended early. So the counter only interpolates: every
//! [`ANCHOR_EVERY`] of counter time the clock is anchored on the OS clock again,
//! which bounds any scaling error to a fraction of that interval, and it never
//! runs backwards. Slot claims, which decide whether another session's slot may
//! be taken, do not use it at all: they read the OS clock (they are not on the
//! step path).
//!
//! The times are [`Instant`]s, so that [`super::node::Node`] (and its model test,
//! which runs on a virtual clock) keeps one time type.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How much counter time passes between two anchorings on the OS clock.
const ANCHOR_EVERY: Duration = Duration::from_millis(1);

/// Times are kept as nanoseconds since `base` (plain integers: cheaper to
/// compare and add than `Instant`s) and turned into an `Instant` once per read.
pub(crate) struct Clock {
    #[cfg(not(miri))]
    counter: quanta::Clock,
    /// The counter's value at the anchor `at`.
    #[cfg(not(miri))]
    raw: u64,
    base: Instant,
    /// The OS's wall clock (ns since 1970) at `base`.
    wall_at_base: u64,
    /// The OS clock at the last anchor.
    at: u64,
    /// The latest time given: a new anchor never goes back past it.
    last: u64,
}

impl Clock {
    /// Calibrates the counter (about 1 ms, once per process).
    pub(crate) fn new() -> Clock {
        // Miri cannot run the counter's instructions: it reads the OS clock.
        #[cfg(not(miri))]
        let counter = quanta::Clock::new();
        Clock {
            #[cfg(not(miri))]
            raw: counter.raw(),
            #[cfg(not(miri))]
            counter,
            base: Instant::now(),
            // Miri's isolation has no wall clock; nothing it runs records.
            #[cfg(not(miri))]
            wall_at_base: rfm_frames::wall::now_ns(),
            #[cfg(miri)]
            wall_at_base: 0,
            at: 0,
            last: 0,
        }
    }

    #[inline]
    pub(crate) fn now(&mut self) -> Instant {
        self.base + Duration::from_nanos(self.nanos())
    }

    /// The time as nanoseconds since `base`.
    #[inline]
    fn nanos(&mut self) -> u64 {
        #[cfg(not(miri))]
        {
            let raw = self.counter.raw();
            let since = self.counter.delta_as_nanos(self.raw, raw);
            if since < ANCHOR_EVERY.as_nanos() as u64 {
                self.last = self.last.max(self.at + since);
                return self.last;
            }
            self.raw = raw;
        }
        self.anchor()
    }

    /// The wall clock (ns since 1970) at the latest read, without reading the
    /// time again: the OS's wall clock when the clock was made, advanced by the
    /// clock (a wall clock set later does not show).
    pub(crate) fn last_wall_ns(&self) -> u64 {
        self.wall_at_base + self.last
    }

    #[cold]
    fn anchor(&mut self) -> u64 {
        self.at = Instant::now().duration_since(self.base).as_nanos() as u64;
        self.last = self.last.max(self.at);
        self.last
    }
}

/// A random, odd session epoch (odd: its token, the low word, is never 0).
pub(crate) fn new_epoch() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish() | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our interval between two reads against the OS's, each read of ours
    /// bracketed by two of the OS's: however the thread is preempted in between,
    /// ours lies inside the outer OS interval, give or take `slack` seconds.
    fn within_os(clock: &mut Clock, pause: Duration, slack: f64) {
        let (os_a1, a, os_a2) = (Instant::now(), clock.now(), Instant::now());
        std::thread::sleep(pause);
        let (os_b1, b, os_b2) = (Instant::now(), clock.now(), Instant::now());
        let ours = b.duration_since(a).as_secs_f64();
        let shortest = os_b1.duration_since(os_a2).as_secs_f64();
        let longest = os_b2.duration_since(os_a1).as_secs_f64();
        assert!(
            shortest - slack <= ours && ours <= longest + slack,
            "{ours} s, outside the OS's {shortest}..{longest} s"
        );
    }

    #[test]
    fn follows_the_os_clock() {
        let mut clock = Clock::new();
        // Across anchorings (20 ms): as the OS clock, to a microsecond.
        within_os(&mut clock, Duration::from_millis(20), 1e-6);
        // Within one anchoring (0.2 ms): the counter, scaled; 100 ppm of
        // calibration error and a microsecond of rounding allowed.
        within_os(&mut clock, Duration::from_micros(200), 1e-6);
    }

    #[test]
    fn a_wrong_scaling_is_corrected_at_the_next_anchor_and_time_never_runs_back() {
        let mut clock = Clock::new();
        // A base 50 ms ahead of the OS clock, as a skewed calibration would leave
        // the interpolation after a while.
        clock.at = clock.base.elapsed().as_nanos() as u64 + 50_000_000;
        let ahead = clock.now();
        // Past ANCHOR_EVERY: the next read anchors on the OS clock, which is behind.
        std::thread::sleep(Duration::from_millis(5));
        let anchored = clock.now();
        assert!(anchored >= ahead, "ran back at the anchor");
        let next = clock.now();
        assert!(next >= anchored, "ran back after the anchor");
        std::thread::sleep(Duration::from_millis(60));
        let os = Instant::now();
        let t = clock.now();
        assert!(
            t <= os + Duration::from_millis(1),
            "{:?} ahead of the OS clock after an anchor",
            t - os
        );
    }
}
