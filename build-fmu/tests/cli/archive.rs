//! The archive build-fmu writes: a full disk leaves the previous `.fmu` as it
//! was, and what it packs is readable by all and carries no debug information.

use super::*;

/// A full disk used to leave an unreadable 2 MiB zip at --out, the previous
/// .fmu there gone. In a private mount namespace, on a tmpfs that the previous
/// FMU and a filler fill: build-fmu fails naming the file,
/// the previous FMU is byte for byte as it was, and no partial file remains.
/// Where unshare is refused (no CAP_SYS_ADMIN), it says so and skips.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_leaves_the_previous_fmu_intact_and_no_partial_file() {
    let packed =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fmu/rfm_attitude.fmu");
    let previous = std::fs::read(&packed).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: the packaged FMU is repacked here (scripts/test.sh packs it first)",
            packed.display()
        )
    });
    let scratch = folder();
    let (dir, interface) = (scratch.path().join("disk"), scratch.path().join("lab.toml"));
    std::fs::create_dir(&dir).unwrap();
    // Larger than the previous FMU (its descriptions fill the documentation
    // and the description), so that written in place it could not fit either.
    let signals: String = (0..2000)
        .map(|i| {
            format!(
                "{{ name = \"x{i}\", type = \"Real\", description = \"{}\" }},\n",
                "d".repeat(200)
            )
        })
        .collect();
    std::fs::write(
        &interface,
        format!("name = \"lab\"\nmemory_size = 67108864\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [\n{signals}]\n"),
    )
    .unwrap();
    let size_kib = previous.len() / 1024 + 512;
    let script = format!(
        "mount -t tmpfs -o size={size_kib}k tmpfs \"$1\" && cp \"$2\" \"$1/lab_a.fmu\" && \
         {{ dd if=/dev/zero of=\"$1/filler\" bs=4k 2>/dev/null; true; }} && \
         CARGO=/bin/false PATH=/nonexistent \"$3\" --interface \"$4\" --node a --from \"$2\" \
         --out \"$1/lab_a.fmu\"; echo \"build-fmu exit $?\"; cat \"$1/lab_a.fmu\" > \"$5\"; \
         ls -a \"$1\""
    );
    let copy = scratch.path().join("after.fmu");
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script, "sh"])
        .arg(&dir)
        .arg(&packed)
        .arg(env!("CARGO_BIN_EXE_build-fmu"))
        .arg(&interface)
        .arg(&copy)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stdout.contains("build-fmu exit")
        && (stderr.contains("Operation not permitted") || stderr.contains("Permission denied"))
    {
        println!("skipped: a private mount namespace was refused here: {stderr}");
        return;
    }
    assert!(
        stdout.contains("build-fmu exit 1"),
        "build-fmu must fail on the full disk:\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("lab_a.fmu (it is left as it was)") && stderr.contains("No space left"),
        "{stderr}"
    );
    assert!(
        std::fs::read(&copy).unwrap() == previous,
        "the previous FMU changed"
    );
    let left: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("build-fmu exit"))
        .skip(1)
        .filter(|l| !matches!(*l, "." | ".."))
        .collect();
    assert_eq!(left, ["filler", "lab_a.fmu"], "a partial file remains");
}

/// The packaged FMU (scripts/test.sh packs it first) repacked for a node: the
/// file is readable by every user's master (a temporary file is owner-only),
/// and its binaries carry no debug information (they carried about 10 MB
/// each).
#[cfg(unix)]
#[test]
fn a_packed_fmu_is_readable_by_all_and_its_binaries_carry_no_debug_information() {
    use object::{Object, ObjectSection};
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let packed = packed_fmu();
    let scratch = folder();
    let interface = scratch.path().join("lab.toml");
    std::fs::write(
        &interface,
        "name = \"lab\"\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]\n",
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
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .collect();
    for name in names.iter().filter(|n| n.starts_with("binaries/")) {
        let mut data = Vec::new();
        zip.by_name(name).unwrap().read_to_end(&mut data).unwrap();
        let file = object::File::parse(&*data).unwrap();
        let debug: Vec<String> = file
            .sections()
            .filter_map(|s| s.name().ok().map(str::to_owned))
            .filter(|n| n.starts_with(".debug_"))
            .collect();
        assert!(debug.is_empty(), "{name} carries {debug:?}");
    }
}
