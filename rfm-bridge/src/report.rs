//! What the bridge prints: the nodes it mirrors as they come and go, what
//! it decided about another host's node, and the periodic line (nodes, bytes
//! per second each way, one-way latency to each bridge).

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::local::{Event, Watcher};
use crate::remote::{Decision, Writer};
use crate::shared::{Shared, Traffic};

pub fn event(e: &Event) -> String {
    match e {
        Event::Started { node, slot, area } => format!(
            "local node `{node}` (slot {slot}, bytes {}..{}): mirrored to the other bridges",
            area.0, area.1
        ),
        Event::Ended { node, slot, closed } => format!(
            "local node `{node}` (slot {slot}) {}",
            if *closed {
                "closed its slot"
            } else {
                "lost its slot to another session"
            }
        ),
    }
}

pub fn describe(d: &Decision) -> String {
    match d {
        Decision::Mirrored { node, slot, from } => {
            format!("remote node `{node}` (slot {slot}) of bridge {from}: written here")
        }
        Decision::Refused { node, slot, from } => format!(
            "remote node `{node}` (slot {slot}) of bridge {from} refused: a node of this host \
             holds the slot (claimed first)"
        ),
        Decision::TakenOver { node, slot, from } => format!(
            "slot {slot} was claimed first by `{node}` of bridge {from}: the node of this host \
             that claimed it later is refused (its link fails, naming the slot)"
        ),
    }
}

/// The periodic line: nodes, bytes per second each way, one-way latency.
#[derive(Debug)]
pub struct Report {
    at: Instant,
    bytes: (u64, u64),
}

impl Report {
    pub fn new(t: &Traffic, now: Instant) -> Report {
        Report {
            at: now,
            bytes: (
                t.bytes_out.load(Ordering::Relaxed),
                t.bytes_in.load(Ordering::Relaxed),
            ),
        }
    }

    pub fn line(&mut self, now: Instant, w: &Watcher, r: &Writer, s: &Shared) -> String {
        let t = &s.traffic;
        let (out, inn) = (
            t.bytes_out.load(Ordering::Relaxed),
            t.bytes_in.load(Ordering::Relaxed),
        );
        let dt = now.duration_since(self.at).as_secs_f64().max(1e-9);
        let rate = |b: u64| format!("{:.1} kB/s", b as f64 / dt / 1e3);
        let nodes = |v: Vec<(String, u8)>| {
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.iter()
                    .map(|(n, s)| format!("{n} (slot {s})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        let peers: Vec<String> = s
            .peers()
            .iter()
            .map(|(zid, p)| match p.rtt {
                Some(rtt) => format!(
                    "{} one-way {:.0} µs (half the round trip)",
                    zid.short(),
                    rtt.as_secs_f64() * 1e6 / 2.0
                ),
                None => format!("{} (no round trip yet)", zid.short()),
            })
            .collect();
        let line = format!(
            "local {}; remote {}; out {}, in {}; frames out {}, in {}; overrun {}, rejected {}; bridges: {}",
            nodes(w.nodes()),
            nodes(r.nodes()),
            rate(out - self.bytes.0),
            rate(inn - self.bytes.1),
            t.frames_out.load(Ordering::Relaxed),
            t.frames_in.load(Ordering::Relaxed),
            t.overrun.load(Ordering::Relaxed),
            t.rejected.load(Ordering::Relaxed),
            if peers.is_empty() {
                "none".into()
            } else {
                peers.join(", ")
            }
        );
        self.at = now;
        self.bytes = (out, inn);
        line
    }
}
