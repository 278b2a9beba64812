//! What `watch` and `serve` look at, and how they look: the memory's nodes,
//! the other areas described, the file's structs and the card's ring.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use rfm_memory::Device;

use super::others::{others, Other};
use super::slot::{Reader, SlotView};
use super::{json_value, views, Shown, WatchArgs};
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

    /// How many nodes of `interface` (read from `file`) run here; refuses
    /// one running here that was built from another version of the file.
    pub(crate) fn check_interface(
        &self,
        interface: &rfm_interface::Interface,
        file: &Path,
    ) -> Result<usize, Failure> {
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
        Ok(ours)
    }

    /// Polls every node, other area and struct each millisecond for
    /// `interval`, then [`Lab::refresh`]es.
    pub(crate) fn poll_for(&mut self, interval: Duration) {
        let start = Instant::now();
        while start.elapsed() < interval {
            self.poll_once();
            std::thread::sleep(Duration::from_millis(1));
        }
        self.refresh();
    }

    /// Polls every node, other area and struct once.
    pub(crate) fn poll_once(&mut self) {
        let now = Instant::now();
        for v in &mut self.views {
            v.poll(now);
        }
        for o in &mut self.others {
            o.poll(now);
        }
        if let Some(s) = self.structs.as_mut() {
            s.poll(now);
        }
    }

    /// The nodes' rates and the card's ring state, after some polls.
    pub(crate) fn refresh(&mut self) {
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
