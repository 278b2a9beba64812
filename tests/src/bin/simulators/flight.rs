//! One aircraft: its FMU imported with the `fmi` crate, its manoeuvre flown
//! step by step, and every peer attitude checked against the peer's model.

use std::time::Instant;

use artefact_tests::{cstr, value_reference, Cut};
use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::{CoSimulation, Common, InstanceCS};
use fmi::fmi2::Fmi2Error;
use fmi::traits::FmiImport;

pub(crate) const H: f64 = 1e-3;

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
pub(crate) struct Flight<'a> {
    pub(crate) fmu: &'a str,
    pub(crate) device: &'a str,
    pub(crate) library: Option<&'a str>,
    /// Record into `DIR/aircraftN.rec`.
    pub(crate) record: Option<&'a str>,
    pub(crate) me: u32,
    pub(crate) steps: u64,
    /// Steps whose own roll is off by 1 rad (a replay must count them).
    pub(crate) changed: std::ops::Range<u64>,
    /// The FMU's `lag`: at step k the peer's attitude of step k − lag (its
    /// start values, zero, before).
    pub(crate) lag: u64,
    /// The FMU's `timeout` in seconds, when given.
    pub(crate) timeout: Option<f64>,
    /// Ring faults aircraft 0 makes on its own boards before a step (both
    /// aircraft judge their steps by them).
    pub(crate) cuts: &'a [Cut],
    /// The step that must fail with the timeout error (both rings cut).
    pub(crate) expect_timeout: Option<u64>,
}

/// One aircraft's FMU, instantiated, its parameters set from its flight.
struct Aircraft {
    sim: InstanceCS,
    fmu: String,
    /// The unpacked FMU, kept while its instance runs (after it, so that it
    /// drops after it).
    import: Fmi2Import,
}

/// An `fmi` error of aircraft `me` while doing `what`.
fn fail(me: u32, what: &'static str) -> impl Fn(Fmi2Error) -> String {
    move |e| format!("node {me}: {what}: {e:?}")
}

impl Aircraft {
    /// Imports and instantiates `f`'s FMU and sets its parameters.
    fn open(f: &Flight) -> Result<Aircraft, String> {
        let fmu = f.fmu;
        let import: Fmi2Import =
            fmi::import::from_path(fmu).map_err(|e| format!("cannot import {fmu}: {e}"))?;
        let sim = import
            .instantiate_cs(&format!("aircraft{}", f.me), false, true)
            .map_err(|e| e.to_string())?;
        let mut aircraft = Aircraft {
            sim,
            fmu: fmu.to_owned(),
            import,
        };
        aircraft.configure(f)?;
        Ok(aircraft)
    }

    /// The value reference of variable `name`.
    fn vr(&self, name: &str) -> Result<u32, String> {
        value_reference(self.import.model_description(), &self.fmu, name)
    }

    fn configure(&mut self, f: &Flight) -> Result<(), String> {
        let me = f.me;
        let device = self.vr("device")?;
        self.sim
            .set_string(&[device], &[cstr(f.device)?])
            .map_err(fail(me, "set device"))?;
        if let Some(library) = f.library {
            let vr = self.vr("rfm2gLibrary")?;
            self.sim
                .set_string(&[vr], &[cstr(library)?])
                .map_err(fail(me, "set rfm2gLibrary"))?;
        }
        if let Some(dir) = f.record {
            let file = format!("{dir}/aircraft{me}.rec");
            let (vr, overwrite) = (self.vr("recordFile")?, self.vr("recordOverwrite")?);
            self.sim
                .set_string(&[vr], &[cstr(&file)?])
                .map_err(fail(me, "set recordFile"))?;
            // The demo and test.sh record into one folder run after run.
            self.sim
                .set_boolean(&[overwrite], &[1])
                .map_err(fail(me, "set recordOverwrite"))?;
        }
        let slots = [self.vr("nodeSlot")?, self.vr("peerSlot")?, self.vr("lag")?];
        self.sim
            .set_integer(&slots, &[me as i32, 1 - me as i32, f.lag as i32])
            .map_err(fail(me, "set slots"))?;
        if let Some(timeout) = f.timeout {
            let vr = self.vr("timeout")?;
            self.sim
                .set_real(&[vr], &[timeout])
                .map_err(fail(me, "set timeout"))?;
        }
        self.sim
            .setup_experiment(None, 0.0, None)
            .map_err(fail(me, "setup"))?;
        Common::enter_initialization_mode(&mut self.sim)
            .map_err(fail(me, "enter initialization"))?;
        Common::exit_initialization_mode(&mut self.sim).map_err(fail(me, "exit initialization"))?;
        Ok(())
    }
}

/// With `--expect-timeout`, whether step `k` (which `stepped` tells, begun at
/// `start`) ends the flight: both rings are cut, so it must fail within the
/// timeout. Aircraft 0 cuts: the peer's frame of step K may have reached ring
/// A before, and the island keeps it; its step K + 1 then fails.
fn timed_out(
    f: &Flight,
    k: u64,
    stepped: &Result<(), Fmi2Error>,
    start: Instant,
) -> Option<Result<i32, String>> {
    let me = f.me;
    let late = me == 0 && stepped.is_ok() && f.expect_timeout == Some(k);
    let due = f
        .expect_timeout
        .is_some_and(|e| e == k || (me == 0 && e + 1 == k));
    if !due || late {
        return None;
    }
    let took = start.elapsed().as_secs_f64();
    let timeout = f.timeout.unwrap_or(2.0);
    Some(match stepped {
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
    })
}

/// The peer's attitude at step `k` is what the peer sent at step k − lag.
fn check_peer(f: &Flight, k: u64, peer: [f64; 3]) -> Result<(), String> {
    let me = f.me;
    let expected = match k.checked_sub(f.lag) {
        Some(j) => attitude(1 - me, j),
        None => [0.0; 3],
    };
    if peer != expected {
        return Err(format!(
            "node {me}, step {k}: got {peer:?}, which the peer never sent"
        ));
    }
    if k.is_multiple_of((f.steps / 5).max(1)) || k + 1 == f.steps {
        let own = attitude(me, k);
        println!(
            "aircraft {me}  t={:7.3}s  own roll {:+.4} pitch {:+.4} yaw {:+.4}  | peer roll {:+.4} pitch {:+.4} yaw {:+.4}",
            k as f64 * H, own[0], own[1], own[2], peer[0], peer[1], peer[2]
        );
    }
    Ok(())
}

/// The master steps' times after the warm-up: median, p99, p99.9 and max.
fn print_times(me: u32, steps: u64, times: &[u64]) {
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
}

/// Flies `f`; returns the FMU's `replay.divergence` at the end.
pub(crate) fn fly(f: &Flight) -> Result<i32, String> {
    let me = f.me;
    let mut aircraft = Aircraft::open(f)?;
    let inputs = [
        aircraft.vr("roll")?,
        aircraft.vr("pitch")?,
        aircraft.vr("yaw")?,
    ];
    let outputs = [
        aircraft.vr("peer.roll")?,
        aircraft.vr("peer.pitch")?,
        aircraft.vr("peer.yaw")?,
    ];
    let mut peer = [0.0; 3];
    let mut times = Vec::with_capacity(f.steps as usize);
    // The longest master step with a ring cut and without.
    let mut longest = [0u64; 2];
    for k in 0..f.steps {
        if me == 0 {
            Cut::apply(f.cuts, f.library.unwrap_or_default(), k)
                .map_err(|e| format!("node {me}, step {k}: {e}"))?;
        }
        let start = Instant::now();
        let mut own = attitude(me, k);
        if f.changed.contains(&k) {
            own[0] += 1.0;
        }
        let sim = &mut aircraft.sim;
        sim.set_real(&inputs, &own)
            .map_err(fail(me, "set inputs"))?;
        let stepped = sim.do_step(k as f64 * H, H, true).map(|_| ());
        if let Some(end) = timed_out(f, k, &stepped, start) {
            return end;
        }
        stepped.map_err(fail(me, "fmi2DoStep"))?;
        sim.get_real(&outputs, &mut peer)
            .map_err(fail(me, "get outputs"))?;
        let took = start.elapsed().as_nanos() as u64;
        times.push(took);
        let i = usize::from(f.cuts.iter().any(|c| c.covers(k)));
        longest[i] = longest[i].max(took);
        check_peer(f, k, peer)?;
    }
    let mut divergence = [0];
    let vr = aircraft.vr("replay.divergence")?;
    aircraft
        .sim
        .get_integer(&[vr], &mut divergence)
        .map_err(fail(me, "get replay.divergence"))?;
    if f.device.contains('+') {
        rings_report(&mut aircraft, f, longest)?;
    }
    Common::terminate(&mut aircraft.sim).map_err(fail(me, "terminate"))?;
    print_times(me, f.steps, &times);
    Ok(divergence[0])
}

/// A redundant run: prints the `ring.*` outputs, and with cuts checks them:
/// every frame not on ring A came from B, one failover per cut of ring A, and
/// no step with a cut more than 10 ms longer than the longest without.
fn rings_report(aircraft: &mut Aircraft, f: &Flight, longest: [u64; 2]) -> Result<(), String> {
    let me = f.me;
    let Aircraft {
        sim, import, fmu, ..
    } = aircraft;
    let vr = |name: &str| value_reference(import.model_description(), fmu, name);
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
