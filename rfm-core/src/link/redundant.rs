//! A link over a redundant device (`A+B`): what it tells the master's log when
//! a ring stops or starts carrying a peer's frames, what it reports per ring,
//! and the fault a test injects.

use std::time::Instant;

use super::Link;
use crate::region::{Network, Region};

/// The two rings of a link: their names, and what was last told of them.
#[derive(Debug)]
pub(super) struct Redundant {
    /// Any window of the pair: withholding applies to every one.
    region: Region,
    /// The two memories' device strings, for messages.
    names: [String; 2],
    /// Whether each ring carried every peer's frames, as last told.
    ok: [bool; 2],
}

impl Redundant {
    /// `None` for a device of one memory.
    pub(super) fn of(region: &Region, device: &str) -> Option<Redundant> {
        let (a, b) = device.split_once('+').filter(|_| region.is_redundant())?;
        Some(Redundant {
            region: region.clone(),
            names: [a.to_owned(), b.to_owned()],
            ok: [true, true],
        })
    }

    fn name(&self, ring: Network) -> String {
        format!(
            "ring {} (`{}`)",
            ring.name().to_uppercase(),
            self.names[ring.index()]
        )
    }
}

/// What the rings did, for the master's outputs (`ring.a.ok`, …).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingsReport {
    /// Whether each ring held every peer's newest frame within `timeout`.
    pub ok: [bool; 2],
    /// Frames taken from each ring, all peers together.
    pub frames: [u64; 2],
    /// Times a peer's frames moved from ring A to ring B.
    pub failovers: u64,
}

impl Link {
    /// Whether the link runs over two rings.
    pub fn is_redundant(&self) -> bool {
        self.redundant.is_some()
    }

    /// What the rings did; for a device of one memory, ring A is it and ring
    /// B is never ok.
    pub fn rings(&self) -> RingsReport {
        let now = self.node.stepped_at();
        let timeout = self.node.config().timeout;
        let mut r = RingsReport {
            ok: [true, self.redundant.is_some()],
            ..RingsReport::default()
        };
        if self.redundant.is_none() {
            r.frames[0] = self
                .node
                .peers()
                .iter()
                .map(|p| p.observed().health().frames)
                .sum();
            return r;
        }
        for peer in self.node.peers() {
            let s = peer.observed().rings();
            for ring in Network::BOTH {
                r.frames[ring.index()] += s.taken(ring);
                r.ok[ring.index()] &= s.delivers(ring, now, timeout);
            }
            r.failovers += s.failovers();
        }
        r
    }

    /// Withholds this node's stores from `ring` (or stops withholding them):
    /// as if its transmitter into that ring had failed; its peers then take
    /// its frames from the other ring. A fault for tests; without a redundant
    /// device, nothing.
    pub fn withhold(&self, ring: Network, withheld: bool) {
        if let Some(r) = &self.redundant {
            r.region.withhold(ring, withheld);
        }
    }

    /// After step `k`: tells the master's log of every peer whose frames
    /// changed ring, and of a ring that stopped (or started again) carrying
    /// every peer's frames.
    pub(super) fn tell_rings(&mut self, k: u64) {
        let Some(red) = &self.redundant else {
            return;
        };
        let interface = self.node.interface().clone();
        let mut changes = Vec::new();
        for peer in self.node.exchange().peers_mut() {
            if let Some(ring) = peer.observer().rings_mut().take_change() {
                changes.push((peer.name(&interface).to_owned(), peer.slot(), ring));
            }
        }
        for (name, slot, ring) in changes {
            match ring {
                Network::B => log::warn!(
                    "{} did not hold a whole frame of node `{name}` (slot {slot}) at step {k}: \
                     taken from {} (failover; ring.failovers counts them)",
                    red.name(Network::A),
                    red.name(Network::B)
                ),
                Network::A => log::info!(
                    "{} holds the frames of node `{name}` (slot {slot}) again from step {k}",
                    red.name(Network::A)
                ),
            }
        }
        let report = self.rings();
        let red = self.redundant.as_mut().expect("checked above");
        for ring in Network::BOTH {
            let i = ring.index();
            if report.ok[i] == red.ok[i] {
                continue;
            }
            red.ok[i] = report.ok[i];
            let lagging = lagging(&self.node, ring, Instant::now());
            if report.ok[i] {
                log::info!(
                    "{} carries every peer's frames again (step {k})",
                    red.name(ring)
                );
            } else {
                log::warn!(
                    "{} has not carried the newest frames of {lagging} for timeout ({:?}) \
                     (step {k}): the coupling goes on over {}; check that ring's fibres and cards",
                    red.name(ring),
                    self.node.config().timeout,
                    red.name(ring.other())
                );
            }
        }
    }

    /// One line for the master's log at the end: what each ring carried.
    pub fn rings_summary(&self) -> Option<String> {
        let red = self.redundant.as_ref()?;
        let r = self.rings();
        Some(format!(
            "redundant rings: {} gave {} frames, {} gave {}; {} failovers from A to B",
            red.name(Network::A),
            r.frames[0],
            red.name(Network::B),
            r.frames[1],
            r.failovers
        ))
    }
}

/// The peers whose newest frames `ring` has not held within `timeout`, named.
fn lagging(node: &super::Node, ring: Network, now: Instant) -> String {
    let timeout = node.config().timeout;
    let names: Vec<String> = node
        .peers()
        .iter()
        .filter(|p| !p.observed().rings().delivers(ring, now, timeout))
        .map(|p| format!("node `{}` (slot {})", p.name(node.interface()), p.slot()))
        .collect();
    names.join(", ")
}
