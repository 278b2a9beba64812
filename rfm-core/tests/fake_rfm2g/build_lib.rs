//! Builds `fake_rfm2g.c` into a shared library once per test binary. Included with
//! `#[path]` by the test helpers of rfm-core and fmu-src, which both load it.

use std::path::PathBuf;
use std::sync::OnceLock;

/// `src` is the path of fake_rfm2g.c; the library goes to `dir`.
pub fn build(src: &str, dir: &str) -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let out = PathBuf::from(dir).join(format!("libfake_rfm2g-{}.so", std::process::id()));
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
