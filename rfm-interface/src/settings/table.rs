//! The table: one row per setting, and the rule each row's value keeps.

use rfm_frames::fmi::FmiType;
use rfm_frames::fmi::Value;
use rfm_frames::frame::framed::SyncMode;
use rfm_frames::frame::Layout;
use rfm_frames::names::{either, Named};
use rfm_frames::wait::WaitStrategy;
use rfm_memory::DeviceSetting;

use super::SettingError;

/// A setting, by meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    Device,
    Lag,
    SyncMode,
    WaitStrategy,
    Timeout,
    StartupTimeout,
    IdleTimeout,
    RealTimeFactor,
    RegionOffset,
    Rfm2gLibrary,
    Layout,
}

/// A setting's default: the FMU parameter's start value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Start {
    Real(f64),
    Integer(i32),
    Text(&'static str),
}

impl Start {
    pub fn value(self) -> Value {
        match self {
            Start::Real(x) => Value::Real(x),
            Start::Integer(i) => Value::Integer(i),
            Start::Text(s) => Value::String(s.to_owned()),
        }
    }
}

/// The top of a number's range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Max {
    At(f64),
    /// As far as the parameter's type goes.
    Type,
    /// The interface's `max_lag`: the rings are sized for it.
    MaxLag,
}

/// What a setting's value must be.
#[derive(Debug, Clone, Copy)]
pub enum Rule {
    /// A number from `min` (excluded when `above`) to `max`, a multiple of
    /// `multiple`; `unit` names what it counts in messages, `why` says why
    /// the bound is where it is.
    Number {
        min: f64,
        above: bool,
        max: Max,
        multiple: u32,
        unit: &'static str,
        why: &'static str,
    },
    /// One of a kind's words ([`Named`]).
    Words {
        words: fn() -> Vec<&'static str>,
        check: fn(&str) -> Result<(), rfm_frames::names::UnknownWord>,
    },
    /// A device string in any of its forms ([`DeviceSetting`]).
    Device,
    /// A file's path, or empty for the default.
    Path,
}

/// One row of [`SETTINGS`].
#[derive(Debug)]
pub struct SettingSpec {
    pub setting: Setting,
    /// The FMU parameter's name, the interface file's key.
    pub key: &'static str,
    pub kind: FmiType,
    pub start: Start,
    pub rule: Rule,
    /// Whether an interface file may set it (`layout` is the attitude FMU's
    /// alone, which has no file).
    pub in_files: bool,
}

const fn words<T: Named>() -> Rule {
    Rule::Words {
        words: T::words,
        check: |w| T::from_word(w).map(|_| ()),
    }
}

/// Seconds a wait lasts: above `min` (or from it), at most 1e9 (about 31
/// years, far inside what a `Duration` and every master's Real hold).
const fn seconds(min: f64, above: bool, why: &'static str) -> Rule {
    Rule::Number {
        min,
        above,
        max: Max::At(1e9),
        multiple: 1,
        unit: "seconds",
        why,
    }
}

const fn row(
    setting: Setting,
    key: &'static str,
    kind: FmiType,
    start: Start,
    rule: Rule,
) -> SettingSpec {
    SettingSpec {
        setting,
        key,
        kind,
        start,
        rule,
        in_files: true,
    }
}

/// Every setting, in the order of [`Setting`] (a test holds it): the one
/// place each one's words, bounds and default are written.
pub const SETTINGS: [SettingSpec; 11] = [
    row(
        Setting::Device,
        "device",
        FmiType::String,
        Start::Text("/dev/rfm2g0"),
        Rule::Device,
    ),
    row(
        Setting::Lag,
        "lag",
        FmiType::Integer,
        Start::Integer(0),
        Rule::Number {
            min: 0.0,
            above: false,
            max: Max::MaxLag,
            multiple: 1,
            unit: "steps",
            why: "the file's max_lag: the rings are sized for it",
        },
    ),
    row(
        Setting::SyncMode,
        "syncMode",
        FmiType::String,
        Start::Text("lockstep"),
        words::<SyncMode>(),
    ),
    row(
        Setting::WaitStrategy,
        "waitStrategy",
        FmiType::String,
        Start::Text("adaptive"),
        words::<WaitStrategy>(),
    ),
    row(
        Setting::Timeout,
        "timeout",
        FmiType::Real,
        Start::Real(1.0),
        // Ten heartbeats (a test holds it to the heartbeat's period).
        seconds(
            0.1,
            false,
            "ten heartbeats, or a live peer a scheduler held up looks dead",
        ),
    ),
    row(
        Setting::StartupTimeout,
        "startupTimeout",
        FmiType::Real,
        Start::Real(30.0),
        seconds(0.0, true, ""),
    ),
    row(
        Setting::IdleTimeout,
        "idleTimeout",
        FmiType::Real,
        // Five minutes, as long as an instructor's freeze usually lasts.
        Start::Real(300.0),
        seconds(0.0, true, ""),
    ),
    row(
        Setting::RealTimeFactor,
        "realTimeFactor",
        FmiType::Real,
        Start::Real(0.0),
        Rule::Number {
            min: 0.0,
            above: false,
            max: Max::At(1e6),
            multiple: 1,
            unit: "times real time",
            why: "0: as fast as possible, 1: real time",
        },
    ),
    row(
        Setting::RegionOffset,
        "regionOffset",
        FmiType::Integer,
        Start::Integer(0),
        Rule::Number {
            min: 0.0,
            above: false,
            max: Max::Type,
            multiple: rfm_memory::WORD as u32,
            unit: "bytes",
            why: "the memory is read and written in 32-bit words",
        },
    ),
    row(
        Setting::Rfm2gLibrary,
        "rfm2gLibrary",
        FmiType::String,
        Start::Text(""),
        Rule::Path,
    ),
    SettingSpec {
        in_files: false,
        ..row(
            Setting::Layout,
            "layout",
            FmiType::String,
            Start::Text("framed"),
            words::<Layout>(),
        )
    },
];

/// How many settings a file may set.
pub const fn in_files() -> usize {
    let (mut n, mut i) = (0, 0);
    while i < SETTINGS.len() {
        n += SETTINGS[i].in_files as usize;
        i += 1;
    }
    n
}

/// The row of `setting`.
pub fn spec(setting: Setting) -> &'static SettingSpec {
    &SETTINGS[setting as usize]
}

/// Rows are one when their settings are.
impl PartialEq for SettingSpec {
    fn eq(&self, other: &SettingSpec) -> bool {
        self.setting == other.setting
    }
}

impl SettingSpec {
    /// The row whose key is `key`.
    pub fn by_key(key: &str) -> Option<&'static SettingSpec> {
        SETTINGS.iter().find(|s| s.key == key)
    }

    /// The smallest value, for modelDescription.xml's `min`.
    pub fn min(&self) -> Option<f64> {
        match self.rule {
            Rule::Number { min, .. } => Some(min),
            _ => None,
        }
    }

    /// The largest value with an interface of `max_lag`, for `max`.
    pub fn max(&self, max_lag: u8) -> Option<f64> {
        match self.rule {
            Rule::Number {
                max: Max::At(x), ..
            } => Some(x),
            Rule::Number {
                max: Max::MaxLag, ..
            } => Some(f64::from(max_lag)),
            _ => None,
        }
    }

    /// The words a String setting accepts.
    pub fn words(&self) -> Vec<&'static str> {
        match self.rule {
            Rule::Words { words, .. } => words(),
            _ => Vec::new(),
        }
    }

    /// What the setting accepts, as a refusal says it.
    pub fn expected(&self, max_lag: u8) -> String {
        match self.rule {
            Rule::Number {
                min,
                above,
                multiple,
                unit,
                why,
                ..
            } => {
                let shown = |x: f64| match self.kind {
                    FmiType::Integer => (x as i64).to_string(),
                    _ if x >= 1e6 => format!("{x:e}"),
                    _ => x.to_string(),
                };
                let range = match (self.max(max_lag).map(shown), above) {
                    (Some(max), true) => {
                        format!("{unit} greater than {}, at most {max}", shown(min))
                    }
                    (Some(max), false) => format!("{}..{max} {unit}", shown(min)),
                    (None, _) => format!("{unit} from {}", shown(min)),
                };
                let multiple = match multiple {
                    1 => String::new(),
                    m => format!(", a multiple of {m}"),
                };
                let why = match why {
                    "" => String::new(),
                    why => format!(" ({why})"),
                };
                format!("expected {range}{multiple}{why}")
            }
            Rule::Words { words, .. } => format!("expected {}", either(&words())),
            Rule::Device => format!("expected {}", rfm_memory::DEVICE_FORMS),
            Rule::Path => "expected a file's path".to_owned(),
        }
    }

    /// `value` held to the row's rule, `max_lag` being the interface's: what
    /// a file's line, `fmi2Set*` and initialization are all held to.
    pub fn check(&self, value: &Value, max_lag: u8) -> Result<(), SettingError> {
        if value.fmi_type() != self.kind {
            return Err(SettingError::Type {
                key: self.key,
                given: value.written(),
                kind: self.kind,
            });
        }
        match (self.rule, value) {
            (
                Rule::Number {
                    min,
                    above,
                    multiple,
                    ..
                },
                _,
            ) => {
                let x = value.number().expect("a Number rule's kind is a number");
                let max = self.max(max_lag).unwrap_or(f64::INFINITY);
                let low = if above { x > min } else { x >= min };
                let whole = multiple == 1 || x % f64::from(multiple) == 0.0;
                if !(x.is_finite() && low && x <= max && whole) {
                    return Err(SettingError::Range {
                        key: self.key,
                        given: written(value),
                        expected: self.expected(max_lag),
                    });
                }
            }
            (Rule::Words { check, .. }, Value::String(w)) => {
                check(w).map_err(|word| SettingError::Word {
                    key: self.key,
                    given: w.clone(),
                    word,
                })?
            }
            (Rule::Device, Value::String(d)) => {
                DeviceSetting::parse(d).map_err(|device| SettingError::Device {
                    key: self.key,
                    given: d.clone(),
                    device: Box::new(device),
                })?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// A TOML value as a file writes it, for messages.
pub(super) fn written_toml(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(x) => x.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(_) => "[…]".to_owned(),
        toml::Value::Table(_) => "{…}".to_owned(),
    }
}

/// A value as a file or a message writes it: a String quoted.
pub(super) fn written(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Real(x) => x.to_string(),
        other => other.written(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`spec`] indexes the table by the enum.
    #[test]
    fn the_rows_are_in_the_order_of_the_settings() {
        for (i, s) in SETTINGS.iter().enumerate() {
            assert_eq!(s.setting as usize, i, "{}", s.key);
            assert_eq!(s.start.value().fmi_type(), s.kind, "{}", s.key);
            assert!(s.check(&s.start.value(), 7).is_ok(), "{}", s.key);
        }
    }

    /// `timeout`'s minimum is ten heartbeats.
    #[test]
    fn the_shortest_timeout_is_ten_heartbeats() {
        let min = spec(Setting::Timeout).min().unwrap();
        assert_eq!(min, 10.0 * rfm_frames::area::HEARTBEAT_PERIOD.as_secs_f64());
    }
}
