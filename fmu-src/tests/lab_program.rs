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

use common::lab::{interface, not_of_write, output_of, write_of, Report};
use common::{c_program, interface_fmu, sim_library, unique, Fmu, RingGuard};
use fmu_model::fmi2::*;

const H: f64 = 0.001;
const STEPS: u64 = 100_000;
/// Steps of the lockstep run: one write of the program's (1 ms) each.
const LOCKSTEP_STEPS: u64 = 3_000;
const MASTER_ENV: &str = "RFM_LAB_PROGRAM_MASTER";

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
        let Some(n) = write_of(sim) else {
            return last; // no write yet (zeros)
        };
        assert!(n >= last, "step {k}: write {n} after write {last}");
        let wrong = not_of_write(sim, n);
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
    let read = output_of(master, "the FMU's master");
    let written: u64 = output_of(writer, "lab_writer").trim().parse().unwrap();
    let report = Report::of(&read, mode);
    println!("{} (the program made {written} writes)", report.0);
    for line in
        (read.lines()).filter(|l| l.contains("a torn struct") || l.starts_with("the step after"))
    {
        println!("{line}");
    }
    let steps = if mode == "lockstep" {
        LOCKSTEP_STEPS
    } else {
        STEPS
    };
    assert_eq!(report.number(" steps"), steps, "{}", report.0);
    if mode != "lockstep" {
        assert_eq!(
            report.last(),
            written,
            "the FMU's last struct is the program's last write: {}",
            report.0
        );
    }
    assert!(report.number(" writes seen") > 10, "{}", report.0);
    Some((report.number(" torn"), report.number(" ahead"), report.0))
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
