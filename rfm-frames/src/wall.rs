//! The wall clock: what a recording's times are stamped with (nanoseconds
//! since the Unix epoch), read here alone so that every tool agrees on one
//! clock. A frame's `wall_clock_ns` comes from the link's step clock, which
//! is anchored on this one (`rfm_core::link`'s `clock.rs`).

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as precisely as the system tells it: a recording's start and the
/// times of what a tool records.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
