//! One node's simulator process: it imports its node's FMU with the `fmi`
//! crate, sets its inputs as the plan says, steps, and checks every value it
//! reads of every peer against the plan's model of the coupling.

use std::ffi::CString;
use std::time::{Duration, Instant};

use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::{CoSimulation, Common, InstanceCS};
use fmi::fmi2::Fmi2Error;
use fmi::schema::fmi2::{Causality, Fmi2ModelDescription, ScalarVariableElement};
use fmi::traits::FmiImport;

use artefact_tests::{cstr, value_reference};

use crate::plan::{boolean, integer, real, string, Kind, Plan};

struct Var {
    vr: u32,
    kind: Kind,
    /// Input: its index among this node's; output: (node, index among its signals).
    index: usize,
    node: usize,
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

/// An `fmi` error of the FMU `fmu` while doing `what`, as the lab says it.
fn fail<'a>(fmu: &'a str, what: &'static str) -> impl Fn(Fmi2Error) -> String + 'a {
    move |e| format!("{fmu}: {what}: {e:?}")
}

fn kind(e: &ScalarVariableElement) -> Kind {
    match e {
        ScalarVariableElement::Real(_) => Kind::Real,
        ScalarVariableElement::Integer(_) => Kind::Integer,
        ScalarVariableElement::Boolean(_) => Kind::Boolean,
        _ => Kind::String,
    }
}

/// Node `me`'s inputs, and the outputs that are other nodes' signals.
fn variables(
    md: &Fmi2ModelDescription,
    nodes: &[String],
    me: usize,
) -> Result<(Vec<Var>, Vec<Var>), String> {
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
    Ok((inputs, outputs))
}

/// Sets the parameters the plan gives node `me`, on `device`.
fn configure(
    sim: &mut InstanceCS,
    md: &Fmi2ModelDescription,
    fmu: &str,
    plan: &Plan,
    me: usize,
    device: &str,
) -> Result<(), String> {
    let find = |name: &str| value_reference(md, fmu, name);
    sim.set_string(&[find("device")?], &[cstr(device)?])
        .map_err(fail(fmu, "set device"))?;
    if let Some(wait) = &plan.wait {
        sim.set_string(&[find("waitStrategy")?], &[cstr(wait)?])
            .map_err(fail(fmu, "set waitStrategy"))?;
    }
    if plan.free_running.contains(&me) {
        sim.set_string(&[find("syncMode")?], &[cstr("free")?])
            .map_err(fail(fmu, "set syncMode"))?;
    }
    sim.set_integer(&[find("lag")?], &[i32::from(plan.lags[me])])
        .map_err(fail(fmu, "set lag"))?;
    sim.set_real(&[find("realTimeFactor")?], &[plan.real_time_factor])
        .map_err(fail(fmu, "set realTimeFactor"))?;
    if let Some(library) = &plan.library {
        sim.set_string(&[find("rfm2gLibrary")?], &[cstr(library)?])
            .map_err(fail(fmu, "set rfm2gLibrary"))?;
    }
    Ok(())
}

/// One node's run: its FMU instance, its variables, and what it has seen of
/// each peer so far.
struct Node<'p> {
    plan: &'p Plan,
    me: usize,
    fmu: String,
    sim: InstanceCS,
    inputs: Vec<Var>,
    outputs: Vec<Var>,
    others: Vec<usize>,
    /// Each node's output `NODE.step`, `NODE.time` and `NODE.link.age` (none
    /// for this node itself).
    step_vrs: Vec<u32>,
    time_vrs: Vec<u32>,
    age_vrs: Vec<u32>,
    /// The step of each peer's frame last taken.
    newest: Vec<i64>,
    /// Free readers: how many new frames of each peer were taken.
    free_seen: Vec<u64>,
    /// A free reader may have taken no frame of a peer yet: its outputs then
    /// show their start values.
    taken: Vec<bool>,
    /// Peer values checked.
    checked: u64,
    /// The unpacked FMU, kept while its instance runs (after it, so that it
    /// drops after it).
    _import: Fmi2Import,
}

impl<'p> Node<'p> {
    /// Imports node `me`'s FMU, instantiates it and sets its parameters.
    fn open(plan: &'p Plan, me: usize, device: &str) -> Result<(Node<'p>, u32), String> {
        let nodes = &plan.nodes;
        let fmu = format!("{}/{}_{}.fmu", plan.dir, plan.iface, nodes[me]);
        let import: Fmi2Import =
            fmi::import::from_path(&fmu).map_err(|e| format!("cannot import {fmu}: {e}"))?;
        let md = import.model_description();
        let (inputs, outputs) = variables(md, nodes, me)?;
        let mut sim = import
            .instantiate_cs(&nodes[me], false, true)
            .map_err(|e| e.to_string())?;
        configure(&mut sim, md, &fmu, plan, me, device)?;
        let per_node = |field: &str| -> Vec<u32> {
            (0..nodes.len())
                .map(|n| {
                    value_reference(md, &fmu, &format!("{}.{field}", nodes[n])).unwrap_or(u32::MAX)
                })
                .collect()
        };
        let behind = value_reference(md, &fmu, "pace.behind")?;
        let (step_vrs, time_vrs, age_vrs) =
            (per_node("step"), per_node("time"), per_node("link.age"));
        let node = Node {
            plan,
            me,
            others: (0..nodes.len()).filter(|&n| n != me).collect(),
            step_vrs,
            time_vrs,
            age_vrs,
            newest: vec![-1; nodes.len()],
            free_seen: vec![0; nodes.len()],
            taken: vec![true; nodes.len()],
            checked: 0,
            fmu,
            sim,
            inputs,
            outputs,
            _import: import,
        };
        Ok((node, behind))
    }

    fn name(&self) -> &str {
        &self.plan.nodes[self.me]
    }

    /// Sets every input to its value of step `k` (−1: before the first).
    fn set_inputs(&mut self, k: i64) -> Result<(), String> {
        for v in &self.inputs {
            let (n, i) = (self.me, v.index);
            match v.kind {
                Kind::Real => self.sim.set_real(&[v.vr], &[real(n, i, k)]).map(|_| ()),
                Kind::Integer => self
                    .sim
                    .set_integer(&[v.vr], &[integer(n, i, k)])
                    .map(|_| ()),
                Kind::Boolean => self
                    .sim
                    .set_boolean(&[v.vr], &[i32::from(boolean(n, i, k))])
                    .map(|_| ()),
                Kind::String => self.sim.set_string(&[v.vr], &[cstr(&string(n, i, k))?]),
            }
            .map_err(fail(&self.fmu, "set an input"))?;
        }
        Ok(())
    }

    /// Step `k`'s `NODE.step` and `NODE.time` of every peer: the rule's step
    /// for a peer it waits for, a newest frame that never goes back for one it
    /// runs free of, and the time of that step.
    fn check_peers(&mut self, k: u64) -> Result<(), String> {
        let plan = self.plan;
        let h = plan.periods[self.me].seconds();
        for i in 0..self.others.len() {
            let p = self.others[i];
            let mut step = [0];
            self.sim
                .get_integer(&[self.step_vrs[p]], &mut step)
                .map_err(fail(&self.fmu, "get a step"))?;
            let mut time = [0.0];
            self.sim
                .get_real(&[self.time_vrs[p]], &mut time)
                .map_err(fail(&self.fmu, "get a time"))?;
            let got = i64::from(step[0]);
            let want_time = if got < 0 {
                0.0
            } else {
                got as f64 * plan.periods[p].seconds()
            };
            if plan.waits(self.me, p) {
                let want = plan.needed(self.me, p, k);
                if got != want {
                    return Err(format!(
                        "node `{}`, step {k} (t = {}): `{}.step` is {got}, the rule says {want}",
                        self.name(),
                        k as f64 * h,
                        plan.nodes[p]
                    ));
                }
            } else {
                self.check_newest(k, p, got)?;
            }
            self.newest[p] = got;
            if self.taken[p] && time[0] != want_time {
                return Err(format!(
                    "node `{}`, step {k}: `{}.time` is {}, its step {got} is at {want_time}",
                    self.name(),
                    plan.nodes[p],
                    time[0]
                ));
            }
        }
        Ok(())
    }

    /// A peer this node takes the newest frame of, whose frame of step `got`
    /// step `k` shows: never older than the last, and taken once its age says so.
    fn check_newest(&mut self, k: u64, p: usize, got: i64) -> Result<(), String> {
        if got < self.newest[p] {
            return Err(format!(
                "node `{}`, step {k}: the newest frame of `{}` went back from step {} to {got}",
                self.name(),
                self.plan.nodes[p],
                self.newest[p]
            ));
        }
        if got > self.newest[p] {
            self.free_seen[p] += 1;
        }
        let mut age = [0.0];
        self.sim
            .get_real(&[self.age_vrs[p]], &mut age)
            .map_err(fail(&self.fmu, "get an age"))?;
        self.taken[p] = age[0] >= 0.0;
        Ok(())
    }

    /// Every peer signal of step `k`: what its node sent at the step it shows.
    fn check_outputs(&mut self, k: u64) -> Result<(), String> {
        for v in self.outputs.iter().filter(|v| self.taken[v.node]) {
            let (n, i, j) = (v.node, v.index, self.newest[v.node]);
            let get = fail(&self.fmu, "get");
            let ok = match v.kind {
                Kind::Real => {
                    let mut x = [0.0];
                    self.sim.get_real(&[v.vr], &mut x).map_err(get)?;
                    x[0] == real(n, i, j)
                }
                Kind::Integer => {
                    let mut x = [0];
                    self.sim.get_integer(&[v.vr], &mut x).map_err(get)?;
                    x[0] == integer(n, i, j)
                }
                Kind::Boolean => {
                    let mut x = [0];
                    self.sim.get_boolean(&[v.vr], &mut x).map_err(get)?;
                    (x[0] != 0) == boolean(n, i, j)
                }
                Kind::String => {
                    let mut x = [CString::default()];
                    self.sim.get_string(&[v.vr], &mut x).map_err(get)?;
                    x[0].to_str().ok() == Some(string(n, i, j).as_str())
                }
            };
            if !ok {
                return Err(format!(
                    "node `{}`, step {k}: signal {i} of node `{}` is not what it sent at its step {j}",
                    self.plan.nodes[self.me], self.plan.nodes[n]
                ));
            }
            self.checked += 1;
        }
        Ok(())
    }

    /// What the plan's faults do before step `k`: a kill, a pause, jitter and
    /// the first node's ring cuts.
    fn before_step(&self, k: u64, rng: &mut XorShift) -> Result<(), String> {
        let plan = self.plan;
        if plan.kill.is_some_and(|(n, at)| n == self.me && at == k) {
            // SAFETY: kill(2) on this very process; nothing after it runs.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        if let Some((_, _, seconds)) = plan.pause.filter(|&(n, at, _)| n == self.me && at == k) {
            std::thread::sleep(Duration::from_secs_f64(seconds));
        }
        if plan.jitter_us > 0 && rng.next().is_multiple_of(8) {
            std::thread::sleep(Duration::from_micros(rng.next() % plan.jitter_us));
        }
        if self.me == 0 {
            artefact_tests::Cut::apply(&plan.cuts, plan.library.as_deref().unwrap_or_default(), k)
                .map_err(|e| format!("node `{}`, step {k}: {e}", self.name()))?;
        }
        Ok(())
    }

    /// A step `k` that failed `took` after it began: with a node killed, the
    /// run's end if it came within the timeout; else the run's failure.
    fn step_failed(&self, k: u64, took: Duration, e: Fmi2Error) -> Result<String, String> {
        if self.plan.kill.is_none() {
            return Err(format!("{}: fmi2DoStep {k}: {e:?}", self.fmu));
        }
        // A killed peer: the step must end within its timeout (1 s) and the
        // silence it watched for, not its idleTimeout.
        if took < Duration::from_millis(2500) {
            Ok(format!(
                "node `{}`: step {k} failed {:.3} s after it began, as a node was killed ({e:?})",
                self.name(),
                took.as_secs_f64()
            ))
        } else {
            Err(format!(
                "node `{}`: step {k} failed only after {took:?}: a killed peer must be found dead \
                 within its timeout",
                self.name()
            ))
        }
    }
}

/// Runs node `me` of `plan` on `device`: what it did, or why it failed.
pub(crate) fn run(plan: &Plan, me: usize, device: &str) -> Result<String, String> {
    let (mut node, behind_vr) = Node::open(plan, me, device)?;
    let fmu = node.fmu.clone();
    node.sim
        .setup_experiment(None, 0.0, None)
        .map_err(fail(&fmu, "setup"))?;
    Common::enter_initialization_mode(&mut node.sim).map_err(fail(&fmu, "enter initialization"))?;
    // The initial frame carries the values of "step −1".
    node.set_inputs(-1)?;
    Common::exit_initialization_mode(&mut node.sim).map_err(fail(&fmu, "exit initialization"))?;
    let h = plan.periods[me].seconds();
    let steps = plan.steps_of(me);
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ u64::from(std::process::id()));
    let start = Instant::now();
    for k in 0..steps {
        node.before_step(k, &mut rng)?;
        node.set_inputs(k as i64)?;
        let began = Instant::now();
        if let Err(e) = node.sim.do_step(k as f64 * h, h, true) {
            return node.step_failed(k, began.elapsed(), e);
        }
        node.check_peers(k)?;
        node.check_outputs(k)?;
    }
    let mut behind = [0];
    node.sim
        .get_integer(&[behind_vr], &mut behind)
        .map_err(fail(&fmu, "get pace.behind"))?;
    Common::terminate(&mut node.sim).map_err(fail(&fmu, "terminate"))?;
    if plan.kill.is_some() {
        return Err(format!(
            "node `{}` ran all its steps although a node was killed",
            node.name()
        ));
    }
    let free: Vec<String> = node
        .others
        .iter()
        .filter(|&&p| !plan.waits(me, p))
        .map(|&p| format!("`{}` ({} new frames)", plan.nodes[p], node.free_seen[p]))
        .collect();
    Ok(format!(
        "node `{}` (period {} s, lag {}): {steps} steps in {:.3} s, {} inputs set, {} peer \
         values checked, each the rule's{}; pace.behind {}",
        node.name(),
        h,
        plan.lags[me],
        start.elapsed().as_secs_f64(),
        node.inputs.len(),
        node.checked,
        if free.is_empty() {
            String::new()
        } else {
            format!(", the newest whole frame of {}", free.join(", "))
        },
        behind[0]
    ))
}
