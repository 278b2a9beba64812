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

use super::Value;
use rfm_frames::frame::framed::SyncMode;
use rfm_frames::payload::FmiType;
use rfm_frames::wait::WaitStrategy;

/// The shortest `timeout`, in seconds: the link's `MIN_TIMEOUT` (a test there
/// keeps the two one; the link imports interfaces, not the reverse).
pub const MIN_TIMEOUT_SECONDS: f64 = 0.1;

/// What a file must write for a `kind` setting.
fn expected(kind: FmiType) -> &'static str {
    match kind {
        FmiType::Real => "a number",
        FmiType::Integer => "an integer",
        FmiType::Boolean => "true or false",
        FmiType::String => "a string",
    }
}

/// The rule a setting's value keeps, typed as its parameter: the variant is
/// the parameter's type, so a rule never meets a value of another.
#[derive(Debug, Clone, Copy)]
pub enum Rule {
    Real(fn(f64) -> Result<(), String>),
    /// Given the file's `max_lag`.
    Integer(fn(i32, u8) -> Result<(), String>),
    String(fn(&str) -> Result<(), String>),
}

/// One key a file may set: its parameter's name, and the rule its value keeps.
#[derive(Debug)]
pub struct SettingSpec {
    pub key: &'static str,
    rule: Rule,
}

impl SettingSpec {
    /// Its parameter's type (a Real, an Integer or a String).
    pub fn kind(&self) -> FmiType {
        match self.rule {
            Rule::Real(_) => FmiType::Real,
            Rule::Integer(_) => FmiType::Integer,
            Rule::String(_) => FmiType::String,
        }
    }

    /// `value` checked by the rule, `max_lag` being the file's: what a file's
    /// line and the FMU's `fmi2Set*` of the parameter are both held to.
    pub fn check(&self, value: &Value, max_lag: u8) -> Result<(), String> {
        match (self.rule, value) {
            (Rule::Real(rule), Value::Real(x)) => rule(*x),
            (Rule::Integer(rule), Value::Integer(i)) => rule(*i, max_lag),
            (Rule::String(rule), Value::String(s)) => rule(s),
            _ => Err(format!("expected {}", expected(self.kind()))),
        }
    }
}

/// Seconds of a timeout: finite, at most 1e9 (the FMU's bound), above `min`.
fn seconds(s: f64, min: f64, inclusive: bool) -> Result<(), String> {
    let above = if inclusive { s >= min } else { s > min };
    if s.is_finite() && above && s <= 1e9 {
        Ok(())
    } else if inclusive {
        Err(format!(
            "expected seconds of at least {min} and at most 1e9"
        ))
    } else {
        Err("expected seconds greater than 0 and at most 1e9".to_owned())
    }
}

/// Every key an interface file may set, with its rule: the one table both the
/// parser and the FMU's model read (fmu-model checks that each is one of its
/// parameters, of the same type).
pub const SETTINGS: [SettingSpec; 10] = [
    SettingSpec {
        key: "device",
        rule: Rule::String(|d| {
            rfm_memory::split_rings(d)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }),
    },
    SettingSpec {
        key: "lag",
        rule: Rule::Integer(|l, max_lag| match l {
            l if (0..=i32::from(max_lag)).contains(&l) => Ok(()),
            _ => Err(format!(
                "expected 0..{max_lag} steps (the file's max_lag: the rings are sized for it)"
            )),
        }),
    },
    SettingSpec {
        key: "syncMode",
        rule: Rule::String(|m| m.parse::<SyncMode>().map(|_| ())),
    },
    SettingSpec {
        key: "waitStrategy",
        rule: Rule::String(|w| w.parse::<WaitStrategy>().map(|_| ())),
    },
    SettingSpec {
        key: "timeout",
        rule: Rule::Real(|s| seconds(s, MIN_TIMEOUT_SECONDS, true)),
    },
    SettingSpec {
        key: "startupTimeout",
        rule: Rule::Real(|s| seconds(s, 0.0, false)),
    },
    SettingSpec {
        key: "idleTimeout",
        rule: Rule::Real(|s| seconds(s, 0.0, false)),
    },
    SettingSpec {
        key: "realTimeFactor",
        rule: Rule::Real(|f| match f {
            f if f.is_finite() && (0.0..=1e6).contains(&f) => Ok(()),
            _ => Err(
                "expected 0 (as fast as possible), 1 (real time) or another factor, 0..1e6"
                    .to_owned(),
            ),
        }),
    },
    SettingSpec {
        key: "regionOffset",
        rule: Rule::Integer(|o, _| match o {
            o if o >= 0 && o % 4 == 0 => Ok(()),
            _ => Err("expected bytes from 0, a multiple of 4".to_owned()),
        }),
    },
    SettingSpec {
        key: "rfm2gLibrary",
        rule: Rule::String(|_| Ok(())),
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
pub struct Settings(Vec<(&'static str, Value)>);

impl Settings {
    /// The value of `key`, if set here.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(&'static str, Value)> {
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
        let typed = match (spec.kind(), value) {
            (FmiType::Real, toml::Value::Float(x)) => Value::Real(*x),
            (FmiType::Real, toml::Value::Integer(i)) => Value::Real(*i as f64),
            // The parameter is an FMI Integer: a wider number is refused here,
            // at its line, not cut short on the way into the FMU.
            (FmiType::Integer, toml::Value::Integer(i)) => {
                Value::Integer(i32::try_from(*i).map_err(|_| {
                    format!(
                        "{key} = {i}: the FMU parameter {key} is an Integer, of 32 bits \
                         (-2147483648..2147483647)"
                    )
                })?)
            }
            (FmiType::String, toml::Value::String(s)) => Value::String(s.clone()),
            (kind, other) => {
                return Err(format!(
                    "{key} = {}: expected {} (the FMU parameter {key} is {})",
                    written(other),
                    expected(kind),
                    kind.with_article()
                ))
            }
        };
        spec.check(&typed, max_lag)
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
        let parts: Vec<String> = (self.0.iter())
            .map(|(k, v)| format!("{k} = {}", v.written()))
            .collect();
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
            Some(&Value::Real(2.0))
        );
        assert!(set("lag", "1".into())
            .unwrap_err()
            .contains("expected an integer"));
        assert!(set("regionOffset", 6.into()).is_err());
        assert!(set("regionOffset", (1_i64 << 31).into())
            .unwrap_err()
            .contains("an Integer, of 32 bits"));
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
