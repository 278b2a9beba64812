//! A signal's FMI 2.0 variables: one, or one per element of an array,
//! each with what FMI 3.0 makes of it when the signal is of a C type.

use rfm_frames::payload::{Field, SignalType};
use rfm_interface::Signal;

use super::Element;

/// One FMI 2.0 variable's share of a signal: all of it, or one element of
/// an array.
pub(super) struct SignalElement {
    /// The signal's name, or an element's (`counters[2]`).
    pub name: String,
    /// Where it lies in the node's payload, and its bytes.
    pub offset: usize,
    pub size: usize,
    /// For a signal of a C type: what FMI 3.0 makes of it.
    pub element: Option<Element>,
}

/// The FMI 2.0 variables of signal `s` (at `field` of its payload): one, or
/// one per element of an array, named as a struct's array field's are.
pub(super) fn signal_elements<'a>(
    s: &'a Signal,
    field: &'a Field,
) -> impl Iterator<Item = SignalElement> + 'a {
    (0..s.kind.elements()).map(move |i| match s.kind {
        SignalType::Typed { ctype, count } => SignalElement {
            name: match count {
                Some(_) => format!("{}[{i}]", s.name),
                None => s.name.clone(),
            },
            offset: field.offset + i * ctype.size(),
            size: ctype.size(),
            element: Some(Element {
                ctype,
                index: i,
                count: count.map(|n| n as usize),
            }),
        },
        _ => SignalElement {
            name: s.name.clone(),
            offset: field.offset,
            size: field.size(),
            element: None,
        },
    })
}
