//! Steps 3 and 4 of a claim, settling and verifying: the wait after the
//! announce, and the owner word on each ring weighed against what it held
//! before.

use std::ops::ControlFlow;
use std::time::Instant;

use super::super::liveness::TakenBy;
use super::super::ownership::{block, RingOwner};
use super::{holder_of, ClaimPoll, Claimant, Refusal, BRIDGE_SETTLE};
use rfm_frames::session::Token;
use rfm_memory::{Region, RegionError};

/// Step 3: the wait between the announce and the verify.
#[derive(Debug, Clone)]
pub(super) struct Settling {
    pub(super) at: Instant,
    /// When a bridge's acknowledgement was first seen.
    pub(super) bridged: Option<Instant>,
    /// The owner word on each ring just before the announce: a ring that
    /// still shows it missed the announce (cut at this board), which is no
    /// other claimant's doing.
    pub(super) before: [Option<Token>; 2],
}

impl Settling {
    /// The settle at `now` (`own` is this node's area; `bridged_memory`: a
    /// bridge watches the memory): `Break` when another claimant's token took
    /// the owner word or the settle is not over, `Continue` when the claim is
    /// to be verified.
    pub(super) fn wait(
        &mut self,
        claimant: &Claimant,
        own: &Region,
        bridged_memory: bool,
        now: Instant,
    ) -> Result<ControlFlow<ClaimPoll>, RegionError> {
        let token = Token::of(claimant.epoch);
        if let Some(owner) = self.rival_token(own, token)? {
            return Ok(ControlFlow::Break(ClaimPoll::Refused(Refusal::Contended {
                owner,
                remote: block::remote_holder(own)?,
                winner: holder_of(claimant)?.map(Box::new),
            })));
        }
        if self.bridged.is_none() && block::acknowledged(own, token)? {
            self.bridged = Some(now);
        }
        let until = match self.bridged {
            Some(b) => (self.at + claimant.settle).max(b + BRIDGE_SETTLE),
            None if bridged_memory => self.at + claimant.settle.max(BRIDGE_SETTLE),
            None => self.at + claimant.settle,
        };
        Ok(if now < until {
            ControlFlow::Break(ClaimPoll::Pending)
        } else {
            ControlFlow::Continue(())
        })
    }
}

impl Settling {
    /// Another claimant's token in this area's owner word, on either ring
    /// (of two claimants of one slot, each ring's last writer wins there;
    /// where the rings' last writers differ, both claimants are refused and
    /// neither writes over the other). A ring that shows what it held before
    /// the announce missed it: the claim stands, and the heartbeat writes it
    /// there again once won. No ring showing this token is a rival's win.
    pub(super) fn rival_token(
        &self,
        own: &Region,
        token: Token,
    ) -> Result<Option<TakenBy>, RegionError> {
        let mut shown = false;
        let mut stale = None;
        for (ring, owner) in block::owners(own)? {
            match RingOwner::of(owner, token, Some(self.before[ring.index()])) {
                RingOwner::Its => shown = true,
                RingOwner::Missed(owner) => stale = Some(TakenBy(owner)),
                RingOwner::Other(owner) => return Ok(Some(TakenBy(owner))),
            }
        }
        Ok(if shown { None } else { stale })
    }

    /// The owner word on each ring before the announce.
    pub(crate) fn before(&self) -> [Option<Token>; 2] {
        self.before
    }
}
