//! Where a packed struct's fields lie: at the offsets a declaration gives, or
//! where a C compiler puts them, with the struct's padding named.

use std::ops::Range;

use super::CType;

/// How fields without an explicit offset are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Packing {
    /// As a C compiler places a struct without `#pragma pack`: each field at a
    /// multiple of its type's alignment, the struct's size a multiple of its
    /// largest. The default, since it is what a header without a pragma gives.
    #[default]
    Natural,
    /// `#pragma pack(1)`: each field right after the one before.
    Packed,
}

/// The byte order a struct's numbers are stored in (strings and booleans have
/// none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ByteOrder {
    /// x86 and ARM PCs: the default.
    #[default]
    Little,
    /// VME PowerPC boards, and structs kept in network order.
    Big,
}

impl ByteOrder {
    /// `little-endian` or `big-endian`, as the tools print it.
    pub fn words(self) -> &'static str {
        match self {
            ByteOrder::Little => "little-endian",
            ByteOrder::Big => "big-endian",
        }
    }
}

/// One field as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDecl {
    pub name: String,
    pub ctype: CType,
    /// Elements of an array field (`float attitude[3]`), `None` for a scalar.
    pub count: Option<u32>,
    /// Its byte offset in the struct, when the declaration fixes it.
    pub offset: Option<usize>,
}

/// One field placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedField {
    pub name: String,
    pub ctype: CType,
    pub count: Option<u32>,
    pub offset: usize,
}

impl PlacedField {
    /// Elements it holds (1 for a scalar).
    pub fn elements(&self) -> usize {
        self.count.map_or(1, |n| n as usize)
    }

    /// Bytes it takes.
    pub fn len(&self) -> usize {
        self.ctype.size() * self.elements()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> Range<usize> {
        self.offset..self.offset + self.len()
    }

    /// Element `i`'s offset in the struct.
    pub fn element_offset(&self, i: usize) -> usize {
        self.offset + i * self.ctype.size()
    }

    /// Element `i`'s name as FMI 2.0's structured naming convention writes it
    /// (`attitude[0]`; a scalar's is the field's name).
    pub fn element_name(&self, i: usize) -> String {
        match self.count {
            Some(_) => format!("{}[{i}]", self.name),
            None => self.name.clone(),
        }
    }
}

/// A packed struct placed: its fields in declaration order, its size and the
/// byte ranges no field covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructLayout {
    pub fields: Vec<PlacedField>,
    pub size: usize,
    pub order: ByteOrder,
    pub padding: Vec<Range<usize>>,
}

/// Most elements one array field may have: the FMU makes a variable of each.
pub const MAX_ELEMENTS: u32 = 65_536;

/// Why a struct's declaration cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("a struct needs at least one field")]
    Empty,
    #[error("field `{0}` is declared twice")]
    Duplicate(String),
    #[error(
        "field `{field}` is an array of {count} elements: give 1 to {MAX_ELEMENTS} (a scalar \
         has no count)"
    )]
    Count { field: String, count: u32 },
    #[error(
        "field `{field}` (bytes {start}..{end}) overlaps field `{other}` (bytes \
         {other_start}..{other_end}): give it an offset of at least {other_end}"
    )]
    Overlap {
        field: String,
        start: usize,
        end: usize,
        other: String,
        other_start: usize,
        other_end: usize,
    },
    #[error(
        "field `{field}` at offset {offset} is before the field declared ahead of it, which \
         ends at {previous_end}: declare fields in the order of their offsets"
    )]
    OutOfOrder {
        field: String,
        offset: usize,
        previous_end: usize,
    },
    #[error("the struct's size passes {limit} bytes")]
    TooLarge { limit: usize },
    #[error(
        "a struct whose fields end at byte {end} cannot be {size} bytes: give its sizeof, at \
         least {end} and at most {MAX_STRUCT_SIZE}"
    )]
    Size { size: usize, end: usize },
}

/// Largest struct: a 256 MiB card's memory.
pub const MAX_STRUCT_SIZE: usize = 256 << 20;

impl StructLayout {
    /// Places `fields` in order: each at its own offset if it has one, else
    /// after the one before, aligned as `packing` says.
    pub fn new(
        fields: &[FieldDecl],
        packing: Packing,
        order: ByteOrder,
    ) -> Result<StructLayout, LayoutError> {
        if fields.is_empty() {
            return Err(LayoutError::Empty);
        }
        let mut placed: Vec<PlacedField> = Vec::with_capacity(fields.len());
        let mut next = 0usize;
        let mut max_align = 1usize;
        for f in fields {
            let align = match packing {
                Packing::Natural => f.ctype.align(),
                Packing::Packed => 1,
            };
            max_align = max_align.max(align);
            let field = place(f, next.next_multiple_of(align), &placed)?;
            if field.offset < next {
                return Err(LayoutError::OutOfOrder {
                    field: f.name.clone(),
                    offset: field.offset,
                    previous_end: next,
                });
            }
            next = field.bytes().end;
            placed.push(field);
        }
        let size = next.next_multiple_of(max_align);
        Ok(StructLayout {
            padding: padding(&placed, size),
            fields: placed,
            size,
            order,
        })
    }

    /// The layout with the struct's size `size` instead of the one its
    /// fields give: a C compiler's `sizeof` where `#pragma pack(2)` or an
    /// aligned attribute pads otherwise. The bytes added are padding.
    pub fn with_size(mut self, size: usize) -> Result<StructLayout, LayoutError> {
        let end = self.fields.iter().map(|f| f.bytes().end).max().unwrap_or(0);
        if size < end || size > MAX_STRUCT_SIZE {
            return Err(LayoutError::Size { size, end });
        }
        self.padding.retain(|r| r.end <= end);
        if size > end {
            self.padding.push(end..size);
        }
        self.size = size;
        Ok(self)
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&PlacedField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Elements of all fields: the FMI variables the struct becomes.
    pub fn elements(&self) -> usize {
        self.fields.iter().map(PlacedField::elements).sum()
    }
}

/// One field, at its own offset or `next`: a new name, a count a struct can
/// hold, inside the largest struct, overlapping none placed before it.
fn place(f: &FieldDecl, next: usize, placed: &[PlacedField]) -> Result<PlacedField, LayoutError> {
    if placed.iter().any(|p| p.name == f.name) {
        return Err(LayoutError::Duplicate(f.name.clone()));
    }
    if let Some(count) = f.count.filter(|&n| n == 0 || n > MAX_ELEMENTS) {
        return Err(LayoutError::Count {
            field: f.name.clone(),
            count,
        });
    }
    let offset = f.offset.unwrap_or(next);
    let field = PlacedField {
        name: f.name.clone(),
        ctype: f.ctype,
        count: f.count,
        offset,
    };
    let end = offset
        .checked_add(field.len())
        .filter(|&e| e <= MAX_STRUCT_SIZE)
        .ok_or(LayoutError::TooLarge {
            limit: MAX_STRUCT_SIZE,
        })?;
    if let Some(other) = placed
        .iter()
        .find(|p| p.offset < end && offset < p.bytes().end)
    {
        return Err(LayoutError::Overlap {
            field: f.name.clone(),
            start: offset,
            end,
            other: other.name.clone(),
            other_start: other.offset,
            other_end: other.bytes().end,
        });
    }
    Ok(field)
}

/// The byte ranges of a `size`-byte struct that no field of `placed` (in
/// offset order) covers.
fn padding(placed: &[PlacedField], size: usize) -> Vec<Range<usize>> {
    let mut padding = Vec::new();
    let mut at = 0;
    for p in placed {
        if p.offset > at {
            padding.push(at..p.offset);
        }
        at = p.bytes().end;
    }
    if size > at {
        padding.push(at..size);
    }
    padding
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(name: &str, ctype: &str, count: Option<u32>, offset: Option<usize>) -> FieldDecl {
        FieldDecl {
            name: name.to_owned(),
            ctype: CType::parse(ctype).expect("a C type"),
            count,
            offset,
        }
    }

    /// The article's FlightData, packed: the offsets its header comments give.
    #[test]
    fn the_articles_flight_data_packed_lies_where_its_header_says() {
        let fields = [
            decl("header", "uint32", None, None),
            decl("packetId", "uint64", None, None),
            decl("timestamp", "double", None, None),
            decl("attitude", "float", Some(3), None),
            decl("status", "uint8", None, None),
            decl("msg", "char[32]", None, None),
        ];
        let l = StructLayout::new(&fields, Packing::Packed, ByteOrder::Little).unwrap();
        let offsets: Vec<usize> = l.fields.iter().map(|f| f.offset).collect();
        assert_eq!(offsets, [0, 4, 12, 20, 32, 33]);
        assert_eq!(l.size, 65);
        assert!(l.padding.is_empty());
        assert_eq!(l.fields[3].element_name(2), "attitude[2]");
        assert_eq!(l.elements(), 8);
        // Natural: packetId moves to 8, the struct rounds up to 8.
        let l = StructLayout::new(&fields, Packing::Natural, ByteOrder::Little).unwrap();
        let offsets: Vec<usize> = l.fields.iter().map(|f| f.offset).collect();
        assert_eq!(offsets, [0, 8, 16, 24, 36, 37]);
        assert_eq!(l.size, 72);
        assert_eq!(l.padding, [4..8, 69..72]);
    }

    #[test]
    fn explicit_offsets_leave_named_padding_and_refuse_overlaps() {
        let l = StructLayout::new(
            &[
                decl("a", "int16", None, Some(0)),
                decl("b", "double", None, Some(16)),
            ],
            Packing::Packed,
            ByteOrder::Big,
        )
        .unwrap();
        assert_eq!(l.padding, vec![2..16]);
        assert_eq!(l.size, 24);
        let err = StructLayout::new(
            &[
                decl("a", "int32", Some(2), None),
                decl("b", "double", None, Some(4)),
            ],
            Packing::Packed,
            ByteOrder::Little,
        )
        .unwrap_err();
        assert!(
            matches!(err, LayoutError::Overlap { ref other, .. } if other == "a"),
            "{err}"
        );
        assert!(err.to_string().contains("at least 8"), "{err}");
    }

    #[test]
    fn bad_declarations_are_refused() {
        type Expected = fn(&LayoutError) -> bool;
        let cases: [(&[FieldDecl], Expected); 4] = [
            (&[], |e| matches!(e, LayoutError::Empty)),
            (
                &[decl("a", "int8", None, None), decl("a", "int8", None, None)],
                |e| matches!(e, LayoutError::Duplicate(_)),
            ),
            (&[decl("a", "int8", Some(0), None)], |e| {
                matches!(e, LayoutError::Count { .. })
            }),
            (
                &[decl(
                    "a",
                    "double",
                    Some(MAX_ELEMENTS),
                    Some(MAX_STRUCT_SIZE),
                )],
                |e| matches!(e, LayoutError::TooLarge { .. }),
            ),
        ];
        for (fields, expected) in cases {
            let err = StructLayout::new(fields, Packing::Natural, ByteOrder::Little).unwrap_err();
            assert!(expected(&err), "{err:?}");
        }
    }
}
