//! How a node reads one peer: in lockstep at the ratio of their periods, or
//! the newest frame there is.

use rfm_frames::frame::framed::SyncMode;
use rfm_interface::{Interface, StepRatio};

use crate::link::LinkConfig;

/// How a node reads one peer: waiting for the frame its step needs, or taking
/// the newest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rate {
    /// Lockstep: step k takes the peer's frame [`StepRatio::frame_needed`].
    Lockstep(StepRatio),
    /// The newest frame there is (free mode, or a peer in the node's `free`).
    Newest,
}

impl Rate {
    /// How node `me` reads node `peer`: in lockstep at the ratio of their
    /// periods, unless it runs free or its interface lists the peer in its `free`.
    pub(crate) fn of(
        config: &LinkConfig,
        interface: &Interface,
        me: usize,
        peer: usize,
    ) -> Result<Rate, crate::link::OpenError> {
        let (mine, theirs) = (&interface.nodes[me], &interface.nodes[peer]);
        if config.settings.mode == SyncMode::Free || (peer != me && !mine.waits_for(peer)) {
            return Ok(Rate::Newest);
        }
        let ratio = match (mine.period, theirs.period) {
            (Some(a), Some(b)) => StepRatio::of(a, b).ok_or_else(|| {
                crate::link::error::open_config(
                    "interface",
                    &interface.name,
                    format!(
                        "the periods of `{}` and `{}` have no ratio that fits 64 bits",
                        mine.name, theirs.name
                    ),
                )
            })?,
            _ => StepRatio::ONE,
        };
        Ok(Rate::Lockstep(ratio))
    }

    /// How the handshake treats the peer's sessions: a lockstep reader cannot
    /// go on across a restart, a free one rebinds.
    pub(super) fn mode(self) -> SyncMode {
        match self {
            Rate::Lockstep(_) => SyncMode::Lockstep,
            Rate::Newest => SyncMode::Free,
        }
    }
}
