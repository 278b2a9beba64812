//! What `watch` and `serve` look at, and how they look: the memory's nodes,
//! the other areas described, the file's structs and the card's ring.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use rfm_memory::Device;

use super::others::{others, Other};
use super::slot::{Reader, SlotView};
use super::{json_value, poll_for, views, Shown, WatchArgs};
use crate::failure::Failure;
use crate::foreign::{self, Structs};
use crate::open::waiting;

/// What `watch` and `serve` look at: the memory's nodes, the other areas
/// described, the file's structs, and the card whose ring state is shown.
pub(crate) struct Lab {
    args: WatchArgs,
    device: Device,
    pub(super) views: Vec<SlotView>,
    others: Vec<Other>,
    structs: Option<Structs>,
    /// Where the card's ring is open and what to check, while it is.
    pub(super) ring: Option<String>,
}

impl Lab {
    /// The lab of `args`, once it is there (`--wait`).
    pub(crate) fn open(args: &WatchArgs, library: Option<&Path>) -> Result<Lab, Failure> {
        let (device, region, views) = waiting(args.wait, || views(args, library))?;
        let structs = match &args.interface {
            Some(file) => Some(Structs::new(&foreign::load(file)?, &region, file)?),
            None => None,
        };
        let others = if args.layout == "seed" || !args.slots.is_empty() {
            Vec::new()
        } else {
            others(&region, &views)?
        };
        Ok(Lab {
            args: args.clone(),
            device,
            views,
            others,
            structs,
            ring: None,
        })
    }

    /// Refuses an interface file none of whose nodes runs here, or whose
    /// namesake running here was built from another version of it.
    pub(crate) fn check_interface(&self, file: &Path) -> Result<(), Failure> {
        let interface = foreign::load(file)?;
        let fingerprint = interface.fingerprint();
        let mut ours = 0;
        for v in &self.views {
            let Reader::Framed(found) = &v.reader else {
                continue;
            };
            let d = &found.descriptor;
            if d.interface != interface.name {
                continue;
            }
            if d.fingerprint != fingerprint {
                return Err(Failure::usage(anyhow!(
                    "{}: node `{}` (slot {}) runs interface `{}` of fingerprint {:#018x}, {} is of                      {fingerprint:#018x}: give the file its FMUs were built from",
                    self.args.device,
                    d.node,
                    d.slot,
                    d.interface,
                    d.fingerprint,
                    file.display()
                )));
            }
            ours += 1;
        }
        if ours == 0 && !interface.nodes.is_empty() {
            return Err(Failure::usage(anyhow!(
                "{}: none of {}'s nodes ({}) runs on this memory: give the file its FMUs were                  built from, or start them",
                self.args.device,
                file.display(),
                interface.name
            )));
        }
        Ok(())
    }

    /// Polls every node, other area and struct each millisecond for `interval`.
    pub(crate) fn poll_for(&mut self, interval: Duration) {
        poll_for(
            interval,
            &mut self.views,
            &mut self.others,
            self.structs.as_mut(),
        );
        let now = Instant::now();
        for v in &mut self.views {
            v.measure_rate(now);
        }
        // A card off its ring sees every other node fall silent: say so
        // beside them (one driver call a refresh).
        let state = rfm_core::link::ring_state(&self.device);
        self.ring = state
            .describe()
            .map(|open| format!("{open}: {}", state.fix().unwrap_or_default()));
    }

    pub(super) fn shown(&self, now: Instant) -> Shown<'_> {
        Shown {
            views: &self.views,
            others: &self.others,
            structs: self.structs.as_ref(),
            ring: self.ring.as_deref(),
            now,
        }
    }

    /// The last look as JSON (`watch --json`'s object).
    pub(crate) fn json(&self, now: Instant) -> serde_json::Value {
        json_value(&self.args, &self.shown(now))
    }
}
