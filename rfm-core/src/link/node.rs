//! One node's side of the protocol, without threads, sleeps or clocks of its own.
//!
//! [`Node`] does everything a link does in single, non-blocking steps, each given
//! the time `now`: claim the slot, publish, poll the peer for a step, read it in
//! free mode. [`super::Link`] drives it with the real clock, a heartbeat thread and
//! a wait strategy; the handshake model test drives it with a virtual clock and
//! beats by hand, which makes every interleaving of two nodes reproducible.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::claim::{Claim, ClaimPoll, Claimant, Leftovers, Refusal, CLAIM_SETTLE};
use super::compat::Expected;
use super::error::{Foreign, Host, PublishError, StartError};
use super::exchange::Exchange;
use super::liveness::Beater;
use super::lookout;
use super::ownership::{self, block, ending::Ended};
use super::peer::{Peer, Rate};
use super::{LinkConfig, OpenError};
use rfm_frames::area::{Area, DESCRIPTOR_OFFSET};
use rfm_frames::frame::framed::{FrameBuf, Header};
use rfm_frames::frame::seed;
use rfm_frames::frame::Layout;
use rfm_frames::session::Token;
use rfm_frames::slot::{FramedWriter, Ring, SeedReader, SeedWriter};
use rfm_interface::{descriptor, Interface, MemoryMap};
use rfm_memory::{Region, RegionError};

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
    /// The writer of `layout` into `own`, the node's area of `geometry`.
    fn of(layout: Layout, own: &Region, geometry: &Area) -> Result<Writer, OpenError> {
        Ok(match layout {
            Layout::Framed => Writer::Framed(FramedWriter::new(own.clone(), Ring::of(geometry))?),
            Layout::Seed => Writer::Seed {
                writer: SeedWriter::new(own.clone())?,
                own: SeedReader::new(own.clone())?,
            },
        })
    }

    fn own_packet(&self) -> Option<u64> {
        match self {
            Writer::Seed { own, .. } => own.read().ok().map(|p| p.packet_id),
            Writer::Framed(_) => None,
        }
    }
}

enum Phase {
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
    Announced,
    /// The slot is ours, cleared, described, and the initial frame is published.
    Started,
}

/// One node's end of the coupling, polled.
pub struct Node {
    writer: Writer,
    /// Bytes of this node's payload: every frame it is lent must have them.
    payload_len: usize,
    own: Region,
    /// This node and the memory, as its claim needs them.
    claimant: Claimant,
    phase: Phase,
    /// The peers and the reading of their frames.
    exchange: Exchange,
    /// The claim held: the heartbeat may write the announce again on a ring
    /// that missed it ([`Beater::writing_again`]).
    won: Arc<AtomicBool>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("config", self.config())
            .field("epoch", &self.claimant.epoch)
            .field("peers", &self.exchange.peers())
            .finish_non_exhaustive()
    }
}

/// The peers of node `me`: every other node of the interface, or, for the
/// attitude preset's self-loop (one node, its peer slot its own), the node
/// itself, bound to this session from the start.
fn peers(
    config: &LinkConfig,
    interface: &Interface,
    map: &MemoryMap,
    region: &Region,
    me: usize,
    epoch: u64,
    now: Instant,
) -> Result<Vec<Peer>, OpenError> {
    let peer = |i: usize, own_epoch: Option<u64>| -> Result<Peer, OpenError> {
        let rate = Rate::of(config, interface, me, i)?;
        Ok(Peer::new(
            config,
            region,
            i,
            map.area(i),
            rate,
            own_epoch,
            now,
        )?)
    };
    let others: Vec<usize> = (0..interface.nodes.len()).filter(|&i| i != me).collect();
    if others.is_empty() && config.peer_slot == config.node_slot {
        return Ok(vec![peer(me, Some(epoch))?]);
    }
    others.into_iter().map(|i| peer(i, None)).collect()
}

/// The claimant of node `me`'s area for session `epoch`, with the
/// descriptor it writes there once the area is its.
fn claimant(
    region: &Region,
    map: &MemoryMap,
    interface: &Interface,
    me: usize,
    epoch: u64,
) -> Claimant {
    let geometry = map.area(me);
    Claimant {
        region: region.clone(),
        map: map.clone(),
        me,
        described: ownership::padded(descriptor::encode(
            &interface.name,
            interface.fingerprint(),
            (&interface.nodes[me], &interface.declared()),
            &geometry.payload,
            Some(Token::of(epoch)),
        )),
        epoch,
        settle: CLAIM_SETTLE,
    }
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
    ) -> Result<Node, OpenError> {
        let me = interface
            .nodes
            .iter()
            .position(|n| n.slot == config.node_slot)
            .ok_or_else(|| {
                super::error::open_config(
                    "nodeSlot",
                    config.node_slot,
                    format!("interface `{}` has no node in that slot", interface.name),
                )
            })?;
        let geometry = map.area(me);
        let own = rfm_frames::area::window(region, geometry)?;
        let writer = Writer::of(config.settings.layout, &own, geometry)?;
        let peers = peers(&config, &interface, map, region, me, epoch, now)?;
        let fingerprint = interface.fingerprint();
        let claimant = claimant(region, map, &interface, me, epoch);
        let packet = writer.own_packet();
        let claim = Claim::new(&claimant, &interface, fingerprint, packet, now)?;
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
                lookout::Lookout::new(region.clone(), map.clone(), Token::of(epoch)),
                now,
            ),
            phase: Phase::Claiming(claim),
            payload_len: geometry.payload.len,
            writer,
            own,
            claimant,
            won: Arc::default(),
        })
    }

    /// Declares that every claimant of this memory calls [`Node::poll_start`]
    /// under one lock (memory only this process can reach): the claim then needs
    /// no settling time.
    pub fn claims_under_one_lock(&mut self) {
        self.claimant.settle = Duration::ZERO;
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
        self.claimant.epoch
    }

    /// The fingerprint of this node's interface, which its frames carry.
    pub fn fingerprint(&self) -> u64 {
        self.exchange.expected().fingerprint
    }

    /// This node's own area (its window).
    pub fn own_area(&self) -> &Region {
        &self.own
    }

    /// Warnings given since the start that a live peer is late.
    pub fn lates(&self) -> u32 {
        self.exchange.lates()
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
    /// [`Node::poll_start`] said [`StartPoll::Announced`]).
    pub fn beater(&self) -> Result<Beater, RegionError> {
        let beater = Beater::new(self.own.clone(), self.claimant.epoch)?;
        Ok(match &self.phase {
            Phase::Claiming(claim) => match claim.before() {
                Some(before) => beater.writing_again(
                    self.claimant.described.clone(),
                    before,
                    Arc::clone(&self.won),
                ),
                None => beater,
            },
            Phase::Running | Phase::Closed => beater,
        })
    }

    /// One step of taking the slot and publishing `frame`'s payload as frame 0
    /// at `sim_time`. Never waits.
    pub fn poll_start(
        &mut self,
        now: Instant,
        sim_time: f64,
        frame: &mut FrameBuf,
    ) -> Result<StartPoll, StartError> {
        let packet = self.writer.own_packet();
        let interface = self.interface().clone();
        let fingerprint = self.fingerprint();
        let Phase::Claiming(claim) = &mut self.phase else {
            return Ok(StartPoll::Started);
        };
        let polled = claim.poll(&self.claimant, &interface, fingerprint, packet, now)?;
        match polled {
            ClaimPoll::Pending => Ok(StartPoll::Pending),
            ClaimPoll::Announced => Ok(StartPoll::Announced),
            ClaimPoll::Won(leftovers) => {
                self.won(leftovers, now, sim_time, frame)?;
                Ok(StartPoll::Started)
            }
            ClaimPoll::Refused(refusal) => Err(self.refusal(refusal)),
        }
    }

    /// The claim held: clears the area (unless its `leftovers` are spared: a
    /// live node of this interface from another file overlaps it), writes the
    /// descriptor again,
    /// watches the peers from `now` and publishes frame 0.
    fn won(
        &mut self,
        leftovers: Leftovers,
        now: Instant,
        sim_time: f64,
        frame: &mut FrameBuf,
    ) -> Result<(), StartError> {
        match &mut self.writer {
            _ if leftovers == Leftovers::Spare => {}
            Writer::Framed(writer) => writer.clear()?,
            Writer::Seed { writer, .. } => writer.clear()?,
        }
        // Again: a claimant of the same slot that lost may have written its
        // own over it before it found so.
        self.own
            .write(DESCRIPTOR_OFFSET, &self.claimant.described)?;
        self.exchange.rewatch(self.claimant.epoch, now)?;
        self.phase = Phase::Running;
        self.won.store(true, Ordering::Release);
        Ok(self.publish(0, (sim_time, rfm_frames::wall::now_ns()), frame)?)
    }

    /// The error of a claim refused.
    fn refusal(&self, refusal: Refusal) -> StartError {
        let c = self.config();
        let (device, slot) = (c.settings.device.to_string(), c.node_slot);
        match refusal {
            Refusal::Held { owner, ago, remote } => StartError::SlotInUse {
                device,
                slot,
                owner,
                last_beat: ago,
                host: Host(remote),
            },
            Refusal::Contended {
                owner,
                remote,
                winner,
            } => StartError::SlotContended {
                device,
                slot,
                owner,
                host: Host(remote),
                winner: winner.map_or_else(String::new, |w| {
                    format!(
                        ", node `{}` (slot {}) of interface `{}`",
                        w.descriptor.node, w.descriptor.slot, w.descriptor.interface
                    )
                }),
            },
            Refusal::Foreign { found, ago, remote } => StartError::Foreign {
                device,
                holder: Box::new(Foreign::over(
                    &found,
                    &self.exchange.expected().interface,
                    &self.claimant.map,
                    ago,
                    Host(remote),
                )),
            },
        }
    }

    /// Publishes `frame`'s payload as frame `index` (step k publishes k + 1) at
    /// `sim_time`, sealing its header. The caller owns the frame and fills its
    /// payload in place: nothing is copied before the write to memory.
    /// `wall_ns`: the wall clock now (the frame's stamp, which a reader's
    /// latency is measured from).
    pub fn publish(
        &mut self,
        index: u64,
        (sim_time, wall_ns): (f64, u64),
        frame: &mut FrameBuf,
    ) -> Result<(), PublishError> {
        if frame.payload().len() != self.payload_len {
            return Err(PublishError::FrameSize {
                len: frame.payload().len(),
                expected: self.payload_len,
            });
        }
        let expected = self.exchange.expected();
        match &mut self.writer {
            Writer::Framed(writer) => writer.publish(
                frame,
                &Header {
                    writer_slot: expected.config.node_slot,
                    lag: expected.config.settings.lag,
                    mode: expected.config.settings.mode,
                    epoch: self.claimant.epoch,
                    fingerprint: expected.fingerprint,
                    step: index,
                    sim_time,
                    wall_clock_ns: wall_ns,
                },
            )?,
            Writer::Seed { writer, .. } => {
                writer.publish(&seed::from_payload(frame.payload(), index, sim_time))?
            }
        }
        Ok(())
    }

    /// Marks this session's slot closed (how it ended, and about which
    /// peer), if this session still holds it: a lockstep peer stops
    /// waiting with a clear error, and a later session may take the slot at once.
    pub fn end(&mut self, ended: Ended) -> Result<(), RegionError> {
        let announced = match &self.phase {
            Phase::Claiming(claim) => claim.announced(),
            Phase::Running => true,
            Phase::Closed => false,
        };
        self.phase = Phase::Closed;
        if announced {
            block::close(&self.own, self.claimant.epoch, ended)?;
        }
        Ok(())
    }

    /// [`Node::end`] as its master terminated it.
    pub fn close(&mut self) -> Result<(), RegionError> {
        self.end(Ended::TERMINATED)
    }

    /// Leaves the slot as a killed process would: held, not closed.
    pub fn abandon(&mut self) {
        self.phase = Phase::Closed;
    }
}
