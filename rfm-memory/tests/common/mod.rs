//! Helpers shared by rfm-memory's integration tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

/// A name no other test (in this or a concurrent test process) uses.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(not(miri))]
#[path = "../../../rfm2g-sim/tests/support/library.rs"]
mod sim;

/// The RFM2g emulator (`rfm2g-sim`): the vendor's ABI over shared memory.
#[cfg(not(miri))]
#[allow(unused_imports)]
pub use sim::{sim_library, RingGuard};
