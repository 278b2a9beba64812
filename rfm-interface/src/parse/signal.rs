//! A signal of a node: its name, type, size, unit, bounds and start, each
//! checked against the others.

use std::collections::HashMap;
use std::ops::Range;

use toml::Spanned;

use super::super::*;
use super::{RawSignal, Source};

pub(super) fn check_signal<'a>(
    src: &Source<'_>,
    node: &str,
    s: &'a RawSignal,
    seen: &mut HashMap<&'a str, Range<usize>>,
) -> Result<Signal, InterfaceError> {
    check_name(src, node, &s.name, seen)?;
    let name = s.name.get_ref();
    let kind = signal_type(src, node, s)?;
    let start = match &s.start {
        None => Value::zero(kind),
        Some(value) => start_value(src, node, name, kind, value)?,
    };
    if let Some(unit) = &s.unit {
        if unit.get_ref().len() > MAX_NAME_LEN {
            return Err(src.error(
                unit.span(),
                format!(
                    "unit of `{node}.{name}` is {} bytes: at most {MAX_NAME_LEN}",
                    unit.get_ref().len()
                ),
            ));
        }
    }
    let (min, max) = bounds(src, node, s, kind, &start)?;
    Ok(Signal {
        name: name.clone(),
        kind,
        unit: s.unit.as_ref().map(|u| u.get_ref().clone()),
        start,
        min,
        max,
        description: s.description.clone(),
    })
}

/// A signal's name: an identifier that no output, parameter or other signal
/// of the node has.
fn check_name<'a>(
    src: &Source<'_>,
    node: &str,
    name: &'a Spanned<String>,
    seen: &mut HashMap<&'a str, Range<usize>>,
) -> Result<(), InterfaceError> {
    let (span, name) = (name.span(), name.get_ref());
    if !is_identifier(name) {
        return Err(src.error(span, format!("signal name `{name}`: {IDENTIFIER_RULE}")));
    }
    let Reserved {
        outputs,
        parameters,
        ..
    } = src.reserved;
    if outputs.contains(&name.as_str()) {
        return Err(src.error(
            span,
            format!(
                "signal name `{name}` collides with the output `{node}.{name}` every peer's FMU \
                 has ({} are taken): rename it",
                outputs.join(", ")
            ),
        ));
    }
    if parameters.contains(&name.as_str()) {
        return Err(src.error(
            span,
            format!(
                "signal name `{name}` collides with the FMU parameter `{name}` ({} are taken): \
                 rename it",
                parameters.join(", ")
            ),
        ));
    }
    if let Some(first) = seen.insert(name, span.clone()) {
        return Err(src.error(
            span,
            format!(
                "node `{node}` publishes `{name}` twice (first at line {})",
                src.line_of(&first)
            ),
        ));
    }
    Ok(())
}

/// A signal's `type`, with the `size` a String needs and no other type has.
fn signal_type(src: &Source<'_>, node: &str, s: &RawSignal) -> Result<SignalType, InterfaceError> {
    let name = s.name.get_ref();
    match (s.kind.get_ref().as_str(), &s.size) {
        ("String", None) => Err(src.error(
            s.kind.span(),
            format!(
                "String `{node}.{name}` needs its size in bytes (UTF-8), 1 to \
                 {MAX_STRING_SIZE}: e.g. size = 16"
            ),
        )),
        ("String", Some(size)) => {
            let n = *size.get_ref();
            let size = u16::try_from(n)
                .ok()
                .filter(|n| (1..=MAX_STRING_SIZE).contains(n))
                .ok_or_else(|| {
                    src.error(
                        size.span(),
                        format!(
                            "size {n} of String `{node}.{name}`: expected 1 to {MAX_STRING_SIZE} bytes"
                        ),
                    )
                })?;
            Ok(SignalType::String { size })
        }
        (kind @ ("Real" | "Integer" | "Boolean"), Some(size)) => Err(src.error(
            size.span(),
            format!(
                "`{node}.{name}` is {} {kind}: only String signals have a size",
                if kind == "Integer" { "an" } else { "a" }
            ),
        )),
        ("Real", None) => Ok(SignalType::Real),
        ("Integer", None) => Ok(SignalType::Integer),
        ("Boolean", None) => Ok(SignalType::Boolean),
        (other, _) => Err(src.error(
            s.kind.span(),
            format!(
                "unknown type `{other}` of `{node}.{name}`: expected Real, Integer, Boolean or String"
            ),
        )),
    }
}

/// A signal's `min` and `max`: numbers of its type, in order, around its start.
fn bounds(
    src: &Source<'_>,
    node: &str,
    s: &RawSignal,
    kind: SignalType,
    start: &Value,
) -> Result<(Option<f64>, Option<f64>), InterfaceError> {
    let name = s.name.get_ref();
    let (min, max) = (
        bound(src, node, name, kind, &s.min, "min")?,
        bound(src, node, name, kind, &s.max, "max")?,
    );
    if let (Some(lo), Some(hi)) = (min, max) {
        if lo > hi {
            let span = s.max.as_ref().expect("max given").span();
            return Err(src.error(
                span,
                format!("max {hi} of `{node}.{name}` is below its min {lo}"),
            ));
        }
    }
    if let Some(x) = start.number() {
        if min.is_some_and(|lo| x < lo) || max.is_some_and(|hi| x > hi) {
            let span = s.start.as_ref().map_or_else(|| s.name.span(), |v| v.span());
            return Err(src.error(
                span,
                format!(
                    "start {x} of `{node}.{name}` is outside its min..max ({}..{}): the FMU \
                     would refuse its own start value",
                    min.map_or(String::new(), |v| v.to_string()),
                    max.map_or(String::new(), |v| v.to_string())
                ),
            ));
        }
    }
    Ok((min, max))
}

/// One bound (`which`: min or max) of a `kind` signal, if given.
fn bound(
    src: &Source<'_>,
    node: &str,
    name: &str,
    kind: SignalType,
    b: &Option<Spanned<toml::Value>>,
    which: &str,
) -> Result<Option<f64>, InterfaceError> {
    let Some(b) = b else { return Ok(None) };
    match (kind, b.get_ref()) {
        (SignalType::Real, toml::Value::Float(x)) if x.is_finite() => Ok(Some(*x)),
        (SignalType::Real | SignalType::Integer, toml::Value::Integer(i))
            if kind == SignalType::Real || i32::try_from(*i).is_ok() =>
        {
            Ok(Some(*i as f64))
        }
        (SignalType::Real | SignalType::Integer, _) => Err(src.error(
            b.span(),
            format!(
                "{which} of `{node}.{name}`: expected {}",
                if kind == SignalType::Real {
                    "a finite number"
                } else {
                    "a 32-bit integer"
                }
            ),
        )),
        _ => Err(src.error(
            b.span(),
            format!(
                "`{node}.{name}` is {}: only Real and Integer signals have a {which}",
                kind.with_article()
            ),
        )),
    }
}

fn start_value(
    src: &Source<'_>,
    node: &str,
    name: &str,
    kind: SignalType,
    value: &Spanned<toml::Value>,
) -> Result<Value, InterfaceError> {
    let bad = |what: String| src.error(value.span(), what);
    match (kind, value.get_ref()) {
        (SignalType::Real, toml::Value::Float(x)) if x.is_finite() => Ok(Value::Real(*x)),
        (SignalType::Real, toml::Value::Integer(i)) => Ok(Value::Real(*i as f64)),
        (SignalType::Integer, toml::Value::Integer(i)) => {
            i32::try_from(*i).map(Value::Integer).map_err(|_| {
                bad(format!(
                    "start {i} of Integer `{node}.{name}`: an Integer is 32 bits"
                ))
            })
        }
        (SignalType::Boolean, toml::Value::Boolean(b)) => Ok(Value::Boolean(*b)),
        (SignalType::String { size }, toml::Value::String(text)) => {
            if text.len() > usize::from(size) || text.contains('\0') {
                Err(bad(format!(
                    "start of String `{node}.{name}` is {} bytes or holds a NUL; it has room for \
                     {size} bytes of text",
                    text.len()
                )))
            } else {
                Ok(Value::String(text.clone()))
            }
        }
        (kind, _) => Err(bad(format!(
            "start {} of `{node}.{name}` is not {} value (finite, for a Real)",
            src.text.get(value.span()).unwrap_or("?"),
            kind.with_article()
        ))),
    }
}
