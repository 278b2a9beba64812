//! A lab's existing RFM program (tests/c/lab_writer.c, built with cc against
//! the RFM2g API) writes a big-endian struct of every C type, with arrays and
//! the compiler's padding, in place at 1 kHz on an emulated ring, while an FMU
//! on another board reads it for 100,000 steps: every value the FMU gives is
//! that of one write the program made (never a mix of two), with the
//! program's `counter` and `flag` handshakes; with `none`, the reads that
//! needed a retry are reported. The FMU's master stops the program through a
//! word it writes (a foreign node of its own).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{c_program, interface_fmu, sim_library, unique, Fmu, RingGuard};
use fmu_model::fmi2::*;

const H: f64 = 0.001;
const STEPS: u64 = 100_000;
/// Steps of the lockstep run: one write of the program's (1 ms) each.
const LOCKSTEP_STEPS: u64 = 3_000;
const MASTER_ENV: &str = "RFM_LAB_PROGRAM_MASTER";

/// tests/c/lab_struct.h as an interface file declares it (natural alignment,
/// the default, gives the compiler's offsets).
const LAB: &str = r#"
name = "lab"
memory_size = 65536
[[node]]
name = "sim"
slot = 0
offset = 16384
signals = [ { name = "x", type = "Real" } ]
[[node]]
name = "motion"
offset = 4096
byte_order = "big"
{handshake}
fields = [
  { name = "marker", type = "uint32" },
  { name = "i8", type = "int8" },
  { name = "i16", type = "int16" },
  { name = "i32", type = "int32" },
  { name = "i64", type = "int64" },
  { name = "u8", type = "uint8" },
  { name = "u16", type = "uint16", count = 3 },
  { name = "u32", type = "uint32" },
  { name = "u64", type = "uint64" },
  { name = "f", type = "float", count = 2 },
  { name = "d", type = "double", count = 3 },
  { name = "on", type = "bool" },
  { name = "name", type = "char[7]" },
]
[[node]]
name = "control"
offset = 8192
writer = "sim"
handshake = "none"
fields = [ { name = "stop", type = "uint32" } ]
"#;

fn interface(mode: &str) -> String {
    let handshake = match mode {
        "counter" => r#"handshake = { kind = "counter", field = "marker" }"#,
        // The program's period declared: lockstep waits for its writes.
        "lockstep" => {
            return LAB
                .replacen("name = \"lab\"\n", "name = \"lab\"\nperiod = 0.001\n", 1)
                .replace(
                    "{handshake}",
                    r#"handshake = { kind = "counter", field = "marker", period = 0.001 }"#,
                )
        }
        "flag" => r#"handshake = { kind = "flag", field = "marker", value = 0x600DF00D }"#,
        _ => r#"handshake = "none""#,
    };
    LAB.replace("{handshake}", handshake)
}

/// The values of write `n` (lab_struct.h's `lab_values`), as the FMU shows
/// them: (variable, value as text).
fn expected(n: u64) -> Vec<(String, String)> {
    let mut v = vec![
        ("i8".to_owned(), ((n % 256) as i64 - 128).to_string()),
        (
            "i16".to_owned(),
            ((n * 3 % 65536) as i64 - 32768).to_string(),
        ),
        ("i32".to_owned(), (n as i64 * 7 - 1_000_000).to_string()),
        ("i64".to_owned(), format!("{}", -(n as i64) * 1_000_000_007)),
        ("u8".to_owned(), (n & 0xff).to_string()),
        ("u32".to_owned(), format!("{}", 4_000_000_000u64 - n)),
        ("u64".to_owned(), format!("{}", (1u64 << 52) + n)),
        ("on".to_owned(), (n & 1 == 1).to_string()),
        ("name".to_owned(), format!("n{:05}", n % 100_000)),
    ];
    for j in 0..3 {
        v.push((format!("u16[{j}]"), (n + j).to_string()));
        v.push((
            format!("d[{j}]"),
            format!("{}", n as f64 * 0.001 + j as f64),
        ));
    }
    for j in 0..2 {
        let f = n as f32 * 0.5 + j as f32;
        v.push((format!("f[{j}]"), format!("{}", f64::from(f))));
    }
    v
}

fn shown(fmu: &Fmu, name: &str) -> String {
    use rfm_frames::payload::FmiType;
    match fmu.vr(name).1 {
        FmiType::Real => format!("{}", fmu.real(name)),
        FmiType::Integer => fmu.integer(name).to_string(),
        FmiType::Boolean => fmu.boolean(name).to_string(),
        FmiType::String => fmu.string(name),
    }
}

/// The FMU's master: 100,000 steps reading the struct (lockstep: 3,000),
/// checking each value against the write its `i32` names, and counting the
/// steps that ran ahead of the program (its counter had not yet counted the
/// step's write); then stops the program.
fn read(mode: &str) {
    let (steps, sync) = match mode {
        "lockstep" => (LOCKSTEP_STEPS, "lockstep"),
        _ => (STEPS, "free"),
    };
    let sim = interface_fmu(&interface(mode), "sim");
    let lib = sim_library();
    sim.set_all(&[
        ("device", "/dev/rfm2g0"),
        ("rfm2gLibrary", lib.to_str().unwrap()),
        ("syncMode", sync),
    ]);
    assert_eq!(sim.init(), fmi2OK, "{:?}", sim.log());
    let (mut torn, mut seen, mut last, mut ahead) = (0u64, 0u64, 0u64, 0u64);
    let mut k = 0;
    let mut check = |sim: &Fmu, k: u64| -> u64 {
        let i32 = sim.integer("motion.i32") as i64;
        if (i32 + 1_000_000) % 7 != 0 || i32 + 1_000_000 <= 0 {
            return last; // no write yet (zeros)
        }
        let n = ((i32 + 1_000_000) / 7) as u64;
        assert!(n >= last, "step {k}: write {n} after write {last}");
        let wrong: Vec<String> = expected(n)
            .into_iter()
            .filter(|(name, value)| shown(sim, &format!("motion.{name}")) != *value)
            .map(|(name, value)| {
                format!(
                    "{name} {} (write {n}: {value})",
                    shown(sim, &format!("motion.{name}"))
                )
            })
            .collect();
        if !wrong.is_empty() {
            torn += 1;
            if torn <= 3 {
                println!("step {k}: a torn struct: {}", wrong.join(", "));
            }
        }
        if n != last {
            seen += 1;
        }
        last = n;
        n
    };
    while k < steps {
        assert_eq!(sim.step(k as f64 * H, H), fmi2OK, "{:?}", sim.log());
        check(&sim, k);
        // Step k needs the program's write k + 1 (its seqlock counts two).
        if mode != "flag" && mode != "none" && sim.real("motion.marker") < 2.0 * (k + 1) as f64 {
            ahead += 1;
        }
        k += 1;
    }
    if mode == "lockstep" {
        // The program stops: the next step waits for a write that never
        // comes, and says so.
        assert_eq!(sim.set("control.stop", "1"), fmi2OK);
        // A write or two may still come, if this process lagged the program.
        let mut tries = 0;
        while sim.step(k as f64 * H, H) == fmi2OK {
            tries += 1;
            assert!(tries < 10, "steps go on after the program stopped");
            k += 1;
        }
        let log = format!("{:?}", sim.log());
        assert!(
            log.contains("foreign node `motion`'s counter shows")
                && log.contains(&format!("this node's step {k} needs {}", k + 1)),
            "{log}"
        );
        println!("the step after the program stopped: {log}");
        println!(
            "{mode}: {steps} steps, {seen} writes seen, the last {last}, {torn} torn, {ahead} \
             ahead of the program, {} retries, {} given up",
            sim.integer("motion.link.retries"),
            sim.integer("motion.link.gaveUp")
        );
        return;
    }
    // Stop the program; read on until it has exited (its last write then read).
    assert_eq!(sim.set("control.stop", "1"), fmi2OK);
    for _ in 0..20 {
        assert_eq!(sim.step(k as f64 * H, H), fmi2OK, "{:?}", sim.log());
        k += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    let n = check(&sim, k);
    println!(
        "{mode}: {steps} steps, {seen} writes seen, the last {n}, {torn} torn, {ahead} ahead of \
         the program, {} retries, {} given up",
        sim.integer("motion.link.retries"),
        sim.integer("motion.link.gaveUp")
    );
}

/// The program and the FMU's master on two boards of a fresh ring: the
/// structs the master found torn, and its report; `None` in the master's
/// own process.
fn run(test: &str, mode: &str) -> Option<(u64, u64, String)> {
    if std::env::var(MASTER_ENV).as_deref() == Ok(mode) {
        read(mode);
        return None;
    }
    let ring = unique(&format!("lab-{mode}"));
    let _ring = RingGuard(ring.clone());
    let board = |node| format!("/dev/rfm2g0 ring={ring} node={node} size=64K");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/lab_writer.c");
    let writer = Command::new(c_program(&source))
        .args([
            "/dev/rfm2g0",
            if mode == "lockstep" { "counter" } else { mode },
        ])
        .env("RFM2G_SIM_DEVICES", board(1))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let master = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(MASTER_ENV, mode)
        .env("RFM2G_SIM_DEVICES", board(2))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = |c: std::process::Child, who: &str| {
        let o = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "{who}: {text}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        text
    };
    let read = out(master, "the FMU's master");
    let written: u64 = out(writer, "lab_writer").trim().parse().unwrap();
    let report = read
        .lines()
        .find(|l| l.starts_with(&format!("{mode}: ")))
        .unwrap_or_else(|| panic!("no report in {read}"))
        .to_owned();
    println!("{report} (the program made {written} writes)");
    for line in
        (read.lines()).filter(|l| l.contains("a torn struct") || l.starts_with("the step after"))
    {
        println!("{line}");
    }
    let number = |after: &str| -> u64 {
        let before = report.split(after).next().unwrap();
        before.split_whitespace().last().unwrap().parse().unwrap()
    };
    let steps = if mode == "lockstep" {
        LOCKSTEP_STEPS
    } else {
        STEPS
    };
    assert_eq!(number(" steps"), steps, "{report}");
    let last: u64 = report
        .split("the last ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    if mode != "lockstep" {
        assert_eq!(
            last, written,
            "the FMU's last struct is the program's last write: {report}"
        );
    }
    assert!(number(" writes seen") > 10, "{report}");
    Some((number(" torn"), number(" ahead"), report))
}

#[test]
fn a_lab_programs_seqlock_counter_never_lets_a_torn_struct_through() {
    if let Some((torn, ahead, report)) = run(
        "a_lab_programs_seqlock_counter_never_lets_a_torn_struct_through",
        "counter",
    ) {
        assert_eq!(torn, 0, "{report}");
        // Free: the FMU takes the newest struct, many steps ahead of the
        // program's writes (the lockstep test's control).
        assert!(ahead > STEPS / 2, "{report}");
    }
}

#[test]
fn a_lab_programs_flag_never_lets_a_torn_struct_through() {
    if let Some((torn, _, report)) = run(
        "a_lab_programs_flag_never_lets_a_torn_struct_through",
        "flag",
    ) {
        assert_eq!(torn, 0, "{report}");
    }
}

/// Without a handshake two copies must agree: what that cost (retries) and
/// what it let through (a writer stalled over both copies) are reported.
#[test]
fn a_lab_program_without_handshake_is_read_when_two_copies_agree() {
    if let Some((_, _, report)) = run(
        "a_lab_program_without_handshake_is_read_when_two_copies_agree",
        "none",
    ) {
        assert!(report.contains(" retries"), "{report}");
    }
}

/// The program's counter counts its steps at a declared period: in lockstep
/// the FMU's step k waits for its write k + 1 by the rule on time, never
/// running ahead of it; once the program stops, a step says what it waited
/// for.
#[test]
fn a_lab_programs_counter_of_a_declared_period_is_waited_for_in_lockstep() {
    if let Some((torn, ahead, report)) = run(
        "a_lab_programs_counter_of_a_declared_period_is_waited_for_in_lockstep",
        "lockstep",
    ) {
        assert_eq!((torn, ahead), (0, 0), "{report}");
    }
}
