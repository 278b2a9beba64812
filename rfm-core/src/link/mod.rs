//! The link: one node coupled to one peer through a device, step by step.
//!
//! Frame indices: the frame published at start is index 0; step k (k = 0, 1, …)
//! publishes index k + 1. In lockstep with lag L, step k returns exactly each
//! waited-for peer's frame of its step j = floor((k − L)·T_self / T_peer) (index
//! j + 1; index 0, its initial values, while k < L): with equal periods, or
//! none, its step k − L ([`rfm_interface::rates`]). Peers the node runs free
//! of (free mode, or its interface's `free`) give their newest frame.
//!
//! Reflective memory (and a `shm:` object) keeps its contents across runs, so a
//! reader may find frames a dead session left behind. Every liveness question is
//! therefore decided by a heartbeat that each open link beats from a thread of its
//! own ([`liveness`]): who may take a slot (the claim, `claim/`: Fischer's timed
//! mutual exclusion, settling [`CLAIM_SETTLE`]), and which peer session's frames
//! may be taken (the handshake, `handshake.rs`). [`Node`] holds the protocol as non-blocking
//! steps (claiming and publishing; its [`Exchange`] reads the peers); [`Link`]
//! drives it with the real clock, the heartbeat thread and a wait strategy, and
//! each step hands back a [`StepReport`] of what it saw. The caller owns the
//! frame a step publishes and lends it to each step.

use std::time::{Duration, Instant};

mod attitude;
#[cfg(test)]
mod book_table;
mod claim;
mod clock;
mod compat;
mod config;
mod coupling;
mod error;
mod exchange;
mod foreign_peer;
mod handshake;
pub mod liveness;
mod lookout;
mod memory;
mod node;
pub mod observer;
pub mod ownership;
mod pace;
mod peer;
mod replay;
mod rings;
pub mod stats;

pub use attitude::{AttitudeLink, PeerSample, Sample};
pub use claim::{BRIDGE_SETTLE, CLAIM_SETTLE};
pub use config::{CardReads, LinkConfig, DMA_READ_FROM};
pub use coupling::Link;
pub use error::{Foreign, Host, Late, LeftBy, LinkError, OpenError, PublishError, StartError};
pub use exchange::{Exchange, MasterStep, LATE_WARNING};
pub use foreign_peer::{ForeignCounts, ForeignPeer};
pub use handshake::WATCH_INTERVAL;
pub use node::{Node, StartPoll};
pub use observer::RingStats;
pub use pace::PACE_SLACK;
pub use peer::Peer;
pub use rings::{ring_state, RingState, RingsReport};

/// How the waits of a link on network interrupts (waitStrategy = event) ended:
/// woken by an interrupt, or at the end of a 10 ms slice without one (the
/// polling fallback, which alone would still couple, 10 ms a step slower).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventWaits {
    pub woken: u64,
    pub timed_out: u64,
}

/// What a step (or the start) saw beyond the peers' frames, which stay in
/// place in [`Link::peers`]: all a master's outputs need of it, in one value
/// the caller keeps until the next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepReport {
    /// When the step read the peers (lockstep: when its wait began): the age of a
    /// frame taken then, and whether its writer is alive, are judged from here.
    pub read_at: Instant,
    /// How long the step waited for the peers.
    pub waited: Duration,
    /// The wall clock (ns since 1970) when the step last read its clock (after
    /// publishing and, while waiting, every 64 polls): a recording stamps the
    /// step's frames with it instead of reading the time again.
    pub wall_ns: u64,
    /// `device = replay:PATH`: the steps so far whose payload differed from the
    /// recording's (`None` when not replaying).
    pub replay_divergence: Option<u64>,
}
