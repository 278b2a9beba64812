//! A foreign node as a link sees it: the newest whole struct its program
//! wrote, taken at every step by its handshake, and what that took (retries,
//! reads given up, 64-bit values a Real holds rounded) and whether the program
//! lives (its marker or bytes moved), and on two rings which ring gave each
//! struct; or, for a struct this node's FMU writes for the lab's programs
//! (to both rings), its writer.

use std::time::{Duration, Instant};

use rfm_frames::fmi::Value;
use rfm_frames::frame::framed::SyncMode;
use rfm_frames::packed::{self, CType, Outcome, StructReader, StructWriter};
use rfm_interface::{ForeignNode, Handshake, Interface, StepRatio};

use super::observer::RingStats;
use super::{replay, LinkConfig, LinkError, Node};
use rfm_memory::{Network, Region, RegionError};

/// One foreign node's reading.
#[derive(Debug)]
pub struct ForeignPeer {
    /// Its index in [`rfm_interface::Interface::foreign`].
    node: usize,
    io: Io,
    /// The newest whole struct taken (zeros before the first).
    bytes: Vec<u8>,
    taken: bool,
    /// When its marker (or its bytes) last moved since the first struct seen.
    moved_at: Option<Instant>,
    /// The fields of 64-bit integers: checked for values past 2^53 at each
    /// new struct.
    wide: Vec<usize>,
    pub counts: ForeignCounts,
    /// On two rings: which ring gave each new struct, the failovers, and
    /// when each ring last held the newest.
    rings: RingStats,
    /// In lockstep, for a counter of a declared period: how this node's steps
    /// map onto its writer's, which a step then waits for.
    pub lockstep: Option<StepRatio>,
}

/// Which way the struct goes.
#[derive(Debug)]
enum Io {
    Read(StructReader),
    /// This node's FMU writes it.
    Write(StructWriter),
}

/// What reading a foreign node took, since the link opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForeignCounts {
    /// Copies beyond the first that reads needed.
    pub retries: u64,
    /// Steps at which no whole struct could be taken (the last one stays).
    pub gave_up: u64,
    /// 64-bit integers read past 2^53 in magnitude, which a Real holds rounded.
    pub inexact: u64,
    /// Times its program moved the marker (or the bytes) since the first look.
    pub moves: u64,
    /// Two rings, no counter: reads at which the rings held different whole
    /// structs and neither could be told newer (the struct before stayed).
    pub unsettled: u64,
}

/// Every foreign node of a link.
impl ForeignPeer {
    /// The foreign nodes of `interface` over `region`, each read or written
    /// by this node as the file says; in lockstep, with the ratio of this
    /// node's steps to a counter's declared period.
    pub(super) fn all(
        region: &Region,
        interface: &Interface,
        config: &LinkConfig,
    ) -> Result<Vec<ForeignPeer>, RegionError> {
        let me = (interface.nodes.iter()).position(|n| n.slot == config.node_slot);
        let mut foreign = (interface.foreign.iter().enumerate())
            .map(|(i, f)| ForeignPeer::new(region, i, f, f.writer.is_some() && f.writer == me))
            .collect::<Result<Vec<_>, _>>()?;
        if config.settings.mode == SyncMode::Lockstep {
            let mine = me.and_then(|m| interface.nodes[m].period);
            for (peer, f) in foreign.iter_mut().zip(&interface.foreign) {
                if let (
                    Some(mine),
                    Handshake::Counter {
                        period: Some(p), ..
                    },
                ) = (mine, &f.handshake)
                {
                    peer.lockstep = StepRatio::of(mine, *p);
                }
            }
        }
        Ok(foreign)
    }

    /// Takes the newest whole struct of every foreign node: free, or in
    /// lockstep for a counter of a declared period, once its counter shows
    /// the write step `k` needs by the rule on time (the struct holds only
    /// the newest write: that one or a later).
    #[inline(never)]
    pub(super) fn read_all(
        peers: &mut [ForeignPeer],
        node: &Node,
        k: u64,
        now: Instant,
    ) -> Result<(), LinkError> {
        let device = &node.config().settings.device;
        let interface = node.interface();
        let (lag, timeout) = (node.config().settings.lag, node.config().settings.timeout);
        for peer in peers {
            let foreign = &interface.foreign[peer.node()];
            peer.read(foreign, now)?;
            let Some(ratio) = peer.lockstep else {
                continue;
            };
            let needed = ratio.frame_needed(k, lag);
            let mut polls = 0u32;
            while needed > 0 && peer.writes().is_none_or(|w| w < needed) {
                let waited = now.elapsed();
                if waited > timeout {
                    let period = match &foreign.handshake {
                        Handshake::Counter {
                            period: Some(p), ..
                        } => p.to_string(),
                        _ => String::new(),
                    };
                    return Err(LinkError::ForeignBehind {
                        device: device.to_string(),
                        node: foreign.name.clone(),
                        period,
                        step: k,
                        needed,
                        writes: peer.writes(),
                        waited,
                    });
                }
                // A program's write is a period away: spin briefly, then
                // give the core away between looks.
                if polls < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::sleep(Duration::from_micros(20));
                }
                polls += 1;
                peer.read(foreign, Instant::now())?;
            }
        }
        Ok(())
    }
}

impl ForeignPeer {
    /// A replay's step `k` (at `now`): each struct as the recorded step had
    /// read it (the replay's private memory holds none).
    pub(super) fn replay_all(
        peers: &mut [ForeignPeer],
        player: &mut replay::Player,
        interface: &Interface,
        k: u64,
        now: Instant,
    ) -> Result<(), LinkError> {
        for (i, peer) in peers.iter_mut().enumerate() {
            if let Some(bytes) = player.struct_at(i, k)? {
                peer.replayed(&interface.foreign[i], bytes, now);
            }
        }
        Ok(())
    }

    /// The reading of foreign node `index` of the interface, or its writing
    /// when `writes`.
    pub fn new(
        region: &Region,
        index: usize,
        node: &ForeignNode,
        writes: bool,
    ) -> Result<ForeignPeer, RegionError> {
        let offset = usize::try_from(node.offset).expect("the map fits the memory");
        let (size, mark, order) = (node.layout.size, node.mark(), node.layout.order);
        let io = if writes {
            StructWriter::new(region, offset, size, mark, order).map(Io::Write)
        } else {
            StructReader::new(region, offset, size, mark, order).map(Io::Read)
        }
        .map_err(|e| match e {
            packed::ReaderError::Region(e) => e,
            // The interface file refuses unaligned markers.
            packed::ReaderError::UnalignedMarker { offset, width, .. } => {
                RegionError::UnalignedAccess { offset, width }
            }
        })?;
        let wide = (node.layout.fields.iter().enumerate())
            .filter(|(_, f)| matches!(f.ctype, CType::Int64 | CType::Uint64))
            .map(|(i, _)| i)
            .collect();
        Ok(ForeignPeer {
            node: index,
            io,
            bytes: vec![0; node.layout.size],
            taken: false,
            moved_at: None,
            wide,
            counts: ForeignCounts::default(),
            rings: RingStats::default(),
            lockstep: None,
        })
    }

    /// Its index in the interface's foreign nodes.
    pub fn node(&self) -> usize {
        self.node
    }

    /// Takes the newest whole struct at `now`, if the handshake gives one.
    pub fn read(&mut self, node: &ForeignNode, now: Instant) -> Result<(), RegionError> {
        let Io::Read(reader) = &mut self.io else {
            return Ok(());
        };
        let read = reader.read(&mut self.bytes)?;
        self.counts.retries += u64::from(read.retries);
        for ring in Network::BOTH {
            if read.holding[ring.index()] {
                self.rings.saw_current(ring, now);
            }
        }
        match read.outcome {
            Outcome::Taken => {
                if read.changed {
                    self.rings.took(read.ring, now);
                    // The first struct seen says nothing of its program: one
                    // that stopped long ago left it there. Only a move since
                    // makes it alive.
                    if self.taken {
                        self.moved_at = Some(now);
                        self.counts.moves += 1;
                    }
                    self.count_inexact(node);
                }
                self.taken = true;
            }
            Outcome::GaveUp => self.counts.gave_up += 1,
            Outcome::Unsettled => self.counts.unsettled += 1,
            Outcome::NotMarked => {}
        }
        Ok(())
    }

    /// Takes `bytes` as its newest struct at `now`, as a read that found them
    /// would (a replay's: the struct the recorded step had read).
    fn replayed(&mut self, node: &ForeignNode, bytes: &[u8], now: Instant) {
        let reads = matches!(self.io, Io::Read(_));
        if !reads || bytes.len() != self.bytes.len() || (self.taken && bytes == self.bytes) {
            return;
        }
        self.bytes.copy_from_slice(bytes);
        if self.taken {
            self.moved_at = Some(now);
            self.counts.moves += 1;
        }
        self.taken = true;
        self.count_inexact(node);
    }

    fn count_inexact(&mut self, node: &ForeignNode) {
        for &i in &self.wide {
            let field = &node.layout.fields[i];
            let order = node.layout.order;
            self.counts.inexact += (0..field.elements())
                .filter(|&e| packed::decode(field, e, &self.bytes, order).is_some_and(|d| !d.exact))
                .count() as u64;
        }
    }

    /// Writes `bytes` (the whole struct) for the lab's programs, if this node
    /// writes it.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), RegionError> {
        match &mut self.io {
            Io::Write(writer) => writer.write(bytes),
            Io::Read(_) => Ok(()),
        }
    }

    /// The writes its program made by its counter, as of the last struct
    /// taken (`None` without a counter, or before the first).
    pub fn writes(&self) -> Option<u64> {
        match &self.io {
            Io::Read(reader) => reader.writes(),
            Io::Write(_) => None,
        }
    }

    /// The newest whole struct taken, and which one it is: 0 for the first,
    /// then one more at each move of its program (a recording writes each
    /// once). `None` before the first, and for a struct this node writes.
    pub fn newest(&self) -> Option<(&[u8], u64)> {
        let reads = matches!(self.io, Io::Read(_));
        (reads && self.taken).then_some((&self.bytes, self.counts.moves))
    }

    /// On two rings: which ring gave its structs, and the failovers.
    pub fn rings(&self) -> &RingStats {
        &self.rings
    }

    pub(crate) fn rings_mut(&mut self) -> &mut RingStats {
        &mut self.rings
    }

    /// Whether this node's FMU writes it (it is read by the lab's programs).
    pub fn writes_struct(&self) -> bool {
        matches!(self.io, Io::Write(_))
    }

    /// Whether a whole struct was ever taken (a flag never set gives none).
    pub fn taken(&self) -> bool {
        self.taken
    }

    /// Element `i` of field `field` of the newest struct; `None` before the first.
    pub fn value(&self, node: &ForeignNode, field: usize, i: usize) -> Option<Value> {
        if !self.taken {
            return None;
        }
        let f = &node.layout.fields[field];
        packed::decode(f, i, &self.bytes, node.layout.order).map(|d| d.value)
    }

    /// Time since its program last moved the marker (or the bytes); `None`
    /// while it has not moved them since the first look.
    pub fn age(&self, now: Instant) -> Option<Duration> {
        self.moved_at.map(|t| now.saturating_duration_since(t))
    }

    /// Whether its program moved the struct within `timeout` of `now`.
    pub fn alive(&self, now: Instant, timeout: Duration) -> bool {
        self.age(now).is_some_and(|a| a <= timeout)
    }
}
