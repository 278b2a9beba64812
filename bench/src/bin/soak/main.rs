//! `soak`: two coupled processes for a long run, every value checked.
//!
//! `cargo run --release -p rfm-bench --bin soak -- [--steps N] [--fmu PATH]`
//! (after `scripts/soak.sh` packed target/bench/fmu/rfm_attitude.fmu, or any
//! FMU by `--fmu`). Two processes load the packaged FMU
//! with dlopen and step in lockstep (lag 0, spin) over a fresh `shm:` memory,
//! N steps (default 10^8). Each checks the peer values of every step against the
//! peer's model and classifies what it gets: the right step, a duplicate (the
//! previous step's values again), out of order (an older step), or corrupted
//! (values the peer never sent); the FMU's own `link.lost`, `link.badFrames` and
//! `link.restarts` are added. All must be 0. It also reports the distribution of
//! the master's step time (set + fmi2DoStep + get).
//!
//! `--device A+B --faults EVERY [--library PATH] [--seed N]`: the two nodes
//! couple on two emulated redundant rings (each a board of ring A and one of
//! ring B, through the emulator `--library`, default
//! target/release/librfm2g.so), and node 0 cuts a board of one ring, drawn
//! from the printed seed (either ring, either node's board), at every
//! multiple of EVERY steps and mends it EVERY/2 steps later: every value is
//! checked as on one memory, and the frames must fail over without a loss.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use args::{args, Args};
use faults::{board, Cutter, Faults};
use fmu_model::fmi2::fmi2OK;
use histogram::Histogram;
use rfm_bench::fmu::Fmu;
use rfm_memory::{DeviceSetting, DeviceSpec};

mod args;
mod faults;
mod histogram;
use serde_json::{json, Value};

/// Node `node`'s inputs at step k: the step is recoverable from each value.
fn inputs(node: u64, k: u64) -> [f64; 3] {
    let x = k as f64;
    [x, -x - node as f64, (node * 1000 + k % 1000) as f64]
}

/// One soak process: node `me` on `device` (through the emulator `library`
/// on emulated rings), cutting and mending boards as `faults` say.
fn node(
    fmu_path: &Path,
    (device, library): (&str, Option<&Path>),
    me: u64,
    steps: u64,
    faults: Option<Faults>,
) -> Result<Value> {
    let dir = std::env::temp_dir().join("rfm-soak");
    let fmu = Fmu::load(fmu_path, &dir)?;
    let library = library.map(|l| l.display().to_string());
    let mut strings = vec![("device", device), ("waitStrategy", "spin")];
    if let Some(library) = &library {
        strings.push(("rfm2gLibrary", library));
    }
    let mut session = fmu.start(
        &strings,
        &[("nodeSlot", me as i32), ("peerSlot", 1 - me as i32)],
    )?;
    let mut cutter = faults.filter(|_| me == 0).map(Cutter::new);
    let started = Instant::now();
    let (received, hist) = run_steps(&mut session, cutter.as_mut(), me, steps)?;
    let seconds = started.elapsed().as_secs_f64();
    if let Some(c) = &mut cutter {
        c.finish()?;
    }
    let rings = match library {
        Some(_) => rings(&session, cutter.as_ref())?,
        None => Value::Null,
    };
    let Received {
        duplicated,
        out_of_order,
        corrupted,
    } = received;
    Ok(json!({
        "rings": rings,
        "node": me,
        "steps": steps,
        "seconds": seconds,
        "lost": session.integer("link.lost")?,
        "bad_frames": session.integer("link.badFrames")?,
        "restarts": session.integer("link.restarts")?,
        "duplicated": duplicated,
        "out_of_order": out_of_order,
        "corrupted": corrupted,
        "median_ns": hist.percentile(0.5),
        "p99_ns": hist.percentile(0.99),
        "p99_9_ns": hist.percentile(0.999),
        "p99_99_ns": hist.percentile(0.9999),
        "max_ns": hist.max,
    }))
}

/// Node `me`'s `steps` steps, each checked against what its peer sent, the
/// cuts and mends of `cutter` made on the way: what it received, and how
/// long each step took.
fn run_steps(
    session: &mut rfm_bench::fmu::Session,
    mut cutter: Option<&mut Cutter>,
    me: u64,
    steps: u64,
) -> Result<(Received, Histogram)> {
    let (mut received, mut hist, mut got) = (Received::default(), Histogram::new(), [0.0; 3]);
    let (started, mut report) = (Instant::now(), Instant::now());
    for k in 0..steps {
        if let Some(cutter) = cutter.as_deref_mut() {
            cutter.at(k)?;
        }
        let t = Instant::now();
        let status = session.step(k, &inputs(me, k), &mut got);
        hist.add(t.elapsed().as_nanos() as u64);
        if status != fmi2OK {
            bail!("node {me}: step {k} failed (status {status})");
        }
        received.check(&got, 1 - me, k);
        if me == 0 && report.elapsed().as_secs() >= 10 {
            report = Instant::now();
            let rate = k as f64 / started.elapsed().as_secs_f64();
            eprintln!("soak: {k} of {steps} steps, {rate:.0} steps/s");
        }
    }
    Ok((received, hist))
}

/// The rings' figures of a node on emulated rings: the cuts made, the
/// failovers and the frames each ring gave.
fn rings(session: &rfm_bench::fmu::Session, cutter: Option<&Cutter>) -> Result<Value> {
    Ok(json!({
        "faults": cutter.map_or(0, |c| c.made),
        "failovers": session.integer("ring.failovers")?,
        "frames_a": session.integer("ring.a.frames")?,
        "frames_b": session.integer("ring.b.frames")?,
    }))
}

/// What a node's step gave of its peer's values that was not the peer's
/// value of that step.
#[derive(Default)]
struct Received {
    duplicated: u64,
    out_of_order: u64,
    corrupted: u64,
}

impl Received {
    /// `got` at step `k` against what `peer` sent at `k`.
    fn check(&mut self, got: &[f64; 3], peer: u64, k: u64) {
        if *got == inputs(peer, k) {
            return;
        }
        let j = got[0];
        let sent = j >= 0.0 && j.fract() == 0.0 && *got == inputs(peer, j as u64);
        match (sent, j as u64) {
            (true, j) if j + 1 == k => self.duplicated += 1,
            (true, j) if j < k => self.out_of_order += 1,
            _ => self.corrupted += 1,
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("soak: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<bool> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf();
    let Some(a) = args(&root)? else {
        return Ok(true);
    };
    let rings = |tag: &str| [format!("{tag}-a"), format!("{tag}-b")];
    if let Some((me, device)) = &a.child {
        // A child's rings are named in its device; its faults by its parent.
        let faults = a.faults.map(|every| Faults {
            every,
            seed: a.seed.unwrap_or(1),
            library: a.library.clone(),
            rings: rings_of(device),
        });
        let library = a.redundant.then_some(a.library.as_path());
        println!("{}", node(&a.fmu, (device, library), *me, a.steps, faults)?);
        return Ok(true);
    }
    if !a.fmu.is_file() {
        bail!(
            "{} is missing: run `cargo run --release -p build-fmu` first",
            a.fmu.display()
        );
    }
    if a.redundant && !a.library.is_file() {
        bail!(
            "{} is missing: the emulated rings need the emulator (cargo build --release -p \
             rfm2g-sim), or name it with --library",
            a.library.display()
        );
    }
    let tag = format!("rfm-soak-{}", std::process::id());
    let setup = match a.redundant {
        true => Setup::Rings(rings(&tag)),
        false => Setup::Shm(tag),
    };
    // Every node's line, the failed ones too.
    let results = pair(&a, &setup)?;
    // A cut copies its ring's memory into the board's island word by word
    // while the peer writes: the island may hold a torn frame, which the CRC
    // catches (a bad frame, counted) and the other ring gives whole. At most
    // one a cut is expected; a value wrong or missing never is.
    let cuts: u64 = results
        .iter()
        .filter_map(|r| r["rings"]["faults"].as_u64())
        .sum();
    let judged: Vec<bool> = results.iter().map(|r| judge(r, cuts)).collect();
    let clean = judged.iter().all(|&exact| exact);
    if clean {
        println!("soak: passed: every value of every step exact on both nodes");
    }
    Ok(clean)
}

/// The memory of a run: one `shm:` object, or two emulated rings.
enum Setup {
    Shm(String),
    Rings([String; 2]),
}

impl Setup {
    /// Node `me`'s device string.
    fn device(&self, me: u64) -> String {
        match self {
            Setup::Shm(name) => format!("shm:{name}"),
            Setup::Rings([a, b]) => format!("{}+{}", board(a, me), board(b, me)),
        }
    }

    /// Removes what the run made, and the islands of boards left cut.
    fn remove(&self) {
        match self {
            Setup::Shm(name) => {
                let _ = rfm_memory::backend::shm::unlink(name);
            }
            Setup::Rings(rings) => {
                for ring in rings {
                    let object = format!("rfm2g-sim.{ring}");
                    let _ = rfm_memory::backend::shm::unlink(&object);
                    for node in 0..4 {
                        let _ =
                            rfm_memory::backend::shm::unlink(&format!("{object}.island.{node}"));
                    }
                }
            }
        }
    }
}

/// The two rings a node's device `A+B` names.
fn rings_of(device: &str) -> [String; 2] {
    let ring = |board: &DeviceSpec| match board {
        DeviceSpec::Rfm2g { path } => path.split('/').nth(3).unwrap_or_default().to_owned(),
        other => other.to_string(),
    };
    match device.parse() {
        Ok(DeviceSetting::Rings(a, b)) => [ring(&a), ring(&b)],
        Ok(DeviceSetting::One(a)) => [ring(&a), ring(&a)],
        _ => [device.to_owned(), device.to_owned()],
    }
}

/// Runs the two soak processes over one fresh memory; their results.
fn pair(a: &Args, setup: &Setup) -> Result<Vec<Value>> {
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let faults = match a.faults {
        Some(every) => format!(
            ", a board of one ring cut every {every} steps and mended {} later (seed {seed}: \
             --seed {seed} replays the cuts)",
            every / 2
        ),
        None => String::new(),
    };
    println!(
        "soak: two processes, {} lockstep steps each through {} over {}{faults}",
        a.steps,
        a.fmu.display(),
        setup.device(0)
    );
    let exe = std::env::current_exe()?;
    let children: Vec<_> = (0..2u64)
        .map(|me| {
            let mut c = Command::new(&exe);
            c.arg("--fmu").arg(&a.fmu).arg("--library").arg(&a.library);
            c.args(["--steps", &a.steps.to_string(), "--seed", &seed.to_string()]);
            if a.redundant {
                c.args(["--device", "A+B"]);
            }
            if let Some(every) = a.faults {
                c.args(["--faults", &every.to_string()]);
            }
            c.args(["--child", &me.to_string(), &setup.device(me)])
                .stdout(Stdio::piped())
                .spawn()
                .context("start a soak process")
        })
        .collect::<Result<_>>()?;
    let mut results = Vec::new();
    let mut failed = None;
    for c in children {
        let out = c.wait_with_output()?;
        if !out.status.success() {
            failed.get_or_insert(out.status);
            continue;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        results.push(serde_json::from_str::<Value>(text.trim()).context("a soak result")?);
    }
    setup.remove();
    if let Some(status) = failed {
        bail!("a soak process failed ({status})");
    }
    Ok(results)
}

/// Prints one node's result; whether every value of every step was exact
/// (and at most `cuts` bad frames were caught, one a ring cut).
fn judge(r: &Value, cuts: u64) -> bool {
    let allowed = |k: &str| if k == "bad_frames" { cuts } else { 0 };
    let bad: Vec<String> = [
        "lost",
        "duplicated",
        "out_of_order",
        "corrupted",
        "bad_frames",
        "restarts",
    ]
    .iter()
    .filter(|k| r[**k].as_u64().is_none_or(|n| n > allowed(k)))
    .map(|k| format!("{k} {}", r[*k]))
    .collect();
    println!(
        "node {}: {} steps in {:.1} s ({:.0} steps/s); lost {}, duplicated {}, out of order {}, \
         corrupted {}, bad frames {}, restarts {}; step time median {} ns, p99 {} ns, \
         p99.9 {} ns, p99.99 {} ns, max {} ns",
        r["node"],
        r["steps"],
        r["seconds"].as_f64().unwrap_or(0.0),
        r["steps"].as_f64().unwrap_or(0.0) / r["seconds"].as_f64().unwrap_or(1.0),
        r["lost"],
        r["duplicated"],
        r["out_of_order"],
        r["corrupted"],
        r["bad_frames"],
        r["restarts"],
        r["median_ns"],
        r["p99_ns"],
        r["p99_9_ns"],
        r["p99_99_ns"],
        r["max_ns"]
    );
    if !r["rings"].is_null() {
        let rings = &r["rings"];
        println!(
            "node {}: redundant rings: {} faults made here, {} failovers, {} frames from ring \
             A, {} from ring B; bad frames {} of at most {cuts} (one a cut: a frame torn in the \
             cut board's copy, caught by its CRC and taken from the other ring)",
            r["node"],
            rings["faults"],
            rings["failovers"],
            rings["frames_a"],
            rings["frames_b"],
            r["bad_frames"]
        );
    }
    if !bad.is_empty() {
        println!("node {}: FAILED: {}", r["node"], bad.join(", "));
    }
    bad.is_empty()
}
