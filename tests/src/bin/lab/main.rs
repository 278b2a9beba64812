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

mod node;
mod plan;

use std::os::unix::process::ExitStatusExt;
use std::process::ExitCode;

use node::run;
use plan::{parse, Plan};

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
    launch(&plan, &args, device)
}

/// The parent: names the memory, says what runs, and starts one process per
/// node; every process must end as the plan says.
fn launch(plan: &Plan, args: &[String], device: Option<String>) -> ExitCode {
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
    describe(plan, &device);
    let statuses = artefact_tests::run_node_processes(
        plan.nodes.len(),
        |me| {
            let mut a = args.to_vec();
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

/// What runs: each node's period, lag and mode, and the memory.
fn describe(plan: &Plan, device: &str) {
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
}
