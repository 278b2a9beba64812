//! Foreign nodes through the FMU: a struct one FMU writes in a lab's packed
//! layout (every C type, arrays, padding, big-endian) is read exactly by
//! another; a value the struct cannot hold is refused naming it; a writer that
//! stops is seen (`NODE.link.ok`, `NODE.age`).

mod common;

use common::{interface_fmu, unique, Fmu};
use fmu_model::fmi2::*;

const H: f64 = 0.001;

/// Two FMU nodes and the motion platform's struct, which node `sim` writes for
/// the lab's programs: big-endian, natural alignment (so padded), with a
/// seqlock counter the FMU keeps.
const LAB: &str = r#"
name = "lab"
[[node]]
name = "sim"
slot = 0
signals = [ { name = "roll", type = "Real" } ]
[[node]]
name = "ios"
slot = 1
signals = [ { name = "freeze", type = "Boolean" } ]
[[node]]
name = "motion"
offset = 8192
byte_order = "big"
writer = "sim"
handshake = { kind = "counter", field = "seq", counts = "seqlock" }
fields = [
  { name = "seq", type = "uint32" },
  { name = "mode", type = "int8" },
  { name = "cue", type = "double", count = 3, unit = "m/s2" },
  { name = "level", type = "int16" },
  { name = "axes", type = "uint16", count = 2 },
  { name = "gain", type = "float" },
  { name = "tick", type = "int64" },
  { name = "hours", type = "uint64" },
  { name = "code", type = "int32" },
  { name = "engaged", type = "bool" },
  { name = "small", type = "uint8" },
  { name = "label", type = "char[6]" },
  { name = "big", type = "uint32" },
]
"#;

fn node(node: &str, device: &str) -> Fmu {
    let fmu = interface_fmu(LAB, node);
    fmu.set_all(&[("device", device), ("syncMode", "free"), ("timeout", "0.5")]);
    fmu
}

/// The values step `k` sets: every type near its edges.
fn values(k: i64) -> Vec<(&'static str, String)> {
    vec![
        ("motion.mode", (-128 + k % 256).to_string()),
        ("motion.cue[0]", format!("{}", k as f64 * 0.125)),
        ("motion.cue[1]", format!("{}", -(k as f64) * 1e-3)),
        ("motion.cue[2]", "9.80665".to_owned()),
        ("motion.level", (-32768 + k).to_string()),
        ("motion.axes[0]", (65535 - k).to_string()),
        ("motion.axes[1]", k.to_string()),
        ("motion.gain", format!("{}", 0.5 + k as f64)),
        ("motion.tick", format!("{}", -(1i64 << 53) + k)),
        ("motion.hours", format!("{}", (1u64 << 53) - k as u64)),
        ("motion.code", (i32::MIN as i64 + k).to_string()),
        ("motion.engaged", (k % 2 == 0).to_string()),
        ("motion.small", (k % 256).to_string()),
        ("motion.label", format!("k{}", k % 10_000)),
        ("motion.big", (u32::MAX as i64 - k).to_string()),
    ]
}

/// What a reader shows for a value set as `text` (a String or a number).
fn shown(reader: &Fmu, name: &str) -> String {
    let (_, kind) = reader.vr(name);
    match kind {
        rfm_frames::fmi::FmiType::Real => format!("{}", reader.real(name)),
        rfm_frames::fmi::FmiType::Integer => reader.integer(name).to_string(),
        rfm_frames::fmi::FmiType::Boolean => reader.boolean(name).to_string(),
        rfm_frames::fmi::FmiType::String => reader.string(name),
    }
}

#[test]
fn a_struct_one_fmu_writes_in_a_labs_layout_another_reads_exactly() {
    let device = format!("loopback:{}", unique("foreign"));
    let (sim, ios) = (node("sim", &device), node("ios", &device));
    // The writer's marker is its own: no input of it.
    assert!(sim.model.variable("motion.seq").is_none());
    assert!(ios.model.variable("motion.seq").is_some());
    assert_eq!((sim.init(), ios.init()), (fmi2OK, fmi2OK));
    for k in 0..2_000i64 {
        let set = values(k);
        for (name, value) in &set {
            assert_eq!(
                sim.set(name, value),
                fmi2OK,
                "{name} = {value}: {:?}",
                sim.log()
            );
        }
        let t = k as f64 * H;
        assert_eq!(sim.step(t, H), fmi2OK, "{:?}", sim.log());
        assert_eq!(ios.step(t, H), fmi2OK, "{:?}", ios.log());
        // Every value is one its C type holds exactly (the float's too).
        for (name, value) in &set {
            assert_eq!(&shown(&ios, name), value, "step {k}: {name}");
        }
        // The seqlock counter the writer keeps: even, two per write (the
        // start wrote one).
        assert_eq!(ios.real("motion.seq"), (2 * (k + 2)) as f64, "step {k}");
        // Alive from the first move after the first struct seen.
        assert_eq!(ios.boolean("motion.link.ok"), k > 0, "step {k}");
    }
    assert_eq!(ios.integer("motion.link.inexact"), 0);
    assert_eq!(ios.integer("motion.link.gaveUp"), 0);
    // The writer stops: the reader's age grows past timeout, ok goes false.
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(ios.step(2_000.0 * H, H), fmi2OK);
    assert!(!ios.boolean("motion.link.ok"));
    assert!(ios.real("motion.age") >= 0.5, "{}", ios.real("motion.age"));
}

#[test]
fn a_struct_its_program_never_moves_again_is_read_but_not_alive() {
    let device = format!("loopback:{}", unique("foreign-still"));
    let (sim, ios) = (node("sim", &device), node("ios", &device));
    assert_eq!((sim.init(), ios.init()), (fmi2OK, fmi2OK));
    // sim wrote the struct once, at its start, and steps no more: ios reads
    // it, but nothing says its writer lives.
    for k in 0..50i64 {
        assert_eq!(ios.step(k as f64 * H, H), fmi2OK, "{:?}", ios.log());
        assert_eq!(ios.real("motion.seq"), 2.0, "step {k}");
        assert!(!ios.boolean("motion.link.ok"), "step {k}");
        assert_eq!(ios.real("motion.age"), -1.0, "step {k}");
    }
    // One write more: alive, and its age counts from it.
    assert_eq!(sim.step(0.0, H), fmi2OK, "{:?}", sim.log());
    assert_eq!(ios.step(50.0 * H, H), fmi2OK, "{:?}", ios.log());
    assert!(ios.boolean("motion.link.ok"));
    assert!((0.0..0.5).contains(&ios.real("motion.age")));
}

#[test]
fn a_value_the_struct_cannot_hold_is_refused_naming_the_field() {
    let device = format!("loopback:{}", unique("foreign-bad"));
    let cases = [
        ("motion.mode", "128", "outside the range", "int8"),
        ("motion.axes[1]", "-1", "outside the range", "uint16"),
        ("motion.gain", "1e39", "outside the range", "float"),
        ("motion.big", "0.5", "not a whole number", "uint32"),
        ("motion.label", "toolong", "at most 6 bytes", "char[6]"),
    ];
    for (name, value, says, ctype) in cases {
        // A refused set leaves the instance in Error: one instance a case.
        let sim = node("sim", &device);
        assert_eq!(sim.set(name, value), fmi2Error, "{name} = {value}");
        let err = sim.last_error();
        assert!(err.contains(name) && err.contains(ctype), "{err}");
        assert!(err.contains(says), "{err}");
    }
}

/// A 64-bit value past 2^53 reaches the reader rounded, counted and logged.
#[test]
fn a_64_bit_value_past_2_pow_53_is_counted_and_logged() {
    let device = format!("loopback:{}", unique("foreign-inexact"));
    let (sim, ios) = (node("sim", &device), node("ios", &device));
    assert_eq!((sim.init(), ios.init()), (fmi2OK, fmi2OK));
    // 2^60 is a Real exactly and a uint64; as a uint64 past 2^53.
    assert_eq!(sim.set("motion.hours", &format!("{}", 1u64 << 60)), fmi2OK);
    assert_eq!(sim.step(0.0, H), fmi2OK);
    assert_eq!(ios.step(0.0, H), fmi2OK);
    assert_eq!(ios.integer("motion.link.inexact"), 1);
    let log = ios.log();
    assert!(
        log.iter()
            .any(|(s, _, m)| *s == fmi2Warning && m.contains("beyond 2^53")),
        "{log:?}"
    );
}

/// `recordFile` holds the foreign structs the FMU read: each whole struct
/// once (the first, then each one its writer moved, none for a step that
/// found the same), with the values the FMU gave at that step.
#[test]
fn a_recording_holds_each_struct_the_fmu_read_once_as_it_read_it() {
    const STEPS: i64 = 300;
    let device = format!("loopback:{}", unique("foreign-rec"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ios.rec");
    let (sim, ios) = (node("sim", &device), node("ios", &device));
    ios.set("recordFile", file.to_str().unwrap());
    assert_eq!((sim.init(), ios.init()), (fmi2OK, fmi2OK));
    let (mut shown_at, mut ios_steps) = (Vec::new(), 0);
    let mut ios_step = || {
        assert_eq!(ios.step(ios_steps as f64 * H, H), fmi2OK, "{:?}", ios.log());
        ios_steps += 1;
    };
    for k in 0..STEPS {
        for (name, value) in values(k) {
            assert_eq!(sim.set(name, &value), fmi2OK);
        }
        assert_eq!(sim.step(k as f64 * H, H), fmi2OK);
        ios_step();
        // Steps that find the struct as it was record nothing.
        if k % 50 == 0 {
            ios_step();
        }
        let set = values(k);
        shown_at.push(set.iter().map(|(n, _)| shown(&ios, n)).collect::<Vec<_>>());
    }
    assert_eq!(ios.terminate(), fmi2OK, "{:?}", ios.log());
    let mut reader = rfm_record::Reader::open(&file).unwrap();
    let header = reader.header().clone();
    assert_eq!(header.structs.len(), 1);
    let motion = &header.structs[0];
    assert_eq!(motion.name, "motion");
    assert_eq!(motion.layout.order, rfm_frames::packed::ByteOrder::Big);
    let names: Vec<String> = motion.elements().into_iter().map(|(n, _)| n).collect();
    let mut structs = Vec::new();
    while let Some(r) = reader.next_record().unwrap() {
        if r.kind == rfm_record::Kind::Struct {
            assert_eq!(r.slot, 0);
            structs.push(motion.values(&r.body));
        }
    }
    assert_eq!(
        structs.len() as i64,
        STEPS,
        "one struct per write, each once"
    );
    for (k, (recorded, shown)) in structs.iter().zip(&shown_at).enumerate() {
        let seq = names.iter().position(|n| n == "seq").unwrap();
        let seq_value = recorded[seq].clone().unwrap();
        assert_eq!(
            seq_value.to_string(),
            format!("{}", 2 * (k + 2)),
            "step {k}"
        );
        for ((name, _), shown) in values(k as i64).iter().zip(shown) {
            let field = name.trim_start_matches("motion.");
            let i = names.iter().position(|n| n == field).unwrap();
            let v = recorded[i].clone().unwrap();
            let text = match v {
                rfm_frames::fmi::Value::Boolean(b) => b.to_string(),
                rfm_frames::fmi::Value::String(s) => s,
                v => v.to_string(),
            };
            assert_eq!(&text, shown, "step {k}: {name}");
        }
    }
}

/// Two FMUs built from files that disagree about one struct of the lab's
/// programs (its offset, byte order, a field's type, or whether it is there
/// at all) refuse each other, naming the struct and what differs: a struct
/// declared wrong is never read as right.
#[test]
fn fmus_whose_files_disagree_about_a_struct_refuse_each_other_naming_it() {
    const ROTOR: &str = r#"
[[node]]
name = "rotor"
offset = 12288
byte_order = "big"
handshake = "none"
fields = [
  { name = "seq", type = "uint32" },
  { name = "pitch", type = "float" },
  { name = "rpm", type = "int16" },
]
"#;
    let ours = format!("{LAB}{ROTOR}");
    // What either side's refusal says (each says "here" of its own file).
    for (theirs, says) in [
        (
            format!("{LAB}{}", ROTOR.replace("offset = 12288", "offset = 12544")),
            [
                "foreign node `rotor` lies at offset 0x3",
                "0x3000",
                "0x3100",
            ],
        ),
        (
            format!("{LAB}{}", ROTOR.replace("\"big\"", "\"little\"")),
            ["foreign node `rotor` is ", "big-endian", "little-endian"],
        ),
        (
            format!("{LAB}{}", ROTOR.replace("\"int16\"", "\"uint16\"")),
            [
                "foreign node `rotor` has as field 3",
                "`rpm` (int16)",
                "`rpm` (uint16)",
            ],
        ),
        (LAB.to_owned(), ["foreign node `rotor` is missing", "", ""]),
    ] {
        let device = format!("loopback:{}", unique("foreign-apart"));
        let sim = interface_fmu(&ours, "sim");
        let ios = interface_fmu(&theirs, "ios");
        for fmu in [&sim, &ios] {
            // In lockstep, as labs run: a peer of another layout is looked
            // for, and found where its own file put it.
            fmu.set_all(&[
                ("device", &device),
                ("lag", "1"),
                ("timeout", "2"),
                ("startupTimeout", "5"),
            ]);
            assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
        }
        let mut refusal = None;
        for k in 0..100 {
            let t = k as f64 * H;
            for fmu in [&sim, &ios] {
                if refusal.is_none() && fmu.step(t, H) != fmi2OK {
                    refusal = Some(fmu.last_error());
                }
            }
            if refusal.is_some() {
                break;
            }
        }
        let error = refusal.unwrap_or_else(|| {
            panic!(
                "coupled across another struct: {says:?}\nsim: {:?}\nios: {:?}",
                sim.log(),
                ios.log()
            )
        });
        assert!(
            says.iter().all(|s| error.contains(s)) && error.contains("fingerprint"),
            "{error}"
        );
    }
}

/// A node replayed from its recording (`device = replay:PATH`, which runs in
/// lockstep) gives the structs it read, at the steps it read them: every
/// foreign output equals the original run's at every step.
#[test]
fn a_replayed_node_gives_the_structs_it_read_at_the_steps_it_read_them() {
    const STEPS: i64 = 300;
    let device = format!("loopback:{}", unique("foreign-replay"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ios.rec");
    let lockstep = |fmu: Fmu| {
        fmu.set_all(&[("syncMode", "lockstep"), ("lag", "1"), ("timeout", "2")]);
        fmu
    };
    let (sim, ios) = (
        lockstep(node("sim", &device)),
        lockstep(node("ios", &device)),
    );
    ios.set("recordFile", file.to_str().unwrap());
    assert_eq!((sim.init(), ios.init()), (fmi2OK, fmi2OK));
    let names: Vec<&str> = values(0).into_iter().map(|(n, _)| n).collect();
    let outputs = |fmu: &Fmu| -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|n| shown(fmu, n)).collect();
        v.push(shown(fmu, "motion.seq"));
        v
    };
    let mut original = Vec::new();
    for k in 0..STEPS {
        for (name, value) in values(k) {
            assert_eq!(sim.set(name, &value), fmi2OK);
        }
        let t = k as f64 * H;
        assert_eq!(sim.step(t, H), fmi2OK, "{:?}", sim.log());
        assert_eq!(ios.step(t, H), fmi2OK, "{:?}", ios.log());
        original.push(outputs(&ios));
    }
    assert_eq!(ios.terminate(), fmi2OK, "{:?}", ios.log());
    let replayed = lockstep(node("ios", &format!("replay:{}", file.display())));
    assert_eq!(replayed.init(), fmi2OK, "{:?}", replayed.log());
    for (k, then) in original.iter().enumerate() {
        let t = k as f64 * H;
        assert_eq!(replayed.step(t, H), fmi2OK, "{:?}", replayed.log());
        assert_eq!(&outputs(&replayed), then, "step {k}");
    }
    // Not the start values: the structs were played.
    assert_ne!(original[STEPS as usize - 1], original[0]);
}
