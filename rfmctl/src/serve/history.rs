//! What the page plots over time: every numeric signal of every node and
//! every numeric field of the lab's structs, and
//! the timeline of what happened to the lab (joins, closes, restarts, late
//! peers, ring cuts and mends, structs given up), kept by the server from
//! the snapshots it takes, so that a page opened late sees the last minute.

use std::collections::{HashMap, VecDeque};

use serde_json::{json, Value};

/// Points kept per signal: a minute at ten snapshots a second.
const POINTS: usize = 600;
/// Events kept.
const EVENTS: usize = 500;

/// One event of the timeline.
#[derive(Debug, Clone)]
pub struct Event {
    pub time_ms: u64,
    pub kind: &'static str,
    pub text: String,
}

/// Whose values a series holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    /// A node's signals, by its slot.
    Slot(u64),
    /// A struct of the interface file (a foreign node), by name.
    Struct(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Slot(slot) => write!(f, "slot {slot}"),
            Source::Struct(name) => write!(f, "struct `{name}`"),
        }
    }
}

/// The signals' recent values and the events, from consecutive snapshots.
#[derive(Debug, Default)]
pub struct History {
    /// (source, signal) → (time ms, value).
    series: HashMap<(Source, String), VecDeque<(u64, f64)>>,
    /// Units by (source, signal).
    units: HashMap<(Source, String), String>,
    events: VecDeque<Event>,
    /// What the last snapshot said, to tell what changed: per slot, its
    /// judgement and restarts; per ring, whether it was open; per struct,
    /// its gave-ups.
    last: Option<Value>,
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_bool().map(|b| f64::from(u8::from(b))))
}

impl History {
    /// Takes in `snapshot` (taken at `time_ms`): its signals' values, and
    /// the events its differences from the last one make.
    pub fn add(&mut self, time_ms: u64, snapshot: &Value) {
        for node in list(Some(snapshot), "slots") {
            let slot = Source::Slot(node["slot"].as_u64().unwrap_or(0));
            self.add_values(
                time_ms,
                &slot,
                &node["frame"]["signals"],
                &node["frame"]["units"],
            );
        }
        for s in list(Some(snapshot), "foreign") {
            let name = Source::Struct(s["node"].as_str().unwrap_or("?").to_owned());
            self.add_values(time_ms, &name, &s["values"], &s["units"]);
        }
        let before = self.last.take();
        for (kind, text) in changes(before.as_ref(), snapshot) {
            if self.events.len() == EVENTS {
                self.events.pop_front();
            }
            self.events.push_back(Event {
                time_ms,
                kind,
                text,
            });
        }
        self.last = Some(snapshot.clone());
    }

    /// The numbers of `values` (an object of name → value) at `time_ms`,
    /// and the `units` (name → unit) of `source`.
    fn add_values(&mut self, time_ms: u64, source: &Source, values: &Value, units: &Value) {
        for (name, value) in values.as_object().into_iter().flatten() {
            let Some(x) = number(value) else { continue };
            let points = (self.series)
                .entry((source.clone(), name.clone()))
                .or_default();
            if points.len() == POINTS {
                points.pop_front();
            }
            points.push_back((time_ms, x));
        }
        for (name, unit) in units.as_object().into_iter().flatten() {
            if let Some(u) = unit.as_str() {
                (self.units).insert((source.clone(), name.clone()), u.to_owned());
            }
        }
    }

    /// The points of `signal` of `source` since `since_ms`, and its unit.
    pub fn series(
        &self,
        source: &Source,
        signal: &str,
        since_ms: u64,
    ) -> Option<(Vec<(u64, f64)>, &str)> {
        let key = (source.clone(), signal.to_owned());
        let points = self.series.get(&key)?;
        let unit = self.units.get(&key).map_or("", String::as_str);
        Some((
            points
                .iter()
                .copied()
                .filter(|&(t, _)| t >= since_ms)
                .collect(),
            unit,
        ))
    }

    /// The events, oldest first, as the snapshot's `events`.
    pub fn events_json(&self) -> Value {
        Value::Array(
            self.events
                .iter()
                .map(|e| json!({ "time_ms": e.time_ms, "kind": e.kind, "text": e.text }))
                .collect(),
        )
    }
}

/// What changed from `before` to `now`: (kind, text) of each event.
fn changes(before: Option<&Value>, now: &Value) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    node_changes(before, now, &mut out);
    ring_changes(before, now, &mut out);
    struct_changes(before, now, &mut out);
    out
}

/// The array at `key` of `v`, empty when there is none.
fn list<'v>(v: Option<&'v Value>, key: &str) -> &'v [Value] {
    v.and_then(|v| v[key].as_array()).map_or(&[], Vec::as_slice)
}

/// A node's judgement changed, it restarted, or it warned of a late peer.
fn node_changes(before: Option<&Value>, now: &Value, out: &mut Vec<(&'static str, String)>) {
    for node in list(Some(now), "slots") {
        let slot = &node["slot"];
        let name = node["node"].as_str().unwrap_or("?");
        let judged = node["holder"]["judged"].as_str().unwrap_or("");
        let was = list(before, "slots").iter().find(|b| b["slot"] == *slot);
        let was_judged = was.map_or("", |b| b["holder"]["judged"].as_str().unwrap_or(""));
        if judged != was_judged {
            let kind = match judged {
                j if j.starts_with("live") => "join",
                "left over, closed" => "close",
                "left over, dead" => "dead",
                _ => "state",
            };
            out.push((kind, format!("node `{name}` (slot {slot}): {judged}")));
        }
        let count = |v: Option<&Value>, key: &str| v.and_then(|v| v[key].as_u64()).unwrap_or(0);
        if count(Some(node), "restarts") > count(was, "restarts") {
            out.push(("restart", format!("node `{name}` (slot {slot}) restarted")));
        }
        let late = |v: Option<&Value>| v.and_then(|v| v["stats"]["late"].as_u64()).unwrap_or(0);
        if late(Some(node)) > late(was) && was.is_some() {
            out.push((
                "late",
                format!("node `{name}` (slot {slot}) warned that a peer was late"),
            ));
        }
    }
}

/// A ring was cut or mended, as the server's board sees it.
fn ring_changes(before: Option<&Value>, now: &Value, out: &mut Vec<(&'static str, String)>) {
    for ring in list(Some(now), "rings") {
        let memory = ring["memory"].as_str().unwrap_or("?");
        let open = ring["open"].as_bool().unwrap_or(false);
        let was_open = list(before, "rings")
            .iter()
            .find(|r| r["memory"] == ring["memory"])
            .and_then(|r| r["open"].as_bool())
            .unwrap_or(false);
        match (was_open, open) {
            (false, true) => out.push((
                "cut",
                format!("{memory}: {}", ring["state"].as_str().unwrap_or("open")),
            )),
            (true, false) => out.push(("mend", format!("{memory}: the ring is whole again"))),
            _ => {}
        }
    }
}

/// A struct's read gave up.
fn struct_changes(before: Option<&Value>, now: &Value, out: &mut Vec<(&'static str, String)>) {
    let gave_up = |v: Option<&Value>| -> Vec<(String, u64)> {
        list(v, "foreign")
            .iter()
            .map(|s| {
                (
                    s["node"].as_str().unwrap_or("?").to_owned(),
                    s["gave_up"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    };
    let was = gave_up(before);
    for (node, n) in gave_up(Some(now)) {
        if n > was.iter().find(|(w, _)| *w == node).map_or(0, |s| s.1) {
            out.push((
                "gave-up",
                format!("struct `{node}`: a read gave up ({n} so far)"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_cut_and_mended_and_a_node_joining_are_events() {
        let snap = |open: bool, judged: &str, roll: f64| {
            json!({
                "slots": [{ "slot": 0, "node": "cockpit", "restarts": 0,
                    "holder": { "judged": judged },
                    "frame": { "signals": { "roll": roll, "ok": true }, "units": { "roll": "rad" } } }],
                "rings": [{ "memory": "/dev/rfm2g0", "open": open, "state": "the ring is open at this board" }],
            })
        };
        let mut h = History::default();
        h.add(1, &snap(false, "held, watching", 0.1));
        h.add(2, &snap(false, "live, this coupling", 0.2));
        h.add(3, &snap(true, "live, this coupling", 0.3));
        h.add(4, &snap(false, "live, this coupling", 0.4));
        let kinds: Vec<String> = h.events.iter().map(|e| e.kind.to_owned()).collect();
        assert_eq!(kinds, ["state", "join", "cut", "mend"]);
        let (points, unit) = h.series(&Source::Slot(0), "roll", 2).unwrap();
        assert_eq!(points, [(2, 0.2), (3, 0.3), (4, 0.4)]);
        assert_eq!(unit, "rad");
        let ok = h.series(&Source::Slot(0), "ok", 0).unwrap();
        assert_eq!(ok.0.len(), 4, "a Boolean as 0/1");
    }

    #[test]
    fn a_structs_fields_are_series_of_their_own() {
        let snap = |n: u64| {
            json!({
                "slots": [{ "slot": 0, "frame": { "signals": { "u64": 1 } } }],
                "foreign": [{ "node": "motion", "values": { "u64": n, "f[0]": 0.5, "name": "n1" },
                              "units": { "f[0]": "m" } }],
            })
        };
        let mut h = History::default();
        h.add(1, &snap(7));
        h.add(2, &snap(8));
        let motion = Source::Struct("motion".to_owned());
        assert_eq!(h.series(&motion, "u64", 0).unwrap().0, [(1, 7.0), (2, 8.0)]);
        assert_eq!(h.series(&motion, "f[0]", 0).unwrap().1, "m");
        assert!(
            h.series(&motion, "name", 0).is_none(),
            "text is not plotted"
        );
        assert_eq!(
            h.series(&Source::Slot(0), "u64", 0).unwrap().0,
            [(1, 1.0), (2, 1.0)]
        );
    }
}
