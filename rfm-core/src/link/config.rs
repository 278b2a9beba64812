//! What a link is asked to do: the device, the slots, the mode and lag, the
//! waiting and the timeouts. The FMU's parameters map onto it one to one, and
//! [`LinkConfig::validate`] refuses a combination before anything is opened.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::error::config_error;
use super::LinkError;
use crate::realtime::RealTime;
use rfm_frames::area::MAX_LAG;
use rfm_frames::frame::framed::SyncMode;
use rfm_frames::wait::WaitStrategy;
use rfm_interface::Interface;
use rfm_memory::WORD;

/// The shortest `timeout`: ten heartbeats ([`rfm_frames::area::HEARTBEAT_PERIOD`]).
/// A shorter one takes a peer a scheduler held up a few beats for dead.
pub const MIN_TIMEOUT: Duration = Duration::from_millis(100);

const _: () =
    assert!(MIN_TIMEOUT.as_millis() == 10 * rfm_frames::area::HEARTBEAT_PERIOD.as_millis());
const _: () = assert!(
    MIN_TIMEOUT.as_millis() as f64 == rfm_interface::settings::MIN_TIMEOUT_SECONDS * 1000.0
);

/// Which frame layout the link speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    #[default]
    Framed,
    /// The article's `FlightData`: free mode only (it has no step ring or session).
    Seed,
}

impl Layout {
    /// Each layout by the name the FMU's `layout` parameter gives it: both
    /// directions read this one table.
    const NAMES: [(&'static str, Layout); 2] = [("framed", Layout::Framed), ("seed", Layout::Seed)];
}

impl std::str::FromStr for Layout {
    type Err = String;

    fn from_str(s: &str) -> Result<Layout, String> {
        rfm_frames::names::parse(&Layout::NAMES, s)
            .ok_or_else(|| format!("unknown layout `{s}`; expected framed or seed"))
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(rfm_frames::names::name_of(&Layout::NAMES, self))
    }
}

/// Everything a link needs; the FMU's parameters map onto it one to one.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// The signals exchanged; `None`: the attitude preset for `node_slot` and
    /// `peer_slot` ([`rfm_interface::attitude`]).
    pub interface: Option<Arc<Interface>>,
    pub device: String,
    pub rfm2g_library: Option<PathBuf>,
    pub region_offset: u64,
    /// This node's slot (with an interface: which of its nodes this is).
    pub node_slot: u8,
    /// The attitude preset's peer (with an interface, every other node is a peer).
    pub peer_slot: u8,
    pub mode: SyncMode,
    pub lag: u8,
    pub wait: WaitStrategy,
    pub layout: Layout,
    /// Longest wait for a peer frame once the link runs (free mode: the age after
    /// which the link is reported down).
    pub timeout: Duration,
    /// Longest wait for the peer's first frame.
    pub startup_timeout: Duration,
    /// Longest wait in a lockstep step for a bound peer whose heartbeat beats
    /// but which has not published the frame (a frozen or slow master): late is
    /// not dead. A peer whose heartbeat stops is still found dead within
    /// `timeout`, and one that closed its slot at once.
    pub idle_timeout: Duration,
    /// Pacing to the wall clock: step k returns no earlier than
    /// factor × (its communication point − the first's) after the first step
    /// returned; 0: as fast as it can.
    pub real_time_factor: f64,
    /// How frames are read where every load is a PCIe round trip.
    pub card: CardReads,
    /// The cores and priority of the link's own heartbeat thread: what the
    /// stepping thread was granted of the FMU's real-time settings
    /// ([`crate::realtime`]), so a refused setting is not tried again.
    pub realtime: RealTime,
}

/// The settings as one line of `key = value`, keyed by the FMU's parameter
/// names: what a master's log shows when the FMU's debug logging is on, which
/// a user compares with the parameters they set (a Rust struct's `Debug` named
/// fields they never saw).
impl std::fmt::Display for LinkConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.interface {
            Some(i) => {
                let node = i
                    .nodes
                    .iter()
                    .find(|n| n.slot == self.node_slot)
                    .map_or("?", |n| n.name.as_str());
                write!(
                    f,
                    "interface = {}, node = {node}, slot = {}",
                    i.name, self.node_slot
                )?
            }
            None => write!(
                f,
                "interface = attitude preset, nodeSlot = {}, peerSlot = {}",
                self.node_slot, self.peer_slot
            )?,
        }
        write!(f, ", device = {}", self.device)?;
        match &self.rfm2g_library {
            Some(path) => write!(f, ", rfm2gLibrary = {}", path.display())?,
            None => f.write_str(", rfm2gLibrary = (the system's)")?,
        }
        write!(
            f,
            ", regionOffset = {:#x}, syncMode = {}, lag = {}, waitStrategy = {}, layout = {}, \
             timeout = {} s, startupTimeout = {} s, idleTimeout = {} s, realTimeFactor = {}",
            self.region_offset,
            self.mode,
            self.lag,
            self.wait,
            self.layout,
            self.timeout.as_secs_f64(),
            self.startup_timeout.as_secs_f64(),
            self.idle_timeout.as_secs_f64(),
            self.real_time_factor,
        )?;
        match self.card.block_from {
            Some(bytes) => write!(f, ", rfm2gReadThreshold = {bytes}")?,
            None => f.write_str(", rfm2gReadThreshold = 0 (word by word)")?,
        }
        write!(f, ", {}", self.realtime)
    }
}

/// How a link reads an RFM2g card, where each load of the mapping stalls for
/// a PCIe round trip (1-5 µs) and a DMA transfer has a fixed cost (~14.5 µs):
/// see the book's "The card's costs" (`docs/src/design/card-model.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardReads {
    /// Frames of at least this many bytes are read with one `RFM2gRead`, which
    /// the driver turns into DMA (only used when the driver's DMA threshold
    /// lets it); `None`: always word by word. The FMU's `rfm2gReadThreshold`.
    pub block_from: Option<u32>,
    /// What a try of a lockstep wait loads; `None`: by the memory, [`WaitPoll::Head`]
    /// on an RFM2g board, [`WaitPoll::Entry`] in host memory.
    pub poll: Option<WaitPoll>,
}

/// What a try of a lockstep wait loads before it reads the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPoll {
    /// The writer's head word, stored after the frame: one load a try, what a
    /// card wants (each load is a PCIe round trip).
    Head,
    /// The entry's sequence and step: three loads, but in host memory one
    /// cache line, the one the frame is then copied from (the head word would
    /// cost a second line a step). On a card, the path before its costs were
    /// counted, kept so that the benchmark measures both in one run.
    Entry,
}

/// The default [`CardReads::block_from`]: one 64-byte ring packet. From about
/// 60 bytes on, one DMA transfer (14.5 µs fixed) costs less than word loads at
/// 1 µs each (`rfm_card`); at 3 µs a read it pays from about 20 bytes.
pub const BLOCK_READ_FROM: u32 = 64;

impl Default for CardReads {
    fn default() -> CardReads {
        CardReads {
            block_from: Some(BLOCK_READ_FROM),
            poll: None,
        }
    }
}

/// The default [`LinkConfig::idle_timeout`]: five minutes, as long as an
/// instructor's freeze usually lasts (a debugger's breakpoint stops the
/// heartbeat too: that peer is dead after `timeout`, not late).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// The device form that plays the peers from a recording: `replay:PATH`.
pub const REPLAY_PREFIX: &str = "replay:";

impl Default for LinkConfig {
    fn default() -> LinkConfig {
        LinkConfig {
            interface: None,
            device: "/dev/rfm2g0".into(),
            rfm2g_library: None,
            region_offset: 0,
            node_slot: 0,
            peer_slot: 1,
            mode: SyncMode::Lockstep,
            lag: 0,
            wait: WaitStrategy::Spin,
            layout: Layout::Framed,
            timeout: Duration::from_secs(1),
            startup_timeout: Duration::from_secs(30),
            idle_timeout: IDLE_TIMEOUT,
            real_time_factor: 0.0,
            card: CardReads::default(),
            realtime: RealTime::default(),
        }
    }
}

impl LinkConfig {
    /// Checks the combination before anything is opened.
    pub fn validate(&self) -> Result<(), LinkError> {
        let max_lag = self.interface.as_ref().map_or(MAX_LAG, |i| i.max_lag);
        if self.lag > max_lag {
            return Err(config_error(
                "lag",
                self.lag,
                format!(
                    "at most {max_lag}: the rings are sized for it (max_lag of the interface, \
                     default {MAX_LAG})"
                ),
            ));
        }
        if !self.region_offset.is_multiple_of(WORD as u64) {
            return Err(config_error(
                "regionOffset",
                self.region_offset,
                "must be a multiple of 4 bytes",
            ));
        }
        if self.layout == Layout::Seed && self.mode == SyncMode::Lockstep {
            return Err(config_error(
                "layout",
                "seed",
                "the seed layout (the article's FlightData) has no step ring: use syncMode = free with it, or layout = framed for lockstep",
            ));
        }
        if self.timeout < MIN_TIMEOUT {
            return Err(config_error(
                "timeout",
                format!("{} s", self.timeout.as_secs_f64()),
                format!(
                    "must be at least {} s: ten heartbeats, or a live peer a scheduler held up \
                     looks dead",
                    MIN_TIMEOUT.as_secs_f64()
                ),
            ));
        }
        for (name, value) in [
            ("timeout", self.timeout),
            ("startupTimeout", self.startup_timeout),
            ("idleTimeout", self.idle_timeout),
        ] {
            if value.is_zero() {
                return Err(config_error(name, "0 s", "must be greater than 0 s"));
            }
        }
        if !(self.real_time_factor.is_finite() && self.real_time_factor >= 0.0) {
            return Err(config_error(
                "realTimeFactor",
                self.real_time_factor,
                "expected 0 (as fast as possible), 1 (real time) or another factor ≥ 0",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FMU's default block size is where one DMA transfer starts to cost
    /// less than word loads at the cheapest round trip modeled.
    #[test]
    fn the_default_block_read_is_where_dma_starts_to_pay() {
        let at_1us = rfm_card::READ_ROUND_TRIPS_NS[0].1;
        let from = u64::from(BLOCK_READ_FROM);
        assert!(rfm_card::dma_pays(from, at_1us), "DMA pays at the default");
        assert!(
            !rfm_card::dma_pays(from - 8, at_1us),
            "DMA pays already two words below the default: lower it"
        );
    }
}
