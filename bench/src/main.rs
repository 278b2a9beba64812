//! `coupling`: coupled steps measured against the physical limit, in one run.
//!
//! `cargo run --release -p rfm-bench --bin coupling -- [--steps N] [--fmu PATH] [--out DIR]`
//! (after `cargo run --release -p build-fmu`). Cases, each with its per-step time
//! distribution (warm-up excluded):
//! 1. raw limit: two processes exchanging a 64-byte frame per step through a
//!    shared-memory seqlock with a two-entry ring, busy-spin, every frame read
//!    (no project code); 1b the same with 128-byte frames, the attitude FMU's
//!    frame size (two cache lines per frame); 1c with 8,008-byte frames (a
//!    sequence word and 1,000 Reals: case 7b's payload);
//! 2. the packaged FMU, two processes, `shm:`, lockstep lag 0, spin: per step
//!    fmi2SetReal (3), fmi2DoStep, fmi2GetReal (3);
//! 3. the same with lag 1, and with waitStrategy yield;
//! 4. the same exchange over UDP on 127.0.0.1: blocking (4a), busy-polling a
//!    non-blocking socket (4b);
//! 5. FMU overhead alone: one instance, self-loop over `loopback:`, free mode
//!    (timed in batches of 100 steps: a clock read per step would cost more than
//!    what is measured);
//! 6. the same FMU exchange over RFM2g: `device=/dev/rfm2g0`-style boards (nodes
//!    1 and 2 of one ring) through the emulated vendor library `rfm2g-sim`, with
//!    waitStrategy spin, and event (network interrupts: the futex path);
//! 7. the FMUs of an interface of 100 Reals per node (`target/bench/fmu/reals100`, see
//!    scripts/bench.sh), two processes, `shm:`, lag 0, spin: per step
//!    fmi2SetReal (100), fmi2DoStep, fmi2GetReal (100); reported per step and per
//!    signal; 7b the same with 1,000 Reals (`target/bench/fmu/reals1000`), against
//!    case 1c;
//! 8. iceoryx2 publish-subscribe, two processes, the same 64-byte lockstep
//!    exchange, spinning on receive: the general-purpose peer;
//! 9. more lockstep nodes than cores: the three nodes of `tests/interfaces/mixed.toml`
//!    (`target/bench/fmu/mixed`) in three processes over `shm:`, lag 0, each step a bare
//!    fmi2DoStep, with waitStrategy adaptive (9a, the default), spin (9b) and
//!    yield (9c); reported in steps per second of node 0 (on a machine with two
//!    cores, the point of the case);
//! 10. the three-rate lab: `examples/lab.toml`'s FMUs (`target/bench/fmu/lab`), the
//!     cockpit at 1 kHz, the visual system at 1/60 s, the instructor station at
//!     10 Hz, adaptive, in steps per second of the cockpit;
//! 11. the card cases (counts, not times): the attitude pair, 100 and 1,000
//!     Reals and three nodes over emulated RFM2g boards, on each read path,
//!     with the modeled step on a PCIE-5565 ([`rfm_bench::card`]);
//! 12. PCs without cards: the attitude pair over two `shm:` memories joined by
//!     two `rfm-bridge` processes on 127.0.0.1 (12a), and Zenoh's own 128-byte
//!     ping-pong with the bridge's configuration (12b), the floor the bridged
//!     step is held against (within 1.5 ×); UDP is case 4 ([`rfm_bench::bridge`]).
//!
//! Case 2d is case 2 with the default waitStrategy, adaptive, against spin.
//! Writes `DIR/coupling.json` and `DIR/coupling.png`, and prints a table.

use rfm_bench::{fmu, iceoryx, raw, report, stats, udp};

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::json;

mod ab;
mod callgrind;
mod cases;
mod children;
mod results;

use cases::{
    bridge_cases, card_cases, more_cases, node_cases, pair_cases, raw_cases, Cases, REALS,
};
use results::{print_results, results};

#[derive(Clone)]
struct Args {
    steps: u64,
    fmu: PathBuf,
    /// The folder holding the FMUs of cases 7 and 7b: `reals100/reals100_a.fmu`,
    /// `reals1000/reals1000_a.fmu` and their `_b` peers.
    reals: PathBuf,
    /// The RFM2g emulator, `librfm2g.so`.
    rfm2g_sim: PathBuf,
    out: PathBuf,
    /// Where `rfm-bridge` and `zenoh-pingpong` are (case 12).
    bridge: PathBuf,
    child: Option<Vec<String>>,
    /// `--against DIR`: compare with a baseline's FMUs instead of the full run.
    against: Option<ab::Against>,
    /// `--fmu3 PATH`: with `--against`, case 5's instructions through this
    /// FMI 3.0 FMU's face too, beside FMI 2.0's.
    fmu3: Option<PathBuf>,
}

const USAGE: &str = "\
usage: coupling [--steps N (default 1000000)] [--fmu PATH] [--reals DIR] \
[--rfm2g-sim LIBRFM2G_SO] [--out DIR]
       coupling --against DIR [--label TEXT] [--rounds N (default 9)] \
[--gate PERCENT] [--steps N] [--fmu PATH] [--fmu3 PATH] [--reals DIR] [--out DIR]

--against DIR compares this tree's FMUs with the baseline's in DIR (laid \
out as target/bench/fmu is; scripts/bench.sh --against REV builds them) in one \
run: cases 5, 2 and 7b interleaved, and the instructions per step of \
case 5 (callgrind); --gate fails when those grew more than PERCENT %. \
--fmu3 PATH (an FMI 3.0 FMU, build-fmu --fmi 3) counts case 5 through its \
FMI 3.0 face too, beside FMI 2.0's (not gated).";

fn parse() -> Result<Args> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf();
    let mut a = Args {
        steps: 1_000_000,
        fmu: root.join(fmu::PACKED).join("rfm_attitude.fmu"),
        reals: root.join(fmu::PACKED),
        rfm2g_sim: root.join("target/release/librfm2g.so"),
        out: root.join("target/bench"),
        bridge: root.join("target/release"),
        child: None,
        against: None,
        fmu3: None,
    };
    let (mut label, mut rounds, mut gate) = (None, ab::ROUNDS, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--steps" => {
                a.steps = it
                    .next()
                    .context("--steps N")?
                    .parse()
                    .context("--steps N")?
            }
            "--fmu" => a.fmu = it.next().context("--fmu PATH")?.into(),
            "--fmu3" => a.fmu3 = Some(it.next().context("--fmu3 PATH")?.into()),
            "--reals" => a.reals = it.next().context("--reals DIR")?.into(),
            "--rfm2g-sim" => a.rfm2g_sim = it.next().context("--rfm2g-sim PATH")?.into(),
            "--out" => a.out = it.next().context("--out DIR")?.into(),
            "--bridge" => a.bridge = it.next().context("--bridge DIR")?.into(),
            "--child" => a.child = Some(it.by_ref().collect()),
            "--against" => a.against = Some(ab::Against::new(it.next().context("--against DIR")?)),
            "--label" => label = Some(it.next().context("--label TEXT")?),
            "--rounds" => {
                rounds = (it.next().and_then(|n| n.parse().ok()))
                    .filter(|&n| n > 0)
                    .context("--rounds N, a whole number of 1 or more")?
            }
            "--gate" => {
                gate = Some(
                    (it.next().and_then(|p| p.parse::<f64>().ok()))
                        .filter(|p| p.is_finite() && *p >= 0.0)
                        .context("--gate PERCENT, a number of 0 or more")?,
                )
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}; see --help"),
        }
    }
    with_against(a, label, rounds, gate)
}

/// `--label`, `--rounds`, `--gate` and `--fmu3` belong to `--against`: given to it,
/// or refused without it.
fn with_against(
    mut a: Args,
    label: Option<String>,
    rounds: u32,
    gate: Option<f64>,
) -> Result<Args> {
    match &mut a.against {
        Some(against) => {
            against.label = label.unwrap_or_else(|| against.dir.display().to_string());
            against.rounds = rounds;
            against.gate = gate;
        }
        None if label.is_some() || gate.is_some() || rounds != ab::ROUNDS || a.fmu3.is_some() => {
            bail!("--label, --rounds, --gate and --fmu3 go with --against DIR; see --help")
        }
        None => {}
    }
    Ok(a)
}

/// A child process: `<case> <node> <steps> <samples file> <case arguments…>`.
fn child(args: &Args, c: &[String]) -> Result<()> {
    let [case, node, steps, file, rest @ ..] = c else {
        bail!("bad child arguments {c:?}")
    };
    let (node, steps): (usize, u64) = (node.parse()?, steps.parse()?);
    let samples = match case.as_str() {
        "raw" => raw::node(&rest[0], node, steps, rest[1].parse()?)?,
        "udp" | "udp-poll" => {
            let ports: Vec<u16> = rest.iter().map(|p| p.parse()).collect::<Result<_, _>>()?;
            udp::node(ports[node], ports[1 - node], steps, case == "udp-poll")?
        }
        "iceoryx2" => iceoryx::node(&rest[0], node, steps)?,
        "fmu" => children::attitude(args, node, steps, rest)?,
        "rfm2g" => children::attitude_rfm2g(args, node, steps, rest)?,
        "reals" => children::many_reals(args, node, steps, rest)?,
        "nodes" => children::interface_node(args, node, steps, rest)?,
        "card" => children::card_node(args, node, steps, rest)?,
        "alone" => {
            let fmu = fmu::Fmu::load(&args.fmu, &args.out.join("tmp"))?;
            let device = format!("loopback:bench-{}", std::process::id());
            let strings = [("device", device.as_str()), ("syncMode", "free")];
            fmu.run(&strings, &[("nodeSlot", 0), ("peerSlot", 0)], steps, 100)?
        }
        "alone-ab" => ab::alone_side_by_side(args, steps, rest)?,
        "alone3" => {
            let fmu = rfm_bench::fmu3::Fmu3::load(&args.fmu, &args.out.join("tmp"))?;
            let device = format!("loopback:bench3-{}", std::process::id());
            fmu.alone(&device, steps, 100)?
        }
        other => bail!("unknown case {other}"),
    };
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(file, bytes)?;
    Ok(())
}

/// Runs `case` in two processes and returns node 0's samples.
fn pair(args: &Args, case: &str, steps: u64, extra: &[String]) -> Result<Vec<u64>> {
    group(args, case, 2, |_| steps, extra)
}

/// Runs `case` in `count` processes, node n for `steps(n)` steps, and returns
/// node 0's samples.
fn group(
    args: &Args,
    case: &str,
    count: usize,
    steps: impl Fn(usize) -> u64,
    extra: &[String],
) -> Result<Vec<u64>> {
    let exe = std::env::current_exe()?;
    let files: Vec<PathBuf> = (0..count)
        .map(|n| args.out.join(format!("{case}-{n}.samples")))
        .collect();
    let children: Vec<_> = (0..count)
        .map(|n| {
            let mut cmd = Command::new(&exe);
            cmd.args([
                "--fmu".as_ref(),
                args.fmu.as_os_str(),
                "--reals".as_ref(),
                args.reals.as_os_str(),
                "--out".as_ref(),
                args.out.as_os_str(),
                "--rfm2g-sim".as_ref(),
                args.rfm2g_sim.as_os_str(),
            ]);
            cmd.arg("--child")
                .args([case, &n.to_string(), &steps(n).to_string()])
                .arg(&files[n])
                .args(extra);
            cmd.spawn().context("start a benchmark process")
        })
        .collect::<Result<_>>()?;
    for mut c in children {
        let status = c.wait()?;
        if !status.success() {
            bail!("a {case} process failed: {status}");
        }
    }
    let samples = stats::take_samples(&files[0])?;
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    Ok(samples)
}

/// Runs `case` in one child process and returns its samples.
fn single(args: &Args, case: &str, steps: u64) -> Result<Vec<u64>> {
    let file = args.out.join(format!("{case}.samples"));
    let status = Command::new(std::env::current_exe()?)
        .args([
            "--fmu".as_ref(),
            args.fmu.as_os_str(),
            "--out".as_ref(),
            args.out.as_os_str(),
        ])
        .arg("--child")
        .args([case, "0", &steps.to_string()])
        .arg(&file)
        .status()?;
    if !status.success() {
        bail!("the {case} process failed: {status}");
    }
    Ok(stats::take_samples(&file)?)
}

fn free_ports() -> Result<[u16; 2]> {
    let a = std::net::UdpSocket::bind("127.0.0.1:0")?;
    let b = std::net::UdpSocket::bind("127.0.0.1:0")?;
    Ok([a.local_addr()?.port(), b.local_addr()?.port()])
}

fn machine() -> serde_json::Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_default();
    json!({
        "cpu": cpu,
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim(),
    })
}

/// Errors as their message and causes, without the backtrace `main`
/// returning an error prints under `RUST_BACKTRACE=1` (see build-fmu's `main`).
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("coupling: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let args = &parse()?;
    if let Some(c) = &args.child {
        return child(args, c);
    }
    std::fs::create_dir_all(&args.out)?;
    if let Some(against) = &args.against {
        let _ = std::fs::remove_dir_all(args.out.join("tmp"));
        return ab::run(args, against);
    }
    // Binaries extracted by an earlier run (kept until now so that a profiler can
    // still resolve their symbols after the run).
    let _ = std::fs::remove_dir_all(args.out.join("tmp"));
    check_inputs(args)?;
    let n = args.steps;
    eprintln!(
        "coupling: {n} steps per case (UDP: {}), release build",
        n.min(100_000)
    );
    let mut cases = Cases::default();
    let shm = |tag: &str| format!("rfm-bench-{tag}-{}", std::process::id());
    raw_cases(args, &mut cases, &shm)?;
    pair_cases(args, &mut cases, &shm)?;
    let card = card_cases(args, n, &shm)?;
    more_cases(args, &mut cases, &shm)?;
    node_cases(args, &mut cases, &shm)?;
    bridge_cases(args, &mut cases, &shm)?;
    let results = results(&cases, card);
    let json_path = args.out.join("coupling.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&results)?)?;
    let png_path = args.out.join("coupling.png");
    report::histogram(&cases.0, &png_path)?;
    print!("{}", report::table(&cases.0));
    print_results(&results, &cases)?;
    println!("wrote {} and {}", json_path.display(), png_path.display());
    Ok(())
}

/// The FMUs and the emulator the cases load, there before anything runs.
fn check_inputs(args: &Args) -> Result<()> {
    if !args.fmu.is_file() {
        bail!(
            "{} is missing: run `cargo run --release -p build-fmu` first",
            args.fmu.display()
        );
    }
    for n in REALS {
        let fmu = args.reals.join(format!("reals{n}/reals{n}_a.fmu"));
        if !fmu.is_file() {
            bail!(
                "{} is missing: run scripts/bench.sh (it packs the {n}-Real FMUs)",
                fmu.display()
            );
        }
    }
    if !args.rfm2g_sim.is_file() {
        bail!(
            "{} is missing: run `cargo build --release -p rfm2g-sim` first",
            args.rfm2g_sim.display()
        );
    }
    Ok(())
}
