//! A signal of a node: its name, type (FMI 2.0's or a C type's), size or
//! count, unit, bounds and start, each checked against the others.

use std::collections::HashMap;
use std::ops::{Range, RangeInclusive};

use rfm_frames::fmi::FmiType;
use rfm_frames::packed::{self, ByteOrder, CType, MAX_ELEMENTS};
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

/// A signal's `type` and `count`: one of FMI 2.0's types, or of the C types
/// (`uint64`, `float`…), or an array of either but a string.
fn signal_type(src: &Source<'_>, node: &str, s: &RawSignal) -> Result<SignalType, InterfaceError> {
    let kind = scalar_type(src, node, s)?;
    let Some(count) = &s.count else {
        return Ok(kind);
    };
    let n: u32 = within(src, count, 1..=MAX_ELEMENTS, |n| {
        format!(
            "count {n} of `{node}.{}`: an array has 1 to {MAX_ELEMENTS} elements (a scalar \
             has no count)",
            s.name.get_ref()
        )
    })?;
    let ctype = match kind {
        SignalType::Real => CType::Double,
        SignalType::Integer => CType::Int32,
        SignalType::Boolean => CType::Bool,
        SignalType::Typed { ctype, .. } if !matches!(ctype, CType::Char(_)) => ctype,
        _ => {
            return Err(src.error(
                count.span(),
                format!(
                    "`{node}.{}` is {}: a string signal cannot be an array; declare one \
                     signal per string",
                    s.name.get_ref(),
                    kind.with_article()
                ),
            ))
        }
    };
    Ok(SignalType::Typed {
        ctype,
        count: Some(n),
    })
}

/// A signal's `type`, with the `size` a String needs and no other type has.
fn scalar_type(src: &Source<'_>, node: &str, s: &RawSignal) -> Result<SignalType, InterfaceError> {
    let name = s.name.get_ref();
    if let Some(ctype) = CType::parse(s.kind.get_ref()) {
        if let Some(size) = &s.size {
            return Err(src.error(
                size.span(),
                format!("`{node}.{name}` is a `{ctype}`: only String signals have a size"),
            ));
        }
        return Ok(SignalType::Typed { ctype, count: None });
    }
    match (s.kind.get_ref().as_str(), &s.size) {
        ("String", None) => Err(src.error(
            s.kind.span(),
            format!(
                "String `{node}.{name}` needs its size in bytes (UTF-8), 1 to \
                 {MAX_STRING_SIZE}: e.g. size = 16"
            ),
        )),
        ("String", Some(size)) => {
            let size = within(src, size, 1..=MAX_STRING_SIZE, |n| {
                format!("size {n} of String `{node}.{name}`: expected 1 to {MAX_STRING_SIZE} bytes")
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
                "unknown type `{other}` of `{node}.{name}`: expected Real, Integer, Boolean, \
                 String or a C type ({})",
                CType::names()
            ),
        )),
    }
}

/// The number `given` if it lies in `range`, or the error `why(given)` at
/// its place.
fn within<T: TryFrom<i64> + PartialOrd>(
    src: &Source<'_>,
    given: &Spanned<i64>,
    range: RangeInclusive<T>,
    why: impl Fn(i64) -> String,
) -> Result<T, InterfaceError> {
    let n = *given.get_ref();
    T::try_from(n)
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| src.error(given.span(), why(n)))
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
    if let SignalType::Typed { ctype, .. } = kind {
        return typed_number(src, node, name, ctype, b, which).map(Some);
    }
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
        (SignalType::Typed { ctype, .. }, v) => typed_start(src, node, name, ctype, value, v),
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
            text_start(text, usize::from(size), |len| {
                bad(format!(
                    "start of String `{node}.{name}` is {len} bytes or holds a NUL; it has room \
                     for {size} bytes of text"
                ))
            })
        }
        (kind, _) => Err(bad(format!(
            "start {} of `{node}.{name}` is not {} value (finite, for a Real)",
            src.text.get(value.span()).unwrap_or("?"),
            kind.with_article()
        ))),
    }
}

/// The start `text` of a string signal with room for `room` bytes: a
/// C string of it must fit and hold no NUL, or `refused(its length)`.
fn text_start(
    text: &str,
    room: usize,
    refused: impl FnOnce(usize) -> InterfaceError,
) -> Result<Value, InterfaceError> {
    match text.len() > room || text.contains('\0') {
        true => Err(refused(text.len())),
        false => Ok(Value::String(text.to_owned())),
    }
}

/// A number given for a signal of C type `ctype` (its `which`: start, min or
/// max), as FMI 2.0 holds it: refused unless the C type holds it as given
/// (by the C types' table, [`packed::encode_at`]'s own checks) and, for a
/// 64-bit integer, a Real holds it exactly.
fn typed_number(
    src: &Source<'_>,
    node: &str,
    name: &str,
    ctype: CType,
    b: &Spanned<toml::Value>,
    which: &str,
) -> Result<f64, InterfaceError> {
    let bad = |what: String| src.error(b.span(), format!("{which} of `{node}.{name}`: {what}"));
    if ctype.fmi_type() == FmiType::Boolean || matches!(ctype, CType::Char(_)) {
        return Err(bad(format!(
            "a `{ctype}` signal has no {which}; only numbers have bounds"
        )));
    }
    let x = match b.get_ref() {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(x) if x.is_finite() => *x,
        _ => return Err(bad(format!("expected a finite number, a `{ctype}`"))),
    };
    let wide = matches!(ctype, CType::Int64 | CType::Uint64);
    if wide && x.abs() > packed::EXACT_LIMIT as f64 {
        return Err(bad(format!(
            "{x} is beyond 2^53, which FMI 2.0's Real (and so the file's start) holds \
             exactly: give a smaller one"
        )));
    }
    let value = match ctype.fmi_type() {
        FmiType::Integer => Value::Integer(x as i32),
        _ => Value::Real(x),
    };
    let mut scratch = [0u8; 8];
    packed::encode_at(ctype, 0, &value, &mut scratch, ByteOrder::Little, || {
        format!("{node}.{name}")
    })
    .map_err(|e| bad(e.to_string()))?;
    if ctype.fmi_type() == FmiType::Integer && f64::from(x as i32) != x {
        return Err(bad(format!("{x} is not a whole number, as a `{ctype}` is")));
    }
    Ok(x)
}

/// The start of a signal of C type `ctype`, as FMI 2.0 holds it.
fn typed_start(
    src: &Source<'_>,
    node: &str,
    name: &str,
    ctype: CType,
    value: &Spanned<toml::Value>,
    v: &toml::Value,
) -> Result<Value, InterfaceError> {
    match (ctype, v) {
        (CType::Bool, toml::Value::Boolean(b)) => Ok(Value::Boolean(*b)),
        (CType::Char(n), toml::Value::String(text)) => text_start(text, usize::from(n), |len| {
            src.error(
                value.span(),
                format!(
                    "start of `{node}.{name}` is {len} bytes or holds a NUL; a `{ctype}` has room \
                     for {n} bytes of text"
                ),
            )
        }),
        (CType::Bool | CType::Char(_), _) => Err(src.error(
            value.span(),
            format!(
                "start of `{node}.{name}` is not a value of a `{ctype}` ({})",
                if ctype == CType::Bool {
                    "true or false"
                } else {
                    "a string"
                }
            ),
        )),
        _ => {
            let x = typed_number(src, node, name, ctype, value, "start")?;
            Ok(match ctype.fmi_type() {
                FmiType::Integer => Value::Integer(x as i32),
                _ => Value::Real(x),
            })
        }
    }
}
