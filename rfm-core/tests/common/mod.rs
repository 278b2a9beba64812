//! Helpers shared by rfm-core's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
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

/// Unlinks a `shm:` object when the test ends, pass or fail.
#[cfg(not(miri))]
pub struct ShmGuard(pub String);

#[cfg(not(miri))]
impl Drop for ShmGuard {
    fn drop(&mut self) {
        let _ = rfm_core::backend::shm::unlink(&self.0);
    }
}

#[path = "../fake_rfm2g/build_lib.rs"]
mod build_lib;

/// The test library with the RFM2g vendor ABI (tests/fake_rfm2g), built once.
pub fn fake_rfm2g_library() -> PathBuf {
    build_lib::build(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake_rfm2g/fake_rfm2g.c"),
        env!("CARGO_TARGET_TMPDIR"),
    )
}
