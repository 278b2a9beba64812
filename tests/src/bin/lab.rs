//! A lab: one simulator process per node of an interface, each loading its own
//! node's FMU (as build-fmu packs it) with the `fmi` crate, each at its own
//! period, and every value any node reads checked against a model of the
//! coupling kept here, not against the FMU's own outputs.
//!
//! ```text
//! lab --dir DIR --interface NAME --nodes A,B,C [--steps N | --stop SECONDS]
//!     [--periods 0.001,1/60,0.1] [--lags 1,2,0] [--free A:B,...] [--sync A=free,...]
//!     [--real-time-factor F] [--jitter US] [--pause A:K:SECONDS] [--kill A:K]
//!     [--wait STRATEGY] [--start-jitter MS] [--first NODE]
//!     [--rfm2g-sim LIB [--ring NAME] [--redundant [--cut a:FROM..TO]…] | --device DEV,…]
//! ```
//!
//! Starts one process per node; the process of node `A` imports
//! `DIR/NAME_A.fmu`, sets every input before initialization and at each step k
//! to a value that is a function of (node, input, k) (k = −1 before the first
//! step), steps through a fresh `shm:` memory (or, with `--rfm2g-sim`,
//! `/dev/rfm2g0` on its own board of a fresh emulated ring; with `--device
//! A,B,C`, node i's memory is the i-th: hosts' memories that `rfm-bridge`
//! joins), and after each
//! step checks every output of every other node, of every type:
//! - a peer it waits for (lockstep, not in its `--free`): exactly that peer's
//!   inputs of step j = floor((k − lag)·T_A / T_P) (−1 while k < lag), computed
//!   here in exact rationals, with `P.step` = j and `P.time` = j·T_P;
//! - a peer it takes the newest frame of: a whole frame of the step `P.step`
//!   names, never older than the last one.
//!
//! `--start-jitter MS` starts each process after a random 0..MS ms, and
//! `--first NODE` that node's first (the others 1 ms or more after it): a
//! lab's PCs start in no fixed order. `--ring NAME` (with `--rfm2g-sim`) uses
//! and keeps that emulated ring, as a lab's memory outlives every run.
//! `--jitter` sleeps a random 0..US µs before one step in eight; `--pause`
//! stops node A's master for SECONDS before its step K (its heartbeat beats on:
//! no node may fail); `--kill` has node A kill itself with SIGKILL before its
//! step K, and then every other node must fail a step within 2.5 s (its
//! `timeout` is 1 s, its `idleTimeout` 300 s). `--redundant` puts every node
//! on two boards of two emulated rings (`/dev/rfm2g0+/dev/rfm2g1`), and `--cut
//! a:3000..6000` has the first node cut its board of ring A before its step
//! 3000 and mend it before 6000 (`b:8000..`: ring B, never mended): every value
//! is checked as without.

use std::ffi::CString;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::{CoSimulation, Common};
use fmi::schema::fmi2::{Causality, ScalarVariableElement};
use fmi::traits::FmiImport;

/// An exact period in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Q {
    n: u128,
    d: u128,
}

impl Q {
    fn parse(text: &str) -> Result<Q, String> {
        let bad = || format!("period `{text}`: expected a decimal or n/d");
        let (n, d) = match text.split_once('/') {
            Some((n, d)) => (
                n.parse::<u128>().map_err(|_| bad())?,
                d.parse::<u128>().map_err(|_| bad())?,
            ),
            None => {
                let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
                let n = format!("{whole}{frac}")
                    .parse::<u128>()
                    .map_err(|_| bad())?;
                (n, 10u128.pow(frac.len() as u32))
            }
        };
        if n == 0 || d == 0 {
            return Err(bad());
        }
        Ok(Q { n, d })
    }

    fn seconds(self) -> f64 {
        self.n as f64 / self.d as f64
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Real,
    Integer,
    Boolean,
    String,
}

/// What node `n` sets its input `i` to at step `k` (−1: before the first),
/// within the bounds interface files commonly give (≥ 0; Integers 0..4).
fn real(n: usize, i: usize, k: i64) -> f64 {
    (k + 1) as f64 * 0.25 + i as f64 + n as f64 * 1000.0
}

fn integer(n: usize, i: usize, k: i64) -> i32 {
    (k * 3 + i as i64 + 100 * n as i64).rem_euclid(5) as i32
}

fn boolean(n: usize, i: usize, k: i64) -> bool {
    (k + i as i64 + n as i64).rem_euclid(2) == 1
}

fn string(n: usize, i: usize, k: i64) -> String {
    format!("{n}.{i}.{}", k.rem_euclid(1000))
}

struct Var {
    vr: u32,
    kind: Kind,
    /// Input: its index among this node's; output: (node, index among its signals).
    index: usize,
    node: usize,
}

/// Everything every process knows of the lab.
#[derive(Debug, Clone)]
struct Plan {
    dir: String,
    iface: String,
    nodes: Vec<String>,
    periods: Vec<Q>,
    lags: Vec<u8>,
    /// (reader, writer): the reader takes the writer's newest frame.
    free: Vec<(usize, usize)>,
    /// Nodes that run syncMode = free.
    free_running: Vec<usize>,
    /// Simulated seconds (exact), or a step count for every node.
    stop: Option<Q>,
    steps: u64,
    real_time_factor: f64,
    jitter_us: u64,
    pause: Option<(usize, u64, f64)>,
    kill: Option<(usize, u64)>,
    wait: Option<String>,
    library: Option<String>,
    /// `--start-jitter MS`: each process starts after a random 0..MS ms.
    start_jitter_ms: u64,
    /// `--first NODE`: its process starts first, the others after it.
    first: Option<usize>,
    /// `--ring NAME`: the emulated ring (with `--rfm2g-sim`), kept after the run.
    ring: Option<String>,
    /// `--redundant` (with `--rfm2g-sim`): every node on two boards of two
    /// rings, device `/dev/rfm2g0+/dev/rfm2g1`.
    redundant: bool,
    /// `--cut a:FROM..TO`: the first node cuts its board of that ring before
    /// its step FROM and mends it before TO.
    cuts: Vec<artefact_tests::Cut>,
}

impl Plan {
    fn steps_of(&self, me: usize) -> u64 {
        match self.stop {
            // stop / T, exactly.
            Some(s) => {
                let t = self.periods[me];
                (s.n * t.d / (s.d * t.n)) as u64
            }
            None => self.steps,
        }
    }

    /// Whether `me` waits for `peer` in lockstep.
    fn waits(&self, me: usize, peer: usize) -> bool {
        !self.free_running.contains(&me) && !self.free.contains(&(me, peer))
    }

    /// The peer's step that `me`'s step k takes in lockstep: the model.
    fn needed(&self, me: usize, peer: usize, k: u64) -> i64 {
        let lag = u64::from(self.lags[me]);
        let Some(behind) = k.checked_sub(lag) else {
            return -1;
        };
        let (a, b) = (self.periods[me], self.periods[peer]);
        (u128::from(behind) * a.n * b.d / (a.d * b.n)) as i64
    }
}

/// A small generator for the jitter (each process seeds its own).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn run(plan: &Plan, me: usize, device: &str) -> Result<String, String> {
    let nodes = &plan.nodes;
    let fmu = format!("{}/{}_{}.fmu", plan.dir, plan.iface, nodes[me]);
    let import: Fmi2Import =
        fmi::import::from_path(&fmu).map_err(|e| format!("cannot import {fmu}: {e}"))?;
    let md = import.model_description();
    let find = |name: &str| {
        md.model_variables
            .variables
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.value_reference)
            .ok_or_else(|| format!("{fmu} has no variable {name}"))
    };
    let kind = |e: &ScalarVariableElement| match e {
        ScalarVariableElement::Real(_) => Kind::Real,
        ScalarVariableElement::Integer(_) => Kind::Integer,
        ScalarVariableElement::Boolean(_) => Kind::Boolean,
        _ => Kind::String,
    };
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut per_node = vec![0usize; nodes.len()];
    for v in &md.model_variables.variables {
        match v.causality {
            Causality::Input => inputs.push(Var {
                vr: v.value_reference,
                kind: kind(&v.elem),
                index: inputs.len(),
                node: me,
            }),
            Causality::Output => {
                let (node, signal) = v.name.split_once('.').ok_or("an output without a node")?;
                // An output of no node is one of the FMU's own (record.dropped,
                // pace.behind, …): its interface parser refuses a node named by
                // their prefixes, and the lab has no value to compare them with.
                let Some(n) = nodes.iter().position(|x| x == node) else {
                    continue;
                };
                if ["time", "step"].contains(&signal) || signal.starts_with("link.") {
                    continue;
                }
                outputs.push(Var {
                    vr: v.value_reference,
                    kind: kind(&v.elem),
                    index: per_node[n],
                    node: n,
                });
                per_node[n] += 1;
            }
            _ => {}
        }
    }
    let fmu_name = fmu.as_str();
    let fail =
        |what: &'static str| move |e: fmi::fmi2::Fmi2Error| format!("{fmu_name}: {what}: {e:?}");
    let cstr = |s: &str| CString::new(s).map_err(|e| e.to_string());
    let mut sim = import
        .instantiate_cs(&nodes[me], false, true)
        .map_err(|e| e.to_string())?;
    sim.set_string(&[find("device")?], &[cstr(device)?])
        .map_err(fail("set device"))?;
    if let Some(wait) = &plan.wait {
        sim.set_string(&[find("waitStrategy")?], &[cstr(wait)?])
            .map_err(fail("set waitStrategy"))?;
    }
    if plan.free_running.contains(&me) {
        sim.set_string(&[find("syncMode")?], &[cstr("free")?])
            .map_err(fail("set syncMode"))?;
    }
    sim.set_integer(&[find("lag")?], &[i32::from(plan.lags[me])])
        .map_err(fail("set lag"))?;
    sim.set_real(&[find("realTimeFactor")?], &[plan.real_time_factor])
        .map_err(fail("set realTimeFactor"))?;
    if let Some(library) = &plan.library {
        sim.set_string(&[find("rfm2gLibrary")?], &[cstr(library)?])
            .map_err(fail("set rfm2gLibrary"))?;
    }
    let set_inputs = |sim: &mut fmi::fmi2::instance::InstanceCS, k: i64| -> Result<(), String> {
        for v in &inputs {
            let (n, i) = (me, v.index);
            match v.kind {
                Kind::Real => sim.set_real(&[v.vr], &[real(n, i, k)]).map(|_| ()),
                Kind::Integer => sim.set_integer(&[v.vr], &[integer(n, i, k)]).map(|_| ()),
                Kind::Boolean => sim
                    .set_boolean(&[v.vr], &[i32::from(boolean(n, i, k))])
                    .map(|_| ()),
                Kind::String => sim.set_string(&[v.vr], &[cstr(&string(n, i, k))?]),
            }
            .map_err(fail("set an input"))?;
        }
        Ok(())
    };
    sim.setup_experiment(None, 0.0, None)
        .map_err(fail("setup"))?;
    Common::enter_initialization_mode(&mut sim).map_err(fail("enter initialization"))?;
    // The initial frame carries the values of "step −1".
    set_inputs(&mut sim, -1)?;
    Common::exit_initialization_mode(&mut sim).map_err(fail("exit initialization"))?;
    let others: Vec<usize> = (0..nodes.len()).filter(|&n| n != me).collect();
    // Each node's output `NODE.field` (none for this node itself).
    let per_node = |field: &str| -> Vec<u32> {
        (0..nodes.len())
            .map(|n| find(&format!("{}.{field}", nodes[n])).unwrap_or(u32::MAX))
            .collect()
    };
    let (step_vrs, time_vrs, age_vrs) = (per_node("step"), per_node("time"), per_node("link.age"));
    let period = plan.periods[me];
    let h = period.seconds();
    let steps = plan.steps_of(me);
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ u64::from(std::process::id()));
    let mut checked = 0u64;
    let mut newest = vec![-1i64; nodes.len()];
    let mut free_seen = vec![0u64; nodes.len()];
    // A free reader may have taken no frame of a peer yet: its outputs then
    // show their start values.
    let mut taken = vec![true; nodes.len()];
    let start = Instant::now();
    for k in 0..steps {
        if plan.kill.is_some_and(|(n, at)| n == me && at == k) {
            // SAFETY: kill(2) on this very process; nothing after it runs.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        if let Some((_, _, seconds)) = plan.pause.filter(|&(n, at, _)| n == me && at == k) {
            std::thread::sleep(Duration::from_secs_f64(seconds));
        }
        if plan.jitter_us > 0 && rng.next().is_multiple_of(8) {
            std::thread::sleep(Duration::from_micros(rng.next() % plan.jitter_us));
        }
        if me == 0 {
            artefact_tests::Cut::apply(&plan.cuts, plan.library.as_deref().unwrap_or_default(), k)
                .map_err(|e| format!("node `{}`, step {k}: {e}", nodes[me]))?;
        }
        set_inputs(&mut sim, k as i64)?;
        let began = Instant::now();
        if let Err(e) = sim.do_step(k as f64 * h, h, true) {
            let took = began.elapsed();
            if plan.kill.is_some() {
                // A killed peer: the step must end within its timeout (1 s)
                // and the silence it watched for, not its idleTimeout.
                return if took < Duration::from_millis(2500) {
                    Ok(format!(
                        "node `{}`: step {k} failed {:.3} s after it began, as a node was killed ({e:?})",
                        nodes[me],
                        took.as_secs_f64()
                    ))
                } else {
                    Err(format!(
                        "node `{}`: step {k} failed only after {took:?}: a killed peer must be \
                         found dead within its timeout",
                        nodes[me]
                    ))
                };
            }
            return Err(format!("{fmu_name}: fmi2DoStep {k}: {e:?}"));
        }
        for &p in &others {
            let mut step = [0];
            sim.get_integer(&[step_vrs[p]], &mut step)
                .map_err(fail("get a step"))?;
            let mut time = [0.0];
            sim.get_real(&[time_vrs[p]], &mut time)
                .map_err(fail("get a time"))?;
            let got = i64::from(step[0]);
            let want_time = if got < 0 {
                0.0
            } else {
                got as f64 * plan.periods[p].seconds()
            };
            if plan.waits(me, p) {
                let want = plan.needed(me, p, k);
                if got != want {
                    return Err(format!(
                        "node `{}`, step {k} (t = {}): `{}.step` is {got}, the rule says {want}",
                        nodes[me],
                        k as f64 * h,
                        nodes[p]
                    ));
                }
            } else {
                if got < newest[p] {
                    return Err(format!(
                        "node `{}`, step {k}: the newest frame of `{}` went back from step {} to {got}",
                        nodes[me], nodes[p], newest[p]
                    ));
                }
                if got > newest[p] {
                    free_seen[p] += 1;
                }
                let mut age = [0.0];
                sim.get_real(&[age_vrs[p]], &mut age)
                    .map_err(fail("get an age"))?;
                taken[p] = age[0] >= 0.0;
            }
            newest[p] = got;
            if taken[p] && time[0] != want_time {
                return Err(format!(
                    "node `{}`, step {k}: `{}.time` is {}, its step {got} is at {want_time}",
                    nodes[me], nodes[p], time[0]
                ));
            }
        }
        for v in outputs.iter().filter(|v| taken[v.node]) {
            let (n, i, j) = (v.node, v.index, newest[v.node]);
            let ok = match v.kind {
                Kind::Real => {
                    let mut x = [0.0];
                    sim.get_real(&[v.vr], &mut x).map_err(fail("get"))?;
                    x[0] == real(n, i, j)
                }
                Kind::Integer => {
                    let mut x = [0];
                    sim.get_integer(&[v.vr], &mut x).map_err(fail("get"))?;
                    x[0] == integer(n, i, j)
                }
                Kind::Boolean => {
                    let mut x = [0];
                    sim.get_boolean(&[v.vr], &mut x).map_err(fail("get"))?;
                    (x[0] != 0) == boolean(n, i, j)
                }
                Kind::String => {
                    let mut x = [CString::default()];
                    sim.get_string(&[v.vr], &mut x).map_err(fail("get"))?;
                    x[0].to_str().ok() == Some(string(n, i, j).as_str())
                }
            };
            if !ok {
                return Err(format!(
                    "node `{}`, step {k}: signal {i} of node `{}` is not what it sent at its step {j}",
                    nodes[me], nodes[n]
                ));
            }
            checked += 1;
        }
    }
    let behind = {
        let mut x = [0];
        sim.get_integer(&[find("pace.behind")?], &mut x)
            .map_err(fail("get pace.behind"))?;
        x[0]
    };
    Common::terminate(&mut sim).map_err(fail("terminate"))?;
    if plan.kill.is_some() {
        return Err(format!(
            "node `{}` ran all its steps although a node was killed",
            nodes[me]
        ));
    }
    let free: Vec<String> = others
        .iter()
        .filter(|&&p| !plan.waits(me, p))
        .map(|&p| format!("`{}` ({} new frames)", nodes[p], free_seen[p]))
        .collect();
    Ok(format!(
        "node `{}` (period {} s, lag {}): {steps} steps in {:.3} s, {} inputs set, {checked} peer \
         values checked, each the rule's{}; pace.behind {behind}",
        nodes[me],
        h,
        plan.lags[me],
        start.elapsed().as_secs_f64(),
        inputs.len(),
        if free.is_empty() {
            String::new()
        } else {
            format!(", the newest whole frame of {}", free.join(", "))
        },
    ))
}

fn index_of(nodes: &[String], name: &str) -> Result<usize, String> {
    nodes
        .iter()
        .position(|n| n == name)
        .ok_or_else(|| format!("no node `{name}` in --nodes"))
}

fn parse(args: &[String]) -> Result<(Plan, Option<usize>, Option<String>), String> {
    let mut plan = Plan {
        dir: "target/fmu".into(),
        iface: String::new(),
        nodes: Vec::new(),
        periods: Vec::new(),
        lags: Vec::new(),
        free: Vec::new(),
        free_running: Vec::new(),
        stop: None,
        steps: 10_000,
        real_time_factor: 0.0,
        jitter_us: 0,
        pause: None,
        kill: None,
        wait: None,
        library: None,
        start_jitter_ms: 0,
        first: None,
        ring: None,
        redundant: false,
        cuts: Vec::new(),
    };
    let (mut me, mut device, mut first) = (None, None, None);
    let (mut periods, mut lags, mut free, mut sync, mut pause, mut kill) = Default::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--dir" => plan.dir = value()?,
            "--interface" => plan.iface = value()?,
            "--nodes" => plan.nodes = value()?.split(',').map(str::to_owned).collect(),
            "--steps" => plan.steps = value()?.parse().map_err(|_| "--steps N")?,
            "--stop" => plan.stop = Some(Q::parse(&value()?)?),
            "--periods" => periods = Some(value()?),
            "--lags" => lags = Some(value()?),
            "--free" => free = Some(value()?),
            "--sync" => sync = Some(value()?),
            "--real-time-factor" => {
                plan.real_time_factor = value()?.parse().map_err(|_| "--real-time-factor F")?
            }
            "--jitter" => plan.jitter_us = value()?.parse().map_err(|_| "--jitter US")?,
            "--pause" => pause = Some(value()?),
            "--kill" => kill = Some(value()?),
            "--wait" => plan.wait = Some(value()?),
            "--me" => me = Some(value()?.parse().map_err(|_| "--me N")?),
            "--device" => device = Some(value()?),
            "--rfm2g-sim" => plan.library = Some(value()?),
            "--start-jitter" => {
                plan.start_jitter_ms = value()?.parse().map_err(|_| "--start-jitter MS")?
            }
            "--ring" => plan.ring = Some(value()?),
            "--redundant" => plan.redundant = true,
            "--cut" => plan
                .cuts
                .push(artefact_tests::Cut::parse(&value()?).ok_or("--cut a:FROM..TO or b:FROM..")?),
            "--first" => first = Some(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let n = plan.nodes.len();
    if let Some(first) = first {
        plan.first = Some(index_of(&plan.nodes, &first)?);
    }
    plan.periods = match periods {
        Some(p) => p.split(',').map(Q::parse).collect::<Result<_, _>>()?,
        None => vec![Q { n: 1, d: 1000 }; n],
    };
    plan.lags = match lags {
        Some(l) => l
            .split(',')
            .map(|x| x.parse().map_err(|_| format!("lag `{x}`")))
            .collect::<Result<_, _>>()?,
        None => vec![0; n],
    };
    if plan.periods.len() != n || plan.lags.len() != n {
        return Err("--periods and --lags need one value per node".into());
    }
    for pair in free.iter().flat_map(|f: &String| f.split(',')) {
        let (a, b) = pair.split_once(':').ok_or("--free READER:WRITER,…")?;
        plan.free
            .push((index_of(&plan.nodes, a)?, index_of(&plan.nodes, b)?));
    }
    for s in sync.iter().flat_map(|s: &String| s.split(',')) {
        let (a, mode) = s.split_once('=').ok_or("--sync NODE=free")?;
        if mode == "free" {
            plan.free_running.push(index_of(&plan.nodes, a)?);
        }
    }
    if let Some(p) = pause {
        let parts: Vec<&str> = p.split(':').collect();
        let [a, k, s] = parts[..] else {
            return Err("--pause NODE:STEP:SECONDS".into());
        };
        plan.pause = Some((
            index_of(&plan.nodes, a)?,
            k.parse().map_err(|_| "--pause step")?,
            s.parse().map_err(|_| "--pause seconds")?,
        ));
    }
    if let Some(k) = kill {
        let (a, at) = k.split_once(':').ok_or("--kill NODE:STEP")?;
        plan.kill = Some((
            index_of(&plan.nodes, a)?,
            at.parse().map_err(|_| "--kill step")?,
        ));
    }
    Ok((plan, me, device))
}

fn main() -> ExitCode {
    artefact_tests::print_fmu_messages();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (plan, me, device) = match parse(&args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("lab: {e}\nusage: lab --dir DIR --interface NAME --nodes A,B,C [--steps N | --stop SECONDS] [--periods P,…] [--lags L,…] [--free A:B,…] [--sync A=free,…] [--real-time-factor F] [--jitter US] [--pause A:K:S] [--kill A:K] [--wait STRATEGY] [--start-jitter MS] [--first NODE] [--rfm2g-sim LIB [--ring NAME] [--redundant [--cut a:FROM..TO]…] | --device DEV,…]");
            return ExitCode::from(2);
        }
    };
    if let Some(me) = me {
        let device = device.expect("the parent passes --device");
        return match run(&plan, me, &device) {
            Ok(text) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("lab: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let name = plan
        .ring
        .clone()
        .unwrap_or_else(|| format!("rfm-lab-{}", std::process::id()));
    let (device, object) = match (&plan.library, &device) {
        (Some(_), _) if plan.redundant => (
            "/dev/rfm2g0+/dev/rfm2g1".to_owned(),
            format!("/rfm2g-sim.{name}"),
        ),
        (Some(_), _) => ("/dev/rfm2g0".to_owned(), format!("/rfm2g-sim.{name}")),
        // `--device A,B,C`: each node its own memory (hosts' memories joined
        // by rfm-bridge); the caller made them and removes them.
        (None, Some(given)) => (given.clone(), format!("/{name}")),
        (None, None) => (format!("shm:{name}"), format!("/{name}")),
    };
    let devices: Vec<String> = device.split(',').map(str::to_owned).collect();
    let shape: Vec<String> = (0..plan.nodes.len())
        .map(|i| {
            format!(
                "{} every {} s, lag {}{}",
                plan.nodes[i],
                plan.periods[i].seconds(),
                plan.lags[i],
                if plan.free_running.contains(&i) {
                    ", syncMode free"
                } else {
                    ""
                }
            )
        })
        .collect();
    println!(
        "{} simulator processes ({}), coupled through the FMUs of interface `{}` over {device}{}",
        plan.nodes.len(),
        shape.join("; "),
        plan.iface,
        if plan.library.is_some() {
            " on one emulated board each"
        } else {
            ""
        }
    );
    let statuses = artefact_tests::run_node_processes(
        plan.nodes.len(),
        |me| {
            let mut a = args.clone();
            a.extend([
                "--me".to_owned(),
                me.to_string(),
                "--device".to_owned(),
                devices.get(me).unwrap_or(&devices[0]).clone(),
            ]);
            a
        },
        plan.library.as_deref().map(|lib| (lib, name.as_str())),
        artefact_tests::Spawn {
            start_jitter_ms: plan.start_jitter_ms,
            first: plan.first,
            // A ring named by --ring outlives the run, as a lab's memory does.
            memory: plan.ring.is_none().then_some(object.as_str()),
            redundant: plan.redundant,
        },
    );
    let ok = statuses.iter().enumerate().all(|(i, s)| match plan.kill {
        // The killed node dies of SIGKILL; the others saw it in time.
        Some((killed, _)) if killed == i => s.signal() == Some(libc::SIGKILL),
        _ => s.success(),
    });
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("lab: a simulator process failed ({statuses:?})");
        ExitCode::FAILURE
    }
}
