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

use artefact_tests::Cut;

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
    /// Ring faults aircraft 0 makes on its own boards before a step (both
    /// aircraft judge their steps by them).
    cuts: &'a [Cut],
    /// The step that must fail with the timeout error (both rings cut).
    expect_timeout: Option<u64>,
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
    // The longest master step with a ring cut and without.
    let mut longest = [0u64; 2];
    for k in 0..steps {
        if me == 0 {
            Cut::apply(f.cuts, library.unwrap_or_default(), k)
                .map_err(|e| format!("node {me}, step {k}: {e}"))?;
        }
        let start = Instant::now();
        let mut own = attitude(me, k);
        if f.changed.contains(&k) {
            own[0] += 1.0;
        }
        sim.set_real(&inputs, &own).map_err(fail("set inputs"))?;
        let stepped = sim.do_step(k as f64 * H, H, true);
        // Aircraft 0 cuts: the peer's frame of step K may have reached ring A
        // before, and the island keeps it; its step K + 1 then fails.
        let late = me == 0 && stepped.is_ok() && f.expect_timeout == Some(k);
        if f.expect_timeout
            .is_some_and(|e| e == k || (me == 0 && e + 1 == k))
            && !late
        {
            let took = start.elapsed().as_secs_f64();
            let timeout = f.timeout.unwrap_or(2.0);
            return match stepped {
                Err(_) if took < timeout + 1.0 => {
                    println!(
                        "aircraft {me}: step {k} failed after {took:.3} s with both rings cut \
                         (timeout {timeout} s), as it must"
                    );
                    Ok(0)
                }
                Err(e) => Err(format!(
                    "node {me}: step {k} failed only after {took:.3} s: {e:?}"
                )),
                Ok(_) => Err(format!("node {me}: step {k} passed with both rings cut")),
            };
        }
        stepped.map_err(fail("fmi2DoStep"))?;
        sim.get_real(&outputs, &mut peer)
            .map_err(fail("get outputs"))?;
        let took = start.elapsed().as_nanos() as u64;
        times.push(took);
        let i = usize::from(f.cuts.iter().any(|c| c.covers(k)));
        longest[i] = longest[i].max(took);
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
    if device.contains('+') {
        rings_report(&mut sim, &vr, me, f, longest)?;
    }
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

/// A redundant run: prints the `ring.*` outputs, and with cuts checks them:
/// every frame not on ring A came from B, one failover per cut of ring A, and
/// no step with a cut more than 10 ms longer than the longest without.
fn rings_report(
    sim: &mut fmi::fmi2::instance::InstanceCS,
    vr: &dyn Fn(&str) -> Result<u32, String>,
    me: u32,
    f: &Flight,
    longest: [u64; 2],
) -> Result<(), String> {
    let mut counts = [0; 3];
    sim.get_integer(
        &[
            vr("ring.a.frames")?,
            vr("ring.b.frames")?,
            vr("ring.failovers")?,
        ],
        &mut counts,
    )
    .map_err(|e| format!("node {me}: get ring.*: {e:?}"))?;
    let mut ok = [0; 2];
    sim.get_boolean(&[vr("ring.a.ok")?, vr("ring.b.ok")?], &mut ok)
        .map_err(|e| format!("node {me}: get ring.*.ok: {e:?}"))?;
    println!(
        "aircraft {me}: ring A gave {} frames, ring B {}; {} failovers; ring.a.ok {}, \
         ring.b.ok {}; longest master step {} µs with a ring cut, {} µs without",
        counts[0],
        counts[1],
        counts[2],
        ok[0] != 0,
        ok[1] != 0,
        longest[1] / 1000,
        longest[0] / 1000
    );
    let a_cuts: Vec<&Cut> = f.cuts.iter().filter(|c| c.board == "/dev/rfm2g0").collect();
    if a_cuts.is_empty() {
        return Ok(());
    }
    // The peer's frames of the steps ring A was cut came from B. Node 0 makes
    // the cuts: its peer's frame of the first cut step may have reached ring A
    // before the cut (the island keeps it), so node 0 counts one less.
    let on_b: u64 = a_cuts
        .iter()
        .map(|c| c.to.unwrap_or(f.steps).min(f.steps) - c.from)
        .sum();
    let from_b = counts[1] as u64;
    let exact = if me == 0 {
        from_b + a_cuts.len() as u64 >= on_b && from_b <= on_b
    } else {
        from_b == on_b
    };
    // One frame taken per step (the peer's initial frame at the first steps
    // with a lag).
    if !exact || (counts[0] + counts[1]) as u64 != f.steps {
        return Err(format!(
            "node {me}: {} frames from A and {from_b} from B; {on_b} from B expected, {} in all",
            counts[0], f.steps
        ));
    }
    if counts[2] as usize != a_cuts.len() {
        return Err(format!(
            "node {me}: {} failovers, {} expected",
            counts[2],
            a_cuts.len()
        ));
    }
    if longest[1] > longest[0] + 10_000_000 {
        return Err(format!(
            "node {me}: a step with a ring cut took {} µs, more than 10 ms over the longest \
             without ({} µs)",
            longest[1] / 1000,
            longest[0] / 1000
        ));
    }
    Ok(())
}

fn main() -> ExitCode {
    artefact_tests::print_fmu_messages();
    let mut fmu = "target/fmu/rfm_attitude.fmu".to_owned();
    let (mut steps, mut device, mut node, mut library) = (100_000u64, None, None, None);
    let (mut lag, mut timeout) = (0u64, None);
    let (mut start_jitter_ms, mut ring): (u64, Option<String>) = (0, None);
    let mut record: Option<String> = None;
    let (mut redundant, mut cuts, mut expect_timeout) = (false, Vec::new(), None);
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
            "--redundant" => redundant = true,
            "--cut" => {
                let text = args.next().unwrap_or_default();
                match Cut::parse(&text) {
                    Some(cut) => cuts.push(cut),
                    None => {
                        eprintln!("simulators: --cut takes a:FROM..TO or b:FROM.. , not `{text}`");
                        return ExitCode::FAILURE;
                    }
                }
            }
            "--expect-timeout" => expect_timeout = args.next().and_then(|s| s.parse().ok()),
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
                     \x20      [--redundant [--cut a:FROM..TO]... [--expect-timeout STEP]]\n\
                     (--redundant: with --rfm2g-sim, each aircraft on two boards of two rings, device\n\
                     \x20/dev/rfm2g0+/dev/rfm2g1; --cut: aircraft 0 cuts its board of ring a or b before\n\
                     \x20step FROM and mends it before TO; --expect-timeout: that step must fail in time)\n\
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
            cuts: &[],
            expect_timeout: None,
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
            cuts: &cuts,
            expect_timeout,
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
    if (redundant || !cuts.is_empty()) && library.is_none() {
        eprintln!("simulators: --redundant and --cut need --rfm2g-sim (the emulated rings)");
        return ExitCode::FAILURE;
    }
    let (device, object) = match (&library, device) {
        (Some(_), _) if redundant => (
            "/dev/rfm2g0+/dev/rfm2g1".to_owned(),
            format!("/rfm2g-sim.{name}"),
        ),
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
            for cut in &cuts {
                args.extend(["--cut".to_owned(), cut.arg()]);
            }
            if let Some(k) = expect_timeout {
                args.extend(["--expect-timeout".to_owned(), k.to_string()]);
            }
            args
        },
        library.as_deref().map(|lib| (lib, name.as_str())),
        artefact_tests::Spawn {
            start_jitter_ms,
            first: None,
            // A ring named by --ring outlives the run, as a lab's memory does.
            memory: ring.is_none().then_some(object.as_str()),
            redundant,
        },
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("simulators: a simulator process failed");
        ExitCode::FAILURE
    }
}
