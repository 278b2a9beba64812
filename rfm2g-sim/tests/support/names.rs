//! Names no other test uses. Included with `#[path]` by `library.rs` and by
//! the tests' common modules of rfm-memory, rfm-core and fmu-src, which need it
//! also where the emulator is not built (Miri).

use std::sync::atomic::{AtomicU32, Ordering};

/// A name (ring, `shm:` object, device string) no other test, in this or a
/// concurrent test process, uses: tests run in parallel on one /dev/shm.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
