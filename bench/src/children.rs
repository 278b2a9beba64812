//! The FMU cases' child processes: node `node` of a case, `steps` steps,
//! with the case's arguments (`rest`); each returns its per-step samples.

use std::path::Path;

use anyhow::{bail, Context, Result};

use rfm_bench::{card, fmu};

use crate::Args;

/// Case 2's and its kin's: the attitude FMU over `shm:` (`DEVICE LAG WAIT
/// [RECORD_DIR]`; `A,B`: each node its own memory, bridged).
pub(crate) fn attitude(args: &Args, node: usize, steps: u64, rest: &[String]) -> Result<Vec<u64>> {
    let (device, lag, wait) = (&rest[0], rest[1].parse()?, &rest[2]);
    // `A,B`: each node its own memory (two hosts' memories, bridged).
    let device = &device.split(',').nth(node).unwrap_or(device).to_owned();
    let fmu = fmu::Fmu::load(&args.fmu, &args.out.join("tmp"))?;
    // With a fourth argument, a folder: each node records into it.
    let record = rest
        .get(3)
        .map(|dir| format!("{dir}/node{node}.rec"))
        .unwrap_or_default();
    let strings = [
        ("device", device.as_str()),
        ("waitStrategy", wait.as_str()),
        ("recordFile", record.as_str()),
    ];
    let integers = [
        ("nodeSlot", node as i32),
        ("peerSlot", 1 - node as i32),
        ("lag", lag),
    ];
    fmu.run(&strings, &integers, steps, 1)
}

/// Case 6's: the attitude FMU over emulated RFM2g boards (`RING WAIT [2]`: two
/// rings, a redundant device).
pub(crate) fn attitude_rfm2g(
    args: &Args,
    node: usize,
    steps: u64,
    rest: &[String],
) -> Result<Vec<u64>> {
    // Board node+1 of the ring, named in the emulator's self-describing
    // path so that the two processes need no configuration.
    let (ring, wait) = (&rest[0], &rest[1]);
    let board = |ring: &str| format!("/dev/rfm2g-sim/{ring}/{}/1M", node + 1);
    // Two rings: a redundant device, each node a board on each.
    let device = match rest.get(2).map(String::as_str) {
        Some("2") => format!(
            "{}+{}",
            board(&format!("{ring}-a")),
            board(&format!("{ring}-b"))
        ),
        _ => board(ring),
    };
    let fmu = fmu::Fmu::load(&args.fmu, &args.out.join("tmp"))?;
    let library = args.rfm2g_sim.to_str().context("UTF-8 library path")?;
    let strings = [
        ("device", device.as_str()),
        ("waitStrategy", wait.as_str()),
        ("rfm2gLibrary", library),
    ];
    let integers = [("nodeSlot", node as i32), ("peerSlot", 1 - node as i32)];
    fmu.run(&strings, &integers, steps, 1)
}

/// Case 7's: the FMUs of an interface of many Reals (`DEVICE COUNT`).
pub(crate) fn many_reals(
    args: &Args,
    node: usize,
    steps: u64,
    rest: &[String],
) -> Result<Vec<u64>> {
    let (me, peer) = (["a", "b"][node], ["a", "b"][1 - node]);
    let name = format!("reals{}", rest[1]);
    let fmu = fmu::Fmu::load(
        &args.reals.join(&name).join(format!("{name}_{me}.fmu")),
        &args.out.join("tmp"),
    )?;
    let inputs = fmu.names(|n| n.starts_with('x'));
    let outputs = fmu.names(|n| n.starts_with(&format!("{peer}.x")));
    fn refs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    fmu.run_with(
        &[("device", rest[0].as_str()), ("waitStrategy", "spin")],
        &refs(&inputs),
        &refs(&outputs),
        steps,
    )
}

/// Cases 9 and 10: one node of an interface (`DIR NAME NODES DEVICE WAIT
/// PERIODS`).
pub(crate) fn interface_node(
    args: &Args,
    node: usize,
    steps: u64,
    rest: &[String],
) -> Result<Vec<u64>> {
    // One node of an interface: DIR NAME NODES DEVICE WAIT PERIODS.
    let [dir, iface, nodes, device, wait, periods] = rest else {
        bail!("nodes: DIR NAME NODES DEVICE WAIT PERIODS, got {rest:?}")
    };
    let name = nodes.split(',').nth(node).context("a node per process")?;
    let h: f64 = periods
        .split(',')
        .nth(node)
        .context("a period per node")?
        .parse()?;
    let fmu = fmu::Fmu::load(
        &Path::new(dir).join(format!("{iface}_{name}.fmu")),
        &args.out.join("tmp"),
    )?;
    fmu.run_by(
        &[("device", device.as_str()), ("waitStrategy", wait.as_str())],
        h,
        steps,
    )
}

/// Case 11: one node of a card case (`RING INTERFACE NODES PATH WAIT RINGS`).
pub(crate) fn card_node(args: &Args, node: usize, steps: u64, rest: &[String]) -> Result<Vec<u64>> {
    let [ring, interface, nodes, path, wait, rings] = rest else {
        bail!("card: RING INTERFACE NODES PATH WAIT RINGS, got {rest:?}")
    };
    let wait = wait.parse().map_err(anyhow::Error::msg)?;
    let case = card::Case {
        library: &args.rfm2g_sim,
        ring,
        interface,
        nodes: nodes.parse()?,
        path: card::ReadPath::parse(path)?,
        wait,
        redundant: rings == "2",
    };
    card::node(&case, node, steps)
}
