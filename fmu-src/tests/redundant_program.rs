//! A lab's program writes its struct to both rings of a redundant pair
//! (tests/c/lab_writer.c on a board of each ring, a write to ring A then to
//! ring B, at 1 kHz) while an FMU on two other boards reads it through
//! `A+B`, and this process cuts the program's or the FMU's board of one ring
//! and mends it at moments drawn from a printed seed (`RFM_CUT_SEED=N`
//! replays them), from the moment both start: every struct the FMU gives is
//! one whole write, never one older than a struct it gave before,
//! `motion.link.ok` never drops once up (one ring always carries the writes),
//! the failovers are counted and logged, and after the last mend the FMU
//! gives the program's last write. Each handshake: seqlock and after-data
//! counters, flag, none.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::lab::{interface, not_of_write, output_of, write_of, Report};
use common::{c_program, interface_fmu, sim_library, unique, Fmu, RingGuard};
use fmu_model::fmi2::*;
use rfm_memory::backend::rfm2g::emulated;

const H: f64 = 0.001;
/// How long the FMU's master reads; the cuts end 0.5 s before.
const RUN: Duration = Duration::from_secs(4);
/// Shorter than the longest cut: a struct read from the cut ring alone
/// would drop `link.ok`.
const TIMEOUT: &str = "0.3";
const MASTER_ENV: &str = "RFM_REDUNDANT_PROGRAM_MASTER";
const RINGS_ENV: &str = "RFM_REDUNDANT_PROGRAM_RINGS";
/// A file the master makes once its FMU is initialized (reading from then).
const READY_ENV: &str = "RFM_REDUNDANT_PROGRAM_READY";

fn board(ring: &str, node: u8) -> String {
    format!("/dev/rfm2g-sim/{ring}/{node}/64K")
}

/// What the master saw, counted.
#[derive(Default)]
struct Seen {
    steps: u64,
    writes: u64,
    last: u64,
    torn: u64,
    older: u64,
    drops: u64,
}

/// The FMU's master: reads for [`RUN`], checking every step, then stops the
/// program and reads its last write.
fn read(mode: &str, rings: &str) {
    let (a, b) = rings.split_once(',').unwrap();
    let sim = interface_fmu(&interface(mode), "sim");
    let lib = sim_library();
    sim.set_all(&[
        ("device", &format!("{}+{}", board(a, 2), board(b, 2))),
        ("rfm2gLibrary", lib.to_str().unwrap()),
        ("syncMode", "free"),
        ("timeout", TIMEOUT),
        ("idleTimeout", TIMEOUT),
    ]);
    assert_eq!(sim.init(), fmi2OK, "{:?}", sim.log());
    std::fs::write(std::env::var(READY_ENV).unwrap(), "").unwrap();
    let mut seen = Seen::default();
    let mut up = false;
    let mut check = |sim: &Fmu, seen: &mut Seen| {
        seen.steps += 1;
        let ok = sim.boolean("motion.link.ok");
        up |= ok;
        seen.drops += u64::from(up && !ok);
        let Some(n) = write_of(sim) else { return };
        if n < seen.last {
            seen.older += 1;
            println!("step {}: write {n} after write {}", seen.steps, seen.last);
        }
        let wrong = not_of_write(sim, n);
        if !wrong.is_empty() {
            seen.torn += 1;
            println!("step {}: a torn struct: {}", seen.steps, wrong.join(", "));
        }
        seen.writes += u64::from(n != seen.last);
        seen.last = seen.last.max(n);
    };
    let start = Instant::now();
    let mut k = 0u64;
    while start.elapsed() < RUN {
        assert_eq!(sim.step(k as f64 * H, H), fmi2OK, "{:?}", sim.log());
        check(&sim, &mut seen);
        k += 1;
        thread::sleep(Duration::from_micros(200));
    }
    // Every board is whole again: stop the program, and read on until its
    // last write is read.
    assert_eq!(sim.set("control.stop", "1"), fmi2OK);
    for _ in 0..40 {
        assert_eq!(sim.step(k as f64 * H, H), fmi2OK, "{:?}", sim.log());
        check(&sim, &mut seen);
        k += 1;
        thread::sleep(Duration::from_millis(5));
    }
    let log = format!("{:?}", sim.log());
    // Said in one sentence: the struct, its step, the ring it came from.
    let step_named = (log
        .split("newest whole struct of foreign node `motion` at step ")
        .nth(1))
    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    let logged = step_named && log.contains("failover; motion.link.failovers counts them");
    println!(
        "{mode}: {} steps, {} writes seen, the last {}, {} torn, {} older, {} ok drops, {} \
         failovers, failover logged {logged}, {} retries, {} given up",
        seen.steps,
        seen.writes,
        seen.last,
        seen.torn,
        seen.older,
        seen.drops,
        sim.integer("motion.link.failovers"),
        sim.integer("motion.link.retries"),
        sim.integer("motion.link.gaveUp"),
    );
}

/// A small generator of the cuts' moments (xorshift), from a printed seed.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Cuts a board of one ring, then mends it, over and over (the rings in
/// turn, the program's board or the FMU's drawn), from before the master
/// starts until `stop`; every cut mended before it returns. Returns the
/// cuts made, in words, and how many of them came once `ready` existed.
fn cutter(
    lib: PathBuf,
    (rings, ready): ([String; 2], PathBuf),
    seed: u64,
    stop: Arc<AtomicBool>,
) -> (Vec<String>, usize) {
    let mut reading = 0;
    let mut draw = Draw(seed | 1);
    let mut made = Vec::new();
    let mut ring = draw.below(2) as usize;
    let pause = |ms: u64| thread::sleep(Duration::from_millis(ms));
    while !stop.load(Ordering::Relaxed) {
        pause(50 + draw.below(300));
        let node = 1 + draw.below(2) as u8;
        let device = board(&rings[ring], node);
        let down = 100 + draw.below(600);
        // A ring no board opened yet cannot be cut: that moment passes.
        if emulated::set_link(Some(&lib), &device, false).is_ok() {
            reading += usize::from(ready.exists());
            pause(down);
            emulated::set_link(Some(&lib), &device, true).expect("mend");
            let who = if node == 1 {
                "the program's"
            } else {
                "the FMU's"
            };
            made.push(format!(
                "{who} board of ring {} for {down} ms",
                "ab".as_bytes()[ring] as char
            ));
            ring = 1 - ring;
        }
    }
    (made, reading)
}

fn run(test: &str, mode: &str) {
    if std::env::var(MASTER_ENV).as_deref() == Ok(mode) {
        read(mode, &std::env::var(RINGS_ENV).unwrap());
        return;
    }
    let rings = [
        unique(&format!("rp-{mode}-a")),
        unique(&format!("rp-{mode}-b")),
    ];
    let _guards = rings.clone().map(RingGuard);
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("reading");
    let seed = std::env::var("RFM_CUT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("{mode}: cuts from seed {seed} (RFM_CUT_SEED={seed} replays them)");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/lab_writer.c");
    let writer = Command::new(c_program(&source))
        .args([
            &format!("{}+{}", board(&rings[0], 1), board(&rings[1], 1)),
            mode,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let master = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(MASTER_ENV, mode)
        .env(RINGS_ENV, rings.join(","))
        .env(READY_ENV, &ready)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let cuts = {
        let (lib, stop) = (sim_library(), stop.clone());
        let (rings, ready) = (rings.clone(), ready.clone());
        thread::spawn(move || cutter(lib, (rings, ready), seed, stop))
    };
    // Cuts from the start on; the run's own span counted from when the
    // master reads.
    let started = std::time::Instant::now();
    while !ready.exists() && started.elapsed() < Duration::from_secs(30) {
        thread::sleep(Duration::from_millis(5));
    }
    thread::sleep(RUN - Duration::from_millis(1500));
    stop.store(true, Ordering::Relaxed);
    let (cuts, reading) = cuts.join().unwrap();
    let read = output_of(master, "the FMU's master");
    let written: u64 = output_of(writer, "lab_writer").trim().parse().unwrap();
    println!(
        "{mode}: {} cuts ({reading} while the master read): {}",
        cuts.len(),
        cuts.join(", ")
    );
    for line in read.lines().filter(|l| l.starts_with("step ")).take(5) {
        println!("{line}");
    }
    let report = Report::of(&read, mode);
    println!("{} (the program made {written} writes)", report.0);
    let (number, text) = (|after: &str| report.number(after), &report.0);
    // Two cuts while the master reads: one of each ring.
    assert!(
        reading >= 2,
        "{reading} cuts while the master read: {cuts:?}"
    );
    assert_eq!(
        (number(" torn"), number(" older"), number(" ok drops")),
        (0, 0, 0),
        "{text}"
    );
    assert_eq!(report.last(), written, "{text}");
    assert!(number(" writes seen") > 100, "{text}");
    assert!(
        number(" failovers") > 0 && text.contains("failover logged true"),
        "{text}"
    );
}

#[test]
fn a_seqlock_struct_on_two_rings_rides_out_cuts_whole_and_in_order() {
    run(
        "a_seqlock_struct_on_two_rings_rides_out_cuts_whole_and_in_order",
        "counter",
    );
}

#[test]
fn an_after_data_counted_struct_on_two_rings_rides_out_cuts_whole_and_in_order() {
    run(
        "an_after_data_counted_struct_on_two_rings_rides_out_cuts_whole_and_in_order",
        "after",
    );
}

#[test]
fn a_flagged_struct_on_two_rings_rides_out_cuts_whole_and_in_order() {
    run(
        "a_flagged_struct_on_two_rings_rides_out_cuts_whole_and_in_order",
        "flag",
    );
}

#[test]
fn a_struct_without_handshake_on_two_rings_rides_out_cuts_whole_and_in_order() {
    run(
        "a_struct_without_handshake_on_two_rings_rides_out_cuts_whole_and_in_order",
        "none",
    );
}
