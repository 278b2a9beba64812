//! The cases of one run, by group, each measured in processes of its own
//! (`pair`, `group`, `single`) and summarised into [`Cases`].

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

use rfm_bench::{bridge, card, iceoryx, stats};
use stats::Summary;

use crate::{free_ports, group, pair, single, Args};

/// The Reals per node of cases 7 and 7b (`scripts/reals_interface.py N`).
pub(crate) const REALS: [u64; 2] = [100, 1000];

/// Steps each card case counts (after its warm-up): counts hardly move with
/// more.
const CARD_STEPS: u64 = 10_000;

/// The card cases: each interface's lockstep over emulated RFM2g boards, on
/// each read path, counted ([`card`]). Three spinning nodes on two cores take
/// a time slice a step, so that case waits adaptively.
pub(crate) fn card_cases(
    args: &Args,
    n: u64,
    shm: &dyn Fn(&str) -> String,
) -> Result<serde_json::Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace");
    let interfaces = root.join("target/interfaces");
    let file = |p: PathBuf| -> Result<String> {
        if !p.is_file() {
            bail!(
                "{} is missing: run scripts/bench.sh (it writes it)",
                p.display()
            );
        }
        Ok(p.to_str().context("UTF-8 path")?.to_owned())
    };
    // (key, interface, nodes, wait, rings: 2 is a redundant device)
    let (reals100, reals1000, mixed) = (
        file(interfaces.join("reals100.toml"))?,
        file(interfaces.join("reals1000.toml"))?,
        file(root.join("tests/interfaces/mixed.toml"))?,
    );
    let cases = [
        ("attitude", "attitude".to_owned(), 2, "spin", 1),
        ("attitude_redundant", "attitude".to_owned(), 2, "spin", 2),
        ("reals100", reals100, 2, "spin", 1),
        ("reals1000", reals1000, 2, "spin", 1),
        ("three_nodes", mixed, 3, "adaptive", 1),
    ];
    let steps = n.min(CARD_STEPS);
    let mut all = serde_json::Map::new();
    for (key, interface, nodes, wait, rings) in cases {
        let mut by_path = serde_json::Map::new();
        for path in card::ReadPath::ALL {
            let ring = shm(&format!("card-{key}-{}", path.name()));
            let extra = [
                ring.clone(),
                interface.clone(),
                nodes.to_string(),
                path.name().to_owned(),
                wait.to_owned(),
                rings.to_string(),
            ];
            let words = group(args, "card", nodes, |_| steps, &extra)
                .with_context(|| format!("card case {key}, {}", path.name()))?;
            remove_rings(&ring);
            let (counted, counts, peers) = card::counts_of(&words)?;
            eprintln!("coupling: card {key} {}: {counts:?}", path.name());
            by_path.insert(
                path.name().into(),
                card::report(path, counted, &counts, &peers),
            );
        }
        all.insert(key.into(), by_path.into());
    }
    Ok(all.into())
}

/// Removes the emulated ring `ring` (and its redundant pair's `-a`, `-b`).
fn remove_rings(ring: &str) {
    for suffix in ["", "-a", "-b"] {
        let _ = rfm_memory::backend::shm::unlink(&format!("rfm2g-sim.{ring}{suffix}"));
    }
}

/// Every case's summary, in the order they ran.
#[derive(Default)]
pub(crate) struct Cases(pub(crate) Vec<Summary>);

impl Cases {
    /// Summarises case `name` of `steps` steps, or says which case failed.
    fn add(&mut self, name: &str, steps: u64, samples: Result<Vec<u64>>) -> Result<()> {
        let s = Summary::new(
            name,
            steps,
            &samples.with_context(|| format!("case {name}"))?,
        );
        eprintln!("coupling: {name}: median {} ns", s.median);
        self.0.push(s);
        Ok(())
    }

    /// The case whose name starts with `prefix` ("2 ").
    pub(crate) fn get(&self, prefix: &str) -> &Summary {
        (self.0.iter())
            .find(|c| c.name.starts_with(prefix))
            .expect("every case ran")
    }
}

/// Cases 1, 1b and 1c: the raw exchange, no project code.
pub(crate) fn raw_cases(
    args: &Args,
    cases: &mut Cases,
    shm: &dyn Fn(&str) -> String,
) -> Result<()> {
    let n = args.steps;
    for (name, tag, bytes) in [
        ("1 raw limit: shm seqlock, 2 processes, spin", "raw", "64"),
        ("1b raw, 128-byte frames (the FMU's size)", "raw128", "128"),
        ("1c raw, 8,008-byte frames (1,000 Reals)", "raw8008", "8008"),
    ] {
        let raw_name = shm(tag);
        cases.add(
            name,
            n,
            pair(args, "raw", n, &[raw_name.clone(), bytes.to_owned()]),
        )?;
        let _ = rfm_memory::backend::shm::unlink(&raw_name);
    }
    Ok(())
}

/// Cases 2, 2r, 3a, 2a and 3b: the attitude FMU in two processes.
pub(crate) fn pair_cases(
    args: &Args,
    cases: &mut Cases,
    shm: &dyn Fn(&str) -> String,
) -> Result<()> {
    let n = args.steps;
    let recordings = args.out.join("recordings");
    // A recording does not replace a file (recordOverwrite): the last run's go.
    if recordings.exists() {
        std::fs::remove_dir_all(&recordings)?;
    }
    std::fs::create_dir_all(&recordings)?;
    let recordings = recordings
        .to_str()
        .context("UTF-8 output folder")?
        .to_owned();
    for (name, tag, lag, wait, record) in [
        ("2 FMU coupled: lag 0, spin", "lag0", "0", "spin", None),
        (
            "2r FMU coupled: lag 0, spin, both recording",
            "rec",
            "0",
            "spin",
            Some(&recordings),
        ),
        ("3a FMU coupled: lag 1, spin", "lag1", "1", "spin", None),
        (
            "2a FMU coupled, redundant shm:A+shm:B: lag 0, spin",
            "redundant",
            "0",
            "spin",
            None,
        ),
        ("3b FMU coupled: lag 0, yield", "yield", "0", "yield", None),
    ] {
        let name_shm = shm(tag);
        // The redundant case's two memories: NAME-a and NAME-b.
        let (device, memories) = if tag == "redundant" {
            let [a, b] = [format!("{name_shm}-a"), format!("{name_shm}-b")];
            (format!("shm:{a}+shm:{b}"), vec![a, b])
        } else {
            (format!("shm:{name_shm}"), vec![name_shm])
        };
        let mut extra = vec![device, lag.to_owned(), wait.to_owned()];
        extra.extend(record.cloned());
        cases.add(name, n, pair(args, "fmu", n, &extra))?;
        for memory in memories {
            let _ = rfm_memory::backend::shm::unlink(&memory);
        }
    }
    Ok(())
}

/// Cases 4 (UDP), 5 (the FMU alone), 6 (emulated RFM2g), 7 (many Reals), 8
/// (iceoryx2) and 2d (the default wait).
pub(crate) fn more_cases(
    args: &Args,
    cases: &mut Cases,
    shm: &dyn Fn(&str) -> String,
) -> Result<()> {
    let (n, pid) = (args.steps, std::process::id());
    let udp_steps = n.min(100_000);
    for (name, case) in [
        ("4a UDP 127.0.0.1, blocking, 2 processes", "udp"),
        ("4b UDP 127.0.0.1, busy-poll, 2 processes", "udp-poll"),
    ] {
        let ports = free_ports()?.map(|p| p.to_string());
        cases.add(name, udp_steps, pair(args, case, udp_steps, &ports))?;
    }
    let alone = single(args, "alone", n);
    cases.add("5 FMU alone: self-loop, free, set+step+get", n, alone)?;
    rfm2g_cases(args, cases, shm, udp_steps)?;
    for (name, count) in [
        ("7 FMU coupled, 100 Reals each way: lag 0, spin", REALS[0]),
        (
            "7b FMU coupled, 1,000 Reals each way: lag 0, spin",
            REALS[1],
        ),
    ] {
        let reals_shm = shm(&format!("reals{count}"));
        let extra = [format!("shm:{reals_shm}"), count.to_string()];
        cases.add(name, n, pair(args, "reals", n, &extra))?;
        let _ = rfm_memory::backend::shm::unlink(&reals_shm);
    }
    let iceoryx_before = iceoryx::objects();
    let iceoryx2 = pair(args, "iceoryx2", n, &[format!("rfm-bench-{pid}")]);
    iceoryx::remove_new(&iceoryx_before);
    cases.add("8 iceoryx2 pub/sub, 2 processes, spin", n, iceoryx2)?;

    let two_default = {
        let name_shm = shm("default");
        let extra = [format!("shm:{name_shm}"), "0".into(), "adaptive".into()];
        let samples = pair(args, "fmu", n, &extra);
        let _ = rfm_memory::backend::shm::unlink(&name_shm);
        samples
    };
    cases.add(
        "2d FMU coupled: lag 0, adaptive (the default)",
        n,
        two_default,
    )?;
    Ok(())
}

/// Cases 6a-6c: the FMU pair over emulated RFM2g boards; the event case
/// takes `event_steps` (every step wakes the peer through the kernel).
fn rfm2g_cases(
    args: &Args,
    cases: &mut Cases,
    shm: &dyn Fn(&str) -> String,
    event_steps: u64,
) -> Result<()> {
    let n = args.steps;
    // Every step wakes the peer through the kernel: as many steps as UDP gets.
    for (name, tag, wait, steps) in [
        (
            "6a FMU over emulated RFM2g: lag 0, spin",
            "rfm2g-spin",
            "spin",
            n,
        ),
        (
            "6b FMU over emulated RFM2g: lag 0, event",
            "rfm2g-event",
            "event",
            event_steps,
        ),
        (
            "6c FMU over two emulated RFM2g rings (redundant): lag 0, spin",
            "rfm2g-redundant",
            "spin",
            n,
        ),
    ] {
        let ring = shm(tag);
        let rings = if tag == "rfm2g-redundant" { "2" } else { "1" };
        let extra = [ring.clone(), wait.to_owned(), rings.to_owned()];
        cases.add(name, steps, pair(args, "rfm2g", steps, &extra))?;
        remove_rings(&ring);
    }
    Ok(())
}

/// Cases 9 (three nodes on two cores) and 10 (the three-rate lab).
pub(crate) fn node_cases(
    args: &Args,
    cases: &mut Cases,
    shm: &dyn Fn(&str) -> String,
) -> Result<()> {
    let n = args.steps;
    // More spinning nodes than cores take a time slice a step: far fewer steps.
    let dir = args.reals.to_str().context("UTF-8 FMU folder")?.to_owned();
    let few = n.min(100_000);
    for (name, wait, steps) in [
        (
            "9a 3 nodes, 3 processes: adaptive (the default)",
            "adaptive",
            few,
        ),
        ("9b 3 nodes, 3 processes: spin", "spin", n.min(2_000)),
        ("9c 3 nodes, 3 processes: yield", "yield", few),
    ] {
        let name_shm = shm(&format!("three-{wait}"));
        let extra = [
            format!("{dir}/mixed"),
            "mixed".into(),
            "cockpit,visual,ios".into(),
            format!("shm:{name_shm}"),
            wait.into(),
            "0.001,0.001,0.001".into(),
        ];
        cases.add(name, steps, group(args, "nodes", 3, |_| steps, &extra))?;
        let _ = rfm_memory::backend::shm::unlink(&name_shm);
    }
    // The cockpit's steps: a multiple of 100, so that the others' are whole.
    let fast = (n.min(100_000) / 100).max(1) * 100;
    let lab_steps = |node: usize| [fast, fast * 60 / 1000, fast / 100][node];
    let name_shm = shm("lab");
    let extra = [
        format!("{dir}/lab"),
        "lab".into(),
        "cockpit,visual,ios".into(),
        format!("shm:{name_shm}"),
        "adaptive".into(),
        format!("0.001,{},0.1", 1.0 / 60.0),
    ];
    cases.add(
        "10 three-rate lab (1 kHz, 1/60 s, 10 Hz): the cockpit, adaptive",
        fast,
        group(args, "nodes", 3, lab_steps, &extra),
    )?;
    let _ = rfm_memory::backend::shm::unlink(&name_shm);

    Ok(())
}

/// Cases 12a and 12b: PCs without cards, and Zenoh's own floor.
pub(crate) fn bridge_cases(
    args: &Args,
    cases: &mut Cases,
    shm: &dyn Fn(&str) -> String,
) -> Result<()> {
    let n = args.steps;
    // Each bridged step crosses the network twice, as a ping-pong does.
    let bridge_steps = n.min(20_000);
    let (a, b) = (shm("bridge-a"), shm("bridge-b"));
    let bridged = bridge::bridged(&args.bridge, &args.out, &a, &b, || {
        let extra = [format!("shm:{a},shm:{b}"), "0".into(), "adaptive".into()];
        pair(args, "fmu", bridge_steps, &extra)
    });
    for m in [&a, &b] {
        let _ = rfm_memory::backend::shm::unlink(m);
    }
    cases.add(
        "12a FMU coupled over two rfm-bridges (2 shm: memories, Zenoh TCP 127.0.0.1): lag 0, adaptive",
        bridge_steps,
        bridged,
    )?;
    let floor = bridge::zenoh_floor(&args.bridge, &args.out, bridge_steps);
    cases.add(
        "12b Zenoh's own 128-byte ping-pong, the bridge's configuration (the floor)",
        bridge_steps,
        floor,
    )?;

    Ok(())
}
