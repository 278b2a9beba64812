//! FMI's types and one value of them: what a payload's signal or a packed
//! struct's field holds, for the FMU, interface files, the settings and the
//! tools that show memory. Below the FMU (`fmu-model`) because memory's
//! payloads and the settings' table are typed by them too.

use std::fmt;

/// One of FMI 2.0's four variable types: what a parameter, an input and an
/// output alike have, and what `fmi2SetReal` and its kin check a reference
/// against. A signal's `payload::SignalType` adds a String's size in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiType {
    Real,
    Integer,
    Boolean,
    String,
}

impl FmiType {
    /// The element name of modelDescription.xml (`<Real …/>`).
    pub fn name(self) -> &'static str {
        match self {
            FmiType::Real => "Real",
            FmiType::Integer => "Integer",
            FmiType::Boolean => "Boolean",
            FmiType::String => "String",
        }
    }

    /// The FMI 3.0 type of the same values (a Real is a Float64): what a
    /// variable of this type is in the FMI 3.0 description, unless its C
    /// type gives an exact one ([`crate::packed::CType::fmi3_type`]).
    pub fn fmi3(self) -> Fmi3Type {
        match self {
            FmiType::Real => Fmi3Type::Float64,
            FmiType::Integer => Fmi3Type::Int32,
            FmiType::Boolean => Fmi3Type::Boolean,
            FmiType::String => Fmi3Type::String,
        }
    }

    /// The type with its article, for sentences ("an Integer", "a Real").
    pub fn with_article(self) -> &'static str {
        match self {
            FmiType::Real => "a Real",
            FmiType::Integer => "an Integer",
            FmiType::Boolean => "a Boolean",
            FmiType::String => "a String",
        }
    }
}

/// The FMI 3.0 types this FMU's variables take: FMI 2.0's four as FMI 3.0
/// names them, and the exact types of a packed struct's C types (a `float`
/// is a Float32, a `uint64` a UInt64), which FMI 2.0 widens to a Real.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fmi3Type {
    Float32,
    Float64,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Boolean,
    String,
}

impl Fmi3Type {
    /// The element name of an FMI 3.0 modelDescription.xml (`<Float32 …/>`),
    /// and the suffix of its accessors (`fmi3GetFloat32`).
    pub fn name(self) -> &'static str {
        match self {
            Fmi3Type::Float32 => "Float32",
            Fmi3Type::Float64 => "Float64",
            Fmi3Type::Int8 => "Int8",
            Fmi3Type::UInt8 => "UInt8",
            Fmi3Type::Int16 => "Int16",
            Fmi3Type::UInt16 => "UInt16",
            Fmi3Type::Int32 => "Int32",
            Fmi3Type::UInt32 => "UInt32",
            Fmi3Type::Int64 => "Int64",
            Fmi3Type::UInt64 => "UInt64",
            Fmi3Type::Boolean => "Boolean",
            Fmi3Type::String => "String",
        }
    }

    /// Every FMI 3.0 type this FMU knows.
    pub const ALL: [Fmi3Type; 12] = [
        Fmi3Type::Float32,
        Fmi3Type::Float64,
        Fmi3Type::Int8,
        Fmi3Type::UInt8,
        Fmi3Type::Int16,
        Fmi3Type::UInt16,
        Fmi3Type::Int32,
        Fmi3Type::UInt32,
        Fmi3Type::Int64,
        Fmi3Type::UInt64,
        Fmi3Type::Boolean,
        Fmi3Type::String,
    ];

    /// The type a description's element names (`Float64`).
    pub fn parse(name: &str) -> Option<Fmi3Type> {
        Fmi3Type::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether it is a float type (one a unit may be declared for).
    pub fn is_float(self) -> bool {
        matches!(self, Fmi3Type::Float32 | Fmi3Type::Float64)
    }
}

/// A value of one of FMI's types: a signal's start value and its value in a
/// payload, a setting of an interface file, a parameter's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Real(f64),
    Integer(i32),
    Boolean(bool),
    String(String),
}

impl Value {
    /// The zero of FMI type `kind`.
    pub fn zero_of(kind: FmiType) -> Value {
        match kind {
            FmiType::Real => Value::Real(0.0),
            FmiType::Integer => Value::Integer(0),
            FmiType::Boolean => Value::Boolean(false),
            FmiType::String => Value::String(String::new()),
        }
    }

    pub fn fmi_type(&self) -> FmiType {
        match self {
            Value::Real(_) => FmiType::Real,
            Value::Integer(_) => FmiType::Integer,
            Value::Boolean(_) => FmiType::Boolean,
            Value::String(_) => FmiType::String,
        }
    }

    /// The value as a number, for range checks (a Boolean or a String has none).
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Real(x) => Some(*x),
            Value::Integer(i) => Some(f64::from(*i)),
            Value::Boolean(_) | Value::String(_) => None,
        }
    }

    /// The value as modelDescription.xml's `start` writes it: a Real as Rust
    /// reads it back (`0.0`, `-1.0`, `0.1`), a String unquoted.
    pub fn written(&self) -> String {
        match self {
            Value::Real(x) => format!("{x:?}"),
            Value::Integer(i) => i.to_string(),
            Value::Boolean(b) => b.to_string(),
            Value::String(s) => s.clone(),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Real(x) => write!(f, "{x}"),
            Value::Integer(i) => write!(f, "{i}"),
            Value::Boolean(b) => write!(f, "{b}"),
            Value::String(s) => write!(f, "{s:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each FMI 3.0 type parses back from its name, and its FMI 2.0 type is
    /// the one of the FMI 2.0 type's own FMI 3.0 type where there is one.
    #[test]
    fn every_fmi3_type_parses_and_has_an_fmi2_type() {
        for t in Fmi3Type::ALL {
            assert_eq!(Fmi3Type::parse(t.name()), Some(t));
        }
        assert_eq!(Fmi3Type::parse("Real"), None);
        for kind in [
            FmiType::Real,
            FmiType::Integer,
            FmiType::Boolean,
            FmiType::String,
        ] {
            assert_eq!(kind.fmi3().fmi2(), kind);
        }
        assert_eq!(Fmi3Type::UInt64.fmi2(), FmiType::Real);
        assert_eq!(Fmi3Type::Float32.fmi2(), FmiType::Real);
        assert_eq!(Fmi3Type::UInt16.fmi2(), FmiType::Integer);
    }
}
