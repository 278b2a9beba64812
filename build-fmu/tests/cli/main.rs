//! build-fmu as a user runs it on interface files: a bad file or node is reported
//! with what is wrong and where, before anything is built or written.

mod archive;

use std::process::Command;

/// The packaged attitude FMU, whose binaries tests repack (scripts/test.sh
/// packs it first).
fn packed_fmu() -> std::path::PathBuf {
    let packed =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fmu/rfm_attitude.fmu");
    assert!(
        packed.is_file(),
        "{}: scripts/test.sh packs it first",
        packed.display()
    );
    packed
}

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
        err.contains("lab.toml:5:33: unknown type `Float` of `a.x`: expected Real, Integer, Boolean, String or a C type"),
        "{err}"
    );
    assert!(!out.exists(), "something was written");
}

/// A user's mistake under `RUST_BACKTRACE=1` (set in many developers' shells)
/// is its message and its causes, not a crash's stack backtrace.
#[test]
fn an_input_error_is_its_message_and_causes_without_a_backtrace() {
    let out = Command::new(env!("CARGO_BIN_EXE_build-fmu"))
        .args(["--interface", "/nonexistent/lab.toml", "--node", "a"])
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        "build-fmu: error: cannot read /nonexistent/lab.toml: No such file or directory (os error 2)"
    );
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

/// The ring's budget: two nodes of 1,000 Reals at 100 kHz would need more
/// than an RFM2g ring carries (refused before anything is built or
/// written); at 10 kHz over half of it (a warning); at 1 kHz a few percent.
#[test]
fn a_coupling_that_needs_more_than_the_ring_is_refused_and_over_half_is_warned() {
    let scratch = folder();
    let signals: String = (0..1000)
        .map(|i| format!("{{ name = \"x{i}\", type = \"Real\" }},"))
        .collect();
    let run = |period: &str| {
        let file = scratch.path().join(format!("lab{period}.toml"));
        std::fs::write(
            &file,
            format!(
                "name = \"lab\"\nmemory_size = 67108864\nperiod = {period}\n[[node]]\nname = \"a\"\n\
                 slot = 0\nsignals = [{signals}]\n[[node]]\nname = \"b\"\nslot = 1\nsignals = [{signals}]\n"
            ),
        )
        .unwrap();
        let out = scratch.path().join(format!("out{period}"));
        let (_, err) = build_fmu(&[
            "--interface",
            file.to_str().unwrap(),
            "--node",
            "all",
            "--from",
            "/nonexistent/rfm_attitude.fmu",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(!out.exists(), "{period}: something was written");
        err
    };
    let over = run("0.00001");
    assert!(
        over.contains("would put 1614400800 bytes/s on an RFM2g ring, 950 % of the 170 MB/s"),
        "{over}"
    );
    assert!(
        !over.contains("taking binaries"),
        "refused before the binaries: {over}"
    );
    let half = run("0.0001");
    assert!(
        half.contains("warning: the coupling of") && half.contains("would take 95 % of the ring"),
        "{half}"
    );
    assert!(
        half.contains("/nonexistent/rfm_attitude.fmu"),
        "it goes on: {half}"
    );
    let fits = run("0.001");
    assert!(
        fits.contains("16144800 bytes/s in all: 9.5 % of an RFM2g ring's 170 MB/s"),
        "{fits}"
    );
    assert!(!fits.contains("warning"), "{fits}");
}

/// A coupling for shared memory only never touches a ring: with --shm-only
/// the same 950 % is reported and packing goes on (to the missing --from
/// FMU here: it got past the budget).
#[test]
fn a_coupling_for_shared_memory_only_is_reported_not_refused() {
    let scratch = folder();
    let signals: String = (0..1000)
        .map(|i| format!("{{ name = \"x{i}\", type = \"Real\" }},"))
        .collect();
    let file = scratch.path().join("fast.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"fast\"\nmemory_size = 67108864\nperiod = 0.00001\n[[node]]\nname = \"a\"\n\
             slot = 0\nsignals = [{signals}]\n[[node]]\nname = \"b\"\nslot = 1\nsignals = [{signals}]\n"
        ),
    )
    .unwrap();
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "--interface".to_owned(),
            file.to_str().unwrap().to_owned(),
            "--node".into(),
            "all".into(),
            "--from".into(),
            "/nonexistent/rfm_attitude.fmu".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |extra: &[&'static str]| {
        let a = args(extra);
        build_fmu(&a.iter().map(String::as_str).collect::<Vec<_>>()).1
    };
    let refused = run(&[]);
    assert!(refused.contains("pass --shm-only"), "{refused}");
    assert!(
        !refused.contains("/nonexistent/rfm_attitude.fmu"),
        "{refused}"
    );
    let shm = run(&["--shm-only"]);
    assert!(
        shm.contains("would take 950 % of an RFM2g ring, more than a ring carries")
            && shm.contains("packed for shared memory only (--shm-only"),
        "{shm}"
    );
    assert!(
        shm.contains("/nonexistent/rfm_attitude.fmu"),
        "past the budget: {shm}"
    );
    // The file's own device setting says it as well.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("\n", "\ndevice = \"shm:fast\"\n", 1)).unwrap();
    let by_setting = run(&[]);
    assert!(
        by_setting.contains("packed for shared memory only")
            && !by_setting.contains("pass --shm-only"),
        "{by_setting}"
    );
}

/// Every setting a file gives reaches the start value of its parameter in
/// the packed modelDescription.xml (a node's own over the file's), and the
/// memory map printed shows them.
#[test]
fn every_setting_of_the_file_is_a_start_value_of_the_packed_fmu() {
    use std::io::Read;
    let packed = packed_fmu();
    let scratch = folder();
    let interface = scratch.path().join("lab.toml");
    let top = [
        ("device", "\"shm:lab\""),
        ("lag", "2"),
        ("syncMode", "\"free\""),
        ("waitStrategy", "\"sleep\""),
        ("timeout", "2.5"),
        ("startupTimeout", "60"),
        ("idleTimeout", "30"),
        ("realTimeFactor", "1"),
        ("regionOffset", "4096"),
        ("rfm2gLibrary", "\"/opt/rfm2g/librfm2g.so\""),
    ];
    let settings: String = top.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
    std::fs::write(
        &interface,
        format!(
            "name = \"lab\"\n{settings}[[node]]\nname = \"a\"\nslot = 0\nlag = 0\n\
             signals = [{{ name = \"x\", type = \"Real\" }}]\n"
        ),
    )
    .unwrap();
    let out = scratch.path().join("lab_a.fmu");
    let (ok, err) = build_fmu(&[
        "--interface",
        interface.to_str().unwrap(),
        "--node",
        "a",
        "--from",
        packed.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(
        err.contains("device = shm:lab, lag = 0, syncMode = free"),
        "the map shows them: {err}"
    );
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
    let mut xml = String::new();
    zip.by_name("modelDescription.xml")
        .unwrap()
        .read_to_string(&mut xml)
        .unwrap();
    for (key, value) in top {
        let value = match key {
            "lag" => "0".to_owned(), // the node's own
            "timeout" | "startupTimeout" | "idleTimeout" | "realTimeFactor" => {
                format!("{:?}", value.parse::<f64>().unwrap())
            }
            _ => value.trim_matches('"').to_owned(),
        };
        let at = xml
            .find(&format!("name=\"{key}\""))
            .unwrap_or_else(|| panic!("no {key}"));
        let variable = &xml[at..at + xml[at..].find("</ScalarVariable>").unwrap()];
        assert!(
            variable.contains(&format!("start=\"{value}\"")),
            "{key}: {variable}"
        );
    }
}
