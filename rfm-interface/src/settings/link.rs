//! The settings as the link takes them: typed, made from values by the
//! table's rules, and never checked again.

use std::path::PathBuf;
use std::time::Duration;

use rfm_frames::area::MAX_LAG;
use rfm_frames::fmi::Value;
use rfm_frames::frame::framed::SyncMode;
use rfm_frames::frame::Layout;
use rfm_frames::wait::WaitStrategy;
use rfm_memory::DeviceSetting;

use super::table::{spec, written, Rule, Setting, SETTINGS};
use super::SettingError;
use crate::Interface;

/// The link's settings, each in its type.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSettings {
    pub device: DeviceSetting,
    /// `None`: the system's library (`librfm2g.so`, `rfm2gdll_stdc_64.dll`).
    pub rfm2g_library: Option<PathBuf>,
    pub region_offset: u64,
    pub mode: SyncMode,
    pub lag: u8,
    pub wait: WaitStrategy,
    pub layout: Layout,
    /// How long a silent heartbeat means a peer is down (free mode: the age
    /// after which the link is reported down).
    pub timeout: Duration,
    /// Longest wait for a peer's first frame.
    pub startup_timeout: Duration,
    /// Longest wait in a lockstep step for a bound peer whose heartbeat beats
    /// but which has not published the frame (a frozen or slow master): late
    /// is not dead.
    pub idle_timeout: Duration,
    /// Pacing to the wall clock: step k returns no earlier than factor × (its
    /// communication point − the first's) after the first step returned; 0:
    /// as fast as it can.
    pub real_time_factor: f64,
}

/// The table's defaults, for the attitude preset.
impl Default for LinkSettings {
    fn default() -> LinkSettings {
        LinkSettings::from_values(|s| spec(s).start.value(), None)
            .expect("the table's defaults keep its rules (a test of table.rs)")
    }
}

impl LinkSettings {
    /// Each setting's value (`value(setting)`) held to its rule and parsed
    /// into its type, then the settings held to each other; `interface`:
    /// `None` for the attitude preset. The first value refused is named.
    pub fn from_values(
        value: impl Fn(Setting) -> Value,
        interface: Option<&Interface>,
    ) -> Result<LinkSettings, SettingError> {
        let max_lag = interface.map_or(MAX_LAG, |i| i.max_lag);
        let checked = |s: Setting| {
            let v = value(s);
            spec(s).check(&v, max_lag).map(|()| v)
        };
        let number = |s| checked(s).map(|v| v.number().expect("a number's rule"));
        let text = |s| match checked(s)? {
            Value::String(t) => Ok(t),
            _ => unreachable!("a String setting's rule refuses other types"),
        };
        let seconds = |s| number(s).map(Duration::from_secs_f64);
        let library = text(Setting::Rfm2gLibrary)?;
        let settings = LinkSettings {
            device: text(Setting::Device)?.parse().expect("its rule parsed it"),
            rfm2g_library: (!library.is_empty()).then(|| library.into()),
            region_offset: number(Setting::RegionOffset)? as u64,
            mode: text(Setting::SyncMode)?
                .parse()
                .expect("its rule parsed it"),
            lag: number(Setting::Lag)? as u8,
            wait: text(Setting::WaitStrategy)?
                .parse()
                .expect("its rule parsed it"),
            layout: text(Setting::Layout)?.parse().expect("its rule parsed it"),
            timeout: seconds(Setting::Timeout)?,
            startup_timeout: seconds(Setting::StartupTimeout)?,
            idle_timeout: seconds(Setting::IdleTimeout)?,
            real_time_factor: number(Setting::RealTimeFactor)?,
        };
        settings.together(interface)?;
        Ok(settings)
    }

    /// The value of `setting`, as its FMU parameter holds it.
    pub fn value(&self, setting: Setting) -> Value {
        let text = |t: &dyn std::fmt::Display| Value::String(t.to_string());
        match setting {
            Setting::Device => text(&self.device),
            Setting::Rfm2gLibrary => Value::String(
                (self.rfm2g_library.as_ref()).map_or(String::new(), |p| p.display().to_string()),
            ),
            Setting::RegionOffset => Value::Integer(self.region_offset as i32),
            Setting::SyncMode => text(&self.mode),
            Setting::Lag => Value::Integer(i32::from(self.lag)),
            Setting::WaitStrategy => text(&self.wait),
            Setting::Layout => text(&self.layout),
            Setting::Timeout => Value::Real(self.timeout.as_secs_f64()),
            Setting::StartupTimeout => Value::Real(self.startup_timeout.as_secs_f64()),
            Setting::IdleTimeout => Value::Real(self.idle_timeout.as_secs_f64()),
            Setting::RealTimeFactor => Value::Real(self.real_time_factor),
        }
    }

    /// The settings held to each other and to `interface` (`None`: the
    /// attitude preset): what the link asks of the settings it is given,
    /// whoever made them, since a lag and the interface whose rings it must
    /// fit come to it apart.
    pub fn together(&self, interface: Option<&Interface>) -> Result<(), SettingError> {
        let max_lag = interface.map_or(MAX_LAG, |i| i.max_lag);
        spec(Setting::Lag).check(&self.value(Setting::Lag), max_lag)?;
        let refuse = |setting: Setting, why| {
            Err(SettingError::Combination {
                key: spec(setting).key,
                given: written(&self.value(setting)),
                why,
            })
        };
        match (self.layout, self.mode, interface) {
            (Layout::Seed, SyncMode::Lockstep, _) => refuse(
                Setting::Layout,
                "the seed layout (the article's FlightData) has no step ring: use syncMode = \
                 free with it, or layout = framed for lockstep",
            ),
            (Layout::Seed, _, Some(_)) => refuse(
                Setting::Layout,
                "the seed layout is the article's attitude packet: only the attitude FMU has \
                 it; use framed",
            ),
            _ => match (&self.device, self.mode) {
                (DeviceSetting::Replay(_), SyncMode::Free) => {
                    refuse(Setting::SyncMode, "a replay is step by step: use lockstep")
                }
                _ => Ok(()),
            },
        }
    }
}

/// `key = value, …` in the table's order, keyed by the FMU's parameter
/// names: what a master's log shows, which a user compares with the
/// parameters they set.
impl std::fmt::Display for LinkSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = (SETTINGS.iter())
            .map(|s| {
                let value = match (self.value(s.setting), s.rule) {
                    (
                        Value::Real(x),
                        Rule::Number {
                            unit: "seconds", ..
                        },
                    ) => format!("{x} s"),
                    (Value::Real(x), _) => x.to_string(),
                    (Value::Integer(i), Rule::Number { unit: "bytes", .. }) => format!("{i:#x}"),
                    (Value::String(t), Rule::Path) if t.is_empty() => "(the system's)".to_owned(),
                    (v, _) => v.written(),
                };
                format!("{} = {value}", s.key)
            })
            .collect();
        f.write_str(&parts.join(", "))
    }
}
