//! The FMU's parameters: one table, from which both the variables of every FMU
//! (and so its modelDescription.xml) and the instance's storage are made.

use super::kind::Kind;

/// A parameter, by meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    Device,
    Rfm2gLibrary,
    RegionOffset,
    NodeSlot,
    PeerSlot,
    SyncMode,
    Lag,
    WaitStrategy,
    Layout,
    Timeout,
    StartupTimeout,
    IdleTimeout,
    RealTimeFactor,
    RecordFile,
    RecordOverwrite,
    Rfm2gReadThreshold,
    CpuAffinity,
    RealtimePriority,
    LockMemory,
}

/// One row of [`PARAMS`].
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub param: Param,
    pub name: &'static str,
    pub kind: Kind,
    /// The start value, as the XML writes it.
    pub start: &'static str,
    pub unit: Option<&'static str>,
    pub min: Option<&'static str>,
    pub max: Option<&'static str>,
    pub description: &'static str,
    /// Only the attitude preset has it (an interface file gives the slots).
    pub preset_only: bool,
}

const fn row(
    param: Param,
    name: &'static str,
    kind: Kind,
    start: &'static str,
    description: &'static str,
) -> ParamSpec {
    ParamSpec {
        param,
        name,
        kind,
        start,
        unit: None,
        min: None,
        max: None,
        description,
        preset_only: false,
    }
}

/// Every parameter, in value-reference order (they come first in every FMU).
pub const PARAMS: &[ParamSpec] = &[
    row(
        Param::Device,
        "device",
        Kind::String,
        "/dev/rfm2g0",
        "Reflective memory: /dev/rfm2gN or \\\\.\\rfm2gN (RFM2g board), shm:NAME (shared memory on this host), loopback:NAME (this process), or replay:PATH (the peers played from a recording of this node or a peer)",
    ),
    row(
        Param::Rfm2gLibrary,
        "rfm2gLibrary",
        Kind::String,
        "",
        "RFM2g vendor library to load; empty: librfm2g.so (Linux) or rfm2gdll_stdc_64.dll (Windows) from the search path",
    ),
    row(
        Param::RegionOffset,
        "regionOffset",
        Kind::Integer,
        "0",
        "Byte offset in the memory where the coupling's areas start (a multiple of 4; the same on every node)",
    ),
    ParamSpec {
        min: Some("0"),
        max: Some("255"),
        preset_only: true,
        ..row(
            Param::NodeSlot,
            "nodeSlot",
            Kind::Integer,
            "0",
            "This node's slot, 0..255: only this node writes it",
        )
    },
    ParamSpec {
        min: Some("0"),
        max: Some("255"),
        preset_only: true,
        ..row(
            Param::PeerSlot,
            "peerSlot",
            Kind::Integer,
            "1",
            "The peer's slot, 0..255 (equal to nodeSlot: a self-loop)",
        )
    },
    row(
        Param::SyncMode,
        "syncMode",
        Kind::String,
        "lockstep",
        "lockstep: every step waits for each peer's frame of step k - lag (deterministic); free: never waits, takes the newest frames",
    ),
    ParamSpec {
        min: Some("0"),
        max: Some("7"),
        ..row(
            Param::Lag,
            "lag",
            Kind::Integer,
            "0",
            "Lockstep lag in this node's steps (at most the interface's max_lag, 7 unless it says): step k takes each peer's frame of the time (k - lag) x period; 0 for concurrent masters, 1 lets one master step all instances in turn",
        )
    },
    row(
        Param::WaitStrategy,
        "waitStrategy",
        Kind::String,
        "adaptive",
        "adaptive (spins a few microseconds, then yields, then sleeps: fast with cores to spare, and it holds with more nodes than cores), spin (lowest latency, one core busy: for pinned dedicated cores), yield, sleep (low CPU), event (RFM2g network interrupts)",
    ),
    row(
        Param::Layout,
        "layout",
        Kind::String,
        "framed",
        "framed (seqlocked, CRC-checked frames by step) or seed (the article's FlightData, attitude FMU in free mode only)",
    ),
    ParamSpec {
        unit: Some("s"),
        // rfm_core::link::MIN_TIMEOUT: ten heartbeats.
        min: Some("0.1"),
        ..row(
            Param::Timeout,
            "timeout",
            Kind::Real,
            "1.0",
            "How long a silent heartbeat means a peer is down, and the longest wait in a step for a peer whose frames are corrupt (at least 0.1 s)",
        )
    },
    ParamSpec {
        unit: Some("s"),
        min: Some("0"),
        ..row(
            Param::StartupTimeout,
            "startupTimeout",
            Kind::Real,
            "30.0",
            "Longest wait for each peer's first frame (first doStep)",
        )
    },
    ParamSpec {
        unit: Some("s"),
        min: Some("0"),
        ..row(
            Param::IdleTimeout,
            "idleTimeout",
            Kind::Real,
            "300.0",
            "Longest wait in a step (lockstep) for a peer whose heartbeat beats but which has not published the frame (paused, frozen, slow); a warning every 5 s names it",
        )
    },
    ParamSpec {
        min: Some("0"),
        ..row(
            Param::RealTimeFactor,
            "realTimeFactor",
            Kind::Real,
            "0.0",
            "Pacing to the wall clock: step k returns no earlier than factor x (its time - the first step's) after the first step returned (once every lockstep peer had started); 0: as fast as possible, 1: real time (pace.behind counts steps that ended late)",
        )
    },
    row(
        Param::RecordFile,
        "recordFile",
        Kind::String,
        "",
        "File to record every frame this node publishes and takes into (rfmctl show reads it); {start} in it is replaced by the start time (UTC, as 20261201T154632Z), so that every run gets its own file; empty: no recording",
    ),
    row(
        Param::RecordOverwrite,
        "recordOverwrite",
        Kind::Boolean,
        "false",
        "Replace recordFile if it exists (false: initialization refuses an existing file, such as yesterday's run)",
    ),
    ParamSpec {
        min: Some("0"),
        ..row(
            Param::Rfm2gReadThreshold,
            "rfm2gReadThreshold",
            Kind::Integer,
            "64",
            "RFM2g: a peer's frame of at least this many bytes is read with one RFM2gRead, which the driver makes one DMA transfer, instead of a PCIe round trip per word; used only when the driver's DMA threshold (RFM2gSetDMAThreshold, rfmctl dma-threshold) is set; 0: always word by word",
        )
    },
    row(
        Param::CpuAffinity,
        "cpuAffinity",
        Kind::String,
        "",
        "Cores for the thread that steps this FMU (the one calling fmi2ExitInitializationMode) and for its heartbeat, as taskset writes them: \"3\", \"2-3\", \"0,2-3\"; restored at fmi2Terminate; cpu.offCore counts steps that ran elsewhere; empty: left as it is",
    ),
    ParamSpec {
        min: Some("0"),
        max: Some("99"),
        ..row(
            Param::RealtimePriority,
            "realtimePriority",
            Kind::Integer,
            "0",
            "1-99: the stepping thread runs SCHED_FIFO at this priority on Linux (its heartbeat one above), THREAD_PRIORITY_TIME_CRITICAL on Windows, until fmi2Terminate; refused without CAP_SYS_NICE or ulimit -r (a warning, the step runs on); 0: left as it is",
        )
    },
    row(
        Param::LockMemory,
        "lockMemory",
        Kind::Boolean,
        "false",
        "Lock the master process's memory (mlockall), so that no step waits for a page fault; unlocked at fmi2Terminate unless it was locked before; refused without CAP_IPC_LOCK or ulimit -l (a warning)",
    ),
];

/// The parameters an FMU has: all but the slot parameters, which only the
/// attitude preset has (an interface file gives the slots).
pub fn fmu_params(preset: bool) -> impl Iterator<Item = &'static ParamSpec> {
    PARAMS.iter().filter(move |p| preset || !p.preset_only)
}

/// The row of `param`.
pub fn spec(param: Param) -> &'static ParamSpec {
    PARAMS
        .iter()
        .find(|s| s.param == param)
        .expect("every parameter has a row")
}

/// Every parameter's name, in the order of [`PARAMS`]: the names an interface's
/// signals may not take.
pub const PARAMETER_NAMES: [&str; PARAMS.len()] = {
    let mut names = [""; PARAMS.len()];
    let mut i = 0;
    while i < PARAMS.len() {
        names[i] = PARAMS[i].name;
        i += 1;
    }
    names
};

#[cfg(test)]
mod tests {
    use super::*;
    use rfm_core::interface::settings::{SettingKind, SETTINGS};

    /// Every key an interface file may set is a parameter of this table, of
    /// the same type: the two tables cannot drift apart.
    #[test]
    fn every_interface_setting_is_a_parameter_of_its_type() {
        for s in &SETTINGS {
            let p = PARAMS
                .iter()
                .find(|p| p.name == s.key)
                .unwrap_or_else(|| panic!("setting `{}` is no parameter", s.key));
            let kind = match s.kind {
                SettingKind::Real => Kind::Real,
                SettingKind::Integer => Kind::Integer,
                SettingKind::String => Kind::String,
            };
            assert_eq!(p.kind, kind, "{}", s.key);
            assert!(!p.preset_only, "{}", s.key);
        }
    }
}
