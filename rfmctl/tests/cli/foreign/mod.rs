//! `watch --interface` and `doctor --interface`: the structs a lab's own
//! programs write, read by their handshakes and shown by field; a struct
//! whose program does not move it is named. `record`, `dump` and a
//! redundant device's structs in [`record`].

use super::*;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rfm_frames::fmi::Value;
use rfm_frames::packed::{encode, StructWriter};
use rfm_interface::{Interface, Reserved};

/// An FMU node (placed at 0) and two structs of the lab: `flight`, which the
/// test's writer rewrites (a big-endian seqlock), and `motion`, which nobody
/// writes.
const LAB: &str = r#"name = "lab"
memory_size = 65536
[[node]]
name = "ios"
slot = 0
signals = [ { name = "freeze", type = "Boolean" } ]
[[node]]
name = "flight"
offset = 0x4000
byte_order = "big"
handshake = { kind = "counter", field = "seq" }
fields = [
  { name = "seq", type = "uint32" },
  { name = "x", type = "double" },
  { name = "n", type = "int16", count = 2 },
]
[[node]]
name = "motion"
offset = 0x4100
handshake = "none"
fields = [ { name = "cue", type = "float" } ]
"#;

/// Rewrites `flight` every millisecond until `stop`: write k holds x = k/2
/// and n = [k % 1000, -(k % 1000)].
fn writer(region: Region, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let lab = Interface::parse("lab.toml", LAB, &Reserved::NONE).unwrap();
    let flight = lab.foreign_node("flight").unwrap().clone();
    std::thread::spawn(move || {
        let (layout, order) = (&flight.layout, flight.layout.order);
        let mut out =
            StructWriter::new(&region, 0x4000, layout.size, flight.mark(), order).unwrap();
        let mut bytes = vec![0; layout.size];
        let mut k = 0i32;
        while !stop.load(Ordering::Relaxed) {
            let m = k % 1000;
            encode(
                &layout.fields[1],
                0,
                &Value::Real(f64::from(k) / 2.0),
                &mut bytes,
                order,
            )
            .unwrap();
            encode(&layout.fields[2], 0, &Value::Integer(m), &mut bytes, order).unwrap();
            encode(&layout.fields[2], 1, &Value::Integer(-m), &mut bytes, order).unwrap();
            out.write(&bytes).unwrap();
            k += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
    })
}

fn interface_file() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lab.toml");
    std::fs::write(&path, LAB).unwrap();
    (dir, path.display().to_string())
}

#[test]
fn watch_and_doctor_read_a_labs_structs_by_field_and_name_the_one_nobody_moves() {
    let memory = shm(65536);
    let (_dir, file) = interface_file();
    let stop = Arc::new(AtomicBool::new(false));
    let writing = writer(memory.memory.map(0, 65536).unwrap(), stop.clone());
    // No FMU runs: the structs alone are shown.
    let (code, out, err) = run(&[
        "watch",
        &memory.device,
        "--interface",
        &file,
        "--once",
        "--interval",
        "0.3",
        "--json",
    ]);
    assert_eq!(code, 0, "{out} {err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let (flight, motion) = (&v["foreign"][0], &v["foreign"][1]);
    assert_eq!(flight["node"], "flight", "{v}");
    assert!(flight["moves"].as_u64().unwrap() > 50, "{flight}");
    assert!(flight["age"].as_f64().unwrap() < 0.1, "{flight}");
    // One whole write: every field of the same k (the seqlock's even count).
    let values = &flight["values"];
    let n = values["n[0]"].as_i64().unwrap();
    let x = values["x"].as_f64().unwrap();
    assert_eq!(((x * 2.0) as i64) % 1000, n, "{values}");
    assert_eq!(values["n[1]"].as_i64().unwrap(), -n, "{values}");
    assert_eq!(values["seq"].as_f64().unwrap() % 2.0, 0.0, "{values}");
    assert_eq!(motion["node"], "motion");
    assert_eq!(
        (motion["moves"].as_u64(), &motion["age"]),
        (Some(0), &json!(null))
    );
    assert_eq!(motion["values"]["cue"], 0.0);
    // The table: both, by field, and what each program did.
    let (code, out, err) = run(&["watch", &memory.device, "--interface", &file, "--once"]);
    assert_eq!(code, 0, "{out} {err}");
    assert!(out.contains("the lab's own structs"), "{out}");
    let flight_line = out
        .lines()
        .find(|l| l.trim_start().starts_with("flight"))
        .unwrap();
    assert!(
        flight_line.contains("0x4000, 24 bytes, 3 fields, big-endian, counter seq: moved"),
        "{out}"
    );
    assert!(
        out.contains(" x=") && out.contains(" n[1]=") && out.contains(" cue=0"),
        "{out}"
    );
    let motion_line = out
        .lines()
        .find(|l| l.trim_start().starts_with("motion"))
        .unwrap();
    assert!(motion_line.contains(": not moved in"), "{out}");
    // The doctor names the struct nobody moves, by its bytes, not the live one.
    let doctor = |seconds: &str| {
        let (code, out, err) = run(&[
            "doctor",
            &memory.device,
            "--interface",
            &file,
            "--seconds",
            seconds,
            "--json",
        ]);
        assert_eq!(code, 0, "{out} {err}");
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        let check = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "foreign-structs")
            .unwrap()
            .clone();
        check
    };
    let check = doctor("0.3");
    assert_eq!(check["verdict"], "warn", "{check}");
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains("`motion` at 0x4100 (its bytes): not moved in"),
        "{detail}"
    );
    assert!(!detail.contains("`flight`"), "{detail}");
    assert!(
        check["fix"].as_str().unwrap().contains("start the program"),
        "{check}"
    );
    // Its program stops: the doctor names it by its marker.
    stop.store(true, Ordering::Relaxed);
    writing.join().unwrap();
    let check = doctor("0.3");
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains("`flight` at 0x4000 (its marker `seq`): not moved in"),
        "{detail}"
    );
    // The dump names every byte of the struct, its padding too, by the file.
    let (code, out, err) = run(&[
        "dump",
        &memory.device,
        "0x4000",
        "32",
        "--decode",
        "--interface",
        &file,
    ]);
    assert_eq!(code, 0, "{out} {err}");
    let named: Vec<&str> = out.lines().filter(|l| l.contains("foreign node")).collect();
    let expected = [
        "0x00004000-0x00004003  foreign node `flight`: `seq` (uint32, big-endian) = ",
        "0x00004004-0x00004007  foreign node `flight`: padding",
        "0x00004008-0x0000400f  foreign node `flight`: `x` (double, big-endian) = ",
        "0x00004010-0x00004011  foreign node `flight`: `n[0]` (int16, big-endian) = ",
        "0x00004012-0x00004013  foreign node `flight`: `n[1]` (int16, big-endian) = -",
        "0x00004014-0x00004017  foreign node `flight`: padding",
    ];
    assert_eq!(named.len(), expected.len(), "{out}");
    for (line, start) in named.iter().zip(expected) {
        assert!(
            line.starts_with(start),
            "`{line}` is not `{start}…`:\n{out}"
        );
    }
}

#[test]
fn the_doctor_passes_structs_that_move_and_skips_without_an_interface() {
    let memory = shm(65536);
    let lab = LAB.split("[[node]]\nname = \"motion\"").next().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lab.toml");
    std::fs::write(&file, lab).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writing = writer(memory.memory.map(0, 65536).unwrap(), stop.clone());
    let (code, out, err) = run(&[
        "doctor",
        &memory.device,
        "--interface",
        file.to_str().unwrap(),
        "--seconds",
        "0.3",
    ]);
    stop.store(true, Ordering::Relaxed);
    writing.join().unwrap();
    assert_eq!(code, 0, "{out} {err}");
    assert!(
        out.contains(
            "PASS  foreign-structs every struct moved in 0.3 s (flight; regionOffset 0x0)"
        ),
        "{out}"
    );
    // A lab of the framed layout is not checked for the article's packet.
    assert!(
        out.contains("SKIP  packet-layout") && out.contains("nodes run the framed layout"),
        "{out}"
    );
    let (code, out, _) = run(&["doctor", &memory.device, "--seconds", "0.1"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("SKIP  foreign-structs no device or no --interface given"),
        "{out}"
    );
}

#[test]
fn an_interface_without_structs_or_with_an_error_is_refused_with_exit_2() {
    let memory = shm(65536);
    let dir = tempfile::tempdir().unwrap();
    let none = dir.path().join("none.toml");
    std::fs::write(
        &none,
        LAB.split("[[node]]\nname = \"flight\"").next().unwrap(),
    )
    .unwrap();
    let (code, _, err) = run(&[
        "watch",
        &memory.device,
        "--interface",
        none.to_str().unwrap(),
        "--once",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("declares no foreign node"), "{err}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, LAB.replace("\"int16\"", "\"int17\"")).unwrap();
    let (code, _, err) = run(&[
        "doctor",
        &memory.device,
        "--interface",
        bad.to_str().unwrap(),
        "--seconds",
        "0.1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("bad.toml:") && err.contains("type `int17` of field `flight.n`"),
        "{err}"
    );
    // A struct past the memory: the device's error names the node.
    let past = dir.path().join("past.toml");
    std::fs::write(
        &past,
        LAB.replace("memory_size = 65536", "memory_size = 1048576")
            .replace("offset = 0x4100", "offset = 0x80000"),
    )
    .unwrap();
    let (code, _, err) = run(&[
        "watch",
        &memory.device,
        "--interface",
        past.to_str().unwrap(),
        "--once",
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("foreign node `motion` at 0x80000"), "{err}");
}

mod record;
