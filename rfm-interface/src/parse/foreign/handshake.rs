//! A foreign node's `handshake`: how its writer marks a whole struct (none,
//! a counter, a flag), and the marker field it names, checked where it
//! breaks a rule.

use super::super::super::foreign::{can_mark, Handshake, COUNTINGS, HANDSHAKES};
use super::super::super::*;
use super::super::{RawNode, Source};
use rfm_frames::packed::{Counting, StructLayout};

/// `handshake`: `"none"`, or a table naming its `kind` and marker `field`.
pub(super) fn handshake(
    src: &Source<'_>,
    node: &RawNode,
    layout: &StructLayout,
    offset: u64,
) -> Result<Handshake, InterfaceError> {
    let name = node.name.get_ref();
    let expected = format!(
        "expected \"none\", {{ kind = \"counter\", field = \"…\", counts = \"seqlock\" or \
         \"after-data\" }} or {{ kind = \"flag\", field = \"…\", value = … }} (kinds: {})",
        HANDSHAKES.join(", ")
    );
    let Some(raw) = &node.handshake else {
        return Err(src.error(
            node.name.span(),
            format!(
                "foreign node `{name}` has no `handshake`: say how its writer marks a whole \
                 struct: {expected}"
            ),
        ));
    };
    let at = |what: String| src.error(raw.span(), format!("handshake of `{name}`: {what}"));
    let table = match raw.get_ref() {
        toml::Value::String(s) if s == "none" => return Ok(Handshake::None),
        toml::Value::Table(t) => t,
        _ => return Err(at(expected)),
    };
    let text = |key: &str| table.get(key).and_then(toml::Value::as_str);
    let allowed: &[&str] = match text("kind") {
        Some("counter") => &["kind", "field", "counts", "period"],
        Some("flag") => &["kind", "field", "value"],
        Some("none") => &["kind"],
        _ => return Err(at(expected)),
    };
    if let Some(key) = table.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(at(format!("`{key}` is not a key of it: {expected}")));
    }
    if text("kind") == Some("none") {
        return Ok(Handshake::None);
    }
    let field = marker(layout, text("field"), offset).map_err(at)?;
    if text("kind") == Some("flag") {
        let value = table
            .get("value")
            .and_then(toml::Value::as_integer)
            .and_then(|v| u64::try_from(v).ok())
            .filter(|&v| v != 0)
            .ok_or_else(|| {
                at(format!(
                    "a flag's `value` is the marker's nonzero value: {expected}"
                ))
            })?;
        return Ok(Handshake::Flag { field, value });
    }
    counter(table, field, &at, &expected)
}

/// A counter handshake's `counts` and `period`, its marker `field` found.
fn counter(
    table: &toml::Table,
    field: usize,
    at: &dyn Fn(String) -> InterfaceError,
    expected: &str,
) -> Result<Handshake, InterfaceError> {
    let text = |key: &str| table.get(key).and_then(toml::Value::as_str);
    let counts = match text("counts") {
        None => Counting::Seqlock,
        Some(w) => COUNTINGS
            .iter()
            .find(|(word, _)| *word == w)
            .map(|(_, c)| *c)
            .ok_or_else(|| at(format!("counts `{w}`: {expected}")))?,
    };
    let period = match table.get("period") {
        None => None,
        Some(toml::Value::String(p)) => Some(Period::parse(p).map_err(at)?),
        Some(toml::Value::Float(p)) => Some(Period::parse(&p.to_string()).map_err(at)?),
        Some(toml::Value::Integer(p)) => Some(Period::parse(&p.to_string()).map_err(at)?),
        Some(_) => {
            return Err(at(
                "a counter's `period` is seconds: 0.001 or \"1/60\"".into()
            ))
        }
    };
    Ok(Handshake::Counter {
        field,
        counts,
        period,
    })
}

/// The marker field a handshake names: a scalar of a whole-number type.
fn marker(layout: &StructLayout, field: Option<&str>, offset: u64) -> Result<usize, String> {
    let names = || {
        layout
            .fields
            .iter()
            .map(|f| format!("`{}`", f.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(field) = field else {
        return Err(format!("give the marker's `field` (one of {})", names()));
    };
    let i = layout
        .fields
        .iter()
        .position(|f| f.name == field)
        .ok_or_else(|| format!("`{field}` is no field of the struct ({})", names()))?;
    let f = &layout.fields[i];
    if f.count.is_some() || !can_mark(f.ctype) {
        return Err(format!(
            "the marker `{field}` is a {}{}: a marker is one whole-number field",
            f.ctype,
            if f.count.is_some() { " array" } else { "" }
        ));
    }
    let width = f.ctype.size();
    let place = offset + f.offset as u64;
    if !place.is_multiple_of(width.min(4) as u64) {
        return Err(format!(
            "the marker `{field}` lies at memory offset {place}, not a multiple of its {width} \
             bytes: one aligned load must read it (check the node's offset and alignment)"
        ));
    }
    Ok(i)
}
