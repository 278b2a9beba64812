//! The memories a page shows: one lab's (`A+B` included), or several, one per
//! host of a lab joined by rfm-bridge, whose pages are one. Each memory is
//! watched as `watch` watches it; their snapshots are merged by slot, a node
//! shown from the memory where it runs itself (where it publishes its own
//! timing) rather than from one a bridge mirrors it into.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use serde_json::{json, Value};

use crate::failure::Failure;
use crate::open::{memories, open};
use crate::watch::{Lab, WatchArgs};

use super::ServeArgs;

/// Every memory of the page: a [`Lab`] per device, and each ring (memory) of
/// the devices, whose state the page shows.
pub struct Labs {
    labs: Vec<(String, Lab)>,
    rings: Vec<(String, rfm_memory::Device)>,
}

impl Labs {
    /// The labs of `args`' devices, once there (`--wait`), checked against
    /// `--interface`.
    pub fn open(args: &ServeArgs, library: Option<&Path>) -> Result<Labs, Failure> {
        let mut labs = Vec::new();
        let mut rings = Vec::new();
        for device in &args.devices {
            let watch =
                WatchArgs::for_serve(device, args.region_offset, args.wait, &args.interface);
            labs.push((device.clone(), Lab::open(&watch, library)?));
            for memory in memories(device) {
                rings.push((memory.clone(), open(&memory, library)?));
            }
        }
        let labs = Labs { labs, rings };
        if let Some(file) = &args.interface {
            labs.check_interface(file)?;
        }
        Ok(labs)
    }

    /// Refuses an interface file none of whose nodes runs on any memory, or
    /// whose namesake running was built from another version of it.
    fn check_interface(&self, file: &Path) -> Result<(), Failure> {
        let interface = crate::foreign::load(file)?;
        let mut ours = 0;
        for (_, lab) in &self.labs {
            ours += lab.check_interface(&interface, file)?;
        }
        if ours == 0 && !interface.nodes.is_empty() {
            return Err(Failure::usage(anyhow!(
                "{}: none of {}'s nodes ({}) runs on {}: give the file its FMUs were built \
                 from, or start them",
                self.devices(),
                file.display(),
                interface.name,
                if self.labs.len() == 1 {
                    "this memory"
                } else {
                    "these memories"
                },
            )));
        }
        Ok(())
    }

    /// The devices, as the page names them.
    pub fn devices(&self) -> String {
        let names: Vec<&str> = self.labs.iter().map(|(d, _)| d.as_str()).collect();
        names.join(", ")
    }

    /// Polls every memory each millisecond for `interval` (interleaved, so
    /// that none goes unwatched while another is), then refreshes each.
    pub fn poll_for(&mut self, interval: Duration) {
        if let [(_, lab)] = self.labs.as_mut_slice() {
            return lab.poll_for(interval);
        }
        let start = Instant::now();
        while start.elapsed() < interval {
            for (_, lab) in &mut self.labs {
                lab.poll_once();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        for (_, lab) in &mut self.labs {
            lab.refresh();
        }
    }

    /// The page's snapshot at `now`, less its time and events: the first
    /// memory's, with every other memory's nodes merged in by slot, the
    /// rings, and where a latency holds.
    pub fn json(&self, now: Instant) -> Value {
        let mut snapshot = json!({});
        let mut remote = self.labs.len() > 1;
        for (i, (device, lab)) in self.labs.iter().enumerate() {
            let mut one = lab.json(now);
            let slots = one["slots"].as_array_mut().map(std::mem::take);
            for slot in slots.iter().flatten() {
                remote |= slot["holder"]["remote"].as_bool() == Some(true);
            }
            if i == 0 {
                snapshot = one;
                snapshot["slots"] = json!([]);
            }
            for mut slot in slots.into_iter().flatten() {
                slot["memory"] = json!(device);
                merge_slot(&mut snapshot["slots"], slot);
            }
        }
        snapshot["device"] = json!(self.devices());
        snapshot["memories"] = json!(self.labs.iter().map(|(d, _)| d).collect::<Vec<_>>());
        snapshot["rings"] = self.rings_json();
        snapshot["latency_holds"] = json!(if remote {
            "between hosts only when their clocks are synchronised (PTP): the nodes run on \
             several memories or another host"
        } else {
            "one host: every node reads one clock"
        });
        snapshot
    }

    /// Each memory's ring state, as this server's board sees it.
    fn rings_json(&self) -> Value {
        Value::Array(
            (self.rings.iter())
                .map(|(memory, dev)| {
                    let state = rfm_core::link::ring_state(dev);
                    json!({
                        "memory": memory,
                        "open": state.describe().is_some(),
                        "state": state.describe().unwrap_or_else(|| "whole".to_owned()),
                        "fix": state.fix(),
                    })
                })
                .collect(),
        )
    }
}

/// Puts `slot` among `slots` (kept in slot order): a slot not there yet is
/// added; one there only as a bridge's mirror gives way to the node's own.
fn merge_slot(slots: &mut Value, slot: Value) {
    let Some(list) = slots.as_array_mut() else {
        return;
    };
    let is_remote = |s: &Value| s["holder"]["remote"].as_bool() == Some(true);
    match list.iter().position(|s| s["slot"] == slot["slot"]) {
        Some(at) if is_remote(&list[at]) && !is_remote(&slot) => list[at] = slot,
        Some(_) => {}
        None => {
            list.push(slot);
            list.sort_by_key(|s| s["slot"].as_u64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_shown_from_where_it_runs_not_from_a_mirror() {
        let node = |slot: u64, remote: bool, memory: &str| json!({ "slot": slot, "holder": { "remote": remote }, "memory": memory });
        let mut slots = json!([]);
        merge_slot(&mut slots, node(1, true, "shm:a"));
        merge_slot(&mut slots, node(0, false, "shm:a"));
        merge_slot(&mut slots, node(1, false, "shm:b"));
        merge_slot(&mut slots, node(0, true, "shm:b"));
        assert_eq!(
            slots,
            json!([node(0, false, "shm:a"), node(1, false, "shm:b")])
        );
    }
}
