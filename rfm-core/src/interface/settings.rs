//! A lab's link settings in its interface file: the defaults of the FMU
//! parameters every node's master would otherwise set, at the top for every
//! node and in a `[[node]]` for that node alone.
//!
//! ```toml
//! device = "shm:lab"        # every node's FMU starts with device = shm:lab
//! lag = 1
//! [[node]]
//! name = "ios"
//! lag = 0                   # but this node's with lag = 0
//! ```
//!
//! A master that sets nothing, or cannot set a String (OMSimulator from an SSP
//! file, FMPy's `simulate_ssp`), then couples the lab as the file says. The
//! keys are the FMU's parameter names; each value is checked here, by the rule
//! the link applies to the parameter, so that a wrong one is refused at its
//! line and column when the FMUs are built, not at a master's
//! `fmi2ExitInitializationMode`. Settings do not enter the fingerprint: nodes
//! built with other defaults still couple.

use std::fmt;

use crate::frame::framed::SyncMode;
use crate::wait::WaitStrategy;

/// The shortest `timeout`, in seconds: the link's `MIN_TIMEOUT` (a test there
/// keeps the two one; the link imports interfaces, not the reverse).
pub const MIN_TIMEOUT_SECONDS: f64 = 0.1;

/// A setting's value, typed as its parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingValue {
    Real(f64),
    Integer(i64),
    String(String),
}

impl fmt::Display for SettingValue {
    /// As the FMU's start value writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingValue::Real(x) => write!(f, "{x:?}"),
            SettingValue::Integer(i) => write!(f, "{i}"),
            SettingValue::String(s) => f.write_str(s),
        }
    }
}

/// The type a setting's parameter has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingKind {
    Real,
    Integer,
    String,
}

impl SettingKind {
    fn name(self) -> &'static str {
        match self {
            SettingKind::Real => "a number",
            SettingKind::Integer => "an integer",
            SettingKind::String => "a string",
        }
    }
}

/// One key a file may set: its parameter's name and type, and the rule its
/// value keeps (given the file's `max_lag`).
#[derive(Debug)]
pub struct SettingSpec {
    pub key: &'static str,
    pub kind: SettingKind,
    check: fn(&SettingValue, u8) -> Result<(), String>,
}

/// Seconds of a timeout: finite, at most 1e9 (the FMU's bound), above `min`.
fn seconds(v: &SettingValue, min: f64, inclusive: bool) -> Result<(), String> {
    let SettingValue::Real(s) = v else {
        unreachable!("a Real setting")
    };
    let above = if inclusive { *s >= min } else { *s > min };
    if s.is_finite() && above && *s <= 1e9 {
        Ok(())
    } else if inclusive {
        Err(format!("expected seconds of at least {min}, at most 1e9"))
    } else {
        Err("expected seconds greater than 0, at most 1e9".to_owned())
    }
}

fn text(v: &SettingValue) -> &str {
    match v {
        SettingValue::String(s) => s,
        _ => unreachable!("a String setting"),
    }
}

fn integer(v: &SettingValue) -> i64 {
    match v {
        SettingValue::Integer(i) => *i,
        _ => unreachable!("an Integer setting"),
    }
}

/// Every key an interface file may set, with its rule: the one table both the
/// parser and the FMU's model read (fmu-model checks that each is one of its
/// parameters, of the same type).
pub const SETTINGS: [SettingSpec; 10] = [
    SettingSpec {
        key: "device",
        kind: SettingKind::String,
        check: |v, _| {
            rfm_memory::split_rings(text(v))
                .map(|_| ())
                .map_err(|e| e.to_string())
        },
    },
    SettingSpec {
        key: "lag",
        kind: SettingKind::Integer,
        check: |v, max_lag| match integer(v) {
            l if (0..=i64::from(max_lag)).contains(&l) => Ok(()),
            _ => Err(format!(
                "expected 0..{max_lag} steps (the file's max_lag: the rings are sized for it)"
            )),
        },
    },
    SettingSpec {
        key: "syncMode",
        kind: SettingKind::String,
        check: |v, _| text(v).parse::<SyncMode>().map(|_| ()),
    },
    SettingSpec {
        key: "waitStrategy",
        kind: SettingKind::String,
        check: |v, _| text(v).parse::<WaitStrategy>().map(|_| ()),
    },
    SettingSpec {
        key: "timeout",
        kind: SettingKind::Real,
        check: |v, _| seconds(v, MIN_TIMEOUT_SECONDS, true),
    },
    SettingSpec {
        key: "startupTimeout",
        kind: SettingKind::Real,
        check: |v, _| seconds(v, 0.0, false),
    },
    SettingSpec {
        key: "idleTimeout",
        kind: SettingKind::Real,
        check: |v, _| seconds(v, 0.0, false),
    },
    SettingSpec {
        key: "realTimeFactor",
        kind: SettingKind::Real,
        check: |v, _| match v {
            SettingValue::Real(f) if f.is_finite() && (0.0..=1e6).contains(f) => Ok(()),
            _ => Err(
                "expected 0 (as fast as possible), 1 (real time) or another factor, \
                      0..1e6"
                    .to_owned(),
            ),
        },
    },
    SettingSpec {
        key: "regionOffset",
        kind: SettingKind::Integer,
        check: |v, _| match integer(v) {
            o if (0..=i64::from(i32::MAX)).contains(&o) && o % 4 == 0 => Ok(()),
            _ => Err(
                "expected bytes from 0, a multiple of 4 (an FMI Integer: below 2^31)".to_owned(),
            ),
        },
    },
    SettingSpec {
        key: "rfm2gLibrary",
        kind: SettingKind::String,
        check: |_, _| Ok(()),
    },
];

/// A TOML value as a file writes it, for messages.
fn written(value: &toml::Value) -> String {
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

/// The spec of `key`, if a file may set it.
pub fn spec(key: &str) -> Option<&'static SettingSpec> {
    SETTINGS.iter().find(|s| s.key == key)
}

/// Every key, for messages.
pub fn keys() -> String {
    SETTINGS
        .iter()
        .map(|s| s.key)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The settings of one level of a file (the top, or a node), in the order of
/// [`SETTINGS`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings(Vec<(&'static str, SettingValue)>);

impl Settings {
    /// The value of `key`, if set here.
    pub fn get(&self, key: &str) -> Option<&SettingValue> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(&'static str, SettingValue)> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// These settings over `defaults`: each key set here, else there.
    pub fn over(&self, defaults: &Settings) -> Settings {
        Settings(
            SETTINGS
                .iter()
                .filter_map(|s| {
                    self.get(s.key)
                        .or_else(|| defaults.get(s.key))
                        .map(|v| (s.key, v.clone()))
                })
                .collect(),
        )
    }

    /// `key` set to the TOML `value`, checked by its rule; `Err` says what is
    /// wrong (the caller adds where).
    pub(crate) fn set(
        &mut self,
        key: &str,
        value: &toml::Value,
        max_lag: u8,
    ) -> Result<(), String> {
        let spec = spec(key)
            .ok_or_else(|| format!("`{key}` is not a setting; the settings are {}", keys()))?;
        let typed = match (spec.kind, value) {
            (SettingKind::Real, toml::Value::Float(x)) => SettingValue::Real(*x),
            (SettingKind::Real, toml::Value::Integer(i)) => SettingValue::Real(*i as f64),
            (SettingKind::Integer, toml::Value::Integer(i)) => SettingValue::Integer(*i),
            (SettingKind::String, toml::Value::String(s)) => SettingValue::String(s.clone()),
            (kind, other) => {
                return Err(format!(
                    "{key} = {}: expected {} (the FMU parameter {key} is {})",
                    written(other),
                    kind.name(),
                    match kind {
                        SettingKind::Real => "a Real",
                        SettingKind::Integer => "an Integer",
                        SettingKind::String => "a String",
                    }
                ))
            }
        };
        (spec.check)(&typed, max_lag)
            .map_err(|why| format!("{key} = {}: {why}", written(value)))?;
        self.0.retain(|(k, _)| *k != spec.key);
        self.0.push((spec.key, typed));
        self.0
            .sort_by_key(|(k, _)| SETTINGS.iter().position(|s| s.key == *k));
        Ok(())
    }
}

impl fmt::Display for Settings {
    /// `key = value, …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(key: &str, value: toml::Value) -> Result<Settings, String> {
        let mut s = Settings::default();
        s.set(key, &value, 7).map(|()| s)
    }

    #[test]
    fn each_key_keeps_its_parameters_rule() {
        assert!(set("device", "shm:lab".into()).is_ok());
        assert!(set("device", "shm:a/b".into())
            .unwrap_err()
            .contains("device = \"shm:a/b\""));
        assert!(set("lag", 8.into()).unwrap_err().contains("expected 0..7"));
        assert!(set("syncMode", "often".into())
            .unwrap_err()
            .contains("expected lockstep or free"));
        assert!(set("timeout", 0.05.into())
            .unwrap_err()
            .contains("at least 0.1"));
        assert_eq!(
            set("timeout", 2.into()).unwrap().get("timeout"),
            Some(&SettingValue::Real(2.0))
        );
        assert!(set("lag", "1".into())
            .unwrap_err()
            .contains("expected an integer"));
        assert!(set("regionOffset", 6.into()).is_err());
        assert!(set("devise", "x".into())
            .unwrap_err()
            .contains("the settings are device, lag, syncMode"));
    }

    #[test]
    fn a_nodes_setting_is_over_the_files() {
        let mut top = Settings::default();
        top.set("lag", &1.into(), 7).unwrap();
        top.set("device", &"shm:lab".into(), 7).unwrap();
        let mut node = Settings::default();
        node.set("lag", &0.into(), 7).unwrap();
        let both = node.over(&top);
        assert_eq!(both.to_string(), "device = shm:lab, lag = 0");
    }
}
