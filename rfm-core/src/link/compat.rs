//! Is the peer speaking the same protocol? Checked on the first frame of each peer
//! session, and whenever the peer slot holds nothing this node can read.

use std::sync::atomic::Ordering::Relaxed;

use super::{LinkConfig, LinkError};
use crate::frame::framed::{self, Frame, SyncMode};
use crate::frame::{seed, FrameError, RING_DEPTH};
use crate::region::{Region, RegionError};
use crate::slot::ReadError;

fn incompatible(c: &LinkConfig, what: String) -> LinkError {
    LinkError::Incompatible {
        device: c.device.clone(),
        peer_slot: c.peer_slot,
        what,
    }
}

/// The first frame of a live peer session must agree on slot, mode and lag.
pub(crate) fn check_frame(c: &LinkConfig, f: &Frame) -> Result<(), LinkError> {
    let what = if f.writer_slot != c.peer_slot {
        format!(
            "a frame in its slot says it was written by slot {}: two nodes use the same nodeSlot",
            f.writer_slot
        )
    } else if f.mode != c.mode {
        format!(
            "it runs syncMode {:?}, this node {:?}: both must use the same",
            f.mode, c.mode
        )
    } else if c.mode == SyncMode::Lockstep && f.lag != c.lag {
        format!(
            "it runs lag {}, this node lag {}: both must use the same",
            f.lag, c.lag
        )
    } else {
        return Ok(());
    };
    Err(incompatible(c, what))
}

/// A frame of another format version shows as a complete frame that does not decode.
pub(crate) fn check_readable(c: &LinkConfig, err: &ReadError) -> Result<(), LinkError> {
    if let ReadError::Unreadable { rejections, .. } = err {
        if let Some(FrameError::BadVersion { found, expected }) = rejections.last {
            return Err(incompatible(
                c,
                format!(
                    "it writes frame format version {found}, this build reads version {expected}"
                ),
            ));
        }
    }
    Ok(())
}

/// Whether some ring entry of `slot` holds a framed frame's magic.
fn holds_framed(slot: &Region) -> Result<bool, RegionError> {
    for i in 0..RING_DEPTH as u64 {
        let word = slot.load_u32(framed::entry_offset(i) + 8, Relaxed)?;
        if u32::from_le(word) == framed::MAGIC {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A peer writing the other layout leaves that layout's signature in its slot.
///
/// The seed header alone is not enough: a framed writer's head word (its step
/// number) passes through 0x55AA55AA too. A slot is taken for a seed writer's only
/// when it has the seed header and no framed frame in its ring.
pub(crate) fn check_layout(
    c: &LinkConfig,
    peer: &Region,
    reading: super::Layout,
) -> Result<(), LinkError> {
    let found = match reading {
        super::Layout::Framed => {
            let word = peer.load_u32(0, Relaxed)?;
            (u32::from_le(word) == seed::MAGIC && !holds_framed(peer)?)
                .then_some(("seed (the article's FlightData)", "framed"))
        }
        super::Layout::Seed => holds_framed(peer)?.then_some(("framed", "seed")),
    };
    match found {
        Some((theirs, ours)) => Err(incompatible(
            c,
            format!("it uses layout {theirs}, this node layout {ours}"),
        )),
        None => Ok(()),
    }
}
