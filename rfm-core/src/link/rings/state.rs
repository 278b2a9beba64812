//! A single card's word on a coupling that failed: a node whose own board
//! lost its ring (an open fibre into it, the board before it unpowered) sees
//! every peer fall silent, and would blame them: asked at the failure, the
//! card says what it is. A node whose board holds the ring names the peer's
//! board as a cause beside its process. (A redundant device's cards are
//! watched all along instead: see `watch.rs`.)
//!
//! The card is asked only when a step has already failed: each look is a
//! driver call (the ring check sends a packet round the ring).

use crate::link::{Late, LinkError};
use rfm_memory::{Device, DeviceError};

/// What a card says of its ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RingState {
    /// Its receiver holds sync and a packet sent round comes back (or the
    /// device is no card).
    Whole,
    /// Its receiver lost the ring (LCSR): the break is on the fibre into
    /// this board, or the board before it is off. The card's words.
    OpenHere(String),
    /// Its receiver holds sync, but a packet sent round did not come back:
    /// the ring is open at another board, whose receiver lost sync.
    OpenElsewhere(String),
}

/// What `card` says of its ring, asked now (two driver calls). The one rule
/// for where a ring is open, which `rfmctl watch` shows too.
pub fn ring_state(card: &Device) -> RingState {
    if !matches!(card.spec(), rfm_memory::DeviceSpec::Rfm2g { .. }) {
        return RingState::Whole;
    }
    let lcsr = card.lcsr().ok();
    let failed = matches!(card.check_ring(),
        Err(DeviceError::Rfm2g(e)) if e.name == "RFM2G_LINK_TEST_FAIL");
    let check = if failed {
        "; RFM2gCheckRingCont fails"
    } else {
        ""
    };
    match lcsr {
        Some(l) if !l.ring_ok() => RingState::OpenHere(format!("{l}{check}")),
        _ if failed => RingState::OpenElsewhere(format!(
            "{}RFM2gCheckRingCont fails",
            lcsr.map_or(String::new(), |l| format!("{l}; "))
        )),
        _ => RingState::Whole,
    }
}

impl RingState {
    /// Where the ring is open, with the card's words; `None` while whole.
    pub fn describe(&self) -> Option<String> {
        match self {
            RingState::Whole => None,
            RingState::OpenHere(state) => Some(format!("the ring is open at this board ({state})")),
            RingState::OpenElsewhere(state) => Some(format!(
                "the ring is open at another board ({state}, while this board's receiver holds \
                 sync)"
            )),
        }
    }

    /// What to check; `None` while whole.
    pub fn fix(&self) -> Option<&'static str> {
        match self {
            RingState::Whole => None,
            RingState::OpenHere(_) => Some(
                "check the fibre into this board and the board before it on the ring (powered, \
                 its fibre out lit), then rfmctl ring-check",
            ),
            RingState::OpenElsewhere(_) => Some(
                "rfmctl ring-check on each PC: the board whose receiver lost sync is just after \
                 the break; check the fibre into it and the board before it",
            ),
        }
    }
}

/// `e`, the error a step of the link on `card` ended with, as the card
/// explains it.
pub(crate) fn explain(card: &Device, e: LinkError) -> LinkError {
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
    let also = match ring_state(card) {
        RingState::OpenHere(state) => {
            return LinkError::RingOpenHere {
                device,
                state,
                saw,
                cause: Box::new(e),
            }
        }
        ref open @ RingState::OpenElsewhere(_) => format!(
            ", or its board is off the ring: {} ({})",
            open.describe().unwrap_or_default(),
            open.fix().unwrap_or_default()
        ),
        RingState::Whole => ", or its board is off the ring (this board holds the ring; \
                              `rfmctl ring-check` on the peer's PC tells)"
            .to_owned(),
    };
    peer_off_ring(e, &also)
}

/// The ring is not open at this board: the peer's process, or its board,
/// is what went quiet; `also` says which the card can tell.
fn peer_off_ring(mut e: LinkError, also: &str) -> LinkError {
    match &mut e {
        LinkError::PeerDead { also: more, .. } => more.push_str(also),
        LinkError::Timeout {
            why, also: more, ..
        } if matches!(**why, Late::Silent { .. }) => more.push_str(also),
        _ => {}
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn timeout(why: Late) -> LinkError {
        LinkError::Timeout {
            device: "/dev/rfm2g0".into(),
            node_slot: 0,
            peer: "visual".into(),
            peer_slot: 1,
            step: 7,
            waited: Duration::from_secs(1),
            why: Box::new(why),
            also: String::new(),
        }
    }

    /// The ring explains a timeout only when the peer stopped beating (a
    /// decision on the reason's variant, not its words); a paused peer's
    /// timeout is the master's, not the ring's.
    #[test]
    fn only_a_peer_that_stopped_beating_is_explained_by_the_ring() {
        let silent = Late::Silent {
            silent: Duration::from_millis(300),
        };
        let LinkError::Timeout { also, .. } = peer_off_ring(timeout(silent), "; off the ring")
        else {
            unreachable!()
        };
        assert_eq!(also, "; off the ring");
        let LinkError::Timeout { also, .. } = peer_off_ring(timeout(Late::Paused), "; off") else {
            unreachable!()
        };
        assert_eq!(also, "");
    }
}
