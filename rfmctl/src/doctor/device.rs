//! The device's checks: the vendor library and the board, the node id, the
//! ring, and what the memory holds; of a redundant device (`A+B`), each of
//! both memories and their node ids compared.

use std::path::Path;

use rfm_memory::backend::rfm2g::BoardError;
use rfm_memory::{DeviceError, DeviceSpec};

use super::memory::memory_check;
use super::{check, Check, Verdict};
use crate::open::open;

/// The checks of the device: library, board, node id, ring, memory; of a
/// redundant device (`A+B`), each check of both memories, the worse verdict
/// and both details under one name, and the node ids compared.
pub(super) fn device_checks(device: Option<&str>, library: Option<&Path>) -> Vec<Check> {
    let names = ["library", "board", "node-id", "ring", "memory"];
    let Some(device) = device else {
        return names
            .iter()
            .map(|n| check(n, Verdict::Skip, "no device given"))
            .collect();
    };
    match crate::open::memories(device).as_slice() {
        [a, b] => redundant_checks([a, b], library),
        _ => memory_checks(device, library).0,
    }
}

fn redundant_checks(devices: [&str; 2], library: Option<&Path>) -> Vec<Check> {
    let [(a, x), (b, y)] = devices.map(|d| memory_checks(d, library));
    let ids = [x, y];
    let mut checks: Vec<Check> = a
        .into_iter()
        .zip(b)
        .map(|(a, b)| Check {
            name: a.name,
            verdict: a.verdict.max(b.verdict),
            detail: format!(
                "ring A `{}`: {}; ring B `{}`: {}",
                devices[0], a.detail, devices[1], b.detail
            ),
            fix: a.fix.or(b.fix),
        })
        .collect();
    if let [Some(x), Some(y)] = ids {
        if x != y {
            let ids = checks
                .iter_mut()
                .find(|c| c.name == "node-id")
                .expect("every device has the node-id check");
            ids.verdict = Verdict::Fail;
            ids.fix =
                Some("a PC is one node on both rings: set both boards' node switches alike".into());
        }
    }
    checks
}

/// The device checks of one memory, and its node id if it has one.
fn memory_checks(device: &str, library: Option<&Path>) -> (Vec<Check>, Option<u16>) {
    let card = matches!(DeviceSpec::parse(device), Ok(DeviceSpec::Rfm2g { .. }));
    let dev = match open(device, library) {
        Ok(dev) => dev,
        Err(f) => return (unopened(card, &f.error), None),
    };
    let info = dev.info();
    let mut checks = Vec::new();
    if card {
        checks.push(check(
            "library",
            Verdict::Pass,
            info.library.clone().unwrap_or_else(|| "loaded".into()),
        ));
    } else {
        checks.push(check("library", Verdict::Skip, "not an RFM2g device"));
    }
    checks.push(check(
        "board",
        Verdict::Pass,
        format!("`{device}` opens, {} bytes", info.size),
    ));
    checks.push(match (card, info.node_id) {
        (false, _) => check("node-id", Verdict::Skip, "shared memory has no node id"),
        (true, Some(id)) => check("node-id", Verdict::Pass, format!("node {id}")),
        (true, None) => check("node-id", Verdict::Warn, "the library gave no node id")
            .fix("check the board's node switches and the driver"),
    });
    checks.push(if card {
        ring_check(&dev)
    } else {
        check("ring", Verdict::Skip, "shared memory has no ring")
    });
    checks.push(memory_check(&dev, device));
    (checks, info.node_id)
}

/// The checks of a memory that did not open (`error`): the library's
/// verdict where it is a card, the board's failure and what to do.
fn unopened(card: bool, error: &anyhow::Error) -> Vec<Check> {
    let why = format!("{error:#}");
    let library_failed = matches!(
        error.downcast_ref::<DeviceError>(),
        Some(DeviceError::Board(
            BoardError::LibraryNotLoaded { .. } | BoardError::SymbolMissing { .. }
        ))
    );
    vec![
        match (card, library_failed) {
            (false, _) => check("library", Verdict::Skip, "not an RFM2g device"),
            (true, true) => check("library", Verdict::Fail, why.clone())
                .fix("install the vendor's librfm2g, or give --library PATH"),
            (true, false) => check("library", Verdict::Pass, "loaded"),
        },
        check("board", Verdict::Fail, why).fix(if card {
            "check the driver (ls -l /dev/rfm2g*; modinfo rfm2g) and the device path"
        } else {
            "start the coupling first (rfmctl only inspects memory)"
        }),
        check("node-id", Verdict::Skip, "the device did not open"),
        check("ring", Verdict::Skip, "the device did not open"),
        check("memory", Verdict::Skip, "the device did not open"),
    ]
}

/// The continuity test, and the card's own view of its ring (its LCSR) where
/// the library gives it: a ring that passes the test while its receiver reports
/// lost sync or bad data is a fibre about to fail.
fn ring_check(dev: &rfm_memory::Device) -> Check {
    use rfm_core::link::RingState;
    let lcsr = dev.lcsr().ok();
    let state = lcsr.map(|l| format!("; {l}")).unwrap_or_default();
    match dev.check_ring() {
        Err(e) => {
            // Where: this board's receiver lost sync, or another board's.
            let open = match lcsr {
                Some(l) if !l.ring_ok() => RingState::OpenHere(l.to_string()),
                _ => RingState::OpenElsewhere(
                    lcsr.map_or("the library gives no LCSR".into(), |l| l.to_string()),
                ),
            };
            check(
                "ring",
                Verdict::Fail,
                format!(
                    "{}: {e}; a coupling on it sees the nodes it cuts off fall silent though \
                     they may run",
                    open.describe().unwrap_or_default()
                ),
            )
            .fix(open.fix().unwrap_or_default())
        }
        Ok(()) => match lcsr {
            Some(l) if !l.ring_ok() => check(
                "ring",
                Verdict::Warn,
                format!("a packet sent round the ring came back, but the card reports {l}"),
            )
            .fix("clean or replace the fibre into this card and check its connectors"),
            _ => check(
                "ring",
                Verdict::Pass,
                format!("a packet sent round the ring came back{state}"),
            ),
        },
    }
}
