//! One node's side of the protocol, without threads, sleeps or clocks of its own.
//!
//! [`Node`] does everything a link does in single, non-blocking steps, each given
//! the time `now`: claim the slot, publish, poll the peer for a step, read it in
//! free mode. [`super::Link`] drives it with the real clock, a heartbeat thread and
//! a wait strategy; the handshake model test drives it with a virtual clock and
//! beats by hand, which makes every interleaving of two nodes reproducible.

use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use super::claim::{Claim, ClaimPoll};
use super::compat;
use super::handshake::{Admit, Fault};
use super::liveness::{self, token, Beater, Words, MIN_SILENCE};
use super::peer::{Peer, Reader};
use super::{Layout, LinkConfig, LinkError};
use crate::area::DESCRIPTOR_OFFSET;
use crate::frame::framed::{FrameBuf, Header};
use crate::frame::seed;
use crate::interface::{descriptor, Interface, MemoryMap};
use crate::region::Region;
use crate::slot::{FramedWriter, ReadError, Ring, SeedReader, SeedWriter, StepPoll};

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

/// The lockstep wait of one step.
#[derive(Debug, Clone, Copy)]
struct StepWait {
    step: u64,
    start: Instant,
}

/// One node's end of the coupling, polled.
pub struct Node {
    config: LinkConfig,
    interface: Arc<Interface>,
    /// This node's index in the interface.
    me: usize,
    writer: Writer,
    /// This node's frame: the caller fills its payload, publishing seals it.
    frame: FrameBuf,
    own: Region,
    descriptor: Vec<u8>,
    fingerprint: u64,
    epoch: u64,
    phase: Phase,
    peers: Vec<Peer>,
    wait: Option<StepWait>,
    last_wait: Duration,
    stepped_at: Instant,
    /// See [`Node::claims_under_one_lock`].
    claim_settle: Duration,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("config", &self.config)
            .field("epoch", &self.epoch)
            .field("peers", &self.peers)
            .finish_non_exhaustive()
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
        let peers = if others.is_empty() && config.peer_slot == config.node_slot {
            // The attitude preset's self-loop: the peer is this node.
            vec![Peer::new(&config, region, me, geometry, Some(epoch), now)?]
        } else {
            others
                .into_iter()
                .map(|i| Peer::new(&config, region, i, map.area(i), None, now))
                .collect::<Result<_, _>>()?
        };
        let fingerprint = interface.fingerprint();
        let descriptor = descriptor::encode(
            &interface.name,
            fingerprint,
            &interface.nodes[me],
            &geometry.payload,
        );
        let own_packet = writer.own_packet();
        Ok(Node {
            phase: Phase::Claiming(Claim::new(Words::read(&own)?, own_packet, now)),
            frame: FrameBuf::new(geometry.payload.len),
            config,
            interface,
            me,
            writer,
            own,
            descriptor,
            fingerprint,
            epoch,
            peers,
            wait: None,
            last_wait: Duration::ZERO,
            stepped_at: now,
            claim_settle: super::claim::CLAIM_SETTLE,
        })
    }

    /// Declares that every claimant of this memory calls [`Node::poll_start`]
    /// under one lock (memory only this process can reach): the claim then needs
    /// no settling time.
    pub fn claims_under_one_lock(&mut self) {
        self.claim_settle = Duration::ZERO;
    }

    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    pub fn interface(&self) -> &Arc<Interface> {
        &self.interface
    }

    /// This node's index in the interface.
    pub fn me(&self) -> usize {
        self.me
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The fingerprint of this node's interface, which its frames carry.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    pub fn peers(&self) -> &[Peer] {
        &self.peers
    }

    /// This node's signals, to fill in before a step publishes them.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        self.frame.payload_mut()
    }

    /// Replay: takes the recorded `frame` (header and payload) as peer `i`'s
    /// frame of this step, as [`Node::poll_lockstep`] takes one from memory.
    pub(crate) fn take_recorded(
        &mut self,
        i: usize,
        frame: &[u8],
        now: Instant,
    ) -> Result<(), crate::frame::FrameError> {
        let scratch = self.peers[i].scratch();
        if scratch.len() != frame.len() {
            return Err(crate::frame::FrameError::BadLength {
                found: frame
                    .len()
                    .saturating_sub(crate::frame::framed::HEADER_SIZE),
                expected: scratch.len() - crate::frame::framed::HEADER_SIZE,
            });
        }
        scratch.bytes_mut().copy_from_slice(frame);
        let h = scratch.check()?;
        self.peers[i].accept(h, Some(h.epoch), now);
        self.stepped_at = now;
        self.last_wait = Duration::ZERO;
        Ok(())
    }

    /// The frame published last, header and payload.
    pub fn published(&self) -> &[u8] {
        self.frame.bytes()
    }

    pub fn payload(&self) -> &[u8] {
        self.frame.payload()
    }

    pub fn last_wait(&self) -> Duration {
        self.last_wait
    }

    pub fn stepped_at(&self) -> Instant {
        self.stepped_at
    }

    /// The heartbeat of this session, for the thread that beats it (valid once
    /// [`Node::poll_start`] said [`StartPoll::Claimed`]).
    pub fn beater(&self) -> Result<Beater, LinkError> {
        Ok(Beater::new(self.own.clone(), self.epoch)?)
    }

    /// One step of taking the slot and publishing the payload as it is as frame 0
    /// at `sim_time`. Never waits.
    pub fn poll_start(&mut self, now: Instant, sim_time: f64) -> Result<StartPoll, LinkError> {
        let packet = self.writer.own_packet();
        let Phase::Claiming(claim) = &mut self.phase else {
            return Ok(StartPoll::Started);
        };
        let words = Words::read(&self.own)?;
        let c = &self.config;
        match claim.poll(words, packet, now, token(self.epoch), self.claim_settle) {
            ClaimPoll::Pending => Ok(StartPoll::Pending),
            ClaimPoll::Take => {
                liveness::write_owner(&self.own, self.epoch)?;
                Ok(StartPoll::Claimed)
            }
            ClaimPoll::Held { owner, ago } => Err(LinkError::SlotInUse {
                device: c.device.clone(),
                slot: c.node_slot,
                owner,
                last_beat: ago,
            }),
            ClaimPoll::Contended { owner } => Err(LinkError::SlotContended {
                device: c.device.clone(),
                slot: c.node_slot,
                owner,
            }),
            ClaimPoll::Won => {
                match &mut self.writer {
                    Writer::Framed(writer) => writer.clear()?,
                    Writer::Seed { writer, .. } => writer.clear()?,
                }
                let mut described = self.descriptor.clone();
                described.resize(described.len().next_multiple_of(crate::WORD), 0);
                self.own.write(DESCRIPTOR_OFFSET, &described)?;
                for peer in &mut self.peers {
                    peer.rewatch(&self.config, self.epoch, now)?;
                }
                self.phase = Phase::Running;
                self.publish(0, sim_time)?;
                Ok(StartPoll::Started)
            }
        }
    }

    /// Publishes the payload as frame `index` (step k publishes k + 1) at `sim_time`.
    pub fn publish(&mut self, index: u64, sim_time: f64) -> Result<(), LinkError> {
        match &mut self.writer {
            Writer::Framed(writer) => writer.publish(
                &mut self.frame,
                &Header {
                    writer_slot: self.config.node_slot,
                    lag: self.config.lag,
                    mode: self.config.mode,
                    epoch: self.epoch,
                    fingerprint: self.fingerprint,
                    step: index,
                    sim_time,
                    wall_clock_ns: super::wall_clock_ns(),
                },
            )?,
            Writer::Seed { writer, .. } => {
                writer.publish(&seed::from_payload(self.frame.payload(), index, sim_time))?
            }
        }
        Ok(())
    }

    /// Lockstep step `k`, one poll at `now`: exactly every peer's frame
    /// max(k + 1 − lag, 0), once it is there and its session is live.
    pub fn poll_lockstep(&mut self, k: u64, now: Instant) -> Result<Poll<()>, LinkError> {
        let need = (k + 1).saturating_sub(u64::from(self.config.lag));
        let wait = match self.wait {
            Some(w) if w.step == k => w,
            _ => {
                self.stepped_at = now;
                for peer in &mut self.peers {
                    peer.got = false;
                    peer.unproven = None;
                    peer.bad_seen = false;
                }
                StepWait {
                    step: k,
                    start: now,
                }
            }
        };
        let mut all = true;
        for i in 0..self.peers.len() {
            if !self.peers[i].got {
                self.poll_peer(i, k, need, now)?;
                all &= self.peers[i].got;
            }
        }
        if all {
            self.wait = None;
            self.last_wait = now.saturating_duration_since(wait.start);
            return Ok(Poll::Ready(()));
        }
        let waited = now.saturating_duration_since(wait.start);
        for i in 0..self.peers.len() {
            if self.peers[i].got {
                continue;
            }
            let limit = if self.peers[i].bound().is_some() {
                self.config.timeout
            } else {
                self.config.startup_timeout
            };
            if waited >= limit {
                self.wait = None;
                return Err(self.timeout(i, &wait, waited, now));
            }
        }
        self.wait = Some(wait);
        Ok(Poll::Pending)
    }

    /// One poll of peer `i` for frame `need` of step `k`.
    fn poll_peer(&mut self, i: usize, k: u64, need: u64, now: Instant) -> Result<(), LinkError> {
        let peer = &mut self.peers[i];
        if peer.handshake.watch_due(now) && !peer.self_loop {
            peer.observe(now)?;
        }
        let Reader::Framed(reader) = &peer.reader else {
            unreachable!("validate() refuses lockstep with the seed layout")
        };
        match reader.poll_step(need, &mut peer.frames[1 - peer.taken]) {
            Ok(StepPoll::Ready(h)) => match peer.handshake.admit(h.epoch, now) {
                Admit::Take { bound_now } => {
                    if bound_now || h.fingerprint != self.fingerprint {
                        compat::check_frame(self, i, &h)?;
                    }
                    let peer = &mut self.peers[i];
                    peer.accept(h, Some(h.epoch), now);
                    peer.got = true;
                    return Ok(());
                }
                Admit::NotLive => peer.unproven = Some(h.epoch),
                Admit::Restarted { old } => {
                    return Err(self.restarted(i, k, old, format!("{:#018x}", h.epoch)))
                }
            },
            Ok(StepPoll::Overwritten { found }) if peer.bound().is_some() => {
                return Err(LinkError::Overwritten {
                    device: self.config.device.clone(),
                    step: k,
                    need,
                    found,
                })
            }
            Ok(StepPoll::Overwritten { .. } | StepPoll::NotYet) => {}
            Err(ReadError::Region(e)) => return Err(e.into()),
            Err(err) => {
                compat::check_readable(self, i, &err)?;
                let peer = &mut self.peers[i];
                if let ReadError::Unreadable { rejections, .. } = &err {
                    if rejections.saw_bad_frame() && !peer.bad_seen {
                        peer.bad_seen = true;
                        peer.health.observe_bad();
                    }
                }
            }
        }
        let peer = &self.peers[i];
        let fault = if peer.self_loop {
            None
        } else {
            peer.handshake.fault(now)
        };
        match fault {
            Some(Fault::Stopped) => {
                return Err(LinkError::PeerStopped {
                    device: self.config.device.clone(),
                    peer_slot: peer.slot,
                    step: k,
                })
            }
            Some(Fault::Dead { silent }) => {
                return Err(LinkError::PeerDead {
                    device: self.config.device.clone(),
                    peer_slot: peer.slot,
                    step: k,
                    silent,
                })
            }
            Some(Fault::Restarted { old, owner }) => {
                let Reader::Framed(reader) = &peer.reader else {
                    unreachable!("framed")
                };
                let mut buf = reader.buffer();
                // Its full epoch when its newest frame is there, else its token.
                let new = match reader.read_latest(&mut buf) {
                    Ok(h) if token(h.epoch) == owner => format!("{:#018x}", h.epoch),
                    _ => format!("token {owner:#010x}"),
                };
                return Err(self.restarted(i, k, old, new));
            }
            None => {}
        }
        if peer.bound().is_none() {
            // Into the scratch frame, which the next read overwrites anyway: every
            // poll before a peer is bound comes here, and a buffer of its own cost
            // an allocation and the CRC table lookup (a lock) each time.
            let peer = &mut self.peers[i];
            let Reader::Framed(reader) = &peer.reader else {
                unreachable!("framed")
            };
            let scratch = &mut peer.frames[1 - peer.taken];
            if let Err(ReadError::Empty) = reader.read_latest(scratch) {
                compat::check_layout(self, i, Layout::Framed)?;
            }
        }
        Ok(())
    }

    fn restarted(&mut self, i: usize, k: u64, old: u64, new: String) -> LinkError {
        let peer = &mut self.peers[i];
        peer.health.restarts += 1;
        LinkError::PeerRestarted {
            device: self.config.device.clone(),
            peer_slot: peer.slot,
            step: k,
            old,
            new,
        }
    }

    fn timeout(&self, i: usize, wait: &StepWait, waited: Duration, now: Instant) -> LinkError {
        let peer = &self.peers[i];
        let silent = peer.handshake.life().silent_for(now);
        let why = if peer.bad_seen {
            "its area holds corrupted frames (bad magic or CRC)".to_owned()
        } else if let Some(epoch) = peer.unproven {
            let holder = match peer.handshake.life() {
                liveness::Life::Closed { .. } => "which has closed the slot".to_owned(),
                liveness::Life::Beating { owner, .. } if owner != token(epoch) => {
                    format!("while session token {owner:#010x} holds the slot")
                }
                _ => "whose heartbeat has not moved since this node started".to_owned(),
            };
            format!(
                "its area holds a frame of session {epoch:#018x}, {holder}: frames left by an \
                 earlier run are never taken; is the peer's master running?"
            )
        } else if peer.bound().is_none() {
            format!(
                "nothing from node `{}`: is it running, on the same device and regionOffset, \
                 built from the same interface (`{}`, fingerprint {:#018x}), and has its \
                 master left initialization?",
                self.interface.nodes[peer.node].name, self.interface.name, self.fingerprint
            )
        } else if silent >= MIN_SILENCE {
            // The step's timeout ran out just before the silence reached it.
            format!("the peer stopped beating {silent:.3?} ago: its process died or is stalled")
        } else {
            "the peer has not published that step: it is slower, stalled or stopped".to_owned()
        };
        LinkError::Timeout {
            device: self.config.device.clone(),
            node_slot: self.config.node_slot,
            peer_slot: peer.slot,
            step: wait.step,
            waited,
            why,
        }
    }

    /// Free mode at `now`: each peer's newest frame of its live session, if any.
    /// Never waits.
    pub fn free_read(&mut self, now: Instant) -> Result<(), LinkError> {
        self.last_wait = Duration::ZERO;
        self.stepped_at = now;
        for i in 0..self.peers.len() {
            match self.config.layout {
                Layout::Framed => self.free_read_framed(i, now)?,
                Layout::Seed => {
                    if let Err(err) = self.peers[i].read_seed(now) {
                        self.no_frame(i, err, Layout::Seed)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn free_read_framed(&mut self, i: usize, now: Instant) -> Result<(), LinkError> {
        let peer = &mut self.peers[i];
        let self_loop = peer.self_loop;
        if peer.handshake.watch_due(now) && !self_loop {
            peer.observe(now)?;
        }
        let Reader::Framed(reader) = &peer.reader else {
            unreachable!("framed reader")
        };
        match reader.read_latest(&mut peer.frames[1 - peer.taken]) {
            Ok(h) => {
                if peer.bound() != Some(h.epoch) && !self_loop {
                    // Another session than the bound one: judge it on fresh words.
                    peer.observe(now)?;
                }
                if let Admit::Take { bound_now } = peer.handshake.admit(h.epoch, now) {
                    if bound_now || h.fingerprint != self.fingerprint {
                        compat::check_frame(self, i, &h)?;
                    }
                    self.peers[i].accept(h, Some(h.epoch), now);
                }
                Ok(())
            }
            Err(err) => self.no_frame(i, err, Layout::Framed),
        }
    }

    /// A free-mode read of `layout` that gave no frame: a peer of another format
    /// version, interface or layout is an error; a complete but corrupt frame is
    /// counted.
    fn no_frame(&mut self, i: usize, err: ReadError, layout: Layout) -> Result<(), LinkError> {
        match err {
            ReadError::Region(e) => Err(e.into()),
            ReadError::Unreadable { rejections, .. } => {
                compat::check_readable(self, i, &err)?;
                compat::check_layout(self, i, layout)?;
                if rejections.saw_bad_frame() {
                    self.peers[i].health.observe_bad();
                }
                Ok(())
            }
            ReadError::Empty => compat::check_layout(self, i, layout),
        }
    }

    /// Marks this session's slot closed, if this session still holds it: a lockstep
    /// peer stops waiting with a clear error, and a later session may take the slot at once.
    pub fn close(&mut self) -> Result<(), LinkError> {
        let claimed = !matches!(
            self.phase,
            Phase::Closed | Phase::Claiming(Claim::Observing { .. })
        );
        self.phase = Phase::Closed;
        if claimed && Words::read(&self.own)?.owner == token(self.epoch) {
            liveness::write_closed(&self.own, self.epoch)?;
        }
        Ok(())
    }

    /// Leaves the slot as a killed process would: held, not closed.
    pub fn abandon(&mut self) {
        self.phase = Phase::Closed;
    }
}
