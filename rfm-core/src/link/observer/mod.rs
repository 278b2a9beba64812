//! Watching one node's area without taking part in the coupling: its frames as
//! a reader finds them, the newest one taken (kept in place: a master's outputs
//! and a viewer's columns are read from it), and the health of what was read.
//!
//! One observer serves every passive reader of an area: each peer of a link
//! ([`super::peer::Peer`], which adds the handshake that decides whose frames
//! count), and the tools that only look (`rfmctl watch`, `rfmctl record` through
//! [`described`]). A frame is new when [`PeerHealth`] has not seen it: its
//! session, step and CRC (the article's packets have no CRC of their own, so the
//! observer seals each into a frame, whose CRC then covers its contents).

mod ring_stats;
mod two_rings;

use rfm_frames::slot::WaitPoll;
use std::time::Instant;

use super::ownership;
use super::ownership::block::Words;
use crate::health::{FrameId, Observation, PeerHealth};
use rfm_frames::area::Area;
use rfm_frames::frame::framed::{self, FrameBuf, Header};
use rfm_frames::frame::seed;
use rfm_frames::frame::Layout;
use rfm_frames::session::Token;
use rfm_frames::slot::{FramedReader, ReadError, Ring, SeedReader, StepPoll};
use rfm_interface::{discover, Found};
use rfm_memory::{Region, RegionError};
pub use ring_stats::RingStats;

enum Reader {
    Framed(FramedReader),
    Seed(SeedReader),
}

/// One node's area, observed.
pub struct Observer {
    area: Region,
    geometry: Area,
    reader: Reader,
    health: PeerHealth,
    /// The newest frame taken (`frames[taken]`, header `latest`), and where
    /// frames are read before they are taken (the other). Taking one flips
    /// `taken`: the buffers never move, because a swap of them (stored as
    /// vectors) stalled the next get that loaded a buffer's address.
    frames: [FrameBuf; 2],
    taken: usize,
    latest: Option<Header>,
    /// `latest.is_some()`, in a byte of its own for the per-step getters: the
    /// header is stored as vectors, and a byte loaded from it waited for them.
    has_taken: bool,
    /// What a lockstep try of a bound peer loads: the entry in host memory
    /// (or on the card's path before its costs were counted), else the head
    /// word.
    poll: WaitPoll,
    /// A redundant device: which ring the frames came from.
    rings: RingStats,
    /// A redundant device: the token of the session whose frames are looked
    /// for (the slot's current owner): a ring that holds another session's
    /// frame of a step while the other ring holds this one's missed the
    /// writer's stores (cut at its board), and is passed over.
    want: Option<Token>,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("slot", &self.geometry.slot)
            .field("latest", &self.latest)
            .finish_non_exhaustive()
    }
}

impl Observer {
    /// Observes `area` (of the coupling region, divided as `geometry`), whose
    /// writer uses `layout`.
    pub fn new(area: Region, geometry: &Area, layout: Layout) -> Result<Observer, RegionError> {
        let reader = match layout {
            Layout::Framed => Reader::Framed(FramedReader::new(area.clone(), Ring::of(geometry))?),
            Layout::Seed => Reader::Seed(SeedReader::new(area.clone())?),
        };
        Ok(Observer {
            area,
            geometry: geometry.clone(),
            reader,
            health: PeerHealth::new(),
            frames: [
                FrameBuf::new(geometry.payload.len),
                FrameBuf::new(geometry.payload.len),
            ],
            taken: 0,
            latest: None,
            has_taken: false,
            poll: WaitPoll::Head,
            rings: RingStats::default(),
            want: None,
        })
    }

    /// What lockstep tries of a bound peer load ([`FramedReader::poll_step_by`]).
    pub(crate) fn set_poll(&mut self, poll: WaitPoll) {
        self.poll = poll;
    }

    /// What lockstep tries of a bound peer load.
    pub(crate) fn poll(&self) -> WaitPoll {
        self.poll
    }

    /// On a redundant device, frames are looked for of the session of token
    /// `owner` (the slot's current owner) first; `None`: of any.
    pub(crate) fn expect(&mut self, owner: Option<Token>) {
        self.want = owner;
    }

    /// Whether `polled` is a frame of the session looked for.
    #[inline]
    fn wanted(&self, polled: &Result<StepPoll, ReadError>) -> bool {
        matches!(polled, Ok(StepPoll::Ready(h)) if self.of_want(h))
    }

    #[inline]
    fn of_want(&self, h: &Header) -> bool {
        self.want.is_none_or(|t| t.is_of(h.epoch))
    }

    /// The area observed.
    pub fn area(&self) -> &Region {
        &self.area
    }

    /// How the area is divided.
    pub fn geometry(&self) -> &Area {
        &self.geometry
    }

    /// The area's liveness words now; on a redundant device, the current
    /// of the two rings' ([`Words::current`]).
    pub fn words(&self) -> Result<Words, RegionError> {
        Words::read(&self.area)
    }

    pub fn health(&self) -> &PeerHealth {
        &self.health
    }

    /// The header of the newest frame taken.
    pub fn latest(&self) -> Option<&Header> {
        self.latest.as_ref()
    }

    /// The writer's signals as of the newest frame taken (zeros before the first).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        self.frames[self.taken].payload()
    }

    /// The writer's signals, once a frame was taken.
    #[inline]
    pub fn taken_payload(&self) -> Option<&[u8]> {
        self.has_taken.then(|| self.payload())
    }

    /// The whole frame taken last (header and payload), as it was in memory:
    /// what a recording keeps.
    pub fn taken_frame(&self) -> Option<&[u8]> {
        self.has_taken.then(|| self.frames[self.taken].bytes())
    }

    /// Where the next frame is read before it is taken.
    pub(crate) fn scratch(&mut self) -> &mut FrameBuf {
        &mut self.frames[1 - self.taken]
    }

    /// Framed layout: the frame of step `need`, if the ring holds it, read into
    /// the scratch frame. On a redundant device, from ring A when A holds it
    /// whole, else from B ([`super::rings`]); when neither does, loads read
    /// the ring the last frame came from (its liveness words are current).
    #[inline]
    pub(crate) fn poll_step(&mut self, need: u64, poll: WaitPoll) -> Result<StepPoll, ReadError> {
        if !self.area.is_redundant() {
            return self.poll_step_here(need, poll);
        }
        self.poll_step_of_rings(need, poll)
    }

    fn poll_step_here(&mut self, need: u64, poll: WaitPoll) -> Result<StepPoll, ReadError> {
        let Reader::Framed(reader) = &self.reader else {
            unreachable!("validate() refuses lockstep with the seed layout")
        };
        reader.poll_step_by(need, &mut self.frames[1 - self.taken], poll)
    }

    /// Framed layout: the newest frame of the ring, read into the scratch
    /// frame. On a redundant device, ring A's unless ring B's head word is
    /// ahead of it or A holds none whole.
    #[inline]
    pub fn read_latest(&mut self) -> Result<Header, ReadError> {
        let Reader::Framed(reader) = &self.reader else {
            unreachable!("framed reader")
        };
        if !self.area.is_redundant() {
            return reader.read_latest(&mut self.frames[1 - self.taken]);
        }
        self.read_latest_of_rings()
    }

    /// A redundant device: which ring the frames came from, and failovers.
    pub fn rings(&self) -> &RingStats {
        &self.rings
    }

    pub(crate) fn rings_mut(&mut self) -> &mut RingStats {
        &mut self.rings
    }

    /// After a frame was taken from the ring loads read: counts it, and looks
    /// at the other ring's head word now and then, to know whether it still
    /// carries this writer's frames.
    fn took_from_ring(&mut self, step: u64, now: Instant) {
        let ring = self.area.reading();
        self.rings.took(ring, now);
        if !self.rings.probe_due(now) {
            return;
        }
        let Reader::Framed(reader) = &self.reader else {
            return;
        };
        self.area.read_from(ring.other());
        if let Ok(head) = reader.head() {
            if (head.wrapping_sub(step as u32) as i32) >= 0 {
                self.rings.saw_current(ring.other(), now);
            }
        }
        self.area.read_from(ring);
    }

    /// Framed layout: the newest frame's header, read into a buffer of its own
    /// (the scratch frame is left as it is).
    pub(crate) fn peek_latest(&self) -> Result<Header, ReadError> {
        let Reader::Framed(reader) = &self.reader else {
            unreachable!("framed reader")
        };
        reader.read_latest(&mut reader.buffer())
    }

    /// Framed layout: takes, oldest first, the frames of the taken frame's
    /// session published after it and before the newest that the ring still
    /// holds (the newest is [`Observer::read_latest`]'s). A viewer that reads
    /// less often than its writer publishes (`rfmctl watch`, every millisecond
    /// or so) then counts as lost only what left the ring before it looked,
    /// not every frame between two of its looks: a node that publishes in
    /// bursts, as a master catching up with real time does, loses nothing.
    /// A frame it cannot read whole ends the catching up: the newest frame
    /// read after it says the rest.
    pub fn take_held(&mut self, now: Instant) {
        let (Some(last), Reader::Framed(reader)) = (self.latest, &self.reader) else {
            return;
        };
        // The writer's head word (one load, the low 32 bits of its newest
        // step), not the newest frame: nothing is read twice when nothing was
        // published between two looks, the common case.
        let Ok(head) = reader.head() else {
            return;
        };
        let ahead = head.wrapping_sub(last.step as u32) as i32;
        let until = last.step + u64::try_from(ahead).unwrap_or(0);
        // Older entries than the ring's depth are certainly overwritten.
        let depth = self.geometry.depth as u64;
        let from = (last.step + 1).max(until.saturating_sub(depth - 1));
        for k in from..until {
            match self.poll_step(k, self.poll) {
                Ok(StepPoll::Ready(h)) if h.epoch == last.epoch => {
                    self.accept(h, Some(h.epoch), now);
                }
                Ok(StepPoll::Overwritten { .. }) => {}
                // Another session, not there, or unreadable now.
                Ok(StepPoll::Ready(_) | StepPoll::NotYet) | Err(_) => break,
            }
        }
    }

    /// Seed layout: the article's packet now, sealed into the scratch frame as
    /// a frame of the area's slot whose step is the packet id.
    pub fn read_seed(&mut self) -> Result<Header, ReadError> {
        let Reader::Seed(reader) = &self.reader else {
            unreachable!("seed reader")
        };
        let p = reader.read()?;
        let scratch = &mut self.frames[1 - self.taken];
        seed::to_payload(&p, scratch.payload_mut());
        let h = Header {
            writer_slot: self.geometry.slot,
            step: p.packet_id,
            sim_time: p.timestamp,
            ..Header::default()
        };
        // The digest of a packet: sealing computes a CRC over what it carries.
        scratch.seal(&h);
        Ok(h)
    }

    /// Whether the writer uses the article's layout.
    pub fn is_seed(&self) -> bool {
        matches!(self.reader, Reader::Seed(_))
    }

    /// The packet id the article's writer shows now, if it shows one.
    pub(crate) fn seed_packet(&self) -> Option<u64> {
        match &self.reader {
            Reader::Seed(reader) => reader.read().ok().map(|p| p.packet_id),
            Reader::Framed(_) => None,
        }
    }

    /// Takes the frame in the scratch frame (header `h`, of session `epoch`) if
    /// it is new to the health tracker; whether it was.
    #[inline]
    pub fn accept(&mut self, h: Header, epoch: Option<u64>, now: Instant) -> bool {
        self.accept_counting(h, epoch, now, true)
    }

    /// [`Observer::accept`] for the frame a lockstep step needed: the writer's
    /// frames it passes over are not lost ([`PeerHealth::observe_chosen`]).
    #[inline]
    pub(crate) fn accept_chosen(&mut self, h: Header, epoch: Option<u64>, now: Instant) -> bool {
        self.accept_counting(h, epoch, now, false)
    }

    #[inline]
    fn accept_counting(
        &mut self,
        h: Header,
        epoch: Option<u64>,
        now: Instant,
        gaps_lost: bool,
    ) -> bool {
        let id = FrameId {
            epoch,
            step: h.step,
            digest: framed::crc_of(self.frames[1 - self.taken].bytes()),
        };
        let seen = if gaps_lost {
            self.health.observe(id, now)
        } else {
            self.health.observe_chosen(id, now)
        };
        let new = matches!(
            seen,
            Observation::First | Observation::Fresh { .. } | Observation::Restarted { .. }
        );
        if new {
            self.taken = 1 - self.taken;
            self.latest = Some(h);
            self.has_taken = true;
            if self.area.is_redundant() {
                self.took_from_ring(h.step, now);
            }
        }
        new
    }

    /// Counts a complete but corrupt frame.
    pub fn observe_bad(&mut self) {
        self.health.observe_bad();
    }

    /// Counts a restart of the writer.
    pub(crate) fn count_restart(&mut self) {
        self.health.restarts += 1;
    }
}

/// The nodes that describe themselves in `region` (of `slots`, if given), in slot
/// order; a slot described twice (a stale area left by an earlier coupling)
/// gives the one held by the session that wrote its descriptor, else the last
/// found.
pub fn described(region: &Region, slots: &[u8]) -> Result<Vec<Found>, RegionError> {
    let mut found = discover(region)?;
    found.retain(|f| slots.is_empty() || slots.contains(&f.descriptor.slot));
    let held = |f: &Found| {
        rfm_frames::area::window(region, &f.area)
            .ok()
            .and_then(|a| Words::read(&a).ok())
            .is_some_and(|w| w.is_held() && ownership::owned_by(&w, f.descriptor.session))
    };
    let mut chosen: Vec<Found> = Vec::new();
    for f in found {
        match chosen
            .iter_mut()
            .find(|c| c.descriptor.slot == f.descriptor.slot)
        {
            Some(c) if held(c) && !held(&f) => {}
            Some(c) => *c = f,
            None => chosen.push(f),
        }
    }
    chosen.sort_by_key(|f| f.descriptor.slot);
    Ok(chosen)
}
