//! Why a link failed: one variant per thing a user must do something different about.

use std::time::Duration;

use super::claim::describe;
use super::liveness::DEAD_AFTER;
use crate::{DeviceError, RegionError};

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// `device = replay:PATH`: the recording cannot be replayed as this node.
    #[error("replay:{path}: {problem}")]
    Replay { path: String, problem: String },
    /// The recording has no frame for this step: it ends there.
    #[error(
        "replay:{path}: the recording has no frame {index} of slot {slot} (its last is {}): the \
         replay ends at the end of the recording",
        last.map_or("none".to_owned(), |l| l.to_string())
    )]
    ReplayEnded {
        path: String,
        slot: u8,
        index: u64,
        last: Option<u64>,
    },
    #[error("parameter {parameter} = {value}: {problem}")]
    Config {
        parameter: &'static str,
        value: String,
        problem: String,
    },
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Region(#[from] RegionError),
    #[error(
        "{device}: slot {slot} is held by another running node (session token {}, its \
         heartbeat last moved {} ms ago): give every node its own nodeSlot; a slot is taken \
         over only once its heartbeat has stopped for {} ms",
        describe(*owner), last_beat.as_millis(), DEAD_AFTER.as_millis()
    )]
    SlotInUse {
        device: String,
        slot: u8,
        owner: u32,
        last_beat: Duration,
    },
    #[error(
        "{device}: slot {slot} was claimed by another node (session token {}) at the same \
         moment as this one: give every node its own nodeSlot",
        describe(*owner)
    )]
    SlotContended {
        device: String,
        slot: u8,
        owner: u32,
    },
    #[error(
        "{device}: slot {slot} was taken over by another node (session token {}) while this \
         node's heartbeat was stalled: two nodes use nodeSlot {slot}, or this process was \
         paused for longer than {} ms",
        describe(*owner), DEAD_AFTER.as_millis()
    )]
    SlotTakenOver {
        device: String,
        slot: u8,
        owner: u32,
    },
    #[error("could not start the heartbeat thread: {0}")]
    Heartbeat(#[source] std::io::Error),
    #[error(
        "{device}: no frame for step {step} from node `{peer}` (slot {peer_slot}; this node: \
         slot {node_slot}) within {waited:.3?}: {why}"
    )]
    Timeout {
        device: String,
        node_slot: u8,
        /// The peer's node name.
        peer: String,
        peer_slot: u8,
        step: u64,
        waited: Duration,
        why: String,
    },
    #[error(
        "{device}: node `{peer}` (slot {peer_slot}) restarted (session {old:#018x} became \
         {new}) at step {step}; a lockstep run cannot continue across a restart"
    )]
    PeerRestarted {
        device: String,
        peer: String,
        peer_slot: u8,
        step: u64,
        old: u64,
        /// The new session: its epoch when a frame of it was read, else its token.
        new: String,
    },
    #[error(
        "{device}: node `{peer}` (slot {peer_slot}) stopped (its master terminated or failed) \
         before step {step}"
    )]
    PeerStopped {
        device: String,
        peer: String,
        peer_slot: u8,
        step: u64,
    },
    #[error(
        "{device}: no frame for step {step} from node `{peer}` (slot {peer_slot}): it stopped \
         beating {silent:.3?} ago: its process died or is stalled"
    )]
    PeerDead {
        device: String,
        peer: String,
        peer_slot: u8,
        step: u64,
        silent: Duration,
    },
    #[error(
        "{device}: node `{node}` (slot {slot}), whose heartbeat beats, writes bytes {start}..{end} \
         of this memory, over the area of node `{ours}` (slot {ours_slot}) of this coupling: \
         {what}. Nothing was written: give the two couplings different devices or \
         regionOffsets, or stop that node"
    )]
    Foreign {
        device: String,
        node: String,
        slot: u8,
        start: u64,
        end: u64,
        ours: String,
        ours_slot: u8,
        what: String,
    },
    #[error("{device}: peer in slot {peer_slot} is incompatible: {what}")]
    Incompatible {
        device: String,
        peer_slot: u8,
        what: String,
    },
    #[error(
        "{device}: at step {step} this node needs frame {need} of node `{peer}`, but its ring \
         entry already holds frame {found}: it ran more than its ring's {depth} frames ahead \
         (frame i is its output after its step i - 1; frame 0 its initial values): were its FMU \
         and this one built from one interface file?"
    )]
    Overwritten {
        device: String,
        peer: String,
        depth: usize,
        step: u64,
        need: u64,
        found: u64,
    },
}

pub(crate) fn config_error(
    parameter: &'static str,
    value: impl ToString,
    problem: impl Into<String>,
) -> LinkError {
    LinkError::Config {
        parameter,
        value: value.to_string(),
        problem: problem.into(),
    }
}
