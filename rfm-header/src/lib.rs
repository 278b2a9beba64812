//! A lab's memory map from its C header: the fields of one struct, each with
//! its C type and its byte offset as the C compiler lays the struct out
//! (`#pragma pack`, natural alignment, nested structs and arrays of them,
//! enums as their integer type), for a foreign node of an interface file.
//! Bitfields, unions and pointers have no place in reflective memory shared
//! between programs and are refused with the line that has them.
//!
//! libclang, the compiler's own front end, reads the header: what it reports
//! is what clang (and gcc, which shares the platform's ABI) compiles.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Mutex;

use clang::{Clang, Entity, EntityKind, Index, Type, TypeKind};
use rfm_frames::packed::CType;

/// One field of the imported struct: a scalar, an array of scalars or a
/// `char[N]`. Members of nested structs are named by their path
/// (`pos.x`, `wheels[1].pressure`), FMI 2.0's structured names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderField {
    pub name: String,
    pub ctype: CType,
    /// Elements of an array of scalars (a multi-dimensional one flattened in
    /// C's order); `None` for a scalar.
    pub count: Option<u32>,
    /// Bytes from the start of the struct.
    pub offset: usize,
    /// The header's line that declares it.
    pub line: u32,
}

/// A struct as the compiler lays it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderStruct {
    pub name: String,
    /// `sizeof`, padding included.
    pub size: usize,
    pub fields: Vec<HeaderField>,
}

/// Why a header's struct cannot be imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error(
        "libclang cannot be loaded ({0}): install it (Debian: apt install libclang-dev) or name \
         its folder in LIBCLANG_PATH"
    )]
    NoLibclang(String),
    #[error("{file}: cannot be read as C: {reason}")]
    Unreadable { file: String, reason: String },
    #[error("{file}:{line}:{column}: {message} (the header does not parse as C)")]
    Parse {
        file: String,
        line: u32,
        column: u32,
        message: String,
    },
    #[error("{file}: no struct `{name}` (structs and typedefs of structs here: {found})")]
    NoStruct {
        file: String,
        name: String,
        found: String,
    },
    #[error("{file}:{line}: {what}")]
    Refused {
        file: String,
        line: u32,
        what: String,
    },
}

/// libclang allows one `Clang` per process at a time.
static CLANG: Mutex<()> = Mutex::new(());

/// The struct (or typedef of a struct) `name` of `header`, parsed as C with
/// `args` (include paths, defines) added to clang's command line.
pub fn import(header: &Path, name: &str, args: &[String]) -> Result<HeaderStruct, HeaderError> {
    let _one = CLANG.lock().unwrap_or_else(|e| e.into_inner());
    let clang = Clang::new().map_err(HeaderError::NoLibclang)?;
    let index = Index::new(&clang, false, false);
    let file = header.display().to_string();
    let mut arguments = vec!["-x".to_owned(), "c".to_owned(), "-std=c11".to_owned()];
    arguments.extend(args.iter().cloned());
    let unit = index
        .parser(header)
        .arguments(&arguments)
        .parse()
        .map_err(|e| HeaderError::Unreadable {
            file: file.clone(),
            reason: e.to_string(),
        })?;
    if let Some(d) = unit.get_diagnostics().into_iter().find(|d| {
        matches!(
            d.get_severity(),
            clang::diagnostic::Severity::Error | clang::diagnostic::Severity::Fatal
        )
    }) {
        let at = d.get_location().get_spelling_location();
        return Err(HeaderError::Parse {
            file: at
                .file
                .map_or(file.clone(), |f| f.get_path().display().to_string()),
            line: at.line,
            column: at.column,
            message: d.get_text(),
        });
    }
    let top = unit.get_entity();
    let record = find(&top, name).ok_or_else(|| HeaderError::NoStruct {
        file: file.clone(),
        name: name.to_owned(),
        found: struct_names(&top),
    })?;
    let ty = record.get_type().expect("a struct has a type");
    let size = ty.get_sizeof().map_err(|e| HeaderError::Refused {
        file: file.clone(),
        line: line_of(&record),
        what: format!("struct `{name}` has no size ({e:?}): is it declared whole here?"),
    })?;
    let mut fields = Vec::new();
    let walk = Walk { file: &file };
    walk.record(&record, 0, "", &mut fields)?;
    Ok(HeaderStruct {
        name: name.to_owned(),
        size,
        fields,
    })
}

/// The struct definition called `name`: a tag (`struct name`) or a typedef.
fn find<'tu>(top: &Entity<'tu>, name: &str) -> Option<Entity<'tu>> {
    let mut found = None;
    top.visit_children(|e, _| {
        let definition = match e.get_kind() {
            EntityKind::StructDecl if e.get_name().as_deref() == Some(name) => e.get_definition(),
            EntityKind::TypedefDecl if e.get_name().as_deref() == Some(name) => e
                .get_typedef_underlying_type()
                .map(|t| t.get_canonical_type())
                .filter(|t| t.get_kind() == TypeKind::Record)
                .and_then(|t| t.get_declaration())
                .filter(|d| d.get_kind() == EntityKind::StructDecl)
                .and_then(|d| d.get_definition()),
            _ => None,
        };
        match definition {
            Some(d) => {
                found = Some(d);
                clang::EntityVisitResult::Break
            }
            None => clang::EntityVisitResult::Continue,
        }
    });
    found
}

fn struct_names(top: &Entity) -> String {
    let names: Vec<String> = top
        .get_children()
        .into_iter()
        .filter(|e| {
            matches!(
                e.get_kind(),
                EntityKind::StructDecl | EntityKind::TypedefDecl
            )
        })
        .filter(|e| e.get_location().is_some_and(|l| l.is_in_main_file()))
        .filter_map(|e| e.get_name())
        .map(|n| format!("`{n}`"))
        .collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

fn line_of(e: &Entity) -> u32 {
    e.get_location()
        .map_or(0, |l| l.get_spelling_location().line)
}

/// The walk over a struct's fields, in the header `file`.
struct Walk<'a> {
    file: &'a str,
}

impl Walk<'_> {
    fn refuse(&self, e: &Entity, what: String) -> HeaderError {
        HeaderError::Refused {
            file: self.file.to_owned(),
            line: line_of(e),
            what,
        }
    }

    /// The fields of `record` at `base` bytes, named after `prefix`.
    fn record(
        &self,
        record: &Entity,
        base: usize,
        prefix: &str,
        out: &mut Vec<HeaderField>,
    ) -> Result<(), HeaderError> {
        if record.get_kind() == EntityKind::UnionDecl {
            return Err(self.refuse(
                record,
                format!(
                    "`{}` is a union: a union has no one layout another program can read; \
                     declare the member the programs use as the field",
                    prefix.trim_end_matches('.')
                ),
            ));
        }
        for f in record.get_children() {
            if f.get_kind() != EntityKind::FieldDecl {
                continue;
            }
            let name = format!("{prefix}{}", f.get_name().unwrap_or_default());
            if f.is_bit_field() {
                return Err(self.refuse(
                    &f,
                    format!(
                        "field `{name}` is a bitfield: its bits' order is the compiler's, not \
                         the memory's; declare the whole word it lies in (e.g. uint32_t) instead"
                    ),
                ));
            }
            let bits = f
                .get_offset_of_field()
                .map_err(|e| self.refuse(&f, format!("field `{name}` has no offset ({e:?})")))?;
            let ty = f
                .get_type()
                .expect("a field has a type")
                .get_canonical_type();
            self.typed(&f, &name, &ty, base + bits / 8, out)?;
        }
        Ok(())
    }

    /// Field `name` of type `ty` at `offset`: a scalar, an array or a struct.
    fn typed(
        &self,
        f: &Entity,
        name: &str,
        ty: &Type,
        offset: usize,
        out: &mut Vec<HeaderField>,
    ) -> Result<(), HeaderError> {
        match ty.get_kind() {
            TypeKind::Record => {
                let decl = ty.get_declaration().expect("a record has a declaration");
                self.record(&decl, offset, &format!("{name}."), out)
            }
            TypeKind::ConstantArray => {
                let (elem, count) = flatten(ty);
                if matches!(elem.get_kind(), TypeKind::CharS | TypeKind::CharU) {
                    let n = u16::try_from(count).map_err(|_| {
                        self.refuse(f, format!("field `{name}`: a char array of at most 65535"))
                    })?;
                    return self.push(f, name, CType::Char(n), None, offset, out);
                }
                if elem.get_kind() == TypeKind::Record {
                    let stride = elem.get_sizeof().unwrap_or(0);
                    for i in 0..count {
                        self.typed(f, &format!("{name}[{i}]"), &elem, offset + i * stride, out)?;
                    }
                    return Ok(());
                }
                let ctype = self.scalar(f, name, &elem)?;
                let count = u32::try_from(count).unwrap_or(u32::MAX);
                self.push(f, name, ctype, Some(count), offset, out)
            }
            _ => {
                let ctype = self.scalar(f, name, ty)?;
                self.push(f, name, ctype, None, offset, out)
            }
        }
    }

    fn push(
        &self,
        f: &Entity,
        name: &str,
        ctype: CType,
        count: Option<u32>,
        offset: usize,
        out: &mut Vec<HeaderField>,
    ) -> Result<(), HeaderError> {
        out.push(HeaderField {
            name: name.to_owned(),
            ctype,
            count,
            offset,
            line: line_of(f),
        });
        Ok(())
    }

    /// The C type of a scalar: by its kind and size (`long` is 8 bytes on
    /// Linux, 4 on Windows), an enum by its underlying integer.
    fn scalar(&self, f: &Entity, name: &str, ty: &Type) -> Result<CType, HeaderError> {
        let size = ty.get_sizeof().unwrap_or(0);
        let found = match ty.get_kind() {
            TypeKind::Bool => Some(CType::Bool),
            TypeKind::Float => Some(CType::Float),
            TypeKind::Double => Some(CType::Double),
            TypeKind::CharS
            | TypeKind::SChar
            | TypeKind::Short
            | TypeKind::Int
            | TypeKind::Long
            | TypeKind::LongLong => integer(size, true),
            TypeKind::CharU
            | TypeKind::UChar
            | TypeKind::UShort
            | TypeKind::UInt
            | TypeKind::ULong
            | TypeKind::ULongLong => integer(size, false),
            TypeKind::Enum => {
                let under = ty
                    .get_declaration()
                    .and_then(|d| d.get_enum_underlying_type())
                    .map(|t| t.get_canonical_type());
                return match under {
                    Some(u) => self.scalar(f, name, &u),
                    None => Err(self.refuse(f, format!("enum field `{name}` has no integer type"))),
                };
            }
            TypeKind::Pointer => {
                return Err(self.refuse(
                    f,
                    format!(
                        "field `{name}` is a pointer: an address in one program's memory means \
                         nothing to another PC; store an offset or the data itself"
                    ),
                ))
            }
            _ => None,
        };
        found.ok_or_else(|| {
            self.refuse(
                f,
                format!(
                    "field `{name}` is a {} ({size} bytes): no C type of an interface file \
                     ({}) holds it",
                    ty.get_display_name(),
                    CType::names()
                ),
            )
        })
    }
}

/// The integer type of `size` bytes, signed or not.
fn integer(size: usize, signed: bool) -> Option<CType> {
    Some(match (size, signed) {
        (1, true) => CType::Int8,
        (2, true) => CType::Int16,
        (4, true) => CType::Int32,
        (8, true) => CType::Int64,
        (1, false) => CType::Uint8,
        (2, false) => CType::Uint16,
        (4, false) => CType::Uint32,
        (8, false) => CType::Uint64,
        _ => return None,
    })
}

/// An array's innermost element type and its count of them (`float m[3][4]`:
/// float, 12).
fn flatten<'tu>(ty: &Type<'tu>) -> (Type<'tu>, usize) {
    let mut count = 1;
    let mut ty = *ty;
    while ty.get_kind() == TypeKind::ConstantArray {
        count *= ty.get_size().unwrap_or(0);
        ty = ty
            .get_element_type()
            .expect("an array has an element type")
            .get_canonical_type();
    }
    (ty, count)
}

impl HeaderStruct {
    /// The struct as a foreign node of an interface file: `[[node]]` with
    /// every field at the compiler's offset, its size, and a handshake for
    /// the user to state (`none` until then, said in a comment).
    pub fn node_toml(&self, node: &str, offset: u64, header: &str) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "# `struct {}` of {header}, as the C compiler lays it out ({} bytes).",
            self.name, self.size
        );
        let _ = writeln!(t, "[[node]]");
        let _ = writeln!(t, "name = \"{node}\"");
        let _ = writeln!(t, "offset = {offset:#x}");
        let _ = writeln!(t, "size = {}", self.size);
        let _ = writeln!(
            t,
            "# How its writer marks a whole struct: \"none\", {{ kind = \"counter\", field = \
             \"...\" }} or {{ kind = \"flag\", field = \"...\", value = ... }}."
        );
        let _ = writeln!(t, "handshake = \"none\"");
        let _ = writeln!(t, "fields = [");
        for f in &self.fields {
            let count = f.count.map_or(String::new(), |n| format!(", count = {n}"));
            let _ = writeln!(
                t,
                "  {{ name = \"{}\", type = \"{}\"{count}, offset = {} }},",
                f.name, f.ctype, f.offset
            );
        }
        let _ = writeln!(t, "]");
        t
    }
}
