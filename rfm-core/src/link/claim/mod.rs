//! Taking an area: only when whatever holds it (or overlaps it) is gone, and
//! never by two claimants at once ([`super::ownership`] states the protocol).
//!
//! Reflective memory has no compare-and-swap across the ring, so the claim is
//! Fischer's timed mutual exclusion (Lamport, "A fast mutual exclusion
//! algorithm", 1987, credits it to Fischer), over the owner word for claimants
//! of one slot and over the announced descriptors for claimants of
//! overlapping areas of other layouts:
//!
//! 1. **Observing**: the descriptors over the coupling's areas, and this
//!    area's own words, are watched. A live holder of another interface over
//!    any of the coupling's areas, or a live holder of this slot, refuses the
//!    claim, naming it; closed ones are left over at once, silent ones after
//!    [`super::ownership::DEAD_AFTER`]. (Seed layout: an article program beats no heartbeat, so
//!    a packet id that moves also holds the slot.)
//! 2. **Announcing**: in the same poll that found the area free, the claimant
//!    writes its descriptor and then its token into the owner word, and starts
//!    beating.
//! 3. **Settling**: it waits [`CLAIM_SETTLE`] (no time for `loopback:` memory
//!    that only this copy of the library reaches, whose claims poll under one
//!    lock), and [`BRIDGE_SETTLE`] more once a bridge acknowledged the claim:
//!    every claim that read the area free before this announce has announced.
//! 4. **Verifying**: the owner word must still hold this token (of two
//!    claimants of one slot, the last writer wins), and no claim announced over
//!    this area since the observation may hold a lower token (of two claimants
//!    of overlapping areas, the lower token wins; both see both).
//!
//! Two claimants both win only if one of them is descheduled for longer than
//! the settle between the read that found the area free and its announce. The
//! loser's heartbeat then finds another token in the owner word at its next
//! beat and the link fails with [`super::LinkError::SlotTakenOver`]: never two
//! silent writers of one slot.

mod observe;
mod settle;

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use super::liveness::TakenBy;
use super::ownership::block::{self, Words};
use super::ownership::{self, AreaWatch, Verdict, Whose};
use observe::{Observation, Other};
use rfm_frames::area::window;
use rfm_frames::session::Token;
use rfm_interface::{discover, Found, Interface, MemoryMap};
use rfm_memory::{Region, RegionError};
use settle::Settling;

/// How long a claimant waits between announcing and verifying: far above the
/// ring's propagation delay (microseconds), a read-to-write gap of one poll,
/// and the time a bridge on host memory takes to see (and acknowledge) the
/// claim (it scans every 10 ms).
pub const CLAIM_SETTLE: Duration = Duration::from_millis(40);

/// How much longer a claim a bridge acknowledged settles: the bridge sends it
/// to the other hosts, and theirs reach this memory, well within it.
pub const BRIDGE_SETTLE: Duration = Duration::from_millis(250);

/// What the claimant needs to know of itself and the memory.
#[derive(Debug, Clone)]
pub(crate) struct Claimant {
    /// The whole coupling memory, as this node maps it.
    pub region: Region,
    pub map: MemoryMap,
    /// This node's index in the interface, and its area.
    pub me: usize,
    /// This node's descriptor, encoded with its token and padded.
    pub described: Vec<u8>,
    pub epoch: u64,
    /// [`CLAIM_SETTLE`], or zero where every claimant polls under one lock.
    pub settle: Duration,
}

/// Where a claim stands.
#[derive(Debug, Clone)]
enum Phase {
    Observing(Observation),
    Settling(Settling),
    Won,
}

/// A claim in progress.
#[derive(Debug, Clone)]
pub(crate) struct Claim {
    phase: Phase,
    /// Announced claims seen when the observation began (left over or live):
    /// they are not competitors at the verify.
    seen: Vec<(u64, Option<Token>)>,
    /// A bridge watches this memory: an area held from another host, or a
    /// claim a bridge acknowledged, was there when the observation began.
    /// The claim then waits up to [`BRIDGE_SETTLE`] for its own
    /// acknowledgement (a bridge slowed by load may see it after
    /// [`CLAIM_SETTLE`]) before it counts as seen by nobody.
    bridged_memory: bool,
    /// What the won claim does with what the area holds.
    leftovers: Leftovers,
}

/// What a won claim does with what its area holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leftovers {
    /// Clears the ring: what an earlier run left goes before frame 0.
    Clear,
    /// Leaves it: a live node of this interface from another file overlaps
    /// the area, and clearing would erase its words and descriptor (neither
    /// node could then learn of the other; their first exchange names both).
    Spare,
}

/// What one poll of a claim decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClaimPoll {
    /// Keep polling.
    Pending,
    /// The area was free: the claim is announced; start beating now.
    Announced,
    /// The claim held: the area is this session's, and what it holds is
    /// cleared or spared.
    Won(Leftovers),
    /// The claim is refused.
    Refused(Refusal),
}

/// Why a claim is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A live holder of this slot refuses the claim; its beat last moved `ago`
    /// before (zero when an article program's packet id moved).
    Held {
        owner: Option<Token>,
        ago: Duration,
        remote: Option<u32>,
    },
    /// Another claimant of this area at the same moment won.
    Contended {
        owner: TakenBy,
        remote: Option<u32>,
        winner: Option<Box<Found>>,
    },
    /// A live node of another interface overlaps an area of this coupling.
    Foreign {
        found: Box<Found>,
        ago: Duration,
        remote: Option<u32>,
    },
}

impl Claim {
    /// A claim of `claimant`'s area observed from `now`; `packet` is the seed
    /// packet id in it (seed layout only).
    pub(crate) fn new(
        claimant: &Claimant,
        interface: &Interface,
        fingerprint: u64,
        packet: Option<u64>,
        now: Instant,
    ) -> Result<Claim, RegionError> {
        let mine = claimant.map.area(claimant.me);
        let mut others = Vec::new();
        let mut seen = Vec::new();
        let mut bridged_memory = false;
        for found in discover(&claimant.region)? {
            let area = window(&claimant.region, &found.area)?;
            bridged_memory |= block::bridge_seen(&area)?;
            if !ownership::is_holders(&claimant.region, &found)? {
                continue;
            }
            seen.push((found.area.offset, found.descriptor.session));
            let whose = Whose::of(&found, interface, fingerprint, &claimant.map);
            let over_mine = found.area.overlaps(mine);
            let over_ours = claimant.map.areas.iter().any(|a| a.overlaps(&found.area));
            // A peer of this coupling is the exchange's business, this slot's
            // own holder the owner word's; kin elsewhere, the lookout's.
            let relevant = match whose {
                Whose::ThisCoupling => false,
                Whose::OtherFile => over_mine && found.area.offset != mine.offset,
                Whose::OtherInterface => over_ours,
            };
            if relevant {
                let (watch, _) = AreaWatch::start(&window(&claimant.region, &found.area)?, now)?;
                others.push(Other {
                    found,
                    watch,
                    whose,
                    over_mine,
                });
            }
        }
        let own = own_window(claimant)?;
        Ok(Claim {
            phase: Phase::Observing(Observation {
                others,
                own: AreaWatch::start(&own, now)?.0,
                since: now,
                packet,
                packet_moved: false,
            }),
            seen,
            bridged_memory,
            leftovers: Leftovers::Clear,
        })
    }

    /// One step of the claim at `now`; `packet` is the seed packet id in this
    /// node's area (seed layout only).
    pub(crate) fn poll(
        &mut self,
        claimant: &Claimant,
        interface: &Interface,
        fingerprint: u64,
        packet: Option<u64>,
        now: Instant,
    ) -> Result<ClaimPoll, RegionError> {
        let own = own_window(claimant)?;
        match &mut self.phase {
            Phase::Observing(observation) => {
                let look = observation.look(claimant, &own, packet, &mut self.leftovers, now)?;
                if let ControlFlow::Break(poll) = look {
                    return Ok(poll);
                }
                let mut before = [None; 2];
                for (ring, owner) in block::owners(&own)? {
                    before[ring.index()] = owner;
                }
                block::announce(&own, &claimant.described, claimant.epoch)?;
                self.phase = Phase::Settling(Settling {
                    at: now,
                    bridged: None,
                    before,
                });
                Ok(ClaimPoll::Announced)
            }
            Phase::Settling(settling) => {
                let wait = settling.wait(claimant, &own, self.bridged_memory, now)?;
                if let ControlFlow::Break(poll) = wait {
                    return Ok(poll);
                }
                let rival = self.rival(claimant, interface, fingerprint)?;
                // A rival is its area's holder (`is_holders`): of a session.
                if let Some(winner) = rival {
                    let owner = TakenBy(winner.descriptor.session);
                    let area = window(&claimant.region, &winner.area)?;
                    return Ok(ClaimPoll::Refused(Refusal::Contended {
                        owner,
                        remote: block::remote_holder(&area)?,
                        winner: Some(Box::new(winner)),
                    }));
                }
                self.phase = Phase::Won;
                Ok(ClaimPoll::Won(self.leftovers))
            }
            Phase::Won => Ok(ClaimPoll::Won(self.leftovers)),
        }
    }

    /// The owner word on each ring before the announce, once announced.
    pub(crate) fn before(&self) -> Option<[Option<Token>; 2]> {
        match &self.phase {
            Phase::Settling(s) => Some(s.before()),
            Phase::Observing(_) | Phase::Won => None,
        }
    }

    /// Whether the claim was announced (its owner word written), so that a
    /// close must mark it.
    pub(crate) fn announced(&self) -> bool {
        !matches!(self.phase, Phase::Observing(_))
    }

    /// A claim announced over this node's area since the observation began
    /// that wins over this one: another host's (mirrored), or one of a lower
    /// token. Claims of this interface from another file are spared instead.
    fn rival(
        &mut self,
        claimant: &Claimant,
        interface: &Interface,
        fingerprint: u64,
    ) -> Result<Option<Found>, RegionError> {
        let mine = claimant.map.area(claimant.me);
        let token = Token::of(claimant.epoch);
        let mut rival: Option<Found> = None;
        for found in discover(&claimant.region)? {
            let key = (found.area.offset, found.descriptor.session);
            if Verdict::of(found.descriptor.session, token).is_its()
                || !found.area.overlaps(mine)
                || self.seen.contains(&key)
                || !ownership::is_holders(&claimant.region, &found)?
                || Words::read(&window(&claimant.region, &found.area)?)?.is_closed()
            {
                continue;
            }
            if Whose::of(&found, interface, fingerprint, &claimant.map) == Whose::OtherFile {
                self.leftovers = Leftovers::Spare;
                continue;
            }
            // Another host's claim is here because its bridge found no
            // earlier claim of this host announced: it wins here as there.
            let area = window(&claimant.region, &found.area)?;
            if block::remote_holder(&area)?.is_some() {
                return Ok(Some(found));
            }
            // Of two claims, the lower token wins (a descriptor of no
            // session is no claim).
            let session = found.descriptor.session;
            if session.is_some_and(|s| s < token)
                && rival
                    .as_ref()
                    .is_none_or(|r| session < r.descriptor.session)
            {
                rival = Some(found);
            }
        }
        Ok(rival)
    }
}

/// The described holder of an area over this node's, if its descriptor is
/// its own (the winner of a contended claim, once it has written it).
fn holder_of(claimant: &Claimant) -> Result<Option<Found>, RegionError> {
    let mine = claimant.map.area(claimant.me);
    for found in discover(&claimant.region)? {
        if found.area.overlaps(mine) && ownership::is_holders(&claimant.region, &found)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

fn own_window(claimant: &Claimant) -> Result<Region, RegionError> {
    window(&claimant.region, claimant.map.area(claimant.me))
}
