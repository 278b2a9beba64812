//! The C types a lab's packed structs hold, and the FMI 2.0 and FMI 3.0 type
//! each becomes: one table ([`C_TYPES`]) for their names, sizes, alignments
//! and edges.

use std::fmt;

use crate::fmi::{Fmi3Type, FmiType};

/// A field's C type (an array's element type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CType {
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Float,
    Double,
    /// One byte: 0 is false, anything else true; written as 0 or 1.
    Bool,
    /// `char[N]`: a NUL-padded string of at most N bytes.
    Char(u16),
}

/// What happens to a value at the edges of a C type, said once for the docs
/// and the errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// Every value of the C type is an FMI value; a value set outside the C
    /// type's range is refused.
    Exact,
    /// A Real set to a `float` rounds to the nearest `float`; a finite Real
    /// beyond `float`'s range is refused.
    RoundsToFloat,
    /// A Real holds the C type's values exactly up to 2^53 in magnitude; a
    /// value read beyond it is counted and logged, and a Real set to it must
    /// be a whole number inside the C type's range.
    ExactTo2Pow53,
    /// A String of at most N bytes (UTF-8), NUL-padded; a longer one is refused.
    Bytes,
}

/// One row of [`C_TYPES`].
#[derive(Debug, Clone, Copy)]
pub struct CTypeRow {
    /// As interface files spell it (`char[N]` for the strings).
    pub name: &'static str,
    /// Bytes of one element (1 for `char[N]`, whose size is N).
    pub size: usize,
    /// Its alignment in a struct of natural alignment (x86-64 and AArch64
    /// System V, and Windows x64: the three agree on these types).
    pub align: usize,
    pub fmi: FmiType,
    /// What FMI 2.0 does at its edges.
    pub edge: Edge,
    /// Its FMI 3.0 type: the C type's own, every value exact.
    pub fmi3: Fmi3Type,
    /// The C spelling a header writes (`<stdint.h>`'s).
    pub c_name: &'static str,
}

/// Every C type a packed struct's field may have: the one place that maps C to
/// FMI 2.0 and FMI 3.0. In FMI 2.0, integers of 32 bits or fewer that fit its
/// `int32` are Integers; `uint32` and the 64-bit ones are Reals, since FMI 2.0
/// has no wider integer. FMI 3.0 has a type of each C type's own.
pub const C_TYPES: [(CType, CTypeRow); 12] = [
    (
        CType::Int8,
        row(
            "int8",
            1,
            1,
            FmiType::Integer,
            Fmi3Type::Int8,
            Edge::Exact,
            "int8_t",
        ),
    ),
    (
        CType::Int16,
        row(
            "int16",
            2,
            2,
            FmiType::Integer,
            Fmi3Type::Int16,
            Edge::Exact,
            "int16_t",
        ),
    ),
    (
        CType::Int32,
        row(
            "int32",
            4,
            4,
            FmiType::Integer,
            Fmi3Type::Int32,
            Edge::Exact,
            "int32_t",
        ),
    ),
    (
        CType::Int64,
        row(
            "int64",
            8,
            8,
            FmiType::Real,
            Fmi3Type::Int64,
            Edge::ExactTo2Pow53,
            "int64_t",
        ),
    ),
    (
        CType::Uint8,
        row(
            "uint8",
            1,
            1,
            FmiType::Integer,
            Fmi3Type::UInt8,
            Edge::Exact,
            "uint8_t",
        ),
    ),
    (
        CType::Uint16,
        row(
            "uint16",
            2,
            2,
            FmiType::Integer,
            Fmi3Type::UInt16,
            Edge::Exact,
            "uint16_t",
        ),
    ),
    (
        CType::Uint32,
        row(
            "uint32",
            4,
            4,
            FmiType::Real,
            Fmi3Type::UInt32,
            Edge::Exact,
            "uint32_t",
        ),
    ),
    (
        CType::Uint64,
        row(
            "uint64",
            8,
            8,
            FmiType::Real,
            Fmi3Type::UInt64,
            Edge::ExactTo2Pow53,
            "uint64_t",
        ),
    ),
    (
        CType::Float,
        row(
            "float",
            4,
            4,
            FmiType::Real,
            Fmi3Type::Float32,
            Edge::RoundsToFloat,
            "float",
        ),
    ),
    (
        CType::Double,
        row(
            "double",
            8,
            8,
            FmiType::Real,
            Fmi3Type::Float64,
            Edge::Exact,
            "double",
        ),
    ),
    (
        CType::Bool,
        row(
            "bool",
            1,
            1,
            FmiType::Boolean,
            Fmi3Type::Boolean,
            Edge::Exact,
            "uint8_t",
        ),
    ),
    (
        CType::Char(0),
        row(
            "char[N]",
            1,
            1,
            FmiType::String,
            Fmi3Type::String,
            Edge::Bytes,
            "char",
        ),
    ),
];

const fn row(
    name: &'static str,
    size: usize,
    align: usize,
    fmi: FmiType,
    fmi3: Fmi3Type,
    edge: Edge,
    c_name: &'static str,
) -> CTypeRow {
    CTypeRow {
        name,
        size,
        align,
        fmi,
        fmi3,
        edge,
        c_name,
    }
}

impl CType {
    /// Its row of [`C_TYPES`].
    pub fn row(self) -> &'static CTypeRow {
        let key = match self {
            CType::Char(_) => CType::Char(0),
            other => other,
        };
        &C_TYPES
            .iter()
            .find(|(t, _)| *t == key)
            .expect("every C type has a row")
            .1
    }

    /// The type an interface file names: `int16`, `double`, `char[32]`…; `None`
    /// for a name of no row (or a `char[N]` of N outside 1..=65535).
    pub fn parse(name: &str) -> Option<CType> {
        if let Some(n) = name
            .strip_prefix("char[")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            return n.parse::<u16>().ok().filter(|&n| n > 0).map(CType::Char);
        }
        C_TYPES
            .iter()
            .find(|(t, row)| row.name == name && !matches!(t, CType::Char(_)))
            .map(|(t, _)| *t)
    }

    /// Bytes the field takes (one element).
    pub fn size(self) -> usize {
        match self {
            CType::Char(n) => usize::from(n),
            other => other.row().size,
        }
    }

    pub fn align(self) -> usize {
        self.row().align
    }

    pub fn fmi_type(self) -> FmiType {
        self.row().fmi
    }

    pub fn fmi3_type(self) -> Fmi3Type {
        self.row().fmi3
    }

    /// The names an interface file may give, for messages.
    pub fn names() -> String {
        C_TYPES
            .iter()
            .map(|(_, r)| format!("`{}`", r.name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Here, beside the table it reads: `fmi` is below `packed`.
impl Fmi3Type {
    /// The FMI 2.0 type of its values, by the C types' one table
    /// ([`C_TYPES`]): a Float32 or a UInt64 is a Real, an
    /// Int16 an Integer. What an FMI 2.0 or SSP 1.0 peer of it is.
    pub fn fmi2(self) -> FmiType {
        C_TYPES
            .iter()
            .find(|(_, row)| row.fmi3 == self)
            .map(|(_, row)| row.fmi)
            .expect("every FMI 3.0 type is a C type's")
    }
}

impl fmt::Display for CType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CType::Char(n) => write!(f, "char[{n}]"),
            other => f.write_str(other.row().name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_type() {
        for (t, row) in C_TYPES {
            let t = if let CType::Char(_) = t {
                CType::Char(12)
            } else {
                t
            };
            assert_eq!(CType::parse(&t.to_string()), Some(t), "{}", row.name);
        }
        assert_eq!(CType::parse("char[0]"), None);
        assert_eq!(CType::parse("char[N]"), None);
        assert_eq!(CType::parse("long"), None);
        assert_eq!(CType::Char(12).size(), 12);
    }

    /// The reference's C-type table says what this table says: name, C,
    /// size and alignment, the FMI 2.0 and the FMI 3.0 type, row by row.
    #[test]
    fn the_references_c_type_table_is_this_table() {
        let page = include_str!("../../../docs/src/reference/interface-file.md");
        let rows: Vec<Vec<&str>> = page
            .lines()
            .skip_while(|l| !l.starts_with("| type | C |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
            .collect();
        assert_eq!(rows.len(), C_TYPES.len(), "{rows:?}");
        for (row, (_, want)) in rows.iter().zip(C_TYPES) {
            let bytes = match want.name {
                "char[N]" => "N, 1".to_owned(),
                _ => format!("{}, {}", want.size, want.align),
            };
            let c = row[1].trim_matches('`');
            assert_eq!(row[0], format!("`{}`", want.name));
            assert!(c.starts_with(want.c_name), "{row:?}");
            assert_eq!(row[2], bytes, "{row:?}");
            assert_eq!(row[3], want.fmi.name(), "{row:?}");
            assert_eq!(row[4], want.fmi3.name(), "{row:?}");
        }
    }
}
