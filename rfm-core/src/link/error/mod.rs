//! Why a link failed: one variant per thing a user must do something different about.

use std::time::Duration;

use super::liveness::TakenBy;
use super::ownership::ending::{Ended, Ending};
use super::ownership::DEAD_AFTER;
use rfm_frames::session::Token;

mod late;
mod open;
mod start;

pub use late::{Late, LeftBy};
pub(crate) use open::open_config;
pub use open::OpenError;
use rfm_memory::{DeviceError, RegionError};
pub use start::{PublishError, StartError};

/// The token in a slot's owner word, for messages.
pub(super) fn owner_text(owner: Option<Token>) -> String {
    owner.map_or_else(|| "none".to_owned(), |t| t.to_string())
}

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
    /// Publishing this node's frame failed.
    #[error(transparent)]
    Publish(#[from] PublishError),
    #[error(transparent)]
    Region(#[from] RegionError),
    /// The card's network interrupts (`waitStrategy = event`) failed to send
    /// or to wait.
    #[error("network interrupts (waitStrategy = event): {0}")]
    Events(#[source] DeviceError),
    #[error(
        "{device}: slot {slot} was taken over by another node (session token {}) while this \
         node's heartbeat was stalled: two nodes use nodeSlot {slot}, or this process was \
         paused for longer than {} ms",
        owner_text(owner.0),
        DEAD_AFTER.as_millis()
    )]
    SlotTakenOver {
        device: String,
        slot: u8,
        /// What the owner word held.
        owner: TakenBy,
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
        /// How it ended, if it recorded it ([`super::ownership::ending::Ended::describe`]).
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
    #[error("{device}: peer in slot {peer_slot} is incompatible: {what}")]
    Incompatible {
        device: String,
        peer_slot: u8,
        /// The peer session's token, if known: recorded with this node's
        /// ending, so that the peer learns it was refused even when this
        /// node gave up before the peer saw it run.
        peer_session: Option<Token>,
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
            _ => return Ended::FAILED,
        };
        Ended {
            how,
            about,
            about_session,
        }
    }
}
