//! A single card's word on a coupling that failed: a node whose own board
//! lost its ring (an open fibre into it, the board before it unpowered) sees
//! every peer fall silent, and would blame them: asked at the failure, the
//! card says what it is. A node whose board holds the ring names the peer's
//! board as a cause beside its process. (A redundant device's cards are
//! watched all along instead: see `ring_watch.rs`.)
//!
//! The card is asked only when a step has already failed: each look is a
//! driver call (the ring check sends a packet round the ring).

use super::LinkError;
use crate::{Device, DeviceError};

/// What `card` says of its ring: `None` while it holds it (or it is no
/// card), else its faults in words. The one rule for "the ring is open at
/// this board", which `rfmctl watch` shows too.
pub fn open_at(card: &Device) -> Option<String> {
    if !matches!(card.spec(), crate::DeviceSpec::Rfm2g { .. }) {
        return None;
    }
    let lcsr = card.lcsr().ok();
    let check = card.check_ring();
    let lost = lcsr.is_some_and(|l| !l.ring_ok());
    let failed = matches!(&check, Err(DeviceError::Rfm2g(e)) if e.name == "RFM2G_LINK_TEST_FAIL");
    if !lost && !failed {
        return None;
    }
    let mut state = Vec::new();
    if let Some(l) = lcsr.filter(|_| lost) {
        state.push(l.to_string());
    }
    if failed {
        state.push("RFM2gCheckRingCont fails".to_owned());
    }
    Some(state.join("; "))
}

/// `e`, the error a step of the link on `card` ended with, as the card
/// explains it.
pub(super) fn explain(card: &Device, e: LinkError) -> LinkError {
    let saw = |peer: &str, slot: u8, what: String| format!("node `{peer}` (slot {slot}) {what}");
    let (device, saw) = match &e {
        LinkError::Timeout {
            device,
            peer,
            peer_slot,
            step,
            waited,
            ..
        } => (
            device.clone(),
            saw(
                peer,
                *peer_slot,
                format!("gave no frame for step {step} within {waited:.3?}"),
            ),
        ),
        LinkError::PeerDead {
            device,
            peer,
            peer_slot,
            step,
            silent,
            ..
        } => (
            device.clone(),
            saw(
                peer,
                *peer_slot,
                format!("showed no heartbeat for {silent:.3?} at step {step}"),
            ),
        ),
        _ => return e,
    };
    match open_at(card) {
        Some(state) => LinkError::RingOpenHere {
            device,
            state,
            saw,
            cause: Box::new(e),
        },
        None => peer_off_ring(e),
    }
}

/// The ring is whole at this board: the peer's process, or its board, is
/// what went quiet.
fn peer_off_ring(mut e: LinkError) -> LinkError {
    const ALSO: &str = ", or its board is off the ring (this board holds the ring; \
                        `rfmctl ring-check` on the peer's PC tells)";
    match &mut e {
        LinkError::PeerDead { also, .. } => also.push_str(ALSO),
        LinkError::Timeout { why, .. } if why.contains("stopped beating") => why.push_str(ALSO),
        _ => {}
    }
    e
}
