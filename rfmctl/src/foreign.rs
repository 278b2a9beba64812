//! The structs a lab's own programs write (an interface file's foreign nodes),
//! read from outside as the FMU reads them: by their handshakes, decoded by
//! field name, and whether their programs move them. Foreign structs write
//! no descriptor into the memory, so only the interface file finds them:
//! `watch --interface` and `doctor --interface` take it.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use rfm_core::link::ForeignPeer;
use rfm_frames::fmi::Value;
use rfm_interface::foreign::{describe, ForeignNode};
use rfm_interface::{Interface, Reserved};
use rfm_memory::Region;
use serde_json::json;

use crate::failure::Failure;

/// The interface file `path`, for its foreign nodes: a file that does not
/// parse is the user's to fix (exit 2), named with its line.
pub fn load(path: &Path) -> Result<Interface, Failure> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the interface file {}", path.display()))
        .map_err(Failure::usage)?;
    let file = path.display().to_string();
    // The file was built into FMUs already: the FMU's reserved names are
    // build-fmu's to check, not a reader's.
    Interface::parse(&file, &text, &Reserved::NONE).map_err(|e| Failure::usage(anyhow!("{e}")))
}

/// The foreign nodes of one interface, each read at every poll.
pub struct Structs {
    nodes: Vec<ForeignNode>,
    peers: Vec<ForeignPeer>,
    /// A read that failed (the memory refused it), per node.
    problems: Vec<Option<String>>,
    started: Instant,
}

impl Structs {
    /// Readers of every foreign node of `interface` in `region` (the memory
    /// from regionOffset). An interface without foreign nodes is refused:
    /// `--interface` then shows nothing.
    pub fn new(interface: &Interface, region: &Region, file: &Path) -> Result<Structs, Failure> {
        if interface.foreign.is_empty() {
            return Err(Failure::usage(anyhow!(
                "{} declares no foreign node (a [[node]] with `fields`): --interface shows \
                 the structs a lab's own programs write",
                file.display()
            )));
        }
        let peers = (interface.foreign.iter().enumerate())
            .map(|(i, node)| {
                ForeignPeer::new(region, i, node, false).map_err(|e| {
                    Failure::device(anyhow!(
                        "foreign node `{}` at {:#x} ({} bytes) is not inside the memory from \
                         regionOffset: {e}",
                        node.name,
                        node.offset,
                        node.len()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Structs {
            nodes: interface.foreign.clone(),
            problems: vec![None; peers.len()],
            peers,
            started: Instant::now(),
        })
    }

    /// Reads every struct once, by its handshake.
    pub fn poll(&mut self, now: Instant) {
        for ((peer, node), problem) in self
            .peers
            .iter_mut()
            .zip(&self.nodes)
            .zip(&mut self.problems)
        {
            if let Err(e) = peer.read(node, now) {
                *problem = Some(e.to_string());
            }
        }
    }

    /// The foreign nodes read, in the interface's order.
    pub fn nodes(&self) -> &[ForeignNode] {
        &self.nodes
    }

    /// Node `i`'s newest whole struct and which one it is
    /// ([`ForeignPeer::newest`]).
    pub fn newest(&self, i: usize) -> Option<(&[u8], u64)> {
        self.peers[i].newest()
    }

    /// What the watcher knows of node `i`'s program at `now`, in words.
    fn state(&self, i: usize, now: Instant) -> String {
        let peer = &self.peers[i];
        let looked = now.saturating_duration_since(self.started).as_secs_f64();
        match (&self.problems[i], peer.taken(), peer.age(now)) {
            (Some(problem), ..) => format!("unreadable: {problem}"),
            (None, false, _) => format!("no whole struct in {looked:.1} s"),
            (None, true, None) => format!("not moved in {looked:.1} s"),
            (None, true, Some(age)) => format!("moved {:.3} s ago", age.as_secs_f64()),
        }
    }

    /// Every element of node `i`'s newest struct, by name.
    fn values(&self, i: usize) -> Vec<(String, Option<Value>)> {
        let node = &self.nodes[i];
        let mut out = Vec::new();
        for (field, f) in node.layout.fields.iter().enumerate() {
            for e in 0..f.elements() {
                out.push((f.element_name(e), self.peers[i].value(node, field, e)));
            }
        }
        out
    }

    /// The table's lines: one per struct, then its values.
    pub fn table(&self, now: Instant) -> String {
        let mut text =
            String::from("the lab's own structs (foreign nodes of the interface file):\n");
        for (i, node) in self.nodes.iter().enumerate() {
            let c = self.peers[i].counts;
            text.push_str(&format!(
                "  {:<16} {:#x}, {} bytes, {}: {}; {} moves, {} retries, {} given up\n   ",
                node.name,
                node.offset,
                node.len(),
                describe(node),
                self.state(i, now),
                c.moves,
                c.retries,
                c.gave_up,
            ));
            for (name, value) in self.values(i) {
                match value {
                    Some(v) => text.push_str(&format!(" {name}={v}")),
                    None => text.push_str(&format!(" {name}=?")),
                }
            }
            text.push('\n');
        }
        text
    }

    pub fn json(&self, now: Instant) -> serde_json::Value {
        let nodes = (self.nodes.iter().enumerate()).map(|(i, node)| {
            let peer = &self.peers[i];
            let values: serde_json::Map<String, serde_json::Value> = self
                .values(i)
                .into_iter()
                .map(|(name, v)| (name, v.map_or(serde_json::Value::Null, as_json)))
                .collect();
            let units: serde_json::Map<String, serde_json::Value> = (node.layout.fields.iter())
                .zip(&node.info)
                .filter_map(|(f, info)| Some((f, info.unit.as_ref()?)))
                .flat_map(|(f, unit)| {
                    (0..f.elements()).map(move |e| (f.element_name(e), json!(unit)))
                })
                .collect();
            json!({
                "node": node.name,
                "offset": node.offset,
                "bytes": node.len(),
                "handshake": describe(node),
                "taken": peer.taken(),
                "age": peer.age(now).map(|a| a.as_secs_f64()),
                "moves": peer.counts.moves,
                "retries": peer.counts.retries,
                "gave_up": peer.counts.gave_up,
                "inexact": peer.counts.inexact,
                "problem": self.problems[i],
                "values": values,
                "units": units,
            })
        });
        serde_json::Value::Array(nodes.collect())
    }

    /// The nodes whose programs did not move their structs within `timeout`
    /// of `now` (or gave none whole), each with what was seen.
    pub fn still(&self, now: Instant, timeout: Duration) -> Vec<String> {
        (0..self.nodes.len())
            .filter(|&i| !self.peers[i].alive(now, timeout))
            .map(|i| {
                let node = &self.nodes[i];
                let marker = match node.marker() {
                    Some(m) => format!("its marker `{}`", node.layout.fields[m].name),
                    None => "its bytes".to_owned(),
                };
                format!(
                    "`{}` at {:#x} ({marker}): {}",
                    node.name,
                    node.offset,
                    self.state(i, now)
                )
            })
            .collect()
    }
}

fn as_json(value: Value) -> serde_json::Value {
    match value {
        Value::Real(r) => json!(r),
        Value::Integer(i) => json!(i),
        Value::Boolean(b) => json!(b),
        Value::String(s) => json!(s),
    }
}
