//! A foreign node of the file ([`crate::foreign`]): its offset, byte order,
//! alignment, fields and handshake, each checked at its place.

mod handshake;

use std::collections::HashMap;
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::super::foreign::{FieldInfo, ForeignNode, Handshake};
use super::super::*;
use super::{RawNode, Source};
use handshake::handshake;
use rfm_frames::packed::{
    ByteOrder, CType, FieldDecl, Packing, StructLayout, C_TYPES, MAX_ELEMENTS,
};
use rfm_memory::spelling::did_you_mean;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawField {
    name: Spanned<String>,
    #[serde(rename = "type")]
    kind: Spanned<String>,
    count: Option<Spanned<i64>>,
    offset: Option<Spanned<i64>>,
    unit: Option<Spanned<String>>,
    description: Option<String>,
}

/// The words of `byte_order` and `align`: one table each.
const BYTE_ORDERS: [(&str, ByteOrder); 2] =
    [("little", ByteOrder::Little), ("big", ByteOrder::Big)];
const PACKINGS: [(&str, Packing); 2] = [("natural", Packing::Natural), ("packed", Packing::Packed)];

fn word<T: Copy>(
    src: &Source<'_>,
    key: &str,
    value: &Option<Spanned<String>>,
    table: &[(&str, T)],
) -> Result<T, InterfaceError> {
    let Some(value) = value else {
        return Ok(table[0].1);
    };
    table
        .iter()
        .find(|(w, _)| *w == value.get_ref())
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let words: Vec<String> = table.iter().map(|(w, _)| format!("`{w}`")).collect();
            src.error(
                value.span(),
                format!(
                    "{key} `{}`: expected {} (the first is the default)",
                    value.get_ref(),
                    words.join(" or ")
                ),
            )
        })
}

/// A node without `fields` is an FMU node: the foreign keys are not its.
pub(super) fn refuse_foreign_keys(src: &Source<'_>, node: &RawNode) -> Result<(), InterfaceError> {
    let keys = [
        ("byte_order", node.byte_order.as_ref().map(Spanned::span)),
        ("align", node.align.as_ref().map(Spanned::span)),
        ("handshake", node.handshake.as_ref().map(Spanned::span)),
        ("writer", node.writer.as_ref().map(Spanned::span)),
        ("size", node.size.as_ref().map(Spanned::span)),
        ("description", node.description.as_ref().map(Spanned::span)),
    ];
    match keys.into_iter().find_map(|(k, s)| s.map(|s| (k, s))) {
        Some((key, span)) => Err(src.error(
            span,
            format!(
                "`{key}` is a foreign node's key, and node `{}` has no `fields`: a node a lab's \
                 own program writes declares its struct's `fields`; an FMU node its `signals`",
                node.name.get_ref()
            ),
        )),
        None => Ok(()),
    }
}

pub(super) fn check_foreign(
    src: &Source<'_>,
    node: &RawNode,
    span: Range<usize>,
    ours: &[NodeSpec],
) -> Result<ForeignNode, InterfaceError> {
    let name = node.name.get_ref();
    refuse_fmu_keys(src, node, &span)?;
    let offset = foreign_offset(src, node, span)?;
    let order = word(src, "byte_order", &node.byte_order, &BYTE_ORDERS)?;
    let packing = word(src, "align", &node.align, &PACKINGS)?;
    let raw_fields = node.fields.as_ref().expect("a foreign node has fields");
    let (decls, info) = fields(src, name, raw_fields)?;
    let mut layout = StructLayout::new(&decls, packing, order)
        .map_err(|e| src.error(raw_fields.span(), format!("foreign node `{name}`: {e}")))?;
    if let Some(size) = &node.size {
        let value = usize::try_from(*size.get_ref()).unwrap_or(0);
        layout = layout.with_size(value).map_err(|e| {
            src.error(
                size.span(),
                format!("size {} of foreign node `{name}`: {e}", size.get_ref()),
            )
        })?;
    }
    let handshake = handshake(src, node, &layout, offset)?;
    refuse_counter_period_without_periods(src, node, &handshake, ours)?;
    Ok(ForeignNode {
        name: name.clone(),
        offset,
        layout,
        info,
        handshake,
        writer: writer_of(src, node, ours)?,
        description: node.description.as_ref().map(|d| d.get_ref().clone()),
    })
}

/// Where the struct lies, in bytes from regionOffset: required, and inside
/// the largest memory a card has.
fn foreign_offset(
    src: &Source<'_>,
    node: &RawNode,
    span: Range<usize>,
) -> Result<u64, InterfaceError> {
    let name = node.name.get_ref();
    let Some(offset) = &node.offset else {
        return Err(src.error(
            span,
            format!(
                "foreign node `{name}` has no `offset`: give where its program writes the \
                 struct, in bytes from regionOffset (the card's address when regionOffset is 0)"
            ),
        ));
    };
    u64::try_from(*offset.get_ref())
        .ok()
        .filter(|&o| o <= MAX_MEMORY_SIZE)
        .ok_or_else(|| {
            src.error(
                offset.span(),
                format!(
                    "offset {} of foreign node `{name}`: expected bytes from regionOffset, 0 to \
                     {MAX_MEMORY_SIZE}",
                    offset.get_ref()
                ),
            )
        })
}

/// A counter with a `period` is waited for by the rule on time, which only
/// a file whose FMU nodes all have periods can apply.
fn refuse_counter_period_without_periods(
    src: &Source<'_>,
    node: &RawNode,
    handshake: &Handshake,
    ours: &[NodeSpec],
) -> Result<(), InterfaceError> {
    let (
        Handshake::Counter {
            period: Some(_), ..
        },
        Some(raw),
    ) = (handshake, &node.handshake)
    else {
        return Ok(());
    };
    if ours.iter().all(|n| n.period.is_some()) {
        return Ok(());
    }
    Err(src.error(
        raw.span(),
        format!(
            "handshake of `{}`: a counter's `period` is waited for in lockstep by the rule on \
             time, which needs the FMU nodes' periods: give the file a `period` (or the counter \
             none, to take the newest struct free)",
            node.name.get_ref()
        ),
    ))
}

/// The FMU node that writes a foreign struct, by its index among the file's
/// FMU nodes; none when a lab's program writes it.
fn writer_of(
    src: &Source<'_>,
    node: &RawNode,
    ours: &[NodeSpec],
) -> Result<Option<usize>, InterfaceError> {
    let Some(w) = &node.writer else {
        return Ok(None);
    };
    match ours.iter().position(|n| n.name == *w.get_ref()) {
        Some(index) => Ok(Some(index)),
        None => {
            let names: Vec<String> = ours.iter().map(|n| format!("`{}`", n.name)).collect();
            Err(src.error(
                w.span(),
                format!(
                    "writer `{}` of foreign node `{}` is no FMU node of this file: name the \
                     node whose FMU writes the struct ({}), or none for a lab's program",
                    w.get_ref(),
                    node.name.get_ref(),
                    names.join(", ")
                ),
            ))
        }
    }
}

/// The keys of an FMU node, which a foreign one has no use for.
fn refuse_fmu_keys(
    src: &Source<'_>,
    node: &RawNode,
    span: &Range<usize>,
) -> Result<(), InterfaceError> {
    let name = node.name.get_ref();
    let mut keys: Vec<(&str, Range<usize>)> = Vec::new();
    if let Some(s) = &node.slot {
        keys.push(("slot", s.span()));
    }
    if let Some(s) = node.signals.first() {
        keys.push(("signals", s.span()));
    }
    if let Some(s) = &node.period {
        keys.push(("period", s.span()));
    }
    if let Some(s) = &node.free {
        keys.push(("free", s.span()));
    }
    for (key, value) in node.settings() {
        if let Some(v) = value {
            keys.push((key, v.span()));
        }
    }
    match keys.into_iter().next() {
        Some((key, at)) => Err(src.error(
            at,
            format!(
                "foreign node `{name}` (it has `fields`) takes no `{key}`: a lab's own program \
                 writes it, so it has no slot, signals, period or FMU settings"
            ),
        )),
        None if node.fields.as_ref().is_some_and(|f| f.get_ref().is_empty()) => Err(src.error(
            span.clone(),
            format!("foreign node `{name}` has no field: give its struct's `fields`"),
        )),
        None => Ok(()),
    }
}

fn fields(
    src: &Source<'_>,
    node: &str,
    raw: &Spanned<Vec<Spanned<RawField>>>,
) -> Result<(Vec<FieldDecl>, Vec<FieldInfo>), InterfaceError> {
    let mut seen: HashMap<&str, Range<usize>> = HashMap::new();
    let mut decls = Vec::new();
    let mut info = Vec::new();
    for f in raw.get_ref() {
        let f = f.get_ref();
        field_name(src, node, f, &mut seen)?;
        decls.push(field_decl(src, node, f)?);
        info.push(FieldInfo {
            unit: f.unit.as_ref().map(|u| u.get_ref().clone()),
            description: f.description.clone(),
        });
    }
    Ok((decls, info))
}

/// A field's name is a path, names none of the outputs the FMU adds to a
/// foreign node, and is declared once (`seen` holds the names before it).
fn field_name<'a>(
    src: &Source<'_>,
    node: &str,
    f: &'a RawField,
    seen: &mut HashMap<&'a str, Range<usize>>,
) -> Result<(), InterfaceError> {
    let name = f.name.get_ref();
    if !is_field_path(name) {
        return Err(src.error(
            f.name.span(),
            format!(
                "field name `{name}`: {IDENTIFIER_RULE}; a nested struct's member is named \
                 by its path (`pos.x`, `wheels[1].pressure`)"
            ),
        ));
    }
    let root = name.split(['.', '[']).next().unwrap_or_default();
    if src.reserved.foreign_outputs.contains(&root) {
        let outputs: Vec<String> = src
            .reserved
            .foreign_outputs
            .iter()
            .map(|r| format!("`{node}.{r}`"))
            .collect();
        return Err(src.error(
            f.name.span(),
            format!(
                "field name `{name}` collides with the outputs {} (whether its program \
                 runs, what reading it took): rename the field in the file (the FMU \
                 reads it by its offset, not its name)",
                outputs.join(" and ")
            ),
        ));
    }
    if let Some(first) = seen.insert(name, f.name.span()) {
        return Err(src.error(
            f.name.span(),
            format!(
                "field `{node}.{name}` is declared twice (first at line {})",
                src.line_of(&first)
            ),
        ));
    }
    Ok(())
}

/// A field's C type, element count and explicit offset, each checked.
fn field_decl(src: &Source<'_>, node: &str, f: &RawField) -> Result<FieldDecl, InterfaceError> {
    let name = f.name.get_ref();
    let ctype = CType::parse(f.kind.get_ref()).ok_or_else(|| {
        let written = f.kind.get_ref();
        let names = C_TYPES.iter().map(|(_, row)| row.name);
        src.error(
            f.kind.span(),
            format!(
                "type `{written}` of field `{node}.{name}`{}: expected a C type of {} (N from 1 \
                 to 65535)",
                did_you_mean(written, names),
                CType::names()
            ),
        )
    })?;
    let count = f
        .count
        .as_ref()
        .map(|c| {
            u32::try_from(*c.get_ref())
                .ok()
                .filter(|&n| (1..=MAX_ELEMENTS).contains(&n))
                .ok_or_else(|| {
                    src.error(
                        c.span(),
                        format!(
                            "count {} of field `{node}.{name}`: expected 1 to {MAX_ELEMENTS} \
                             elements (a scalar has no count)",
                            c.get_ref()
                        ),
                    )
                })
        })
        .transpose()?;
    let offset = f
        .offset
        .as_ref()
        .map(|o| {
            usize::try_from(*o.get_ref()).map_err(|_| {
                src.error(
                    o.span(),
                    format!(
                        "offset {} of field `{node}.{name}`: expected bytes from the start \
                         of the struct, 0 or more",
                        o.get_ref()
                    ),
                )
            })
        })
        .transpose()?;
    Ok(FieldDecl {
        name: name.clone(),
        ctype,
        count,
        offset,
    })
}

/// A field's name: an identifier, or the path of a nested struct's member
/// (`pos.x`, `wheels[1].pressure`: FMI 2.0's structured names), whose last
/// part is an identifier.
fn is_field_path(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    let (last, inner) = parts.split_last().expect("split gives one part at least");
    let indexed = |part: &str| match part.split_once('[') {
        None => is_identifier(part),
        Some((id, rest)) => {
            is_identifier(id)
                && rest
                    .strip_suffix(']')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        }
    };
    name.len() <= 4 * MAX_NAME_LEN && is_identifier(last) && inner.iter().all(|p| indexed(p))
}
