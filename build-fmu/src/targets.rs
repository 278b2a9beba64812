//! What build-fmu packages: the attitude FMU (its committed description
//! checked against the code's) or the FMUs of an interface file's nodes,
//! checked against the ring's budget before they are written.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use fmu_model::{Model as FmuModel, RESOURCE_INTERFACE, RESOURCE_NODE};
use rfm_card_model::budget::{RingBudget, Verdict, RING_BYTES_PER_SECOND};
use rfm_interface::{layout::MapTable, Interface, MemoryMap};
use rfm_memory::{DeviceSetting, DeviceSpec};

use crate::step;

/// An FMU to write: its model, the resources it carries, and where it goes.
pub(crate) struct Target {
    pub model: FmuModel,
    pub resources: Vec<(String, Vec<u8>)>,
    pub out: PathBuf,
}

/// The attitude FMU, after checking that the committed description is the one
/// the code writes.
pub(crate) fn attitude(root: &Path, out: Option<PathBuf>) -> Result<Target> {
    let model = FmuModel::attitude();
    let path = root.join("modelDescription.xml");
    let committed = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if committed != model.xml() {
        bail!(
            "{} is not the description the code writes: run build-fmu --write-description \
             (and commit it) if the code changed, or undo the edit to the file",
            path.display()
        );
    }
    Ok(Target {
        out: out.unwrap_or_else(|| root.join("target/fmu/rfm_attitude.fmu")),
        model,
        resources: Vec::new(),
    })
}

/// The FMUs of `node` (or all) of the interface file at `file`.
pub(crate) fn of_interface(
    root: &Path,
    file: &Path,
    node: &str,
    out: Option<PathBuf>,
    into_dir: bool,
    shm_only: bool,
) -> Result<Vec<Target>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let interface = Interface::parse(&file.display().to_string(), &text, &fmu_model::RESERVED)
        .map_err(|e| anyhow!("{e}"))?;
    let map = interface.map().map_err(|e| anyhow!("{e}"))?;
    step(&format!(
        "interface `{}` ({} nodes, fingerprint {:#018x}); memory map:\n{}",
        interface.name,
        interface.nodes.len(),
        interface.fingerprint(),
        MapTable {
            interface: &interface,
            map: &map
        }
    ));
    ring_budget(
        &interface,
        &map,
        file,
        shm_only || on_host_memory(&interface),
    )?;
    let nodes = nodes_asked(&interface, file, node)?;
    let all = node == "all" || into_dir;
    let interface = std::sync::Arc::new(interface);
    Ok(nodes
        .into_iter()
        .map(|i| {
            let model = FmuModel::of_node(interface.clone(), i);
            let name = format!("{}.fmu", model.model_identifier);
            let out = match (&out, all) {
                (Some(dir), true) => dir.join(name),
                (Some(file), false) => file.clone(),
                (None, _) => root.join("target/fmu").join(name),
            };
            Target {
                resources: vec![
                    (
                        format!("resources/{RESOURCE_INTERFACE}"),
                        text.clone().into_bytes(),
                    ),
                    (
                        format!("resources/{RESOURCE_NODE}"),
                        format!("{}\n", interface.nodes[i].name).into_bytes(),
                    ),
                ],
                model,
                out,
            }
        })
        .collect())
}

/// The nodes `--node` names: one, or `all`.
fn nodes_asked(interface: &Interface, file: &Path, node: &str) -> Result<Vec<usize>> {
    if node == "all" {
        return Ok((0..interface.nodes.len()).collect());
    }
    let i = interface.position(node).ok_or_else(|| {
        anyhow!(
            "{} has no node `{node}`; it has {} (or give --node all)",
            file.display(),
            interface
                .nodes
                .iter()
                .map(|n| format!("`{}`", n.name))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    Ok(vec![i])
}

/// Whether every node's FMU starts on host memory (`shm:`, `loopback:`), as
/// the file's `device` settings say: a coupling that never touches a ring.
fn on_host_memory(interface: &Interface) -> bool {
    (0..interface.nodes.len()).all(|i| {
        let device = interface.settings_of(i).link(interface).map(|s| s.device);
        let on_host = |m: &DeviceSpec| !matches!(m, DeviceSpec::Rfm2g { .. });
        match device {
            Ok(DeviceSetting::One(m)) => on_host(&m),
            Ok(DeviceSetting::Rings(a, b)) => on_host(&a) && on_host(&b),
            Ok(DeviceSetting::Replay(_)) | Err(_) => false,
        }
    })
}

/// Prints what the coupling puts on an RFM2g ring; warns above half of it and
/// refuses more than all of it (the nodes could not keep their periods),
/// unless the coupling is for shared memory only (`shm_only`), where it only
/// says what a ring would make of it.
fn ring_budget(interface: &Interface, map: &MemoryMap, file: &Path, shm_only: bool) -> Result<()> {
    let budget = RingBudget::of(interface, map);
    step(&format!("on an RFM2g ring:\n{budget}"));
    let share = 100.0 * budget.fraction();
    let file = file.display();
    match (budget.verdict(), shm_only) {
        (Verdict::Fits, _) => Ok(()),
        (verdict, true) => {
            let what = match verdict {
                Verdict::Over => "more than a ring carries: it cannot run on RFM2g cards",
                _ => "over half of a ring",
            };
            step(&format!(
                "the coupling of {file} would take {share:.0} % of an RFM2g ring, {what}; \
                 packed for shared memory only (--shm-only, or every node's device setting \
                 shm: or loopback:), as asked"
            ));
            Ok(())
        }
        (Verdict::OverHalf, false) => {
            step(&format!(
                "warning: the coupling of {file} would take {share:.0} % of the ring: over half \
                 leaves little for bursts and other traffic (give its nodes longer periods or \
                 fewer signals)"
            ));
            Ok(())
        }
        (Verdict::Over, false) => bail!(
            "the coupling of {file} would put {:.0} bytes/s on an RFM2g ring, {share:.0} % of the \
             {:.0} MB/s it carries: its nodes could not keep their periods; give them longer \
             periods or fewer signals, or, for a coupling on shared memory only (shm:, loopback:), \
             pass --shm-only",
            budget.total(),
            RING_BYTES_PER_SECOND / 1e6
        ),
    }
}
