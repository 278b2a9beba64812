//! `coupling --against DIR`: this tree's FMUs against a baseline's (DIR, which
//! `scripts/bench.sh --against REV` fills from REV built in a worktree), in one
//! run: the FMU cases interleaved round by round, each side's median of its
//! rounds' medians and their ratio; and the instructions of the FMU's own step,
//! counted by callgrind, which a noisy machine does not move.
//!
//! Timing on a shared VM drifts by tens of percent from one minute to the
//! next (case 5 is bimodal there), so a ratio is only worth something when
//! both sides ran side by side; the instruction count is exact, and it is
//! what the gate (`--gate PERCENT`) holds.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::json;

use rfm_bench::stats::Summary;

use crate::cases::REALS;
use crate::{callgrind, pair, Args};

/// The FMI calls of one step of case 5, whose instructions are counted: the
/// FMU's own step, nothing of the master's.
const COUNTED: [&str; 3] = ["fmi2SetReal", "fmi2DoStep", "fmi2GetReal"];

/// The same step through the FMI 3.0 face (`--fmu3`).
const COUNTED3: [&str; 3] = ["fmi3SetFloat64", "fmi3DoStep", "fmi3GetFloat64"];

/// Rounds when `--rounds` does not say: enough that each side draws both of
/// the VM's modes ([`best`]).
pub(crate) const ROUNDS: u32 = 9;

/// The cases compared: the FMU's own step (5), the attitude pair (2) and the
/// 1,000 Reals each way (7b).
const CASES: [&str; 3] = [
    "5 FMU alone: self-loop, free, set+step+get",
    "2 FMU coupled: lag 0, spin",
    "7b FMU coupled, 1,000 Reals each way: lag 0, spin",
];

/// One side of the comparison: the arguments its cases run with.
struct Side {
    name: &'static str,
    args: Args,
    /// Each case's medians, a round each.
    medians: [Vec<u64>; CASES.len()],
    instructions: Option<f64>,
}

/// What `--against` was given.
#[derive(Clone)]
pub(crate) struct Against {
    /// The baseline's FMUs, laid out as `target/bench/fmu` is.
    pub(crate) dir: PathBuf,
    /// How the baseline is named in the report (its revision).
    pub(crate) label: String,
    pub(crate) rounds: u32,
    /// Fail when the FMU's own step takes more than this many percent more
    /// instructions than the baseline's.
    pub(crate) gate: Option<f64>,
}

impl Against {
    /// The baseline in `dir`, with the label, rounds and gate the other
    /// flags give it once all are read.
    pub(crate) fn new(dir: String) -> Against {
        Against {
            dir: dir.into(),
            label: String::new(),
            rounds: 0,
            gate: None,
        }
    }
}

/// Runs the comparison; fails only on a broken case or a failed gate.
pub(crate) fn run(args: &Args, against: &Against) -> Result<()> {
    let mut base_args = args.clone();
    base_args.fmu = against.dir.join("rfm_attitude.fmu");
    base_args.reals = against.dir.clone();
    check_fmus(&base_args, &against.label)?;
    check_fmus(args, "this tree")?;
    let mut sides = [side("base", base_args), side("head", args.clone())];
    eprintln!(
        "coupling: A/B against {}: {} rounds of {} steps a case, the sides interleaved",
        against.label, against.rounds, args.steps
    );
    for round in 0..against.rounds {
        // Each round starts with the side the last one ended with: neither
        // always runs first on a machine that warms up or cools down.
        let first = (round % 2) as usize;
        alone(&mut sides, first, round)?;
        for i in [first, 1 - first] {
            measure(&mut sides[i], round)?;
        }
    }
    for s in &mut sides {
        s.instructions = callgrind::count(&s.args, &s.args.fmu, &COUNTED, "alone")?;
    }
    let fmi3 = match &args.fmu3 {
        Some(fmu3) => callgrind::count(args, fmu3, &COUNTED3, "alone3")?,
        None => None,
    };
    let mut report = report(&sides, against, args.steps);
    report["fmi3_instructions_per_step"] = json!({ "counted": COUNTED3, "head": fmi3 });
    std::fs::write(
        args.out.join("ab.json"),
        serde_json::to_string_pretty(&report)?,
    )?;
    print(&sides, against);
    if let (Some(f3), Some(f2)) = (fmi3, sides[1].instructions) {
        println!(
            "instructions per step of case 5 through FMI 3.0 ({}), callgrind: head {f3:.1}, \
             FMI 2.0's {f2:.1}, ratio {:.3}",
            COUNTED3.join(" + "),
            f3 / f2
        );
    }
    println!("wrote {}", args.out.join("ab.json").display());
    gate(&sides, against)
}

fn side(name: &'static str, args: Args) -> Side {
    Side {
        name,
        args,
        medians: Default::default(),
        instructions: None,
    }
}

/// The FMUs a side's cases load, there before anything runs.
fn check_fmus(args: &Args, whose: &str) -> Result<()> {
    let reals = REALS[1];
    for fmu in [
        args.fmu.clone(),
        args.reals.join(format!("reals{reals}/reals{reals}_a.fmu")),
    ] {
        if !fmu.is_file() {
            bail!(
                "{whose}: {} is missing (scripts/bench.sh --against REV packs both sides' FMUs)",
                fmu.display()
            );
        }
    }
    Ok(())
}

/// Case 5 of one round: both sides' FMUs in one process, their batches
/// alternating ([`alone_side_by_side`]). Apart, a process of this VM runs in
/// one of two modes whatever the build (about 155 or 240 ns a step), and a few
/// rounds' medians said more about the modes they drew than about the code.
fn alone(sides: &mut [Side; 2], first: usize, round: u32) -> Result<()> {
    let head = sides[1].args.clone();
    let base = sides[0].args.fmu.to_str().context("UTF-8 path")?.to_owned();
    let file = head
        .out
        .join(format!("alone-ab-{}.samples", std::process::id()));
    let status = Command::new(std::env::current_exe()?)
        .arg("--fmu")
        .arg(&head.fmu)
        .arg("--out")
        .arg(&head.out)
        .args(["--child", "alone-ab", "0", &head.steps.to_string()])
        .arg(&file)
        .args([base, first.to_string()])
        .status()?;
    if !status.success() {
        bail!("case 5, the two FMUs side by side, failed: {status}");
    }
    let samples = rfm_bench::stats::take_samples(&file)?;
    let (b, h) = samples.split_at(samples.len() / 2);
    for (side, samples) in sides.iter_mut().zip([b, h]) {
        let s = Summary::new(CASES[0], head.steps, samples);
        eprintln!(
            "coupling: round {}, {}: {}: median {} ns",
            round + 1,
            side.name,
            CASES[0],
            s.median
        );
        side.medians[0].push(s.median);
    }
    Ok(())
}

/// One round of cases 2 and 7b on one side.
fn measure(side: &mut Side, round: u32) -> Result<()> {
    let n = side.args.steps;
    let memory = format!("rfm-bench-ab-{}-{}", side.name, std::process::id());
    let samples = [
        with_memory(&memory, |device| {
            pair(&side.args, "fmu", n, &[device, "0".into(), "spin".into()])
        }),
        with_memory(&memory, |device| {
            pair(&side.args, "reals", n, &[device, REALS[1].to_string()])
        }),
    ];
    for ((case, samples), medians) in CASES[1..].iter().zip(samples).zip(&mut side.medians[1..]) {
        let s = Summary::new(
            case,
            n,
            &samples.with_context(|| format!("{} side, case {case}", side.name))?,
        );
        eprintln!(
            "coupling: round {}, {}: {case}: median {} ns",
            round + 1,
            side.name,
            s.median
        );
        medians.push(s.median);
    }
    Ok(())
}

/// The child of case 5's comparison (`alone-ab BASE_FMU FIRST`): this tree's
/// FMU (`--fmu`) and the baseline's, loaded side by side in one process, each
/// its own instance on its own `loopback:` memory, their batches of 100 steps
/// alternating (`FIRST`, 0 or 1, says whose comes first). Returns the base's
/// samples, then the head's.
pub(crate) fn alone_side_by_side(args: &Args, steps: u64, rest: &[String]) -> Result<Vec<u64>> {
    let [base, first] = rest else {
        bail!("alone-ab: BASE_FMU FIRST, got {rest:?}")
    };
    let tmp = args.out.join("tmp");
    // Apart: both FMUs are `rfm_attitude`, and a load writes its library there.
    let fmus = [
        rfm_bench::fmu::Fmu::load(Path::new(base), &tmp.join("base"))?,
        rfm_bench::fmu::Fmu::load(&args.fmu, &tmp.join("head"))?,
    ];
    let pid = std::process::id();
    let devices = [0, 1].map(|i| format!("loopback:bench-ab-{pid}-{i}"));
    let mut sessions = Vec::new();
    for (fmu, device) in fmus.iter().zip(&devices) {
        let strings = [("device", device.as_str()), ("syncMode", "free")];
        sessions.push(fmu.start(&strings, &[("nodeSlot", 0), ("peerSlot", 0)])?);
    }
    let sessions: [_; 2] = sessions.try_into().expect("two sessions");
    let [b, h] = rfm_bench::fmu::side_by_side(sessions, first.parse()?, steps, BATCH)?;
    Ok(b.into_iter().chain(h).collect())
}

/// Case 5's steps timed together (a clock read per step would cost more than
/// what is measured).
const BATCH: u64 = 100;

/// Runs `case` on the `shm:` memory `name`, removed after it, pass or fail.
fn with_memory(name: &str, case: impl FnOnce(String) -> Result<Vec<u64>>) -> Result<Vec<u64>> {
    let samples = case(format!("shm:{name}"));
    let _ = rfm_memory::backend::shm::unlink(name);
    samples
}

/// The middle of a side's round medians (the upper middle of an even count).
fn middle(values: &[u64]) -> u64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    v[v.len() / 2]
}

/// The fastest of a side's round medians: the step's cost in the VM's fast
/// mode. A process of this VM runs a case in one of two modes, whatever the
/// build (case 5 at about 155 or 240 ns: of 30 alternating processes of each
/// of two builds, 16 and 22 were slow), so the median of a few rounds says as
/// much about which mode the rounds drew as about the code.
fn best(values: &[u64]) -> u64 {
    values.iter().copied().min().expect("one round or more")
}

fn report(sides: &[Side; 2], against: &Against, steps: u64) -> serde_json::Value {
    let [base, head] = sides;
    let cases: Vec<_> = (CASES.iter().enumerate())
        .map(|(i, case)| {
            let (b, h) = (middle(&base.medians[i]), middle(&head.medians[i]));
            let (bb, hb) = (best(&base.medians[i]), best(&head.medians[i]));
            json!({
                "name": case,
                "base_median_ns": b,
                "head_median_ns": h,
                "ratio": h as f64 / b as f64,
                "base_best_ns": bb,
                "head_best_ns": hb,
                "best_ratio": hb as f64 / bb as f64,
                "base_round_medians_ns": base.medians[i],
                "head_round_medians_ns": head.medians[i],
            })
        })
        .collect();
    json!({
        "against": against.label,
        "rounds": against.rounds,
        "steps": steps,
        "cases": cases,
        "instructions_per_step": {
            "case": CASES[0],
            "counted": COUNTED,
            "base": base.instructions,
            "head": head.instructions,
            "ratio": base.instructions.zip(head.instructions).map(|(b, h)| h / b),
            "gate_percent": against.gate,
        },
    })
}

fn print(sides: &[Side; 2], against: &Against) {
    let [base, head] = sides;
    println!(
        "A/B: this tree (head) against {} (base), {} rounds interleaved; the median \
         and the best of the rounds' medians",
        against.label, against.rounds
    );
    println!(
        "{:<52} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}",
        "case", "base ns", "head ns", "ratio", "best base", "best head", "ratio"
    );
    for (i, case) in CASES.iter().enumerate() {
        let (b, h) = (middle(&base.medians[i]), middle(&head.medians[i]));
        let (bb, hb) = (best(&base.medians[i]), best(&head.medians[i]));
        println!(
            "{case:<52} {b:>9} {h:>9} {:>7.3} {bb:>9} {hb:>9} {:>7.3}",
            h as f64 / b as f64,
            hb as f64 / bb as f64,
        );
        println!(
            "{:<52} rounds: base {:?}, head {:?}",
            "", base.medians[i], head.medians[i]
        );
    }
    if let (Some(b), Some(h)) = (base.instructions, head.instructions) {
        println!(
            "instructions per step of case 5 ({}), callgrind: base {b:.1}, head {h:.1}, ratio {:.3}",
            COUNTED.join(" + "),
            h / b
        );
    }
}

/// Fails when the head's step takes more than `--gate` percent more
/// instructions than the baseline's.
fn gate(sides: &[Side; 2], against: &Against) -> Result<()> {
    let Some(percent) = against.gate else {
        return Ok(());
    };
    let [base, head] = sides;
    let (Some(b), Some(h)) = (base.instructions, head.instructions) else {
        bail!(
            "--gate needs instruction counts, and valgrind is not installed (apt install valgrind)"
        );
    };
    let limit = b * (1.0 + percent / 100.0);
    if h > limit {
        bail!(
            "the FMU's own step (case 5: {}) takes {h:.1} instructions, {:.1} % more than {}'s \
             {b:.1}; the gate allows {percent} % ({limit:.1}). Find what the step now does \
             (callgrind_annotate on `valgrind --tool=callgrind` of case 5, see \
             docs/src/benchmarks.md), or, if the cost is worth it, record a new baseline in \
             bench/ab-baseline.env with the figures",
            COUNTED.join(" + "),
            (h / b - 1.0) * 100.0,
            against.label
        );
    }
    println!(
        "gate: {h:.1} instructions per step, at most {limit:.1} ({}'s {b:.1} + {percent} %): passed",
        against.label
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_is_its_rounds_middle_and_its_fastest() {
        assert_eq!(middle(&[240, 150, 155]), 155);
        assert_eq!(middle(&[240, 150, 155, 250]), 240);
        assert_eq!(best(&[240, 150, 155]), 150);
    }
}
