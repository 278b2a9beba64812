//! `device = replay:PATH`: the peers played from a recording instead of memory.
//!
//! The node runs as always on a private loopback memory; only the peers' frames
//! come from the recording: at step k each lockstep peer's recorded frame that
//! the rule on time names ([`rfm_interface::rates`]: k + 1 - lag with equal
//! periods) is taken, as a lockstep link takes it from memory (so every output,
//! `link.*` included, is computed the same way), and of a peer the node takes
//! the newest frame of (`free`), the frame the recorded step had taken (exact
//! when the node replays its own recording; against another node's, the one
//! that node had taken by the same step number). This node's payload is
//! compared with its recorded frame of the same step: a difference does not fail
//! the step, it is counted (and the first one logged, by signal).
//!
//! A recording holds the frames of every node it saw, its own published and its
//! peers' taken: any node of the interface can be replayed from it, the one that
//! made it or one of its peers (against "the other's recording").
//!
//! The lab's structs (foreign nodes) the recording's maker read are played
//! too: at step k, each struct as the recorded step that published own frame
//! k + 1 had read it (a struct record follows its step's own frame, as taken
//! frames do), so a replayed node's foreign outputs are the original run's at
//! every step.
//!
//! The recording is read as the steps go, never whole: frames of one slot come in
//! step order, and only the few read ahead of the step are kept.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::time::Instant;

use super::node::Node;
use super::{LinkError, OpenError};
use rfm_frames::fmi::Value;
use rfm_frames::frame::framed::HEADER_SIZE;
use rfm_interface::descriptor::Descriptor;
use rfm_interface::Interface;
use rfm_record::{Kind, Reader};

/// A recording being played to a node.
#[derive(Debug)]
pub(crate) struct Player {
    path: std::path::PathBuf,
    reader: Reader<BufReader<File>>,
    /// This node's slot.
    own_slot: u8,
    /// The slot of the node that made the recording.
    maker: Option<u8>,
    /// Its descriptor, to name a diverging signal.
    own: Descriptor,
    /// The slots whose frames are wanted: this node's and its peers'.
    wanted: Vec<u8>,
    /// Frames read ahead: writer slot → frames, in order.
    ahead: HashMap<u8, VecDeque<Queued>>,
    /// The index of the last frame the recording's maker published: the tag
    /// of the frames read after it (see [`Player::read_one`]).
    own_index: Option<u64>,
    /// The last frame index read, per slot (for the end-of-recording message).
    last: HashMap<u8, u64>,
    /// Struct records read ahead, per struct (its index in the interface's
    /// foreign nodes): tagged as frames are.
    structs: HashMap<u8, VecDeque<Queued>>,
    ended: bool,
    divergence: u64,
}

/// A recorded frame read ahead of the step that takes it.
#[derive(Debug)]
struct Queued {
    /// Its frame index (the header's step).
    index: u64,
    /// The index of the maker's own frame recorded last before it: the step
    /// that published that frame took this one.
    tag: u64,
    body: Vec<u8>,
}

/// A recording that cannot be replayed as this node.
fn cannot_open(path: &Path, problem: String) -> OpenError {
    OpenError::Replay {
        path: path.display().to_string(),
        problem,
    }
}

fn problem(path: &Path, problem: String) -> LinkError {
    LinkError::Replay {
        path: path.display().to_string(),
        problem,
    }
}

impl Player {
    /// Opens the recording at `path` for node `slot` of `interface`: it must have
    /// been made with the same interface, by that node or one of its peers.
    pub fn open(path: &Path, interface: &Interface, slot: u8) -> Result<Player, OpenError> {
        let reader = Reader::open(path).map_err(|e| cannot_open(path, e.to_string()))?;
        let header = reader.header().clone();
        let nodes = header.nodes();
        if header.fingerprint != interface.fingerprint() {
            let map = interface
                .map()
                .map_err(|e| cannot_open(path, e.to_string()))?;
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
            return Err(cannot_open(
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
            .ok_or_else(|| cannot_open(path, format!("it describes no node in slot {slot}")))?;
        Ok(Player {
            path: path.to_owned(),
            reader,
            own_slot: slot,
            maker: header.node,
            own,
            wanted: interface.nodes.iter().map(|n| n.slot).collect(),
            ahead: HashMap::new(),
            own_index: None,
            last: HashMap::new(),
            structs: HashMap::new(),
            ended: false,
            divergence: 0,
        })
    }

    /// Steps whose payload differed from the recording's.
    pub fn divergence(&self) -> u64 {
        self.divergence
    }

    /// The recorded frame `index` of writer `slot`; `None` if the recording has none.
    /// Reads the next record into its slot's queue, tagged with the own frame
    /// recorded last (the recorder writes a step's own frame, then the frames it
    /// took): a frame tagged t was taken by the step that published own frame t.
    fn read_one(&mut self) -> Result<(), LinkError> {
        let Some(record) = self
            .reader
            .next_record()
            .map_err(|e| problem(&self.path, e.to_string()))?
        else {
            self.ended = true;
            return Ok(());
        };
        // A self-loop's maker took its own frames: the same frames it
        // published, recorded again out of order (step k publishes frame k + 1
        // and takes frame k + 1 - lag); they are played from the published ones.
        // A struct's slot byte is its index among the foreign nodes; a
        // recording of no node's steps (`rfmctl record`) has no step to play
        // them at.
        if record.kind == Kind::Struct && self.maker.is_none() {
            return Ok(());
        }
        if record.kind == Kind::Struct {
            let tag = self.own_index.unwrap_or(0);
            (self.structs.entry(record.slot).or_default()).push_back(Queued {
                index: tag,
                tag,
                body: record.body,
            });
            return Ok(());
        }
        let own_taken = record.kind == Kind::Taken && Some(record.slot) == self.maker;
        let frame = matches!(record.kind, Kind::Published | Kind::Taken);
        if !frame || own_taken || !self.wanted.contains(&record.slot) {
            return Ok(());
        }
        let Some(index) = frame_index(&record.body) else {
            return Ok(());
        };
        if record.kind == Kind::Published {
            self.own_index = Some(index);
        }
        let tag = self.own_index.unwrap_or(0);
        self.last.insert(record.slot, index);
        (self.ahead.entry(record.slot).or_default()).push_back(Queued {
            index,
            tag,
            body: record.body,
        });
        Ok(())
    }

    /// The recorded frame `index` of `slot`, if the recording has it. It stays
    /// queued: a slower peer's frame serves several steps. The frames before
    /// it are dropped unless `keep_older` (a self-loop's own frames, which the
    /// node's lag still needs when its step is compared).
    fn frame(
        &mut self,
        slot: u8,
        index: u64,
        keep_older: bool,
    ) -> Result<Option<Vec<u8>>, LinkError> {
        loop {
            let queue = self.ahead.entry(slot).or_default();
            if !keep_older {
                while queue.front().is_some_and(|q| q.index < index) {
                    queue.pop_front();
                }
            }
            match queue.iter().find(|q| q.index >= index) {
                Some(q) if q.index == index => return Ok(Some(q.body.clone())),
                Some(_) => return Ok(None),
                None if self.ended => return Ok(None),
                None => self.read_one()?,
            }
        }
    }

    /// A peer whose newest frame the node takes (free): the newest frame of
    /// `slot` the recorded step that published own frame `own` had taken.
    fn newest_taken(&mut self, slot: u8, own: u64) -> Result<Option<Vec<u8>>, LinkError> {
        self.read_step(own)?;
        Ok(newest_by(self.ahead.entry(slot).or_default(), own).map(|q| q.body.clone()))
    }

    /// Reads every record of the recorded step that published own frame
    /// `own`: they are all read once the next step's own frame is.
    fn read_step(&mut self, own: u64) -> Result<(), LinkError> {
        while !self.ended && self.own_index.is_none_or(|i| i <= own) {
            self.read_one()?;
        }
        Ok(())
    }

    /// Struct `index` of the interface's foreign nodes as the recorded step
    /// of step `k` (that published own frame k + 1) had read it; `None` before
    /// the recording holds one.
    pub fn struct_at(&mut self, index: usize, k: u64) -> Result<Option<&[u8]>, LinkError> {
        self.read_step(k + 1)?;
        let Ok(index) = u8::try_from(index) else {
            return Ok(None);
        };
        let queue = self.structs.entry(index).or_default();
        Ok(newest_by(queue, k + 1).map(|q| q.body.as_slice()))
    }

    pub fn play(
        &mut self,
        node: &mut Node,
        k: u64,
        now: Instant,
        payload: &[u8],
    ) -> Result<(), LinkError> {
        let lag = node.config().settings.lag;
        for i in 0..node.peers().len() {
            let slot = node.peers()[i].slot();
            let Some(need) = node.peers()[i].frame_needed(k, lag) else {
                // Free of this peer: what the recorded step took, if anything.
                if let Some(frame) = self.newest_taken(slot, k + 1)? {
                    node.exchange().take_recorded(i, &frame, now).map_err(|e| {
                        problem(&self.path, format!("its newest frame of slot {slot}: {e}"))
                    })?;
                }
                continue;
            };
            let Some(frame) = self.frame(slot, need, false)? else {
                return Err(LinkError::ReplayEnded {
                    path: self.path.display().to_string(),
                    slot,
                    index: need,
                    last: self.last.get(&slot).copied(),
                });
            };
            node.exchange().take_recorded(i, &frame, now).map_err(|e| {
                problem(&self.path, format!("its frame {need} of slot {slot}: {e}"))
            })?;
        }
        let self_loop = node.peers().iter().any(|p| p.slot() == self.own_slot);
        if let Some(recorded) = self.frame(self.own_slot, k + 1, self_loop)? {
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
        let differs = self
            .own
            .first_changed(then, now)
            .map(|(s, a, b)| format!("`{s}` was {} in the recording, {} now", show(a), show(b)));
        log::warn!(
            "replay:{}: first divergence at step {k}: {} (counted in replay.divergence; the \
             step goes on with the recorded peers)",
            self.path.display(),
            differs.unwrap_or_else(|| "the padding between signals differs".into())
        );
    }
}

/// The newest of `queue`'s records tagged at most `own` (the older ones
/// dropped), if any.
fn newest_by(queue: &mut VecDeque<Queued>, own: u64) -> Option<&Queued> {
    while queue.get(1).is_some_and(|q| q.tag <= own) {
        queue.pop_front();
    }
    queue.front().filter(|q| q.tag <= own)
}

/// The frame index a recorded frame carries (its header's step).
fn frame_index(frame: &[u8]) -> Option<u64> {
    let len = frame.len().checked_sub(HEADER_SIZE)?;
    rfm_frames::frame::framed::check(frame, len)
        .ok()
        .map(|h| h.step)
}
