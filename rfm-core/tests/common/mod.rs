//! Helpers shared by rfm-core's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

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

/// Builds `tests/fake_rfm2g/fake_rfm2g.c` into a shared library once per test binary.
pub fn fake_rfm2g_library() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake_rfm2g/fake_rfm2g.c");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let out = dir.join(format!("libfake_rfm2g-{}.so", std::process::id()));
        let status = std::process::Command::new("cc")
            .args([
                "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-pthread", "-o",
            ])
            .arg(&out)
            .arg(src)
            .status()
            .expect("a C compiler `cc` is needed to build the fake RFM2g library");
        assert!(status.success(), "cc failed to build {src}");
        out
    })
    .clone()
}
