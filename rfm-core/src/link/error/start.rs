//! Why starting a link failed: only what starting can do (the claim
//! refused, a thread not started, frame 0 not published). What a step can
//! do besides is [`super::LinkError`]'s.

use std::time::Duration;

use super::{owner_text, Foreign, Host};
use crate::link::liveness::TakenBy;
use crate::link::ownership::DEAD_AFTER;
use rfm_frames::session::Token;
use rfm_memory::{DeviceError, RegionError};

/// Why [`crate::link::Link::start`] (the claim, the heartbeat, frame 0)
/// failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(
        "{device}: slot {slot} is held by another running node (session token {}{host}, its \
         heartbeat last moved {} ms ago). Nothing was written: give every node its own \
         nodeSlot; a slot is taken over only once its heartbeat has stopped for {} ms",
        owner_text(*owner), last_beat.as_millis(), DEAD_AFTER.as_millis()
    )]
    SlotInUse {
        device: String,
        slot: u8,
        /// `None`: a program without liveness words, whose packet moved.
        owner: Option<Token>,
        last_beat: Duration,
        host: Host,
    },
    #[error(
        "{device}: slot {slot} was claimed at the same moment by another node (session token \
         {}{winner}{host}), which holds it now: this node withdrew its claim. Give every node \
         its own nodeSlot, or the two couplings different devices or regionOffsets",
        owner_text(owner.0)
    )]
    SlotContended {
        device: String,
        slot: u8,
        owner: TakenBy,
        /// The winner as its descriptor names it (empty when not yet written).
        winner: String,
        host: Host,
    },
    #[error("could not start the heartbeat thread: {0}")]
    Heartbeat(#[source] std::io::Error),
    #[error("{device}: {holder}")]
    Foreign {
        device: String,
        /// The live node over this coupling's area, and where.
        holder: Box<Foreign>,
    },
    #[error(transparent)]
    Publish(#[from] PublishError),
    #[error(transparent)]
    Region(#[from] RegionError),
    /// The card's network interrupts (`waitStrategy = event`) failed to send
    /// frame 0's.
    #[error("network interrupts (waitStrategy = event): {0}")]
    Events(#[source] DeviceError),
}

/// Why publishing this node's frame (at the start, or at a step) failed.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The frame lent is not of this node's payload.
    #[error(
        "frame of a {len}-byte payload: this node publishes payloads of {expected} bytes: make \
         its frame with FrameBuf::new(payload_len)"
    )]
    FrameSize { len: usize, expected: usize },
    #[error(transparent)]
    Region(#[from] RegionError),
}
