//! Why a setting's value is refused: one variant per rule, each naming the
//! key and the value as it was written, so that the caller (a file's line,
//! the FMU's parameter) adds only where.

use rfm_frames::fmi::FmiType;
use rfm_frames::names::UnknownWord;
use rfm_memory::DeviceError;

/// A setting's value refused.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    /// No such setting.
    #[error("`{key}` is not a setting; the settings are {keys}")]
    Unknown { key: String, keys: String },
    /// A value of another FMI type than the setting's.
    #[error("{key} = {given}: expected {} (the FMU parameter {key} is {})", expected(*kind), kind.with_article())]
    Type {
        key: &'static str,
        given: String,
        kind: FmiType,
    },
    /// An integer wider than the FMI Integer the parameter is.
    #[error("{key} = {given}: the FMU parameter {key} is an Integer, of 32 bits (-2147483648..2147483647)")]
    Wide { key: &'static str, given: i64 },
    /// A number outside its range, or not a multiple of its step.
    #[error("{key} = {given}: {expected}")]
    Range {
        key: &'static str,
        given: String,
        expected: String,
    },
    /// A word that is none of the setting's.
    #[error("{key} = {given:?}: {word}")]
    Word {
        key: &'static str,
        given: String,
        word: UnknownWord,
    },
    /// A device string in none of the forms.
    #[error("{key} = {given:?}: {device}")]
    Device {
        key: &'static str,
        given: String,
        device: Box<DeviceError>,
    },
    /// Two settings that do not go together.
    #[error("{key} = {given}: {why}")]
    Combination {
        key: &'static str,
        given: String,
        why: &'static str,
    },
}

impl SettingError {
    /// The key of the setting refused.
    pub fn key(&self) -> &str {
        match self {
            SettingError::Unknown { key, .. } => key,
            SettingError::Type { key, .. }
            | SettingError::Wide { key, .. }
            | SettingError::Range { key, .. }
            | SettingError::Word { key, .. }
            | SettingError::Device { key, .. }
            | SettingError::Combination { key, .. } => key,
        }
    }
}

/// What a value of `kind` is written as.
fn expected(kind: FmiType) -> &'static str {
    match kind {
        FmiType::Real => "a number",
        FmiType::Integer => "an integer",
        FmiType::Boolean => "true or false",
        FmiType::String => "a string",
    }
}
