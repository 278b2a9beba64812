//! The FMU's parameters: one table, from which the variables of every FMU
//! (and so its modelDescription.xml), the instance's typed storage and its
//! accessors are made. Each parameter is written once, in [`parameters!`]'s
//! invocation: its meaning, field, name, type, start value, bounds and text.

use crate::FmuKind;
use rfm_frames::fmi::{FmiType, Value};
use rfm_interface::settings::{spec as setting, Setting, Start};

/// One row of [`PARAMS`].
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub param: Param,
    pub name: &'static str,
    pub kind: FmiType,
    pub unit: Option<&'static str>,
    /// The link setting it is: its start, bounds and rule are the settings
    /// table's ([`rfm_interface::settings::SETTINGS`]), held at `fmi2Set*`.
    pub setting: Option<Setting>,
    /// The bounds of a parameter that is no setting (what the master's
    /// dialog shows; fmu-src holds the value to them at initialization).
    min: Option<f64>,
    max: Option<f64>,
    pub description: &'static str,
    /// Only the attitude preset has it (an interface file gives the slots).
    pub preset_only: bool,
}

const fn row(
    param: Param,
    name: &'static str,
    kind: FmiType,
    description: &'static str,
) -> ParamSpec {
    ParamSpec {
        param,
        name,
        kind,
        unit: None,
        setting: None,
        min: None,
        max: None,
        description,
        preset_only: false,
    }
}

/// The Rust type a parameter of an FMI type is stored as.
macro_rules! stored {
    (Real) => {
        f64
    };
    (Integer) => {
        i32
    };
    (Boolean) => {
        bool
    };
    (String) => {
        String
    };
}

/// Makes [`Param`], [`PARAMS`] and [`ParamValues`] from one list: per
/// parameter, its variant, field, name, type and start value, then the
/// [`ParamSpec`] fields it sets beyond the defaults, then its description.
macro_rules! parameters {
    ($(
        $variant:ident $field:ident $name:literal : $t:ident = $start:expr,
        $($key:ident : $value:expr,)*
        $description:literal;
    )*) => {
        /// A parameter, by meaning.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Param {
            $($variant,)*
        }

        /// Every parameter, in value-reference order (they come first in every FMU).
        pub const PARAMS: &[ParamSpec] = &[$(
            ParamSpec {
                $($key: $value,)*
                ..row(Param::$variant, $name, FmiType::$t, $description)
            },
        )*];

        /// An instance's parameter values, typed: read by field, so that no
        /// reader meets a value of another type than its parameter's.
        #[derive(Debug, Clone, PartialEq)]
        pub struct ParamValues {
            $(pub $field: stored!($t),)*
        }

        impl Default for ParamValues {
            /// The table's start values.
            fn default() -> ParamValues {
                ParamValues {
                    $($field: $start.into(),)*
                }
            }
        }

        impl ParamValues {
            /// The value of `p`, for fmi2Get* and the recording's header.
            pub fn get(&self, p: Param) -> Value {
                match p {
                    $(Param::$variant => Value::$t(self.$field.to_owned()),)*
                }
            }

            /// Sets `p` to `value`; `Err` gives `value` back when its type is
            /// not the parameter's.
            pub fn set(&mut self, p: Param, value: Value) -> Result<(), Value> {
                match (p, value) {
                    $((Param::$variant, Value::$t(v)) => self.$field = v,)*
                    (_, value) => return Err(value),
                }
                Ok(())
            }
        }
    };
}

parameters! {
    Device device "device": String = text(Setting::Device),
        setting: Some(Setting::Device),
        "Reflective memory: /dev/rfm2gN or \\\\.\\rfm2gN (RFM2g board), shm:NAME (shared memory on this host), loopback:NAME (this process), or replay:PATH (the peers played from a recording of this node or a peer)";
    Rfm2gLibrary rfm2g_library "rfm2gLibrary": String = text(Setting::Rfm2gLibrary),
        setting: Some(Setting::Rfm2gLibrary),
        "RFM2g vendor library to load; empty: librfm2g.so (Linux) or rfm2gdll_stdc_64.dll (Windows) from the search path";
    RegionOffset region_offset "regionOffset": Integer = integer(Setting::RegionOffset),
        setting: Some(Setting::RegionOffset),
        "Byte offset in the memory where the coupling's areas start (a multiple of 4; the same on every node)";
    NodeSlot node_slot "nodeSlot": Integer = 0,
        min: Some(0.0),
        max: Some(255.0),
        preset_only: true,
        "This node's slot, 0..255: only this node writes it";
    PeerSlot peer_slot "peerSlot": Integer = 1,
        min: Some(0.0),
        max: Some(255.0),
        preset_only: true,
        "The peer's slot, 0..255 (equal to nodeSlot: a self-loop)";
    SyncMode sync_mode "syncMode": String = text(Setting::SyncMode),
        setting: Some(Setting::SyncMode),
        "lockstep: every step waits for each peer's frame of step k - lag (deterministic); free: never waits, takes the newest frames";
    Lag lag "lag": Integer = integer(Setting::Lag),
        setting: Some(Setting::Lag),
        "Lockstep lag in this node's steps (at most the interface's max_lag: see max): step k takes each peer's frame of the time (k - lag) x period; 0 for concurrent masters, 1 lets one master step all instances in turn";
    WaitStrategy wait_strategy "waitStrategy": String = text(Setting::WaitStrategy),
        setting: Some(Setting::WaitStrategy),
        "adaptive (spins a few microseconds, then yields, then sleeps: fast with cores to spare, and it holds with more nodes than cores), spin (lowest latency, one core busy: for pinned dedicated cores), yield, sleep (low CPU), event (RFM2g network interrupts)";
    Layout layout "layout": String = text(Setting::Layout),
        setting: Some(Setting::Layout),
        "framed (seqlocked, CRC-checked frames by step) or seed (the article's FlightData, attitude FMU in free mode only)";
    Timeout timeout "timeout": Real = real(Setting::Timeout),
        unit: Some("s"),
        setting: Some(Setting::Timeout),
        "How long a silent heartbeat means a peer is down, and the longest wait in a step for a peer whose frames are corrupt (at least ten heartbeats: see min)";
    StartupTimeout startup_timeout "startupTimeout": Real = real(Setting::StartupTimeout),
        unit: Some("s"),
        setting: Some(Setting::StartupTimeout),
        "Longest wait for each peer's first frame (first doStep)";
    IdleTimeout idle_timeout "idleTimeout": Real = real(Setting::IdleTimeout),
        unit: Some("s"),
        setting: Some(Setting::IdleTimeout),
        "Longest wait in a step (lockstep) for a peer whose heartbeat beats but which has not published the frame (paused, frozen, slow); a warning every 5 s names it";
    RealTimeFactor real_time_factor "realTimeFactor": Real = real(Setting::RealTimeFactor),
        setting: Some(Setting::RealTimeFactor),
        "Pacing to the wall clock: step k returns no earlier than factor x (its time - the first step's) after the first step returned (once every lockstep peer had started); 0: as fast as possible, 1: real time (pace.behind counts steps that ended late)";
    RecordFile record_file "recordFile": String = "",
        "File to record every frame this node publishes and takes into (rfmctl show reads it); {start} in it is replaced by the start time (UTC, as 20261201T154632Z), so that every run gets its own file; empty: no recording";
    RecordOverwrite record_overwrite "recordOverwrite": Boolean = false,
        "Replace recordFile if it exists (false: initialization refuses an existing file, such as yesterday's run)";
    Rfm2gReadThreshold rfm2g_read_threshold "rfm2gReadThreshold": Integer = 64,
        min: Some(0.0),
        "RFM2g: a peer's frame of at least this many bytes is read with one RFM2gRead, which the driver makes one DMA transfer, instead of a PCIe round trip per word; used only when the driver's DMA threshold (RFM2gSetDMAThreshold, rfmctl dma-threshold) is set; 0: always word by word";
    CpuAffinity cpu_affinity "cpuAffinity": String = "",
        "Cores for the thread that steps this FMU (the one calling fmi2ExitInitializationMode) and for its heartbeat, as taskset writes them: \"3\", \"2-3\", \"0,2-3\"; restored at fmi2Terminate; cpu.offCore counts steps that ran elsewhere; empty: left as it is";
    RealtimePriority realtime_priority "realtimePriority": Integer = 0,
        min: Some(0.0),
        max: Some(99.0),
        "1-99: the stepping thread runs SCHED_FIFO at this priority on Linux (its heartbeat one above), THREAD_PRIORITY_TIME_CRITICAL on Windows, until fmi2Terminate; refused without CAP_SYS_NICE or ulimit -r (a warning, the step runs on); 0: left as it is";
    LockMemory lock_memory "lockMemory": Boolean = false,
        "Lock the master process's memory (mlockall), so that no step waits for a page fault; unlocked at fmi2Terminate unless it was locked before; refused without CAP_IPC_LOCK or ulimit -l (a warning)";
}

/// A String setting's start.
fn text(s: Setting) -> String {
    match setting(s).start {
        Start::Text(t) => t.to_owned(),
        other => unreachable!("{other:?} is no String setting's start"),
    }
}

/// An Integer setting's start.
fn integer(s: Setting) -> i32 {
    match setting(s).start {
        Start::Integer(i) => i,
        other => unreachable!("{other:?} is no Integer setting's start"),
    }
}

/// A Real setting's start.
fn real(s: Setting) -> f64 {
    match setting(s).start {
        Start::Real(x) => x,
        other => unreachable!("{other:?} is no Real setting's start"),
    }
}

impl ParamSpec {
    /// The smallest value, as modelDescription.xml's `min` writes it.
    pub fn min(&self) -> Option<f64> {
        match self.setting {
            Some(s) => setting(s).min(),
            None => self.min,
        }
    }

    /// The largest value in an FMU whose interface's `max_lag` is `max_lag`.
    pub fn max(&self, max_lag: u8) -> Option<f64> {
        match self.setting {
            Some(s) => setting(s).max(max_lag),
            None => self.max,
        }
    }
}

/// The parameter that is `setting`.
pub fn of_setting(s: Setting) -> &'static ParamSpec {
    (PARAMS.iter())
        .find(|p| p.setting == Some(s))
        .expect("every setting is a parameter (a test of params.rs)")
}

/// The parameters an FMU has: all but the slot parameters, which only the
/// attitude preset has (an interface file gives the slots).
pub fn fmu_params(kind: FmuKind) -> impl Iterator<Item = &'static ParamSpec> {
    PARAMS
        .iter()
        .filter(move |p| kind == FmuKind::Attitude || !p.preset_only)
}

/// The row of `param`.
pub fn spec(param: Param) -> &'static ParamSpec {
    &PARAMS[param as usize]
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
    use rfm_interface::settings::SETTINGS;

    /// Every setting is one parameter of its name and type, and every
    /// parameter of a setting's name is that setting.
    #[test]
    fn every_setting_is_a_parameter_of_its_name_and_type() {
        for s in &SETTINGS {
            let p = of_setting(s.setting);
            assert_eq!((p.name, p.kind), (s.key, s.kind), "{}", s.key);
            assert!(!p.preset_only, "{}", s.key);
            assert_eq!(p.min(), s.min(), "{}", s.key);
            assert_eq!(ParamValues::default().get(p.param), s.start.value());
        }
        for p in PARAMS {
            let named = SETTINGS.iter().find(|s| s.key == p.name);
            assert_eq!(named.map(|s| s.setting), p.setting, "{}", p.name);
        }
    }

    /// A value set is the value got, and one of another type is given back
    /// untouched (the caller names the parameter).
    #[test]
    fn a_parameter_holds_values_of_its_type_only() {
        let mut values = ParamValues::default();
        for spec in PARAMS {
            let start = values.get(spec.param);
            assert_eq!(start.fmi_type(), spec.kind, "{}", spec.name);
            let other = match spec.kind {
                FmiType::String => Value::Integer(3),
                _ => Value::String("3".into()),
            };
            assert_eq!(values.set(spec.param, other.clone()), Err(other));
            let new = match start {
                Value::Real(x) => Value::Real(x + 0.5),
                Value::Integer(i) => Value::Integer(i + 3),
                Value::Boolean(b) => Value::Boolean(!b),
                Value::String(s) => Value::String(s + "x"),
            };
            values.set(spec.param, new.clone()).unwrap();
            assert_eq!(values.get(spec.param), new, "{}", spec.name);
        }
    }
}
