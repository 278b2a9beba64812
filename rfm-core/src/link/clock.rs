//! The link's clock: what a step reads when it needs the time.
//!
//! Timeouts, heartbeat silence, `link.age` and `link.wait` all compare times of
//! one link, so they need a monotonic clock, not the OS's in particular. A step
//! reads it at least once, so its cost is on every step: the OS clock
//! (`clock_gettime`, vDSO) took 30 ns per read on the 2-core VM the benchmarks run
//! on, the CPU's time-stamp counter 11 ns. quanta reads the counter where it is
//! invariant and falls back to the OS clock where it is not.
//!
//! The counter is turned into a [`std::time::Instant`] by an offset taken at
//! open, so that [`super::node::Node`] (and its model test, which runs on a
//! virtual clock) keeps one time type. The counter's calibration drifts from the
//! OS clock by about 1 ppm (measured: 2.4 µs in 2 s): a 10 s timeout is off by
//! 10 µs. Nothing compares these times with another clock.

use std::time::Instant;

pub(crate) struct Clock {
    #[cfg(not(miri))]
    counter: quanta::Clock,
    #[cfg(not(miri))]
    raw0: u64,
    at0: Instant,
}

impl Clock {
    /// Calibrates the counter (about 1 ms, once per process).
    pub(crate) fn new() -> Clock {
        #[cfg(not(miri))]
        {
            let counter = quanta::Clock::new();
            let at0 = Instant::now();
            let raw0 = counter.raw();
            Clock { counter, raw0, at0 }
        }
        // Miri cannot run the counter's instructions.
        #[cfg(miri)]
        Clock {
            at0: Instant::now(),
        }
    }

    #[inline]
    pub(crate) fn now(&self) -> Instant {
        #[cfg(not(miri))]
        {
            let ns = self.counter.delta_as_nanos(self.raw0, self.counter.raw());
            self.at0 + std::time::Duration::from_nanos(ns)
        }
        #[cfg(miri)]
        {
            Instant::now().max(self.at0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_os_clock() {
        let clock = Clock::new();
        // Each read of ours bracketed by two of the OS's: however the thread is
        // preempted in between, our interval lies inside the outer OS interval.
        let (os_a1, a, os_a2) = (Instant::now(), clock.now(), Instant::now());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (os_b1, b, os_b2) = (Instant::now(), clock.now(), Instant::now());
        let ours = b.duration_since(a).as_secs_f64();
        let shortest = os_b1.duration_since(os_a2).as_secs_f64();
        let longest = os_b2.duration_since(os_a1).as_secs_f64();
        // 100 ppm of calibration error and a microsecond of rounding allowed.
        let slack = 1e-4 * longest + 1e-6;
        assert!(
            shortest - slack <= ours && ours <= longest + slack,
            "{ours} s, outside the OS's {shortest}..{longest} s"
        );
    }
}
