//! build-fmu as a user runs it on interface files: a bad file or node is reported
//! with what is wrong and where, before anything is built or written.

use std::process::Command;

/// A fresh folder for one case, removed when it drops.
fn folder() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Runs build-fmu with no compiler reachable (a build attempt would fail loudly);
/// returns (success, stderr).
fn build_fmu(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_build-fmu"))
        .args(args)
        .env("CARGO", "/bin/false")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_interface_file_is_reported_at_its_line_and_nothing_is_written() {
    let scratch = folder();
    let dir = scratch.path();
    let file = dir.join("lab.toml");
    std::fs::write(
        &file,
        "name = \"lab\"\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Float\" }]\n",
    )
    .unwrap();
    let out = dir.join("out");
    let (ok, err) = build_fmu(&[
        "--interface",
        file.to_str().unwrap(),
        "--node",
        "all",
        "--out",
        out.to_str().unwrap(),
        "--from",
        "/nonexistent/rfm_attitude.fmu",
    ]);
    assert!(!ok);
    assert!(
        err.contains("lab.toml:5:33: unknown type `Float` of `a.x`: expected Real, Integer, Boolean or String"),
        "{err}"
    );
    assert!(!out.exists(), "something was written");
}

#[test]
fn an_unknown_node_is_named_with_the_nodes_there_are() {
    let scratch = folder();
    let dir = scratch.path();
    let file = dir.join("lab.toml");
    std::fs::write(
        &file,
        "name = \"lab\"\n[[node]]\nname = \"cockpit\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]\n[[node]]\nname = \"visual\"\nslot = 1\nsignals = [{ name = \"y\", type = \"Integer\" }]\n",
    )
    .unwrap();
    let (ok, err) = build_fmu(&[
        "--interface",
        file.to_str().unwrap(),
        "--node",
        "tower",
        "--out",
        dir.join("x.fmu").to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("has no node `tower`; it has `cockpit`, `visual` (or give --node all)"),
        "{err}"
    );
    // The memory map is printed before the node is looked up.
    assert!(err.contains("cockpit             0        0x0"), "{err}");
    assert!(!dir.join("x.fmu").exists());
}

#[test]
fn a_missing_release_fmu_is_named() {
    let scratch = folder();
    let dir = scratch.path();
    let file = dir.join("lab.toml");
    std::fs::write(
        &file,
        "name = \"lab\"\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]\n",
    )
    .unwrap();
    let (ok, err) = build_fmu(&[
        "--interface",
        file.to_str().unwrap(),
        "--node",
        "a",
        "--out",
        dir.join("a.fmu").to_str().unwrap(),
        "--from",
        "/nonexistent/rfm_attitude.fmu",
    ]);
    assert!(!ok);
    assert!(
        err.contains("cannot open /nonexistent/rfm_attitude.fmu"),
        "{err}"
    );
    assert!(!dir.join("a.fmu").exists());
}
