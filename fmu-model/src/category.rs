//! The log categories an FMU declares in modelDescription.xml and reports its
//! messages under: one table, read by the XML writer and by the logger.

use crate::fmi2::*;

/// A log category of modelDescription.xml.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Events,
    Warning,
    Discard,
    Error,
    Fatal,
    Debug,
}

impl Category {
    /// Every category, in the order the XML declares them.
    pub const ALL: [Category; 6] = [
        Category::Events,
        Category::Warning,
        Category::Discard,
        Category::Error,
        Category::Fatal,
        Category::Debug,
    ];

    /// What the XML says of it.
    pub fn description(self) -> &'static str {
        match self {
            Category::Events => "Link events: peers bound, restarts, layout and mode checks",
            Category::Warning => "Calls that return fmi2Warning",
            Category::Discard => "Calls that return fmi2Discard, with the reason",
            Category::Error => "Calls that return fmi2Error, with the reason",
            Category::Fatal => "Calls that return fmi2Fatal",
            Category::Debug => "Every call and the parameters used",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Category::Events => "logEvents",
            Category::Warning => "logStatusWarning",
            Category::Discard => "logStatusDiscard",
            Category::Error => "logStatusError",
            Category::Fatal => "logStatusFatal",
            Category::Debug => "logDebug",
        }
    }

    /// The status a message of this category reports to the logger.
    pub fn status(self) -> fmi2Status {
        match self {
            Category::Events | Category::Debug => fmi2OK,
            Category::Warning => fmi2Warning,
            Category::Discard => fmi2Discard,
            Category::Error => fmi2Error,
            Category::Fatal => fmi2Fatal,
        }
    }
}
