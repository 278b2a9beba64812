//! The example masters (`simulators`, `lab`) as a user runs them: what the FMU
//! tells its master's logger reaches the user, not only the call's status.
//! Needs `target/fmu/rfm_attitude.fmu` (or RFM_FMU), as `fmi_crate.rs` does.

use std::path::PathBuf;
use std::process::Command;

fn fmu_path() -> PathBuf {
    std::env::var_os("RFM_FMU").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/fmu/rfm_attitude.fmu"),
        PathBuf::from,
    )
}

/// A node the FMU refuses: `simulators` used to print "node 0:
/// fmi2ExitInitializationMode: Error" and nothing of why.
#[test]
fn a_refused_node_is_reported_with_what_the_fmu_said() {
    let fmu = fmu_path();
    assert!(
        fmu.is_file(),
        "{} is missing: run `cargo run --release -p build-fmu` first",
        fmu.display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_simulators"))
        .arg(&fmu)
        .args(["--steps", "10", "--device", "shm:a/b"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    for node in ["aircraft0", "aircraft1"] {
        assert!(
            err.lines().any(|l| l.starts_with(node)
                && l.contains("[Error, logStatusError]: fmi2SetString: parameter device")
                && l.contains("'/' is not allowed")),
            "{node}: {err}"
        );
    }
}
