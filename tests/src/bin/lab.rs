//! A lab: one simulator process per node of an interface, each loading its own
//! node's FMU (as build-fmu packs it) with the `fmi` crate, all in lockstep.
//!
//! `lab --dir DIR --interface NAME --nodes A,B,C [--steps N] [--rfm2g-sim LIB]`:
//! starts one process per node; the process of node `A` imports
//! `DIR/NAME_A.fmu`, sets every input at step k to a value that is a function of
//! (node, input, k), steps (lag 0, spin) through a fresh `shm:` memory, or with
//! `--rfm2g-sim` through `/dev/rfm2g0` on its own board of a fresh emulated ring,
//! and checks every output of every other node, of every type, against that
//! node's function at step k: exact, or the run fails. The processes wait with
//! `waitStrategy = yield`: more spinning processes than cores would each wait for
//! a time slice.

use std::ffi::CString;
use std::process::ExitCode;
use std::time::Instant;

use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::{CoSimulation, Common};
use fmi::schema::fmi2::{Causality, ScalarVariableElement};
use fmi::traits::FmiImport;

const H: f64 = 1e-3;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Real,
    Integer,
    Boolean,
    String,
}

/// What node `n` sets its input `i` to at step `k`.
fn real(n: usize, i: usize, k: u64) -> f64 {
    k as f64 * 0.25 + i as f64 + n as f64 * 1000.0
}

fn integer(n: usize, i: usize, k: u64) -> i32 {
    (k as i64 * 3 + i as i64 + 100 * n as i64) as i32
}

fn boolean(n: usize, i: usize, k: u64) -> bool {
    (k as usize + i + n) % 2 == 1
}

fn string(n: usize, i: usize, k: u64) -> String {
    format!("{n}.{i}.{}", k % 1000)
}

struct Var {
    vr: u32,
    kind: Kind,
    /// Input: its index among this node's; output: (node, index among its signals).
    index: usize,
    node: usize,
}

fn run(
    dir: &str,
    iface: &str,
    nodes: &[String],
    me: usize,
    device: &str,
    library: Option<&str>,
    steps: u64,
) -> Result<String, String> {
    let fmu = format!("{dir}/{iface}_{}.fmu", nodes[me]);
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
                // The FMU's own outputs (record.dropped, replay.divergence): no
                // node may have these names (the interface parser refuses them).
                if ["record", "replay"].contains(&node) {
                    continue;
                }
                let n = nodes
                    .iter()
                    .position(|x| x == node)
                    .ok_or_else(|| format!("output {} of an unknown node", v.name))?;
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
    sim.set_string(
        &[find("device")?, find("waitStrategy")?],
        &[cstr(device)?, cstr("yield")?],
    )
    .map_err(fail("set device"))?;
    if let Some(library) = library {
        sim.set_string(&[find("rfm2gLibrary")?], &[cstr(library)?])
            .map_err(fail("set rfm2gLibrary"))?;
    }
    sim.setup_experiment(None, 0.0, None)
        .map_err(fail("setup"))?;
    Common::enter_initialization_mode(&mut sim).map_err(fail("enter initialization"))?;
    Common::exit_initialization_mode(&mut sim).map_err(fail("exit initialization"))?;
    let others: Vec<usize> = (0..nodes.len()).filter(|&n| n != me).collect();
    let steps_vr: Vec<u32> = others
        .iter()
        .map(|&n| find(&format!("{}.step", nodes[n])))
        .collect::<Result<_, _>>()?;
    let mut checked = 0u64;
    let start = Instant::now();
    for k in 0..steps {
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
        sim.do_step(k as f64 * H, H, true)
            .map_err(fail("fmi2DoStep"))?;
        for v in &outputs {
            let (n, i) = (v.node, v.index);
            let ok = match v.kind {
                Kind::Real => {
                    let mut x = [0.0];
                    sim.get_real(&[v.vr], &mut x).map_err(fail("get"))?;
                    x[0] == real(n, i, k)
                }
                Kind::Integer => {
                    let mut x = [0];
                    sim.get_integer(&[v.vr], &mut x).map_err(fail("get"))?;
                    x[0] == integer(n, i, k)
                }
                Kind::Boolean => {
                    let mut x = [0];
                    sim.get_boolean(&[v.vr], &mut x).map_err(fail("get"))?;
                    (x[0] != 0) == boolean(n, i, k)
                }
                Kind::String => {
                    let mut x = [CString::default()];
                    sim.get_string(&[v.vr], &mut x).map_err(fail("get"))?;
                    x[0].to_str().ok() == Some(string(n, i, k).as_str())
                }
            };
            if !ok {
                return Err(format!(
                    "node `{}`, step {k}: signal {i} of node `{}` is not what it sent",
                    nodes[me], nodes[n]
                ));
            }
            checked += 1;
        }
        let mut got = vec![0; steps_vr.len()];
        sim.get_integer(&steps_vr, &mut got)
            .map_err(fail("get steps"))?;
        if got.iter().any(|&s| s != k as i32) {
            return Err(format!(
                "node `{}`, step {k}: peers' steps {got:?}",
                nodes[me]
            ));
        }
    }
    Common::terminate(&mut sim).map_err(fail("terminate"))?;
    Ok(format!(
        "node `{}`: {steps} lockstep steps with {} other nodes, {} inputs set and {checked} peer values checked, every one exact ({:.1} µs per step)",
        nodes[me],
        others.len(),
        inputs.len(),
        start.elapsed().as_secs_f64() * 1e6 / steps as f64
    ))
}

fn main() -> ExitCode {
    let (mut dir, mut iface, mut nodes) = (String::from("target/fmu"), String::new(), Vec::new());
    let (mut steps, mut me, mut device, mut library) = (10_000u64, None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match a.as_str() {
            "--dir" => dir = value(),
            "--interface" => iface = value(),
            "--nodes" => nodes = value().split(',').map(str::to_owned).collect(),
            "--steps" => steps = value().parse().unwrap_or(steps),
            "--me" => me = value().parse().ok(),
            "--device" => device = Some(value()),
            "--rfm2g-sim" => library = Some(value()),
            _ => {
                eprintln!("usage: lab --dir DIR --interface NAME --nodes A,B,C [--steps N] [--rfm2g-sim LIB]");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(me) = me {
        let device = device.expect("the parent passes --device");
        return match run(&dir, &iface, &nodes, me, &device, library.as_deref(), steps) {
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
    let name = format!("rfm-lab-{}", std::process::id());
    let (device, object) = match &library {
        Some(_) => ("/dev/rfm2g0".to_owned(), format!("/rfm2g-sim.{name}")),
        None => (format!("shm:{name}"), format!("/{name}")),
    };
    println!(
        "{} simulator processes ({}), coupled through the FMUs of interface `{iface}` over {device}{}, {steps} steps",
        nodes.len(),
        nodes.join(", "),
        if library.is_some() { " on one emulated board each" } else { "" }
    );
    let ok = artefact_tests::run_nodes(
        nodes.len(),
        |me| {
            [
                "--dir",
                &dir,
                "--interface",
                &iface,
                "--nodes",
                &nodes.join(","),
                "--me",
                &me.to_string(),
                "--device",
                &device,
                "--steps",
                &steps.to_string(),
            ]
            .map(str::to_owned)
            .to_vec()
        },
        library.as_deref().map(|lib| (lib, name.as_str())),
        &object,
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("lab: a simulator process failed");
        ExitCode::FAILURE
    }
}
