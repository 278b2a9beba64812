//! `device = replay:PATH`: the peers played from a recording instead of memory.
//!
//! The node runs as always on a private loopback memory; only the peers' frames
//! come from the recording: at step k each peer's recorded frame of step
//! k + 1 - lag is taken, as a lockstep link takes it from memory (so every
//! output, `link.*` included, is computed the same way). This node's payload is
//! compared with its recorded frame of the same step: a difference does not fail
//! the step, it is counted (and the first one logged, by signal).
//!
//! A recording holds the frames of every node it saw, its own published and its
//! peers' taken: any node of the interface can be replayed from it, the one that
//! made it or one of its peers (against "the other's recording").
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
    /// This node's slot.
    own_slot: u8,
    /// Its descriptor, to name a diverging signal.
    own: Descriptor,
    /// The slots whose frames are wanted: this node's and its peers'.
    wanted: Vec<u8>,
    /// Frames read ahead: writer slot → (frame index, frame), in order.
    ahead: HashMap<u8, VecDeque<(u64, Vec<u8>)>>,
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
    /// been made with the same interface, by that node or one of its peers.
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
        let own = nodes
            .into_iter()
            .find(|d| d.slot == slot)
            .ok_or_else(|| problem(path, format!("it describes no node in slot {slot}")))?;
        Ok(Player {
            path: path.to_owned(),
            reader,
            own_slot: slot,
            own,
            wanted: interface.nodes.iter().map(|n| n.slot).collect(),
            ahead: HashMap::new(),
            last: HashMap::new(),
            ended: false,
            divergence: 0,
        })
    }

    /// Steps whose payload differed from the recording's.
    pub fn divergence(&self) -> u64 {
        self.divergence
    }

    /// The recorded frame `index` of writer `slot`; `None` if the recording has none.
    fn frame(&mut self, slot: u8, index: u64) -> Result<Option<Vec<u8>>, LinkError> {
        loop {
            let queue = self.ahead.entry(slot).or_default();
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
            // Published by the recording node or taken from a peer: either way
            // the frame its writer published.
            if record.kind == Kind::Missed || !self.wanted.contains(&record.slot) {
                continue;
            }
            let Some(index) = frame_index(&record.body) else {
                continue;
            };
            self.last.insert(record.slot, index);
            (self.ahead.entry(record.slot).or_default()).push_back((index, record.body));
        }
    }

    /// Step `k` of `node`, whose frame k + 1 was just published: each peer takes
    /// its recorded frame, and this node's payload is compared with its recorded one.
    pub fn play(
        &mut self,
        node: &mut Node,
        k: u64,
        now: Instant,
        payload: &[u8],
    ) -> Result<(), LinkError> {
        let need = (k + 1).saturating_sub(u64::from(node.config().lag));
        for i in 0..node.peers().len() {
            let slot = node.peers()[i].slot();
            let Some(frame) = self.frame(slot, need)? else {
                return Err(LinkError::ReplayEnded {
                    path: self.path.clone(),
                    slot,
                    index: need,
                    last: self.last.get(&slot).copied(),
                });
            };
            node.exchange().take_recorded(i, &frame, now).map_err(|e| {
                problem(&self.path, format!("its frame {need} of slot {slot}: {e}"))
            })?;
        }
        if let Some(recorded) = self.frame(self.own_slot, k + 1)? {
            let (then, now) = (&recorded[HEADER_SIZE..], payload);
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
        let show = |v: Option<Value>| v.map_or("?".into(), |v| v.to_string());
        let differs = self.own.first_changed(then, now).map(|(s, a, b)| {
            format!(
                "`{}` was {} in the recording, {} now",
                s.name,
                show(a),
                show(b)
            )
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
