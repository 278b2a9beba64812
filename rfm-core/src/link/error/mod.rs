//! Why a link failed: one variant per thing a user must do something different about.

use std::time::Duration;

use super::block::{Ended, Ending};
use super::claim::describe;
use super::liveness::DEAD_AFTER;
use rfm_interface::settings::SettingError;

mod late;
mod open;

pub use late::{Late, LeftBy};
pub(crate) use open::open_config;
pub use open::OpenError;
use rfm_memory::{DeviceError, RegionError};

/// Where a holder runs, for messages: this host, or another one whose bridge
/// (its id) writes it here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host(pub Option<u32>);

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(bridge) => write!(f, ", on another host (mirrored by bridge {bridge:#010x})"),
            None => Ok(()),
        }
    }
}

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
    /// A setting refused by its table, or two that do not go together.
    #[error("parameter {0}")]
    Setting(#[from] SettingError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Region(#[from] RegionError),
    #[error(
        "{device}: slot {slot} is held by another running node (session token {}{host}, its \
         heartbeat last moved {} ms ago). Nothing was written: give every node its own \
         nodeSlot; a slot is taken over only once its heartbeat has stopped for {} ms",
        describe(*owner), last_beat.as_millis(), DEAD_AFTER.as_millis()
    )]
    SlotInUse {
        device: String,
        slot: u8,
        owner: u32,
        last_beat: Duration,
        host: Host,
    },
    #[error(
        "{device}: slot {slot} was claimed at the same moment by another node (session token \
         {}{winner}{host}), which holds it now: this node withdrew its claim. Give every node \
         its own nodeSlot, or the two couplings different devices or regionOffsets",
        describe(*owner)
    )]
    SlotContended {
        device: String,
        slot: u8,
        owner: u32,
        /// The winner as its descriptor names it (empty when not yet written).
        winner: String,
        host: Host,
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
    #[error(
        "{device}: foreign node `{node}`'s counter shows {} of its program's writes, and this \
         node's step {step} needs {needed} by the rule on time (its period {period} s) within \
         {waited:.3?}: start its program with the coupling (its counter counts from its start), \
         or give its handshake no period to take the newest struct free",
        writes.map_or("none".to_owned(), |w| w.to_string())
    )]
    ForeignBehind {
        device: String,
        node: String,
        period: String,
        step: u64,
        needed: u64,
        writes: Option<u64>,
        waited: Duration,
    },
    #[error("could not start the heartbeat thread: {0}")]
    Heartbeat(#[source] std::io::Error),
    #[error(
        "{device}: no frame for step {step} from node `{peer}` (slot {peer_slot}; this node: \
         slot {node_slot}) within {waited:.3?}: {why}{also}"
    )]
    Timeout {
        device: String,
        node_slot: u8,
        /// The peer's node name.
        peer: String,
        peer_slot: u8,
        step: u64,
        waited: Duration,
        why: Box<Late>,
        /// What else explains it (the master's steps, the ring), from `; `.
        also: String,
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
        "{device}: node `{peer}` (slot {peer_slot}) of this coupling stopped before step {step}: \
         {}",
        ended.as_ref().map_or_else(|| "its master terminated or failed".to_owned(), |e| format!("{e}; its master's log says why"))
    )]
    PeerStopped {
        device: String,
        peer: String,
        peer_slot: u8,
        step: u64,
        /// How it ended, if it recorded it ([`super::block::Ended::describe`]).
        ended: Option<String>,
    },
    #[error(
        "{device}: no frame for step {step} from node `{peer}` (slot {peer_slot}): it stopped \
         beating {silent:.3?} ago: its process died or is stalled{also}"
    )]
    PeerDead {
        device: String,
        peer: String,
        peer_slot: u8,
        step: u64,
        silent: Duration,
        /// Another cause this node can tell of (a card's: its board off the
        /// ring), as a clause; empty for none.
        also: String,
    },
    /// This node's own card lost its ring: what looked like a silent peer is
    /// this board, off the ring.
    #[error(
        "{device}: the ring is open at this board ({state}), and no other node's stores reach \
         a board off its ring: {saw}. Check the fibre into this board and the board before it \
         on the ring (powered, its fibre out lit), then `rfmctl ring-check {device}`; the \
         peers may well be running"
    )]
    RingOpenHere {
        device: String,
        /// What the card says: its LCSR's faults, the ring check.
        state: String,
        /// What the step saw, in a clause: the peer it missed.
        saw: String,
        /// The error the step ended with, which the ring explains.
        cause: Box<LinkError>,
    },
    #[error("{device}: {holder}")]
    Foreign {
        device: String,
        /// The live node over this coupling's area, and where.
        holder: Box<Foreign>,
    },
    #[error("{device}: peer in slot {peer_slot} is incompatible: {what}")]
    Incompatible {
        device: String,
        peer_slot: u8,
        /// The peer session's token, if known: recorded with this node's
        /// ending, so that the peer learns it was refused even when this
        /// node gave up before the peer saw it run.
        peer_session: Option<u32>,
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

/// A live node of another interface over an area of this coupling, as a
/// claim that refused to write over it names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreign {
    pub node: String,
    pub slot: u8,
    /// The bytes of the memory it writes.
    pub start: u64,
    pub end: u64,
    /// This coupling's node whose area it overlaps.
    pub ours: String,
    pub ours_slot: u8,
    /// How its interface differs from this node's.
    pub what: String,
    pub last_beat: Duration,
    pub host: Host,
}

impl Foreign {
    /// `found`, a live node of another interface, over an area of `interface`
    /// (laid out as `map`), whose beat last moved `ago` before.
    pub(crate) fn over(
        found: &rfm_interface::Found,
        interface: &rfm_interface::Interface,
        map: &rfm_interface::MemoryMap,
        ago: Duration,
        host: Host,
    ) -> Foreign {
        let over = map
            .areas
            .iter()
            .find(|a| a.overlaps(&found.area))
            .map(|a| &interface.nodes[a.node]);
        let d = &found.descriptor;
        Foreign {
            node: d.node.clone(),
            slot: d.slot,
            start: found.area.offset,
            end: found.area.end(),
            ours: over.map_or_else(String::new, |n| n.name.clone()),
            ours_slot: over.map_or(0, |n| n.slot),
            what: format!(
                "it is of interface `{}`, this node of `{}`",
                d.interface, interface.name
            ),
            last_beat: ago,
            host,
        }
    }
}

impl std::fmt::Display for Foreign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "node `{}` (slot {}{}), whose heartbeat last moved {} ms ago, writes bytes {}..{} of \
             this memory, over the area of node `{}` (slot {}) of this coupling: {}. Nothing was \
             written: give the two couplings different devices or regionOffsets, or stop that node",
            self.node,
            self.slot,
            self.host,
            self.last_beat.as_millis(),
            self.start,
            self.end,
            self.ours,
            self.ours_slot,
            self.what
        )
    }
}

impl LinkError {
    /// How a session that failed with this error ended, and about which
    /// peer, as it records it for its peers.
    pub(crate) fn ending(&self) -> Ended {
        let (how, about, about_session) = match self {
            LinkError::Incompatible {
                peer_slot,
                peer_session,
                ..
            } => (Ending::Incompatible, Some(*peer_slot), *peer_session),
            LinkError::Timeout { peer_slot, .. } => (Ending::Timeout, Some(*peer_slot), None),
            LinkError::PeerStopped { peer_slot, .. }
            | LinkError::PeerDead { peer_slot, .. }
            | LinkError::PeerRestarted { peer_slot, .. } => {
                (Ending::PeerEnded, Some(*peer_slot), None)
            }
            LinkError::RingOpenHere { cause, .. } => return cause.ending(),
            _ => (Ending::Failed, None, None),
        };
        Ended {
            how,
            about,
            about_session,
        }
    }
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
