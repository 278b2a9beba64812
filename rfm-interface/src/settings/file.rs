//! The settings one level of an interface file gives (the top, or a
//! `[[node]]`), each held to the table's rule at its line.

use std::fmt;

use super::table::{spec, written_toml, Setting, SETTINGS};
use super::{LinkSettings, SettingError, SettingSpec};
use crate::Interface;
use rfm_frames::fmi::FmiType;
use rfm_frames::fmi::Value;

/// The settings of one level of a file, in the order of [`SETTINGS`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings(Vec<(&'static SettingSpec, Value)>);

impl Settings {
    /// The value of `setting`, if set here.
    pub fn value(&self, setting: Setting) -> Option<&Value> {
        self.0
            .iter()
            .find(|(s, _)| s.setting == setting)
            .map(|(_, v)| v)
    }

    /// These settings over the table's defaults, each parsed into its type
    /// (`interface`: the file they are of): what a tool reads of a file's
    /// settings, as the FMU built from it would.
    pub fn link(&self, interface: &Interface) -> Result<LinkSettings, SettingError> {
        LinkSettings::from_values(
            |s| {
                self.value(s)
                    .cloned()
                    .unwrap_or_else(|| spec(s).start.value())
            },
            Some(interface),
        )
    }

    pub fn iter(&self) -> impl Iterator<Item = &(&'static SettingSpec, Value)> {
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
                    self.value(s.setting)
                        .or_else(|| defaults.value(s.setting))
                        .map(|v| (s, v.clone()))
                })
                .collect(),
        )
    }

    /// `key` set to the TOML `value`, held to its rule with an interface of
    /// `max_lag`; the error says what is wrong (the caller adds where).
    pub(crate) fn set(
        &mut self,
        key: &str,
        value: &toml::Value,
        max_lag: u8,
    ) -> Result<(), SettingError> {
        let spec = (SETTINGS.iter())
            .find(|s| s.key == key && s.in_files)
            .ok_or_else(|| SettingError::Unknown {
                key: key.to_owned(),
                keys: keys(),
            })?;
        let typed = match (spec.kind, value) {
            (FmiType::Real, toml::Value::Float(x)) => Value::Real(*x),
            (FmiType::Real, toml::Value::Integer(i)) => Value::Real(*i as f64),
            // The parameter is an FMI Integer: a wider number is refused here,
            // at its line, not cut short on the way into the FMU.
            (FmiType::Integer, toml::Value::Integer(i)) => {
                Value::Integer(i32::try_from(*i).map_err(|_| SettingError::Wide {
                    key: spec.key,
                    given: *i,
                })?)
            }
            (FmiType::String, toml::Value::String(s)) => Value::String(s.clone()),
            (kind, other) => {
                return Err(SettingError::Type {
                    key: spec.key,
                    given: written_toml(other),
                    kind,
                })
            }
        };
        spec.check(&typed, max_lag)?;
        self.0.retain(|(s, _)| s.key != spec.key);
        self.0.push((spec, typed));
        self.0.sort_by_key(|(s, _)| s.setting as usize);
        Ok(())
    }
}

/// Every key a file may set, for messages.
fn keys() -> String {
    (SETTINGS.iter().filter(|s| s.in_files))
        .map(|s| s.key)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Settings {
    /// `key = value, …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = (self.0.iter())
            .map(|(s, v)| format!("{} = {}", s.key, v.written()))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(key: &str, value: toml::Value) -> Result<Settings, SettingError> {
        let mut s = Settings::default();
        s.set(key, &value, 7).map(|()| s)
    }

    #[test]
    fn each_key_keeps_its_parameters_rule() {
        assert!(set("device", "shm:lab".into()).is_ok());
        let bad = |key, value: toml::Value| set(key, value).unwrap_err();
        assert!(matches!(
            bad("device", "shm:a/b".into()),
            SettingError::Device { key: "device", .. }
        ));
        assert!(matches!(
            bad("lag", 8.into()),
            SettingError::Range { key: "lag", .. }
        ));
        assert!(matches!(
            bad("syncMode", "often".into()),
            SettingError::Word {
                key: "syncMode",
                ..
            }
        ));
        assert!(matches!(
            bad("timeout", 0.05.into()),
            SettingError::Range { key: "timeout", .. }
        ));
        assert_eq!(
            set("timeout", 2.into()).unwrap().value(Setting::Timeout),
            Some(&Value::Real(2.0))
        );
        assert!(matches!(
            bad("lag", "1".into()),
            SettingError::Type {
                kind: FmiType::Integer,
                ..
            }
        ));
        assert!(matches!(
            bad("regionOffset", 6.into()),
            SettingError::Range { .. }
        ));
        assert!(matches!(
            bad("regionOffset", (1_i64 << 31).into()),
            SettingError::Wide { .. }
        ));
        assert!(matches!(
            bad("devise", "x".into()),
            SettingError::Unknown { .. }
        ));
        // The attitude FMU's alone.
        assert!(matches!(
            bad("layout", "seed".into()),
            SettingError::Unknown { .. }
        ));
        // The messages a user reads.
        assert_eq!(
            bad("lag", 8.into()).to_string(),
            "lag = 8: expected 0..7 steps (the file's max_lag: the rings are sized for it)"
        );
        assert_eq!(
            bad("devise", "x".into()).to_string(),
            "`devise` is not a setting; the settings are device, lag, syncMode, waitStrategy, \
             timeout, startupTimeout, idleTimeout, realTimeFactor, regionOffset, rfm2gLibrary"
        );
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
