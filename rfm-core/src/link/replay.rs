//! `device = replay:PATH`: the peers played from a recording instead of memory.
//!
//! The node runs as always on a private loopback memory; only the peers' frames
//! come from the recording: at step k each peer's recorded frame of step
//! k + 1 - lag is taken, as a lockstep link takes it from memory (so every
//! output, `link.*` included, is computed the same way). This node's payload is
//! compared with the one it recorded for the same step: a difference does not fail
//! the step, it is counted (and the first one logged, by signal).
//!
//! The recording is read as the steps go, never whole: frames of one slot come in
//! step order, and only the few read ahead of the step are kept.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::time::Instant;

use super::node::Node;
use super::LinkError;
use crate::frame::framed::HEADER_SIZE;
use crate::interface::descriptor::Descriptor;
use crate::interface::{Interface, Value};
use crate::record::{Kind, Reader};

/// A recording being played to a node.
#[derive(Debug)]
pub(crate) struct Player {
    path: String,
    reader: Reader<BufReader<File>>,
    /// The recording node's slot: this node.
    own_slot: u8,
    /// Its descriptor, to name a diverging signal.
    own: Descriptor,
    /// Peers' frames read ahead: slot → (frame index, frame), in order.
    taken: HashMap<u8, VecDeque<(u64, Vec<u8>)>>,
    /// This node's recorded frames read ahead.
    published: VecDeque<(u64, Vec<u8>)>,
    /// The last frame index read, per slot (for the end-of-recording message).
    last: HashMap<u8, u64>,
    ended: bool,
    divergence: u64,
}

fn problem(path: &str, problem: String) -> LinkError {
    LinkError::Replay {
        path: path.to_owned(),
        problem,
    }
}

impl Player {
    /// Opens the recording at `path` for node `slot` of `interface`: it must have
    /// been made by that node of the same interface.
    pub fn open(path: &str, interface: &Interface, slot: u8) -> Result<Player, LinkError> {
        let reader = Reader::open(Path::new(path)).map_err(|e| problem(path, e.to_string()))?;
        let header = reader.header().clone();
        let nodes = header.nodes();
        if header.fingerprint != interface.fingerprint() {
            let map = interface.map().map_err(|e| problem(path, e.to_string()))?;
            let difference = interface
                .nodes
                .iter()
                .enumerate()
                .find_map(
                    |(i, spec)| match nodes.iter().find(|d| d.slot == spec.slot) {
                        None => Some(format!("the recording has no node in slot {}", spec.slot)),
                        Some(d) => d.first_difference(spec, &map.area(i).payload),
                    },
                )
                .unwrap_or_else(|| "the interfaces' names or sizes differ".into());
            return Err(problem(
                path,
                format!(
                    "it was recorded with interface `{}` (fingerprint {:#018x}), this node's is \
                     `{}` ({:#018x}): {difference}",
                    header.interface,
                    header.fingerprint,
                    interface.name,
                    interface.fingerprint()
                ),
            ));
        }
        if header.node != slot {
            return Err(problem(
                path,
                format!(
                    "it was recorded by the node in slot {}, and this node is slot {slot}: \
                     replay a recording as the node that made it",
                    header.node
                ),
            ));
        }
        let own = nodes
            .into_iter()
            .find(|d| d.slot == slot)
            .ok_or_else(|| problem(path, format!("it describes no node in slot {slot}")))?;
        Ok(Player {
            path: path.to_owned(),
            reader,
            own_slot: slot,
            own,
            taken: HashMap::new(),
            published: VecDeque::new(),
            last: HashMap::new(),
            ended: false,
            divergence: 0,
        })
    }

    /// Steps whose payload differed from the recording's.
    pub fn divergence(&self) -> u64 {
        self.divergence
    }

    /// The recorded frame `index` of `slot` (taken from a peer, or published by
    /// this node); `None` if the recording has none.
    fn frame(
        &mut self,
        published: bool,
        slot: u8,
        index: u64,
    ) -> Result<Option<Vec<u8>>, LinkError> {
        loop {
            let queue = match published {
                true => &mut self.published,
                false => self.taken.entry(slot).or_default(),
            };
            while queue.front().is_some_and(|&(i, _)| i < index) {
                queue.pop_front();
            }
            match queue.front() {
                Some(&(i, _)) if i == index => return Ok(queue.pop_front().map(|(_, f)| f)),
                Some(_) => return Ok(None),
                None if self.ended => return Ok(None),
                None => {}
            }
            let Some(record) = self
                .reader
                .next_record()
                .map_err(|e| problem(&self.path, e.to_string()))?
            else {
                self.ended = true;
                continue;
            };
            let Some(index) = frame_index(&record.body) else {
                continue;
            };
            self.last.insert(record.slot, index);
            match (record.kind, record.slot == self.own_slot) {
                (Kind::Published, true) => self.published.push_back((index, record.body)),
                (Kind::Taken, false) => self
                    .taken
                    .entry(record.slot)
                    .or_default()
                    .push_back((index, record.body)),
                _ => {}
            }
        }
    }

    /// Step `k` of `node`, whose frame k + 1 was just published: each peer takes
    /// its recorded frame, and this node's payload is compared with its recorded one.
    pub fn play(&mut self, node: &mut Node, k: u64, now: Instant) -> Result<(), LinkError> {
        let need = (k + 1).saturating_sub(u64::from(node.config().lag));
        for i in 0..node.peers().len() {
            let slot = node.peers()[i].slot();
            let Some(frame) = self.frame(false, slot, need)? else {
                return Err(LinkError::ReplayEnded {
                    path: self.path.clone(),
                    slot,
                    index: need,
                    last: self.last.get(&slot).copied(),
                });
            };
            node.take_recorded(i, &frame, now).map_err(|e| {
                problem(&self.path, format!("its frame {need} of slot {slot}: {e}"))
            })?;
        }
        if let Some(recorded) = self.frame(true, self.own_slot, k + 1)? {
            let (then, now) = (&recorded[HEADER_SIZE..], node.payload());
            if then != now {
                self.divergence += 1;
                if self.divergence == 1 {
                    self.log_first(k, then, now);
                }
            }
        }
        Ok(())
    }

    /// Logs the first diverging step and signal.
    fn log_first(&self, k: u64, then: &[u8], now: &[u8]) {
        let differs = self.own.signals.iter().find_map(|s| {
            let (a, b) = (
                Value::read(s.kind, then, s.offset),
                Value::read(s.kind, now, s.offset),
            );
            (a != b).then(|| {
                let show = |v: Option<Value>| v.map_or("?".into(), |v| v.to_string());
                format!(
                    "`{}` was {} in the recording, {} now",
                    s.name,
                    show(a),
                    show(b)
                )
            })
        });
        log::warn!(
            "replay:{}: first divergence at step {k}: {} (counted in replay.divergence; the \
             step goes on with the recorded peers)",
            self.path,
            differs.unwrap_or_else(|| "the padding between signals differs".into())
        );
    }
}

/// The frame index a recorded frame carries (its header's step).
fn frame_index(frame: &[u8]) -> Option<u64> {
    let len = frame.len().checked_sub(HEADER_SIZE)?;
    crate::frame::framed::check(frame, len).ok().map(|h| h.step)
}
