//! Two flight-simulator processes coupled through the packaged `rfm_attitude.fmu`.
//!
//! `simulators [FMU] [--steps N] [--device DEV | --rfm2g-sim LIB] [--record DIR]`: starts two
//! processes; each imports the .fmu with the `fmi` crate (a master nobody here
//! wrote), flies its own deterministic manoeuvre, and steps in lockstep (lag 0,
//! spin) with the other through a fresh `shm:` memory, or, with `--rfm2g-sim`,
//! through `/dev/rfm2g0` on two boards (nodes 1 and 2) of a fresh ring of the RFM2g
//! emulator LIB, as on two PCs with cards. Each checks every peer attitude it
//! receives against the peer's model, prints attitudes crossing, and the time of a
//! whole master step (set inputs, fmi2DoStep, get outputs). With `--record DIR`,
//! each records its run (parameter `recordFile`) into `DIR/aircraftN.rec`.

mod flight;

use std::process::ExitCode;

use artefact_tests::Cut;
use flight::{fly, Flight, H};

const USAGE: &str = "usage: simulators [FMU] [--steps N] [--device DEV[,DEV] | --rfm2g-sim LIBRFM2G_SO] [--record DIR]\n\
    \x20      [--lag L] [--timeout SECONDS] [--start-jitter MS] [--ring NAME]\n\
    (--start-jitter: each aircraft's process starts after a random 0..MS ms;\n\
    \x20--ring: with --rfm2g-sim, the emulated ring to use, kept after the run)\n\
    \x20      [--redundant [--cut a:FROM..TO]... [--expect-timeout STEP]]\n\
    (--redundant: with --rfm2g-sim, each aircraft on two boards of two rings, device\n\
    \x20/dev/rfm2g0+/dev/rfm2g1; --cut: aircraft 0 cuts its board of ring a or b before\n\
    \x20step FROM and mends it before TO; --expect-timeout: that step must fail in time)\n\
    (--device A,B: each aircraft its own memory, e.g. two shm: memories joined by rfm-bridge)\n\
    \x20      simulators [FMU] --replay FILE [--node N] [--steps N] [--change-steps A..B] [--expect-divergence D]\n\
    (one aircraft alone against its recording: every peer attitude must be exact, and\n\
    replay.divergence as expected; --change-steps offsets its roll by 1 rad on those steps)";

/// The command line.
struct Args {
    fmu: String,
    steps: u64,
    device: Option<String>,
    /// A node's process (the parent passes it), or the aircraft to replay.
    node: Option<u32>,
    library: Option<String>,
    lag: u64,
    timeout: Option<f64>,
    start_jitter_ms: u64,
    ring: Option<String>,
    record: Option<String>,
    redundant: bool,
    cuts: Vec<Cut>,
    expect_timeout: Option<u64>,
    replay: Option<String>,
    changed: std::ops::Range<u64>,
    expect: Option<i32>,
}

impl Args {
    /// The arguments, or `None` once `--help` printed the usage.
    fn parse() -> Result<Option<Args>, String> {
        let mut a = Args {
            fmu: "target/fmu/rfm_attitude.fmu".to_owned(),
            steps: 100_000,
            device: None,
            node: None,
            library: None,
            lag: 0,
            timeout: None,
            start_jitter_ms: 0,
            ring: None,
            record: None,
            redundant: false,
            cuts: Vec::new(),
            expect_timeout: None,
            replay: None,
            changed: 0..0,
            expect: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut number = || args.next().and_then(|s| s.parse().ok());
            match arg.as_str() {
                "--steps" => a.steps = number().unwrap_or(a.steps),
                "--device" => a.device = args.next(),
                "--node" => a.node = number().map(|n: u64| n as u32),
                "--lag" => a.lag = number().unwrap_or(0),
                "--timeout" => a.timeout = args.next().and_then(|s| s.parse().ok()),
                "--rfm2g-sim" => a.library = args.next(),
                "--start-jitter" => a.start_jitter_ms = number().unwrap_or(0),
                "--ring" => a.ring = args.next(),
                "--redundant" => a.redundant = true,
                "--cut" => {
                    let text = args.next().unwrap_or_default();
                    let cut = Cut::parse(&text)
                        .ok_or(format!("--cut takes a:FROM..TO or b:FROM.. , not `{text}`"))?;
                    a.cuts.push(cut);
                }
                "--expect-timeout" => a.expect_timeout = number(),
                "--record" => a.record = args.next(),
                "--replay" => a.replay = args.next(),
                "--change-steps" => {
                    let range = args.next().unwrap_or_default();
                    a.changed = match range.split_once("..").map(|(x, y)| (x.parse(), y.parse())) {
                        Some((Ok(x), Ok(y))) => x..y,
                        _ => return Err(format!("--change-steps takes A..B, not `{range}`")),
                    };
                }
                "--expect-divergence" => a.expect = args.next().and_then(|s| s.parse().ok()),
                "-h" | "--help" => {
                    println!("{USAGE}");
                    return Ok(None);
                }
                other => a.fmu = other.to_owned(),
            }
        }
        Ok(Some(a))
    }
}

fn main() -> ExitCode {
    artefact_tests::print_fmu_messages();
    let args = match Args::parse() {
        Ok(Some(args)) => args,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("simulators: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match (&args.replay, args.node) {
        (Some(file), _) => replay(&args, file),
        (None, Some(me)) => node(&args, me),
        (None, None) => launch(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("simulators: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One aircraft alone against its recording `file`.
fn replay(args: &Args, file: &str) -> Result<(), String> {
    let device = format!("replay:{file}");
    let me = args.node.unwrap_or(0);
    let changed = args.changed.clone();
    let flight = Flight {
        fmu: &args.fmu,
        device: &device,
        library: None,
        record: None,
        me,
        steps: args.steps,
        changed: changed.clone(),
        lag: args.lag,
        timeout: args.timeout,
        cuts: &[],
        expect_timeout: None,
    };
    let d = fly(&flight)?;
    if args.expect.is_some_and(|e| e != d) {
        return Err(format!(
            "replay.divergence = {d}, expected {}",
            args.expect.unwrap_or_default()
        ));
    }
    println!(
        "aircraft {me} alone against {file}: every peer attitude exact, replay.divergence = {d} \
         ({} steps changed)",
        changed.end.saturating_sub(changed.start)
    );
    Ok(())
}

/// A node's process: aircraft `me` flies on the device the parent gives.
fn node(args: &Args, me: u32) -> Result<(), String> {
    let device = args.device.as_deref().expect("the parent passes --device");
    // `A,B`: each aircraft its own memory (two hosts' memories, bridged).
    let device = device.split(',').nth(me as usize).unwrap_or(device);
    let flight = Flight {
        fmu: &args.fmu,
        device,
        library: args.library.as_deref(),
        record: args.record.as_deref(),
        me,
        steps: args.steps,
        changed: 0..0,
        lag: args.lag,
        timeout: args.timeout,
        cuts: &args.cuts,
        expect_timeout: args.expect_timeout,
    };
    fly(&flight).map(|_| ())
}

/// The parent: names the memory and starts the two aircraft's processes.
fn launch(a: &Args) -> Result<(), String> {
    if let Some(dir) = &a.record {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the recording folder {dir}: {e}"))?;
    }
    let name = a
        .ring
        .clone()
        .unwrap_or_else(|| format!("rfm-simulators-{}", std::process::id()));
    if (a.redundant || !a.cuts.is_empty()) && a.library.is_none() {
        return Err("--redundant and --cut need --rfm2g-sim (the emulated rings)".into());
    }
    let (device, object) = match (&a.library, a.device.clone()) {
        (Some(_), _) if a.redundant => (
            "/dev/rfm2g0+/dev/rfm2g1".to_owned(),
            format!("/rfm2g-sim.{name}"),
        ),
        (Some(_), _) => ("/dev/rfm2g0".to_owned(), format!("/rfm2g-sim.{name}")),
        (None, Some(device)) => (device, format!("/{name}")),
        (None, None) => (format!("shm:{name}"), format!("/{name}")),
    };
    let (fmu, steps) = (&a.fmu, a.steps);
    match &a.library {
        Some(lib) => println!(
            "two simulator processes, coupled through {fmu} over {device} on two boards \
             (nodes 1 and 2) of the emulated ring `{name}` ({lib}), {steps} steps of {H} s"
        ),
        None => println!(
            "two simulator processes, coupled through {fmu} over {device}, {steps} steps of {H} s"
        ),
    }
    let ok = artefact_tests::run_nodes(
        2,
        |me| node_args(a, me, &device),
        a.library.as_deref().map(|lib| (lib, name.as_str())),
        artefact_tests::Spawn {
            start_jitter_ms: a.start_jitter_ms,
            first: None,
            // A ring named by --ring outlives the run, as a lab's memory does.
            memory: a.ring.is_none().then_some(object.as_str()),
            redundant: a.redundant,
        },
    );
    if ok {
        Ok(())
    } else {
        Err("a simulator process failed".into())
    }
}

/// The arguments of aircraft `me`'s process.
fn node_args(a: &Args, me: usize, device: &str) -> Vec<String> {
    let mut args = [
        a.fmu.as_str(),
        "--node",
        &me.to_string(),
        "--device",
        device,
        "--steps",
        &a.steps.to_string(),
        "--lag",
        &a.lag.to_string(),
    ]
    .map(str::to_owned)
    .to_vec();
    if let Some(t) = a.timeout {
        args.extend(["--timeout".to_owned(), t.to_string()]);
    }
    if let Some(dir) = &a.record {
        args.extend(["--record".to_owned(), dir.clone()]);
    }
    for cut in &a.cuts {
        args.extend(["--cut".to_owned(), cut.arg()]);
    }
    if let Some(k) = a.expect_timeout {
        args.extend(["--expect-timeout".to_owned(), k.to_string()]);
    }
    args
}
