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

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use fmu_model::fmi2::fmi2OK;
use rfm_bench::fmu::Fmu;
use serde_json::{json, Value};

/// Node `node`'s inputs at step k: the step is recoverable from each value.
fn inputs(node: u64, k: u64) -> [f64; 3] {
    let x = k as f64;
    [x, -x - node as f64, (node * 1000 + k % 1000) as f64]
}

/// Step-time histogram: 16 sub-buckets per power of two, so percentiles are
/// within 1/16 of their value, in constant memory for 10^8 steps.
struct Histogram {
    counts: Vec<u64>,
    max: u64,
    total: u64,
}

impl Histogram {
    fn new() -> Histogram {
        Histogram {
            counts: vec![0; 64 * 16],
            max: 0,
            total: 0,
        }
    }

    fn index(ns: u64) -> usize {
        if ns < 16 {
            return ns as usize;
        }
        let top = 63 - ns.leading_zeros() as usize; // >= 4
        let sub = ((ns >> (top - 4)) & 15) as usize;
        (top - 3) * 16 + sub
    }

    fn low(index: usize) -> u64 {
        if index < 16 {
            return index as u64;
        }
        let (top, sub) = (index / 16 + 3, (index % 16) as u64);
        (16 + sub) << (top - 4)
    }

    fn add(&mut self, ns: u64) {
        self.counts[Self::index(ns)] += 1;
        self.max = self.max.max(ns);
        self.total += 1;
    }

    fn percentile(&self, p: f64) -> u64 {
        let want = ((self.total as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= want {
                return Self::low(i);
            }
        }
        self.max
    }
}

fn node(fmu_path: &Path, device: &str, me: u64, steps: u64) -> Result<Value> {
    let dir = std::env::temp_dir().join("rfm-soak");
    let fmu = Fmu::load(fmu_path, &dir)?;
    let mut session = fmu.start(
        &[("device", device), ("waitStrategy", "spin")],
        &[("nodeSlot", me as i32), ("peerSlot", 1 - me as i32)],
    )?;
    let peer = 1 - me;
    let (mut duplicated, mut out_of_order, mut corrupted) = (0u64, 0u64, 0u64);
    let mut hist = Histogram::new();
    let mut got = [0.0; 3];
    let started = Instant::now();
    let mut report = Instant::now();
    for k in 0..steps {
        let t = Instant::now();
        let status = session.step(k, &inputs(me, k), &mut got);
        hist.add(t.elapsed().as_nanos() as u64);
        if status != fmi2OK {
            bail!("node {me}: step {k} failed (status {status})");
        }
        if got != inputs(peer, k) {
            let j = got[0];
            let sent = j >= 0.0 && j.fract() == 0.0 && got == inputs(peer, j as u64);
            match (sent, j as u64) {
                (true, j) if j + 1 == k => duplicated += 1,
                (true, j) if j < k => out_of_order += 1,
                _ => corrupted += 1,
            }
        }
        if me == 0 && report.elapsed().as_secs() >= 10 {
            report = Instant::now();
            eprintln!(
                "soak: {k} of {steps} steps, {:.0} steps/s",
                k as f64 / started.elapsed().as_secs_f64()
            );
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(json!({
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
    let mut fmu = root.join(rfm_bench::fmu::PACKED).join("rfm_attitude.fmu");
    let mut steps = 100_000_000u64;
    let mut child: Option<(u64, String)> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--steps" => {
                steps = args
                    .next()
                    .context("--steps N")?
                    .parse()
                    .context("--steps N")?
            }
            "--fmu" => fmu = args.next().context("--fmu PATH")?.into(),
            "--child" => {
                let me = args.next().context("--child NODE DEVICE")?.parse()?;
                child = Some((me, args.next().context("--child NODE DEVICE")?));
            }
            "-h" | "--help" => {
                println!("usage: soak [--steps N (default 100000000)] [--fmu PATH]");
                return Ok(true);
            }
            other => bail!("unknown argument {other}; see --help"),
        }
    }
    if let Some((me, device)) = child {
        println!("{}", node(&fmu, &device, me, steps)?);
        return Ok(true);
    }
    if !fmu.is_file() {
        bail!(
            "{} is missing: run `cargo run --release -p build-fmu` first",
            fmu.display()
        );
    }
    // Every node's line, the failed ones too.
    let judged: Vec<bool> = pair(&fmu, steps)?.iter().map(judge).collect();
    let clean = judged.iter().all(|&exact| exact);
    if clean {
        println!("soak: passed: every value of every step exact on both nodes");
    }
    Ok(clean)
}

/// Runs the two soak processes over one fresh `shm:` memory; their results.
fn pair(fmu: &Path, steps: u64) -> Result<Vec<Value>> {
    let name = format!("rfm-soak-{}", std::process::id());
    let device = format!("shm:{name}");
    println!(
        "soak: two processes, {steps} lockstep steps each through {} over {device}",
        fmu.display()
    );
    let exe = std::env::current_exe()?;
    let children: Vec<_> = (0..2u64)
        .map(|me| {
            Command::new(&exe)
                .arg("--fmu")
                .arg(fmu)
                .args([
                    "--steps",
                    &steps.to_string(),
                    "--child",
                    &me.to_string(),
                    &device,
                ])
                .stdout(Stdio::piped())
                .spawn()
                .context("start a soak process")
        })
        .collect::<Result<_>>()?;
    let mut results = Vec::new();
    for c in children {
        let out = c.wait_with_output()?;
        let _ = rfm_memory::backend::shm::unlink(&name);
        if !out.status.success() {
            bail!("a soak process failed ({})", out.status);
        }
        let text = String::from_utf8_lossy(&out.stdout);
        results.push(serde_json::from_str::<Value>(text.trim()).context("a soak result")?);
    }
    Ok(results)
}

/// Prints one node's result; whether every value of every step was exact.
fn judge(r: &Value) -> bool {
    let bad: Vec<String> = [
        "lost",
        "duplicated",
        "out_of_order",
        "corrupted",
        "bad_frames",
        "restarts",
    ]
    .iter()
    .filter(|k| r[**k].as_u64() != Some(0))
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
    if !bad.is_empty() {
        println!("node {}: FAILED: {}", r["node"], bad.join(", "));
    }
    bad.is_empty()
}

#[cfg(test)]
mod tests {
    use super::Histogram;

    #[test]
    fn buckets_bracket_their_values_within_a_sixteenth() {
        for ns in [
            0u64,
            1,
            15,
            16,
            17,
            31,
            32,
            100,
            999,
            1000,
            123_456,
            u64::MAX / 2,
        ] {
            let i = Histogram::index(ns);
            let low = Histogram::low(i);
            assert!(
                low <= ns && ns - low <= low / 16 + 1,
                "{ns}: bucket {i} starts at {low}"
            );
            assert!(Histogram::low(i + 1) > ns, "{ns}");
        }
        let mut h = Histogram::new();
        for ns in 1..=1000 {
            h.add(ns);
        }
        assert_eq!(h.percentile(0.5), 496);
        assert_eq!(h.max, 1000);
    }
}
