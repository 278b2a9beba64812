//! Where the emulator library is, building it first. Included with `#[path]` by
//! the tests of rfm2g-sim, rfm-memory, rfm-core, fmu-src and rfmctl: a test cannot depend on
//! a cdylib, so it asks cargo for one (a no-op when it is current). Cargo is not
//! holding the build lock while tests run, so the nested build does not wait on
//! it. `RFM2G_SIM_LIBRARY=PATH` names a library built already instead (the
//! AddressSanitizer run, whose flags a nested build cannot reuse, sets it).

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

#[path = "names.rs"]
mod names;
// Not every test that includes this file names a ring.
#[allow(unused_imports)]
pub use names::unique;

/// `target/<profile>/librfm2g.so`, current with the sources.
pub fn sim_library() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        if let Some(lib) = std::env::var_os("RFM2G_SIM_LIBRARY") {
            let lib = PathBuf::from(lib);
            assert!(
                lib.exists(),
                "RFM2G_SIM_LIBRARY={} does not exist",
                lib.display()
            );
            return lib;
        }
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<test> -> target/<profile>
        let dir = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("tests run from target/<profile>/deps");
        let mut cargo = std::process::Command::new(env!("CARGO"));
        cargo.args(["build", "--quiet", "-p", "rfm2g-sim"]);
        match dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => {}
            Some(profile) => {
                cargo.args(["--profile", profile]);
            }
            None => panic!("unexpected target layout: {}", dir.display()),
        }
        let status = cargo.status().expect("run cargo to build rfm2g-sim");
        assert!(status.success(), "`cargo build -p rfm2g-sim` failed");
        let lib = dir.join("librfm2g.so");
        assert!(
            lib.exists(),
            "cargo built rfm2g-sim but {} is missing",
            lib.display()
        );
        lib
    })
    .clone()
}

/// Removes an emulated ring's shared memory when the test ends, pass or fail,
/// and the islands of the boards a test left cut.
pub struct RingGuard(pub String);

impl Drop for RingGuard {
    fn drop(&mut self) {
        let ring = format!("rfm2g-sim.{}", self.0);
        let _ = rfm_memory::backend::shm::unlink(&ring);
        for node in 0..=255 {
            let _ = rfm_memory::backend::shm::unlink(&format!("{ring}.island.{node}"));
        }
    }
}

/// The article's C program `c/PROGRAM.c` (sender, receiver) of rfm2g-sim,
/// built with `cc` against the emulator as a lab builds it against the
/// vendor's library.
pub fn article_program(program: &str) -> PathBuf {
    // Every crate of the workspace sits beside rfm2g-sim.
    let sim = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rfm2g-sim");
    c_program(&sim.join(format!("c/{program}.c")))
}

/// The C program `source`, built with `cc` against the emulator (the vendor's
/// header, the article's `portable.h` and the source's own folder on the
/// include path); once per test process (tests run in parallel, and one must
/// not rewrite a program another is starting).
pub fn c_program(source: &Path) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<PathBuf, PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap();
    if let Some(path) = built.get(source) {
        return path.clone();
    }
    let lib = sim_library();
    let sim = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rfm2g-sim");
    let name = source.file_stem().unwrap().to_string_lossy();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let lib_dir = lib.parent().unwrap();
    let status = std::process::Command::new("cc")
        .args([
            "-O2",
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
        ])
        .arg("-I")
        .arg(sim.join("../rfm2g-sys/include"))
        .arg("-I")
        .arg(sim.join("c"))
        .arg("-I")
        .arg(source.parent().unwrap())
        .arg(source)
        .arg("-L")
        .arg(lib_dir)
        .arg("-lrfm2g")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("a C compiler `cc` is needed");
    assert!(status.success(), "cc failed to build {}", source.display());
    built.insert(source.to_owned(), out.clone());
    out
}
