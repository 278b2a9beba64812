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

use std::ffi::CString;
use std::process::ExitCode;
use std::time::Instant;

use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::{CoSimulation, Common};
use fmi::traits::FmiImport;

const H: f64 = 1e-3;

/// Aircraft `node`'s attitude at step k: a different slow manoeuvre per node.
fn attitude(node: u32, k: u64) -> [f64; 3] {
    let t = k as f64 * H;
    let phase = f64::from(node) * 1.3;
    [
        0.3 * (0.7 * t + phase).sin(),
        0.1 * (0.4 * t + phase).cos(),
        (0.05 * t + phase) % std::f64::consts::TAU,
    ]
}

/// One simulator's run.
struct Flight<'a> {
    fmu: &'a str,
    device: &'a str,
    library: Option<&'a str>,
    /// Record into `DIR/aircraftN.rec`.
    record: Option<&'a str>,
    me: u32,
    steps: u64,
    /// Steps whose own roll is off by 1 rad (a replay must count them).
    changed: std::ops::Range<u64>,
    /// The FMU's `lag`: at step k the peer's attitude of step k − lag (its
    /// start values, zero, before).
    lag: u64,
    /// The FMU's `timeout` in seconds, when given.
    timeout: Option<f64>,
}

/// Flies `f`; returns the FMU's `replay.divergence` at the end.
fn fly(f: &Flight) -> Result<i32, String> {
    let Flight {
        fmu,
        device,
        library,
        record,
        me,
        steps,
        ..
    } = *f;
    let import: Fmi2Import =
        fmi::import::from_path(fmu).map_err(|e| format!("cannot import {fmu}: {e}"))?;
    let vr = |name: &str| {
        import
            .model_description()
            .model_variables
            .variables
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.value_reference)
            .ok_or_else(|| format!("{fmu} has no variable {name}"))
    };
    let fail =
        |what: &'static str| move |e: fmi::fmi2::Fmi2Error| format!("node {me}: {what}: {e:?}");
    let mut sim = import
        .instantiate_cs(&format!("aircraft{me}"), false, true)
        .map_err(|e| e.to_string())?;
    sim.set_string(
        &[vr("device")?],
        &[CString::new(device).map_err(|e| e.to_string())?],
    )
    .map_err(fail("set device"))?;
    if let Some(library) = library {
        sim.set_string(
            &[vr("rfm2gLibrary")?],
            &[CString::new(library).map_err(|e| e.to_string())?],
        )
        .map_err(fail("set rfm2gLibrary"))?;
    }
    if let Some(dir) = record {
        let file = format!("{dir}/aircraft{me}.rec");
        sim.set_string(
            &[vr("recordFile")?],
            &[CString::new(file).map_err(|e| e.to_string())?],
        )
        .map_err(fail("set recordFile"))?;
        // The demo and test.sh record into one folder run after run.
        sim.set_boolean(&[vr("recordOverwrite")?], &[1])
            .map_err(fail("set recordOverwrite"))?;
    }
    sim.set_integer(
        &[vr("nodeSlot")?, vr("peerSlot")?, vr("lag")?],
        &[me as i32, 1 - me as i32, f.lag as i32],
    )
    .map_err(fail("set slots"))?;
    if let Some(timeout) = f.timeout {
        sim.set_real(&[vr("timeout")?], &[timeout])
            .map_err(fail("set timeout"))?;
    }
    sim.setup_experiment(None, 0.0, None)
        .map_err(fail("setup"))?;
    Common::enter_initialization_mode(&mut sim).map_err(fail("enter initialization"))?;
    Common::exit_initialization_mode(&mut sim).map_err(fail("exit initialization"))?;
    let inputs = [vr("roll")?, vr("pitch")?, vr("yaw")?];
    let outputs = [vr("peer.roll")?, vr("peer.pitch")?, vr("peer.yaw")?];
    let mut peer = [0.0; 3];
    let mut times = Vec::with_capacity(steps as usize);
    for k in 0..steps {
        let start = Instant::now();
        let mut own = attitude(me, k);
        if f.changed.contains(&k) {
            own[0] += 1.0;
        }
        sim.set_real(&inputs, &own).map_err(fail("set inputs"))?;
        sim.do_step(k as f64 * H, H, true)
            .map_err(fail("fmi2DoStep"))?;
        sim.get_real(&outputs, &mut peer)
            .map_err(fail("get outputs"))?;
        times.push(start.elapsed().as_nanos() as u64);
        let expected = match k.checked_sub(f.lag) {
            Some(j) => attitude(1 - me, j),
            None => [0.0; 3],
        };
        if peer != expected {
            return Err(format!(
                "node {me}, step {k}: got {peer:?}, which the peer never sent"
            ));
        }
        if k % (steps / 5).max(1) == 0 || k + 1 == steps {
            let own = attitude(me, k);
            println!(
                "aircraft {me}  t={:7.3}s  own roll {:+.4} pitch {:+.4} yaw {:+.4}  | peer roll {:+.4} pitch {:+.4} yaw {:+.4}",
                k as f64 * H, own[0], own[1], own[2], peer[0], peer[1], peer[2]
            );
        }
    }
    let mut divergence = [0];
    sim.get_integer(&[vr("replay.divergence")?], &mut divergence)
        .map_err(fail("get replay.divergence"))?;
    Common::terminate(&mut sim).map_err(fail("terminate"))?;
    let warm = (times.len() / 10).min(10_000);
    let mut sorted = times[warm..].to_vec();
    sorted.sort_unstable();
    let pct = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
    println!(
        "aircraft {me}: {steps} lockstep steps through the FMU, every peer attitude exact. Master step \
         (set + fmi2DoStep + get) after {warm} warm-up steps: median {} ns, p99 {} ns, p99.9 {} ns, max {} ns",
        pct(0.5),
        pct(0.99),
        pct(0.999),
        sorted[sorted.len() - 1]
    );
    Ok(divergence[0])
}

fn main() -> ExitCode {
    artefact_tests::print_fmu_messages();
    let mut fmu = "target/fmu/rfm_attitude.fmu".to_owned();
    let (mut steps, mut device, mut node, mut library) = (100_000u64, None, None, None);
    let (mut lag, mut timeout) = (0u64, None);
    let (mut start_jitter_ms, mut ring): (u64, Option<String>) = (0, None);
    let mut record: Option<String> = None;
    let (mut replay, mut changed, mut expect): (Option<String>, _, Option<i32>) =
        (None, 0..0, None);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--steps" => steps = args.next().and_then(|s| s.parse().ok()).unwrap_or(steps),
            "--device" => device = args.next(),
            "--node" => node = args.next().and_then(|s| s.parse().ok()),
            "--lag" => lag = args.next().and_then(|s| s.parse().ok()).unwrap_or(0),
            "--timeout" => timeout = args.next().and_then(|s| s.parse().ok()),
            "--rfm2g-sim" => library = args.next(),
            "--start-jitter" => {
                start_jitter_ms = args.next().and_then(|s| s.parse().ok()).unwrap_or(0)
            }
            "--ring" => ring = args.next(),
            "--record" => record = args.next(),
            "--replay" => replay = args.next(),
            "--change-steps" => {
                let range = args.next().unwrap_or_default();
                match range.split_once("..").map(|(a, b)| (a.parse(), b.parse())) {
                    Some((Ok(a), Ok(b))) => changed = a..b,
                    _ => {
                        eprintln!("simulators: --change-steps takes A..B, not `{range}`");
                        return ExitCode::FAILURE;
                    }
                }
            }
            "--expect-divergence" => expect = args.next().and_then(|s| s.parse().ok()),
            "-h" | "--help" => {
                println!(
                    "usage: simulators [FMU] [--steps N] [--device DEV[,DEV] | --rfm2g-sim LIBRFM2G_SO] [--record DIR]\n\
                     \x20      [--lag L] [--timeout SECONDS] [--start-jitter MS] [--ring NAME]\n\
                     (--start-jitter: each aircraft's process starts after a random 0..MS ms;\n\
                     \x20--ring: with --rfm2g-sim, the emulated ring to use, kept after the run)\n\
                     (--device A,B: each aircraft its own memory, e.g. two shm: memories joined by rfm-bridge)\n\
                     \x20      simulators [FMU] --replay FILE [--node N] [--steps N] [--change-steps A..B] [--expect-divergence D]\n\
                     (one aircraft alone against its recording: every peer attitude must be exact, and\n\
                     replay.divergence as expected; --change-steps offsets its roll by 1 rad on those steps)"
                );
                return ExitCode::SUCCESS;
            }
            other => fmu = other.to_owned(),
        }
    }
    if let Some(file) = replay {
        let device = format!("replay:{file}");
        let me = node.unwrap_or(0);
        let flight = Flight {
            fmu: &fmu,
            device: &device,
            library: None,
            record: None,
            me,
            steps,
            changed: changed.clone(),
            lag,
            timeout,
        };
        return match fly(&flight) {
            Ok(d) if expect.is_none_or(|e| e == d) => {
                println!(
                    "aircraft {me} alone against {file}: every peer attitude exact, \
                     replay.divergence = {d} ({} steps changed)",
                    changed.end.saturating_sub(changed.start)
                );
                ExitCode::SUCCESS
            }
            Ok(d) => {
                eprintln!(
                    "simulators: replay.divergence = {d}, expected {}",
                    expect.unwrap_or_default()
                );
                ExitCode::FAILURE
            }
            Err(e) => {
                eprintln!("simulators: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(me) = node {
        let device = device.expect("the parent passes --device");
        // `A,B`: each aircraft its own memory (two hosts' memories, bridged).
        let device = device
            .split(',')
            .nth(me as usize)
            .unwrap_or(&device)
            .to_owned();
        let flight = Flight {
            fmu: &fmu,
            device: &device,
            library: library.as_deref(),
            record: record.as_deref(),
            me,
            steps,
            changed: 0..0,
            lag,
            timeout,
        };
        return match fly(&flight) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("simulators: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(dir) = &record {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("simulators: cannot create the recording folder {dir}: {e}");
            return ExitCode::FAILURE;
        }
    }
    let name = ring
        .clone()
        .unwrap_or_else(|| format!("rfm-simulators-{}", std::process::id()));
    let (device, object) = match (&library, device) {
        (Some(_), _) => ("/dev/rfm2g0".to_owned(), format!("/rfm2g-sim.{name}")),
        (None, Some(device)) => (device, format!("/{name}")),
        (None, None) => (format!("shm:{name}"), format!("/{name}")),
    };
    match &library {
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
        |me| {
            let mut args = [
                fmu.as_str(),
                "--node",
                &me.to_string(),
                "--device",
                &device,
                "--steps",
                &steps.to_string(),
                "--lag",
                &lag.to_string(),
            ]
            .map(str::to_owned)
            .to_vec();
            if let Some(t) = timeout {
                args.extend(["--timeout".to_owned(), t.to_string()]);
            }
            if let Some(dir) = &record {
                args.extend(["--record".to_owned(), dir.clone()]);
            }
            args
        },
        library.as_deref().map(|lib| (lib, name.as_str())),
        artefact_tests::Spawn {
            start_jitter_ms,
            first: None,
            // A ring named by --ring outlives the run, as a lab's memory does.
            memory: ring.is_none().then_some(object.as_str()),
        },
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("simulators: a simulator process failed");
        ExitCode::FAILURE
    }
}
