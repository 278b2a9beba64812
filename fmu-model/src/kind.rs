//! The FMI type of a variable, which a parameter and a signal alike have.

use rfm_core::interface::SignalType;

/// Type of a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Real,
    Integer,
    Boolean,
    String,
}

impl Kind {
    pub(crate) fn of(t: SignalType) -> Kind {
        match t {
            SignalType::Real => Kind::Real,
            SignalType::Integer => Kind::Integer,
            SignalType::Boolean => Kind::Boolean,
            SignalType::String { .. } => Kind::String,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Real => "Real",
            Kind::Integer => "Integer",
            Kind::Boolean => "Boolean",
            Kind::String => "String",
        }
    }
}
