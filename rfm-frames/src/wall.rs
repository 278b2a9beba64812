//! The wall clock: what a frame's `wall_clock_ns` and a recording's times
//! are stamped with (nanoseconds since the Unix epoch), read here alone so
//! that a frame's stamp and a recording's agree on one clock.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as precisely as the system tells it: a recording's start and the
/// times of what a tool records.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Now, as cheaply as the system tells it: the stamp of every frame a step
/// publishes (diagnostics: `rfmctl watch` shows it; no decision reads it).
/// On Linux the coarse clock is read without a syscall or a TSC read, to a
/// tick's resolution; elsewhere [`now_ns`].
#[inline]
pub fn coarse_ns() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out pointer; CLOCK_REALTIME_COARSE always exists on Linux.
        if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) } == 0 {
            return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        }
    }
    now_ns()
}
