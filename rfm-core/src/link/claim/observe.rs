//! Step 1 of a claim, observing: the other areas described over the
//! coupling's watched until each is judged (by `ownership`'s one verdict),
//! and this area's own holder until it is gone.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use super::super::ownership::block::Words;
use super::super::ownership::DEAD_AFTER;
use super::super::ownership::{sweep, AreaWatch, Holder, Verdict, Watched, Whose};
use super::{ClaimPoll, Claimant, Leftovers, Refusal};
use rfm_interface::Found;
use rfm_memory::{Region, RegionError};

/// One described area over the coupling, watched during the claim.
#[derive(Debug, Clone)]
pub(super) struct Other {
    pub(super) found: Found,
    pub(super) watch: AreaWatch,
    pub(super) whose: Whose,
    /// It overlaps this node's own area (not only another of the coupling's).
    pub(super) over_mine: bool,
}

/// Step 1: what is watched until the area is free.
#[derive(Debug, Clone)]
pub(super) struct Observation {
    /// The other areas described over the coupling's, not yet judged.
    pub(super) others: Vec<Other>,
    /// This node's own area's holder.
    pub(super) own: AreaWatch,
    pub(super) since: Instant,
    /// Seed layout: the packet id first seen, and whether it has moved.
    pub(super) packet: Option<u64>,
    pub(super) packet_moved: bool,
}

impl Observation {
    /// One look at `now` (`own` is this node's area, `packet` its seed packet
    /// id): `Break` with what the claim must do (refuse, or poll again), or
    /// `Continue` when the area is free to announce. A live node of this
    /// interface from another file over this area spares its leftovers.
    pub(super) fn look(
        &mut self,
        claimant: &Claimant,
        own: &Region,
        packet: Option<u64>,
        leftovers: &mut Leftovers,
        now: Instant,
    ) -> Result<ControlFlow<ClaimPoll>, RegionError> {
        let pending = match self.judge_others(claimant, leftovers, now)? {
            ControlFlow::Break(poll) => return Ok(ControlFlow::Break(poll)),
            ControlFlow::Continue(pending) => pending,
        };
        self.packet_moved |= packet != self.packet;
        let holder = self.own.judge(own, now)?;
        let silent = now.saturating_duration_since(self.since);
        let holder_gone = match holder {
            Holder::Free | Holder::Closed { .. } | Holder::Dead { .. } => true,
            Holder::Live {
                owner,
                last,
                remote,
            } => {
                return Ok(ControlFlow::Break(ClaimPoll::Refused(Refusal::Held {
                    owner: Some(owner),
                    ago: now.saturating_duration_since(last),
                    remote,
                })))
            }
            Holder::Unproven { .. } => false,
        };
        if self.packet_moved {
            return Ok(ControlFlow::Break(ClaimPoll::Refused(Refusal::Held {
                owner: Words::read(own)?.owner,
                ago: Duration::ZERO,
                remote: None,
            })));
        }
        // An article program's packet (no owner) must stay still for the bound.
        let packet_quiet = self.packet.is_none() || holder != Holder::Free || silent >= DEAD_AFTER;
        Ok(if pending || !holder_gone || !packet_quiet {
            ControlFlow::Break(ClaimPoll::Pending)
        } else {
            ControlFlow::Continue(())
        })
    }

    /// Judges the other areas watched at `now`, dropping those decided: a live
    /// one of another interface refuses the claim (`Break`); `Continue` says
    /// whether one is still unproven.
    pub(super) fn judge_others(
        &mut self,
        claimant: &Claimant,
        leftovers: &mut Leftovers,
        now: Instant,
    ) -> Result<ControlFlow<ClaimPoll, bool>, RegionError> {
        sweep(&claimant.region, &mut self.others, now, |w, verdict| {
            let Verdict::Its(Holder::Live { last, remote, .. }) = verdict else {
                // Closed, dead, free, or another session's since (a claim of
                // that area after this observation began, which the verify
                // weighs).
                return Ok(ControlFlow::Continue(()));
            };
            match w.whose {
                Whose::OtherFile if w.over_mine => *leftovers = Leftovers::Spare,
                Whose::OtherFile | Whose::ThisCoupling => {}
                Whose::OtherInterface => {
                    return Ok(ControlFlow::Break(ClaimPoll::Refused(Refusal::Foreign {
                        found: Box::new(w.found),
                        ago: now.saturating_duration_since(last),
                        remote,
                    })))
                }
            }
            Ok(ControlFlow::Continue(()))
        })
    }
}

impl Watched for Other {
    fn found(&self) -> &Found {
        &self.found
    }

    fn watch(&mut self) -> &mut AreaWatch {
        &mut self.watch
    }
}
