//! One node's side of the protocol, without threads, sleeps or clocks of its own.
//!
//! [`Node`] does everything a link does in single, non-blocking steps, each given
//! the time `now`: claim the slot, publish, poll the peer for a step, read it in
//! free mode. [`super::Link`] drives it with the real clock, a heartbeat thread and
//! a wait strategy; the handshake model test drives it with a virtual clock and
//! beats by hand, which makes every interleaving of two nodes reproducible.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::claim::{Claim, ClaimPoll};
use super::compat::Expected;
use super::exchange::Exchange;
use super::liveness::{self, token, Beater, Words};
use super::peer::{Peer, Rate};
use super::strangers::{self, Judged, Stranger};
use super::{Layout, LinkConfig, LinkError};
use crate::area::DESCRIPTOR_OFFSET;
use crate::frame::framed::{FrameBuf, Header, SyncMode};
use crate::frame::seed;
use crate::interface::Found;
use crate::interface::{descriptor, Interface, MemoryMap, StepRatio};
use crate::region::Region;
use crate::slot::{FramedWriter, Ring, SeedReader, SeedWriter};

enum Writer {
    Framed(FramedWriter),
    Seed {
        writer: SeedWriter,
        /// This node's own area as a seed reader: an article program writing
        /// there holds it while the packet id moves.
        own: SeedReader,
    },
}

impl Writer {
    fn own_packet(&self) -> Option<u64> {
        match self {
            Writer::Seed { own, .. } => own.read().ok().map(|p| p.packet_id),
            Writer::Framed(_) => None,
        }
    }
}

enum Phase {
    /// Strangers hold areas this coupling uses: watching their beats before
    /// anything is written ([`super::strangers`]). `foreign`: of another
    /// interface, over any area of this coupling; `kin`: of this interface from
    /// another file, over this node's own area.
    Checking {
        foreign: Vec<Stranger>,
        kin: Vec<Stranger>,
    },
    Claiming(Claim),
    Running,
    Closed,
}

/// What a poll of [`Node::poll_start`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartPoll {
    /// Still observing the slot or settling the claim: poll again.
    Pending,
    /// The owner word now holds this session's token: start beating now.
    Claimed,
    /// The slot is ours, cleared, described, and the initial frame is published.
    Started,
}

/// One node's end of the coupling, polled.
pub struct Node {
    writer: Writer,
    /// Bytes of this node's payload: every frame it is lent must have them.
    payload_len: usize,
    own: Region,
    descriptor: Vec<u8>,
    epoch: u64,
    phase: Phase,
    /// The peers and the reading of their frames.
    exchange: Exchange,
    /// See [`Node::claims_under_one_lock`].
    claim_settle: Duration,
    /// A live node of this interface from another file holds part of this
    /// node's area: it is not cleared at the claim (the first exchange fails
    /// anyway).
    spare: bool,
    /// Where the descriptors of this interface over this node's area lay
    /// when it opened: one written since is a node that claimed its slot
    /// meanwhile, so it is live ([`Node::kin_arrived`]).
    seen_kin: Vec<u64>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("config", self.config())
            .field("epoch", &self.epoch)
            .field("peers", &self.exchange.peers())
            .finish_non_exhaustive()
    }
}

/// How node `me` reads node `peer`: in lockstep at the ratio of their periods,
/// unless it runs free or its interface lists the peer in its `free`.
fn rate_of(
    config: &LinkConfig,
    interface: &Interface,
    me: usize,
    peer: usize,
) -> Result<Rate, LinkError> {
    let (mine, theirs) = (&interface.nodes[me], &interface.nodes[peer]);
    if config.mode == SyncMode::Free || (peer != me && !mine.waits_for(theirs)) {
        return Ok(Rate::Newest);
    }
    let ratio = match (mine.period, theirs.period) {
        (Some(a), Some(b)) => StepRatio::of(a, b).ok_or_else(|| {
            super::error::config_error(
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

impl Node {
    /// A node of session `epoch` over `region` (laid out by `map`), which starts
    /// observing its own slot at `now`. Nothing is written yet.
    pub fn new(
        config: LinkConfig,
        interface: Arc<Interface>,
        map: &MemoryMap,
        region: &Region,
        epoch: u64,
        now: Instant,
    ) -> Result<Node, LinkError> {
        let me = interface
            .nodes
            .iter()
            .position(|n| n.slot == config.node_slot)
            .ok_or_else(|| {
                super::error::config_error(
                    "nodeSlot",
                    config.node_slot,
                    format!("interface `{}` has no node in that slot", interface.name),
                )
            })?;
        let geometry = map.area(me);
        let own = crate::area::window(region, geometry)?;
        let writer = match config.layout {
            Layout::Framed => Writer::Framed(FramedWriter::new(own.clone(), Ring::of(geometry))?),
            Layout::Seed => Writer::Seed {
                writer: SeedWriter::new(own.clone())?,
                own: SeedReader::new(own.clone())?,
            },
        };
        let others: Vec<usize> = (0..interface.nodes.len()).filter(|&i| i != me).collect();
        let rate = |i: usize| rate_of(&config, &interface, me, i);
        let peers = if others.is_empty() && config.peer_slot == config.node_slot {
            // The attitude preset's self-loop: the peer is this node.
            vec![Peer::new(
                &config,
                region,
                me,
                geometry,
                rate(me)?,
                Some(epoch),
                now,
            )?]
        } else {
            others
                .into_iter()
                .map(|i| {
                    Ok(Peer::new(
                        &config,
                        region,
                        i,
                        map.area(i),
                        rate(i)?,
                        None,
                        now,
                    )?)
                })
                .collect::<Result<_, LinkError>>()?
        };
        let fingerprint = interface.fingerprint();
        let descriptor = descriptor::encode(
            &interface.name,
            fingerprint,
            &interface.nodes[me],
            &geometry.payload,
        );
        // Nodes of another interface over this coupling's areas. Nodes of this
        // interface from another file are left to the first exchange, where
        // every side learns it (a node refused here would write nothing, and
        // its peers would wait for it).
        let (ours, strangers): (Vec<Stranger>, Vec<Stranger>) =
            strangers::find(region, &interface, map, now)?
                .into_iter()
                .filter(|s| strangers::overlaps_map(&s.found, map))
                .partition(|s| s.found.descriptor.interface == interface.name);
        let kin: Vec<Stranger> = ours
            .into_iter()
            .filter(|s| s.found.area.overlaps(geometry))
            .collect();
        let seen_kin = kin.iter().map(|s| s.found.area.offset).collect();
        let expected = Expected {
            config,
            interface,
            fingerprint,
            me,
        };
        Ok(Node {
            exchange: Exchange::new(
                expected,
                peers,
                strangers::Lookout::new(region.clone(), map.clone()),
                now,
            ),
            phase: Phase::Checking {
                foreign: strangers,
                kin,
            },
            payload_len: geometry.payload.len,
            writer,
            own,
            descriptor,
            epoch,
            claim_settle: super::claim::CLAIM_SETTLE,
            spare: false,
            seen_kin,
        })
    }

    /// Whether a node of this interface from another file has written its
    /// descriptor over this node's area since it opened. Two such nodes that
    /// start together both find the memory clear: the first to win its claim
    /// clears its area, and with it the other's owner word, or the other's
    /// descriptor. Each side asks this where that shows (a claim that lost
    /// its owner word, a clear about to be done), and then spares the other,
    /// so that both start and their first exchange names both nodes.
    fn kin_arrived(&mut self, now: Instant) -> Result<bool, LinkError> {
        let lookout = self.exchange.lookout();
        let (interface, area) = (self.interface(), lookout.map.area(self.me()));
        let arrived: Vec<u64> = strangers::find(&lookout.region, interface, &lookout.map, now)?
            .into_iter()
            .filter(|s| s.found.descriptor.interface == interface.name)
            .filter(|s| s.found.area.overlaps(area))
            .map(|s| s.found.area.offset)
            .filter(|at| !self.seen_kin.contains(at))
            .collect();
        self.seen_kin.extend(&arrived);
        Ok(!arrived.is_empty())
    }

    /// Declares that every claimant of this memory calls [`Node::poll_start`]
    /// under one lock (memory only this process can reach): the claim then needs
    /// no settling time.
    pub fn claims_under_one_lock(&mut self) {
        self.claim_settle = Duration::ZERO;
    }

    pub fn config(&self) -> &LinkConfig {
        &self.exchange.expected().config
    }

    pub fn interface(&self) -> &Arc<Interface> {
        &self.exchange.expected().interface
    }

    /// This node's index in the interface.
    pub fn me(&self) -> usize {
        self.exchange.expected().me
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The fingerprint of this node's interface, which its frames carry.
    pub fn fingerprint(&self) -> u64 {
        self.exchange.expected().fingerprint
    }

    pub fn peers(&self) -> &[Peer] {
        self.exchange.peers()
    }

    /// Bytes of this node's payload: the frames it publishes are
    /// [`FrameBuf::new`] of this.
    pub fn payload_len(&self) -> usize {
        self.payload_len
    }

    pub fn last_wait(&self) -> Duration {
        self.exchange.last_wait()
    }

    pub fn stepped_at(&self) -> Instant {
        self.exchange.stepped_at()
    }

    /// The peers and the reading of their frames: lockstep polls, free reads,
    /// replayed frames.
    pub fn exchange(&mut self) -> &mut Exchange {
        &mut self.exchange
    }

    /// The heartbeat of this session, for the thread that beats it (valid once
    /// [`Node::poll_start`] said [`StartPoll::Claimed`]).
    pub fn beater(&self) -> Result<Beater, LinkError> {
        Ok(Beater::new(self.own.clone(), self.epoch)?)
    }

    /// One step of taking the slot and publishing `frame`'s payload as frame 0
    /// at `sim_time`. Never waits.
    pub fn poll_start(
        &mut self,
        now: Instant,
        sim_time: f64,
        frame: &mut FrameBuf,
    ) -> Result<StartPoll, LinkError> {
        let packet = self.writer.own_packet();
        if let Phase::Checking { foreign, kin } = &mut self.phase {
            let region = self.exchange.lookout().region.clone();
            let mut pending = match strangers::judge(&region, foreign, now)? {
                Judged::Live(found) => return Err(self.foreign(&found)),
                Judged::Watching => true,
                Judged::Clear => false,
            };
            match strangers::judge(&region, kin, now)? {
                // A live node of this interface from another file over this
                // node's area keeps what it wrote: clearing the area would wipe
                // its descriptor and liveness words, and then it could learn
                // nothing of this node, nor this node of it (the first exchange
                // fails on both sides). Left-overs are cleared as always.
                Judged::Live(_) => {
                    self.spare = true;
                    kin.clear();
                }
                Judged::Watching => pending = true,
                Judged::Clear => {}
            }
            if pending {
                return Ok(StartPoll::Pending);
            }
            self.phase = Phase::Claiming(Claim::new(Words::read(&self.own)?, packet, now));
        }
        let Phase::Claiming(claim) = &mut self.phase else {
            return Ok(StartPoll::Started);
        };
        let words = Words::read(&self.own)?;
        match claim.poll(words, packet, now, token(self.epoch), self.claim_settle) {
            ClaimPoll::Pending => Ok(StartPoll::Pending),
            ClaimPoll::Take => {
                liveness::write_owner(&self.own, self.epoch)?;
                Ok(StartPoll::Claimed)
            }
            ClaimPoll::Held { .. } | ClaimPoll::Contended { .. } if self.kin_arrived(now)? => {
                self.spare = true;
                self.phase = Phase::Claiming(Claim::new(Words::read(&self.own)?, packet, now));
                Ok(StartPoll::Pending)
            }
            ClaimPoll::Held { owner, ago } => Err(LinkError::SlotInUse {
                device: self.config().device.clone(),
                slot: self.config().node_slot,
                owner,
                last_beat: ago,
            }),
            ClaimPoll::Contended { owner } => Err(LinkError::SlotContended {
                device: self.config().device.clone(),
                slot: self.config().node_slot,
                owner,
            }),
            ClaimPoll::Won => {
                if self.kin_arrived(now)? {
                    self.spare = true;
                }
                match &mut self.writer {
                    _ if self.spare => {}
                    Writer::Framed(writer) => writer.clear()?,
                    Writer::Seed { writer, .. } => writer.clear()?,
                }
                let mut described = self.descriptor.clone();
                described.resize(described.len().next_multiple_of(crate::WORD), 0);
                self.own.write(DESCRIPTOR_OFFSET, &described)?;
                self.exchange.rewatch(self.epoch, now)?;
                self.phase = Phase::Running;
                self.publish(0, sim_time, frame)?;
                Ok(StartPoll::Started)
            }
        }
    }

    /// Publishes `frame`'s payload as frame `index` (step k publishes k + 1) at
    /// `sim_time`, sealing its header. The caller owns the frame and fills its
    /// payload in place: nothing is copied before the write to memory.
    pub fn publish(
        &mut self,
        index: u64,
        sim_time: f64,
        frame: &mut FrameBuf,
    ) -> Result<(), LinkError> {
        if frame.payload().len() != self.payload_len {
            return Err(super::error::config_error(
                "frame",
                frame.payload().len(),
                format!(
                    "this node publishes payloads of {} bytes: make its frame with \
                     FrameBuf::new(payload_len)",
                    self.payload_len
                ),
            ));
        }
        let expected = self.exchange.expected();
        match &mut self.writer {
            Writer::Framed(writer) => writer.publish(
                frame,
                &Header {
                    writer_slot: expected.config.node_slot,
                    lag: expected.config.lag,
                    mode: expected.config.mode,
                    epoch: self.epoch,
                    fingerprint: expected.fingerprint,
                    step: index,
                    sim_time,
                    wall_clock_ns: super::wall_clock_ns(),
                },
            )?,
            Writer::Seed { writer, .. } => {
                writer.publish(&seed::from_payload(frame.payload(), index, sim_time))?
            }
        }
        Ok(())
    }

    /// Marks this session's slot closed, if this session still holds it: a lockstep
    /// peer stops waiting with a clear error, and a later session may take the slot at once.
    pub fn close(&mut self) -> Result<(), LinkError> {
        let claimed = !matches!(
            self.phase,
            Phase::Closed | Phase::Checking { .. } | Phase::Claiming(Claim::Observing { .. })
        );
        self.phase = Phase::Closed;
        if claimed && Words::read(&self.own)?.owner == token(self.epoch) {
            liveness::write_closed(&self.own, self.epoch)?;
        }
        Ok(())
    }

    /// The refusal of a live stranger over an area of this coupling.
    #[cold]
    fn foreign(&self, found: &Found) -> LinkError {
        let e = self.exchange.expected();
        let (interface, map) = (&e.interface, &self.exchange.lookout().map);
        let over = map
            .areas
            .iter()
            .find(|a| a.overlaps(&found.area))
            .map(|a| &interface.nodes[a.node]);
        let d = &found.descriptor;
        let what = format!(
            "it is of interface `{}`, this node of `{}`",
            d.interface, interface.name
        );
        LinkError::Foreign {
            device: e.config.device.clone(),
            node: d.node.clone(),
            slot: d.slot,
            start: found.area.offset,
            end: found.area.end(),
            ours: over.map_or_else(String::new, |n| n.name.clone()),
            ours_slot: over.map_or(0, |n| n.slot),
            what,
        }
    }

    /// Leaves the slot as a killed process would: held, not closed.
    pub fn abandon(&mut self) {
        self.phase = Phase::Closed;
    }
}
