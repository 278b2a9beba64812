//! A node of the file: its name, slot, offset and signals, each checked
//! where it breaks a rule (a name taken or reserved, a slot twice, a signal of
//! its own: [`super::signal`]).

use std::collections::HashMap;
use std::ops::Range;

use toml::Spanned;

use super::super::*;
use super::signal::check_signal;
use super::{RawNode, Source};

pub(super) fn check_node<'a>(
    src: &Source<'_>,
    node: &'a RawNode,
    span: Range<usize>,
    names: &mut HashMap<&'a str, Range<usize>>,
    slots: &mut HashMap<i64, Range<usize>>,
) -> Result<NodeSpec, InterfaceError> {
    check_node_name(src, &node.name, names)?;
    let name = node.name.get_ref();
    super::foreign::refuse_foreign_keys(src, node)?;
    let slot = check_slot(src, node, span.clone(), slots)?;
    let offset = match &node.offset {
        None => None,
        Some(o) => Some(u64::try_from(*o.get_ref()).map_err(|_| {
            src.error(
                o.span(),
                format!(
                    "offset {} of node `{name}`: expected bytes from regionOffset, ≥ 0 and a \
                     multiple of {}",
                    o.get_ref(),
                    rfm_frames::area::ALIGN
                ),
            )
        })?),
    };
    if node.signals.is_empty() {
        return Err(src.error(
            span,
            format!("node `{name}` publishes no signal: give it at least one in `signals`"),
        ));
    }
    if node.signals.len() > MAX_SIGNALS {
        return Err(src.error(
            span,
            format!(
                "node `{name}` publishes {} signals: at most {MAX_SIGNALS} (its descriptor in \
                 memory counts them in 16 bits); split it into several nodes",
                node.signals.len()
            ),
        ));
    }
    let mut seen: HashMap<&str, Range<usize>> = HashMap::new();
    let mut signals = Vec::with_capacity(node.signals.len());
    for s in &node.signals {
        signals.push(check_signal(src, name, s.get_ref(), &mut seen)?);
    }
    Ok(NodeSpec::new(name.clone(), slot, offset, signals))
}

/// A node's slot: given, 0..255, and no other node's.
fn check_slot(
    src: &Source<'_>,
    node: &RawNode,
    span: Range<usize>,
    slots: &mut HashMap<i64, Range<usize>>,
) -> Result<u8, InterfaceError> {
    let name = node.name.get_ref();
    let Some(slot_key) = &node.slot else {
        return Err(src.error(
            span,
            format!(
                "node `{name}` has no `slot`: an FMU node writes its own slot (0..255); a \
                 node a lab's own program writes is declared by its `fields` instead"
            ),
        ));
    };
    let slot = *slot_key.get_ref();
    let slot_u8 = u8::try_from(slot).map_err(|_| {
        src.error(
            slot_key.span(),
            format!("slot {slot} of node `{name}`: expected 0..255 (an RFM2g ring has at most 256 nodes)"),
        )
    })?;
    if let Some(first) = slots.insert(slot, slot_key.span()) {
        return Err(src.error(
            slot_key.span(),
            format!(
                "slot {slot} of node `{name}` is taken by another node (line {}): each node writes its own slot",
                src.line_of(&first)
            ),
        ));
    }
    Ok(slot_u8)
}

/// A node's name: an identifier no other node and no prefix of the FMU's own
/// outputs has.
pub(super) fn check_node_name<'a>(
    src: &Source<'_>,
    name: &'a Spanned<String>,
    names: &mut HashMap<&'a str, Range<usize>>,
) -> Result<(), InterfaceError> {
    let (span, name) = (name.span(), name.get_ref());
    if !is_identifier(name) {
        return Err(src.error(span, format!("node name `{name}`: {IDENTIFIER_RULE}")));
    }
    let prefixes = src.reserved.prefixes;
    if prefixes.contains(&name.as_str()) {
        return Err(src.error(
            span,
            format!(
                "node name `{name}` is the prefix of the FMU's own outputs ({} are taken): \
                 rename it",
                prefixes.join(", ")
            ),
        ));
    }
    if let Some(first) = names.insert(name, span.clone()) {
        return Err(src.error(
            span,
            format!(
                "node `{name}` is declared twice (first at line {}): every node has its own name",
                src.line_of(&first)
            ),
        ));
    }
    Ok(())
}
