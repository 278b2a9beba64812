//! One peer as a node sees it: its area, the session its frames are taken from,
//! its health, and the newest frame taken (kept in place: outputs are read from it).

use std::time::{Duration, Instant};

use super::handshake::Handshake;
use super::liveness::{Words, MIN_SILENCE};
use super::{Layout, LinkConfig};
use crate::area::Area;
use crate::frame::framed::{self, FrameBuf, Header};
use crate::frame::seed;
use crate::health::{FrameId, Observation, PeerHealth};
use crate::region::{Region, RegionError};
use crate::slot::{FramedReader, Ring, SeedReader};

pub(crate) enum Reader {
    Framed(FramedReader),
    Seed(SeedReader),
}

/// The article's packets carry no session and no heartbeat: a seed peer is live
/// while its packet id moves. The id found when this node started proves nothing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SeedWatch {
    pub(crate) baseline: Option<u64>,
    pub(crate) moved: Option<(u64, Instant)>,
}

/// One peer's state in this node.
pub struct Peer {
    /// Its index in the interface's nodes.
    pub(crate) node: usize,
    pub(crate) slot: u8,
    pub(crate) area: Region,
    pub(crate) geometry: Area,
    pub(crate) reader: Reader,
    pub(crate) handshake: Handshake,
    pub(crate) seed: SeedWatch,
    pub(crate) health: PeerHealth,
    /// The newest frame taken (`frames[taken]`, header `latest`), and where
    /// frames are read before they are taken (the other). Taking one flips
    /// `taken`: the buffers never move, because a swap of them (stored as
    /// vectors) stalled the next get that loaded a buffer's address.
    pub(crate) frames: [FrameBuf; 2],
    pub(crate) taken: usize,
    pub(crate) latest: Option<Header>,
    /// `latest.is_some()`, in a byte of its own for the per-step getters: the
    /// header is stored as vectors, and a byte loaded from it waited for them.
    has_taken: bool,
    /// The peer is this node (the attitude preset's `nodeSlot == peerSlot`).
    pub(crate) self_loop: bool,
    /// Lockstep: this step's frame was taken.
    pub(crate) got: bool,
    /// A complete frame of the step was there, but of a session not proven live.
    pub(crate) unproven: Option<u64>,
    /// This step's wait saw a corrupt frame (counted once per step).
    pub(crate) bad_seen: bool,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("slot", &self.slot)
            .field("bound", &self.handshake.bound())
            .field("latest", &self.latest)
            .finish_non_exhaustive()
    }
}

impl Peer {
    pub(crate) fn new(
        config: &LinkConfig,
        region: &Region,
        node: usize,
        geometry: &Area,
        own_epoch: Option<u64>,
        now: Instant,
    ) -> Result<Peer, RegionError> {
        let area = crate::area::window(region, geometry)?;
        let ring = Ring::of(geometry);
        let reader = match config.layout {
            Layout::Framed => Reader::Framed(FramedReader::new(area.clone(), ring)?),
            Layout::Seed => Reader::Seed(SeedReader::new(area.clone())?),
        };
        Ok(Peer {
            node,
            slot: geometry.slot,
            handshake: Handshake::new(
                Words::read(&area)?,
                now,
                config.mode,
                config.timeout,
                own_epoch,
            ),
            area,
            geometry: geometry.clone(),
            reader,
            seed: SeedWatch::default(),
            health: PeerHealth::new(),
            frames: [
                FrameBuf::new(geometry.payload.len),
                FrameBuf::new(geometry.payload.len),
            ],
            taken: 0,
            latest: None,
            has_taken: false,
            self_loop: own_epoch.is_some(),
            got: false,
            unproven: None,
            bad_seen: false,
        })
    }

    /// Starts watching again from `now`: what the peer did before proves nothing.
    pub(crate) fn rewatch(
        &mut self,
        config: &LinkConfig,
        own_epoch: u64,
        now: Instant,
    ) -> Result<(), RegionError> {
        self.handshake = Handshake::new(
            Words::read(&self.area)?,
            now,
            config.mode,
            config.timeout,
            self.self_loop.then_some(own_epoch),
        );
        if let Reader::Seed(reader) = &self.reader {
            self.seed.baseline = reader.read().ok().map(|p| p.packet_id);
        }
        Ok(())
    }

    /// The interface index of the peer node.
    pub fn node(&self) -> usize {
        self.node
    }

    pub fn slot(&self) -> u8 {
        self.slot
    }

    pub fn health(&self) -> &PeerHealth {
        &self.health
    }

    /// The header of the newest frame taken.
    pub fn latest(&self) -> Option<&Header> {
        self.latest.as_ref()
    }

    /// The peer's signals as of the newest frame taken (zeros before the first).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        self.frames[self.taken].payload()
    }

    /// The peer's signals, once a frame was taken.
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

    /// The peer session frames are taken from (framed layout), once there is one.
    pub fn bound(&self) -> Option<u64> {
        self.handshake.bound()
    }

    pub(crate) fn observe(&mut self, now: Instant) -> Result<(), RegionError> {
        let words = Words::read(&self.area)?;
        self.handshake.observe(words, now);
        Ok(())
    }

    /// Takes the frame in `scratch` (header `h`) if it is new to the health tracker.
    pub(crate) fn accept(&mut self, h: Header, epoch: Option<u64>, now: Instant) {
        let id = FrameId {
            epoch,
            step: h.step,
            digest: framed::crc_of(self.frames[1 - self.taken].bytes()),
        };
        if matches!(
            self.health.observe(id, now),
            Observation::First | Observation::Fresh { .. } | Observation::Restarted { .. }
        ) {
            self.taken = 1 - self.taken;
            self.latest = Some(h);
            self.has_taken = true;
        }
    }

    /// Free mode, seed layout: takes the article's packet if its id moved.
    pub(crate) fn read_seed(&mut self, now: Instant) -> Result<(), crate::slot::ReadError> {
        let Reader::Seed(reader) = &self.reader else {
            unreachable!("seed reader")
        };
        let p = reader.read()?;
        let id = p.packet_id;
        let moved = match self.seed.moved {
            Some((last, _)) => id != last,
            None => Some(id) != self.seed.baseline,
        };
        if moved {
            self.seed.moved = Some((id, now));
            seed::to_payload(&p, self.scratch().payload_mut());
            let h = Header {
                writer_slot: self.slot,
                step: id,
                sim_time: p.timestamp,
                ..Header::default()
            };
            // The digest of a packet: sealing computes a CRC over what it carries.
            self.scratch().seal(&h);
            self.accept(h, None, now);
        }
        Ok(())
    }

    /// Free mode's `link.ok` after a read at `now`: the peer session frames are
    /// taken from is running (heartbeat; seed layout: its packet id moved within
    /// `timeout`).
    pub fn alive(&self, now: Instant, timeout: Duration) -> bool {
        if self.self_loop {
            return true;
        }
        match self.reader {
            Reader::Framed(_) => self.handshake.alive(now),
            Reader::Seed(_) => self
                .seed
                .moved
                .is_some_and(|(_, t)| now.saturating_duration_since(t) < timeout.max(MIN_SILENCE)),
        }
    }
}
