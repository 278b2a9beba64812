//! `watch --interface` and `doctor --interface`: the structs a lab's own
//! programs write, read by their handshakes and shown by field; a struct
//! whose program does not move it is named.

use super::*;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rfm_frames::packed::{encode, StructWriter};
use rfm_frames::value::Value;
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

/// Node `ios` of [`LAB`] as a simulator starts it in `region`: its descriptor
/// and its first frames, so that `record` finds the coupling.
fn describe_ios(region: &Region) -> Interface {
    let lab = Interface::parse("lab.toml", LAB, &Reserved::NONE).unwrap();
    let map = lab.map().unwrap();
    let area = rfm_frames::area::window(region, &map.areas[0]).unwrap();
    let mut d = descriptor::encode(
        &lab.name,
        lab.fingerprint(),
        (&lab.nodes[0], &lab.declared()),
        &map.areas[0].payload,
        0x77,
    );
    d.resize(d.len().next_multiple_of(4), 0);
    area.write(DESCRIPTOR_OFFSET, &d).unwrap();
    let mut w = FramedWriter::new(area, Ring::of(&map.areas[0])).unwrap();
    let mut f = FrameBuf::new(map.areas[0].payload.len);
    for step in 0..3 {
        let h = Header {
            writer_slot: 0,
            mode: SyncMode::Lockstep,
            epoch: 0x77,
            fingerprint: lab.fingerprint(),
            step,
            ..Header::default()
        };
        w.publish(&mut f, &h).unwrap();
    }
    lab
}

#[test]
fn record_with_the_interface_holds_each_struct_once_and_show_and_export_decode_them() {
    let memory = shm(65536);
    let region = memory.memory.map(0, 65536).unwrap();
    describe_ios(&region);
    let (dir, file) = interface_file();
    let out = dir.path().join("lab.rec");
    let stop = Arc::new(AtomicBool::new(false));
    let writing = writer(region.clone(), stop.clone());
    let (code, text, err) = run(&[
        "record",
        &memory.device,
        "--out",
        out.to_str().unwrap(),
        "--seconds",
        "0.5",
        "--interface",
        &file,
    ]);
    stop.store(true, Ordering::Relaxed);
    writing.join().unwrap();
    assert_eq!(code, 0, "{text} {err}");
    let count = |name: &str| -> u64 {
        let line = (text.lines())
            .find(|l| l.starts_with(&format!("struct `{name}`: ")))
            .unwrap_or_else(|| panic!("{text}"));
        line.split(' ').nth(2).unwrap().parse().unwrap()
    };
    // `motion` nobody writes: its first struct, once. `flight` each write.
    assert_eq!(count("motion"), 1, "{text}");
    assert!(count("flight") > 100, "{text}");
    let mut reader = rfm_record::Reader::open(&out).unwrap();
    let flight = reader.header().structs[0].clone();
    assert_eq!(flight.name, "flight");
    assert_eq!(reader.header().structs[1].name, "motion");
    let (mut seqs, mut frames) = (Vec::new(), 0);
    while let Some(r) = reader.next_record().unwrap() {
        if r.kind != rfm_record::Kind::Struct {
            frames += 1;
            continue;
        }
        if r.slot != 0 {
            continue;
        }
        // Each whole: every field of one write k.
        let v: Vec<f64> = (flight.values(&r.body).into_iter())
            .map(|v| match v.unwrap() {
                Value::Real(x) => x,
                Value::Integer(i) => f64::from(i),
                v => panic!("{v:?}"),
            })
            .collect();
        let (seq, x, n0, n1) = (v[0], v[1], v[2], v[3]);
        assert_eq!(seq % 2.0, 0.0);
        assert_eq!(((x * 2.0) as i64 % 1000) as f64, n0, "{v:?}");
        assert_eq!(n1, -n0);
        seqs.push(seq);
    }
    assert_eq!(seqs.len() as u64, count("flight"));
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "each struct once, in order"
    );
    assert_eq!(frames, 1, "the node's newest frame");
    // show lists the structs and their records; export a row each.
    let (code, shown, err) = run(&["show", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        shown.contains(
            "struct      `flight` at 0x4000, 24 bytes, big-endian: 4 elements (seq, x, n[0], n[1])"
        ),
        "{shown}"
    );
    let records = format!("struct      `flight`: {} whole structs over ", seqs.len());
    assert!(shown.contains(&records), "{shown}");
    let (code, csv, err) = run(&["export", out.to_str().unwrap(), "--csv"]);
    assert_eq!(code, 0, "{err}");
    // `--csv OUT` names the CSV written, as a user reads the usage line.
    let csv_file = dir.path().join("lab.csv");
    let (code, _, err) = run(&[
        "export",
        out.to_str().unwrap(),
        "--csv",
        csv_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&csv_file).unwrap(), csv);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "kind,slot,node,step,time,wall_ns,ios.freeze,flight.seq,flight.x,flight.n[0],flight.n[1],motion.cue"
    );
    let rows: Vec<&str> = lines.filter(|l| l.starts_with("struct,,flight,")).collect();
    assert_eq!(rows.len(), seqs.len());
    let cells: Vec<&str> = rows[0].split(',').collect();
    assert_eq!(cells.len(), 12, "{}", rows[0]);
    assert_eq!((cells[6], cells[11]), ("", ""), "{}", rows[0]);
    assert_eq!(cells[7].parse::<f64>().unwrap(), seqs[0]);
    // A file of another interface than the nodes run is refused, and so is
    // one that declares a struct otherwise (moved, or of the other byte
    // order): its structs would be recorded as theirs.
    let other = dir.path().join("other.toml");
    for (edit, says) in [
        (LAB.replace("\"freeze\"", "\"frozen\""), ""),
        (
            LAB.replace("offset = 0x4000", "offset = 0x4200"),
            "(foreign node `flight` lies at offset 0x4200 here and 0x4000 there)",
        ),
        (
            LAB.replacen("byte_order = \"big\"", "byte_order = \"little\"", 1),
            "(foreign node `flight` is little-endian here and big-endian there)",
        ),
    ] {
        std::fs::write(&other, edit).unwrap();
        let (code, _, err) = run(&[
            "record",
            &memory.device,
            "--out",
            dir.path().join("other.rec").to_str().unwrap(),
            "--seconds",
            "0.1",
            "--interface",
            other.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("is not the interface the nodes run"), "{err}");
        assert!(err.contains(says), "{err}");
    }
}

/// `dump --decode` shows a struct of any length at any offset (the memory is
/// read in whole words; only the struct's own bytes are shown).
#[test]
fn dump_decodes_a_struct_of_57_bytes_at_an_odd_offset() {
    let memory = shm(65536);
    let region = memory.memory.map(0, 65536).unwrap();
    let text = r#"name = "lab"
memory_size = 65536
[[node]]
name = "ios"
slot = 0
signals = [ { name = "freeze", type = "Boolean" } ]
[[node]]
name = "rotor"
offset = 0x4001
align = "packed"
handshake = "none"
fields = [
  { name = "blade", type = "uint32", count = 14 },
  { name = "last", type = "uint8" },
]
"#;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rotor.toml");
    std::fs::write(&file, text).unwrap();
    let mut bytes = vec![0u8; 64];
    bytes[1 + 56] = 0xAB; // `last`, the struct's 57th byte
    bytes[1..5].copy_from_slice(&7u32.to_le_bytes());
    region.write(0x4000, &bytes).unwrap();
    let (code, out, err) = run(&[
        "dump",
        &memory.device,
        "0x4001",
        "57",
        "--decode",
        "--interface",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("`last` (uint8, little-endian) = 171"), "{out}");
    assert!(
        out.contains("`blade[0]` (uint32, little-endian) = 7"),
        "{out}"
    );
}

/// `watch` and `record` take a redundant device (`A+B`) and read the lab's
/// structs as the FMU does: a program whose stores no longer reach ring A
/// (its transmitter into it failed) is read from ring B, moving.
#[test]
fn watch_and_record_read_a_struct_from_ring_b_when_ring_a_stops_carrying_it() {
    let (a, b) = (shm(65536), shm(65536));
    let both = rfm_memory::Region::redundant(
        a.memory.map(0, 65536).unwrap(),
        b.memory.map(0, 65536).unwrap(),
    )
    .unwrap();
    both.withhold(rfm_memory::Network::A, true);
    describe_ios(&a.memory.map(0, 65536).unwrap());
    describe_ios(&b.memory.map(0, 65536).unwrap());
    let (dir, file) = interface_file();
    let stop = Arc::new(AtomicBool::new(false));
    let writing = writer(both, stop.clone());
    let device = format!("{}+{}", a.device, b.device);
    let (code, out, err) = run(&[
        "watch",
        &device,
        "--interface",
        &file,
        "--once",
        "--interval",
        "0.3",
        "--json",
    ]);
    let out_file = dir.path().join("ab.rec");
    let (rcode, rout, rerr) = run(&[
        "record",
        &device,
        "--out",
        out_file.to_str().unwrap(),
        "--seconds",
        "0.3",
        "--interface",
        &file,
    ]);
    stop.store(true, Ordering::Relaxed);
    writing.join().unwrap();
    assert_eq!(code, 0, "{out} {err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let flight = &v["foreign"][0];
    assert!(flight["moves"].as_u64().unwrap() > 50, "{flight}");
    assert_eq!(rcode, 0, "{rout} {rerr}");
    let flights = (rout.lines())
        .find(|l| l.starts_with("struct `flight`: "))
        .and_then(|l| l.split(' ').nth(2))
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{rout}"));
    assert!(flights > 50, "{rout}");
    // A redundant device of two kinds, or of memories of other sizes, is
    // refused naming it.
    let small = shm(4096);
    let (code, _, err) = run(&["watch", &format!("{}+{}", a.device, small.device), "--once"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("its two memories differ in size"), "{err}");
}
