//! `record --interface` holds each struct once and refuses a file of another
//! declaration; `dump --decode` shows a struct of any length; `watch` and
//! `record` of a redundant device read a struct from the ring that carries it.

use super::*;

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
        Some(rfm_frames::session::Token::of(0x77)),
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
