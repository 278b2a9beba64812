//! Helpers shared by rfm-memory's integration tests.
#![allow(dead_code)]

// Where the emulator is not built (Miri), names come alone.
#[cfg(miri)]
#[path = "../../../rfm2g-sim/tests/support/names.rs"]
mod names;
#[cfg(miri)]
pub use names::unique;

#[cfg(not(miri))]
#[path = "../../../rfm2g-sim/tests/support/library.rs"]
mod sim;

/// The RFM2g emulator (`rfm2g-sim`): the vendor's ABI over shared memory.
#[cfg(not(miri))]
#[allow(unused_imports)]
pub use sim::{sim_library, unique, RingGuard};

/// Unlinks a `shm:` object when the test ends, pass or fail.
#[cfg(not(miri))]
pub struct ShmGuard(pub String);

#[cfg(not(miri))]
impl Drop for ShmGuard {
    fn drop(&mut self) {
        let _ = rfm_memory::backend::shm::unlink(&self.0);
    }
}
