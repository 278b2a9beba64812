//! What the bytes of a coupling's memory are, by the descriptors its nodes wrote:
//! for `dump --decode`, and the signal text `watch` shows.

use rfm_core::link::ownership::block::Words;
use rfm_core::link::stats::Stats;
use rfm_frames::area::{DESCRIPTOR_OFFSET, LIVENESS_LEN, LIVENESS_OFFSET, STATS_LEN, STATS_OFFSET};
use rfm_frames::fmi::Value;
use rfm_frames::packed::decode;
use rfm_frames::session::Token;
use rfm_frames::slot::{FramedReader, ReadError, Ring};
use rfm_interface::descriptor::{Described, Descriptor};
use rfm_interface::{ForeignNode, Found};
use rfm_memory::Region;

/// `name=value unit` for each signal, in the interface's order, in at most
/// `room` characters (`None`: all of each). Where they do not fit, the longest
/// texts are shortened first (a Real to 4 significant digits, a String to its
/// first 12 characters), then whole ones are left out and counted (Strings
/// first, then Reals, Integers, Booleans last), so that a Boolean is the last
/// to go.
pub fn signals_text(signals: &[(String, Value, String)], room: Option<usize>) -> String {
    let text = |name: &str, value: &str, unit: &str| {
        if unit.is_empty() {
            format!("{name}={value}")
        } else {
            format!("{name}={value} {unit}")
        }
    };
    let mut parts: Vec<Option<String>> = signals
        .iter()
        .map(|(name, value, unit)| Some(text(name, &value.to_string(), unit)))
        .collect();
    // The row as it would be printed: the shown parts, then how many are not.
    let joined = |parts: &[Option<String>]| {
        let left_out = parts.iter().filter(|p| p.is_none()).count();
        let mut shown: Vec<&str> = parts.iter().flatten().map(String::as_str).collect();
        let more = format!("… {left_out} more");
        if left_out > 0 {
            shown.push(&more);
        }
        shown.join(", ")
    };
    let width = |parts: &[Option<String>]| joined(parts).chars().count();
    let Some(room) = room else {
        return joined(&parts);
    };
    // Longest first: shorten, then leave out.
    let mut by_length: Vec<usize> = (0..parts.len()).collect();
    by_length.sort_by_key(|&i| std::cmp::Reverse(parts[i].as_ref().map_or(0, String::len)));
    for &i in &by_length {
        if width(&parts) <= room {
            break;
        }
        let (name, value, unit) = &signals[i];
        parts[i] = Some(text(name, &short(value), unit));
    }
    // Then left out: Strings first, Booleans last, the longest of a kind first.
    let rank = |v: &Value| match v {
        Value::String(_) => 3,
        Value::Real(_) => 2,
        Value::Integer(_) => 1,
        Value::Boolean(_) => 0,
    };
    by_length.sort_by_key(|&i| {
        let length = parts[i].as_ref().map_or(0, String::len);
        std::cmp::Reverse((rank(&signals[i].1), length))
    });
    for &i in &by_length {
        if width(&parts) <= room {
            break;
        }
        parts[i] = None;
    }
    joined(&parts)
}

/// A value in few characters: a Real to 4 significant digits (rounded), a String to
/// its first 12 characters.
fn short(value: &Value) -> String {
    match value {
        Value::Real(x) if *x == 0.0 || !x.is_finite() => x.to_string(),
        Value::Real(x) if (1e-3..1e5).contains(&x.abs()) => {
            let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
            let t = format!("{x:.digits$}");
            match t.contains('.') {
                true => t.trim_end_matches('0').trim_end_matches('.').to_owned(),
                false => t,
            }
        }
        Value::Real(x) => format!("{x:.3e}"),
        Value::String(s) if s.chars().count() > 12 => {
            format!("{:?}…", s.chars().take(12).collect::<String>())
        }
        other => other.to_string(),
    }
}

/// Each described signal's value in `payload`, with its unit; an array's
/// elements each (`counters[2]`), as the FMU's variables name them.
pub fn signals(described: &[Described], payload: &[u8]) -> Vec<(String, Value, String)> {
    described
        .iter()
        .flat_map(|d| {
            (0..d.kind.elements()).filter_map(move |i| {
                Value::read_element(d.kind, payload, d.offset, i)
                    .map(|v| (d.element_name(i), v, d.unit.clone()))
            })
        })
        .collect()
}

/// Each part of a node's area that meets `[from, to)` (offsets from the start of
/// `region`): its first and last byte, what it is and what it holds now.
pub fn describe(region: &Region, found: &[Found], from: u64, to: u64) -> Vec<(u64, u64, String)> {
    let mut lines = Vec::new();
    for f in found {
        let Ok(area) = rfm_frames::area::window(region, &f.area) else {
            continue;
        };
        for (start, end, text) in parts(&area, f) {
            let (start, end) = (f.area.offset + start as u64, f.area.offset + end as u64);
            if start < to && from < end {
                lines.push((start, end - 1, text));
            }
        }
    }
    lines
}

/// The elements and padding of the foreign nodes' structs in `from..to` (of
/// `region`, the memory from regionOffset), each with its value as the bytes
/// hold it now: a dump is a snapshot, read without the struct's handshake.
pub fn describe_foreign(
    region: &Region,
    nodes: &[ForeignNode],
    from: u64,
    to: u64,
) -> Vec<(u64, u64, String)> {
    let mut lines = Vec::new();
    for node in nodes {
        if !(node.offset < to && from < node.end()) {
            continue;
        }
        let Ok(offset) = usize::try_from(node.offset) else {
            continue;
        };
        // The memory is read in whole words: those the struct lies in (of
        // any length, at any offset), of which its own bytes are shown.
        let first = offset - offset % 4;
        let mut words = vec![0u8; (offset + node.layout.size).next_multiple_of(4) - first];
        if let Err(e) = region.read(first, &mut words) {
            lines.push((
                node.offset,
                node.end() - 1,
                format!("foreign node `{}`: {e}", node.name),
            ));
            continue;
        }
        let bytes = &words[offset - first..offset - first + node.layout.size];
        for (start, end, text) in struct_parts(node, bytes) {
            let (start, end) = (node.offset + start as u64, node.offset + end as u64);
            if start < to && from < end {
                lines.push((start, end - 1, text));
            }
        }
    }
    lines
}

/// Each element of `node`'s struct (its `bytes`) with its value, and each
/// padding, in the struct's order: (start, end, text) from the struct's start.
fn struct_parts(node: &ForeignNode, bytes: &[u8]) -> Vec<(usize, usize, String)> {
    let order = node.layout.order.words();
    let mut parts: Vec<(usize, usize, String)> = Vec::new();
    for f in &node.layout.fields {
        for i in 0..f.elements() {
            let start = f.element_offset(i);
            let value = decode(f, i, bytes, node.layout.order)
                .map_or_else(|| "?".to_owned(), |d| d.value.to_string());
            let (name, ctype) = (f.element_name(i), f.ctype);
            let text = format!(
                "foreign node `{}`: `{name}` ({ctype}, {order}) = {value}",
                node.name
            );
            parts.push((start, start + f.ctype.size(), text));
        }
    }
    for pad in &node.layout.padding {
        let text = format!("foreign node `{}`: padding", node.name);
        parts.push((pad.start, pad.end, text));
    }
    parts.sort_by_key(|p| p.0);
    parts
}

/// What the liveness words of `area` say, in a line.
fn liveness_text(area: &Region) -> String {
    match Words::read(area) {
        Ok(w) => format!(
            "liveness, owner token {:#010x}, beat {}, closed {:#010x}",
            Token::word(w.owner),
            w.beat,
            Token::word(w.closed)
        ),
        Err(e) => format!("liveness, unreadable: {e}"),
    }
}

/// What the statistics block of `area` says, in a line.
fn stats_text(area: &Region) -> String {
    match Stats::read(area) {
        Ok(Some(s)) => format!(
            "statistics, {} steps sampled in {} ms, step median {} ns, wait median {} ns",
            s.samples, s.window_ms, s.step.median, s.wait.median
        ),
        Ok(None) => "statistics, none published".to_owned(),
        Err(e) => format!("statistics, unreadable: {e}"),
    }
}

/// The parts of the area `f` describes (`area`, its window), from its start:
/// the head, the liveness words, the statistics, the descriptor and each
/// ring entry.
fn parts(area: &Region, f: &Found) -> Vec<(usize, usize, String)> {
    let d = &f.descriptor;
    let ring = Ring::of(&f.area);
    let who = format!("node `{}` (slot {})", d.node, d.slot);
    let head = area
        .load_u32(0, std::sync::atomic::Ordering::Acquire)
        .unwrap_or(0);
    let (liveness, stats) = (liveness_text(area), stats_text(area));
    let descriptor = format!(
        "descriptor of interface `{}` (fingerprint {:#018x}), {} signals, a ring of {} frames{}",
        d.interface,
        d.fingerprint,
        d.signals.len(),
        d.ring_depth,
        d.period
            .map_or(String::new(), |p| format!(", period {p} s"))
    );
    let mut parts = vec![
        (
            0,
            LIVENESS_OFFSET,
            format!("{who}: head, newest frame (low 32 bits) {head}"),
        ),
        (
            LIVENESS_OFFSET,
            LIVENESS_OFFSET + LIVENESS_LEN,
            format!("{who}: {liveness}"),
        ),
        (
            STATS_OFFSET,
            STATS_OFFSET + STATS_LEN,
            format!("{who}: {stats}"),
        ),
        (
            DESCRIPTOR_OFFSET,
            ring.offset,
            format!("{who}: {descriptor}"),
        ),
    ];
    let reader = FramedReader::new(area.clone(), ring).ok();
    for i in 0..ring.depth {
        let at = ring.entry_offset(i as u64);
        let text = match &reader {
            None => "unreadable".to_owned(),
            Some(r) => entry_text(r, i as u64, d),
        };
        parts.push((
            at,
            at + ring.entry_len,
            format!("{who}: ring entry {i}: {text}"),
        ));
    }
    parts
}

/// What ring entry `i` of `reader` holds, its signals decoded as `d` describes them.
fn entry_text(reader: &FramedReader, i: u64, d: &Descriptor) -> String {
    let mut buf = reader.buffer();
    match reader.read_entry(i, &mut buf) {
        Ok(h) => format!(
            "frame {} (step {}), t = {}, session {:#010x}: {}",
            h.step,
            h.writer_step(),
            h.sim_time,
            h.epoch as u32,
            signals_text(&signals(&d.signals, buf.payload()), None)
        ),
        Err(ReadError::Empty) => "empty".to_owned(),
        Err(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flight() -> Vec<(String, Value, String)> {
        let real = |n: &str, x: f64| (n.to_owned(), Value::Real(x), "rad".to_owned());
        vec![
            real("roll", 0.012345678901234),
            real("pitch", -0.2718281828459045),
            real("yaw", 3.0718281828459045),
            real("p", 1.0e-7),
            real("q", 12345.678),
            real("r", -0.5),
            ("on_ground".into(), Value::Boolean(true), String::new()),
        ]
    }

    /// A line with room shows every signal, the Boolean too (it was hidden
    /// behind "… 1 more" after six signals whatever the width).
    #[test]
    fn with_room_every_signal_is_shown_whole() {
        let text = signals_text(&flight(), Some(200));
        assert!(!text.contains("more"), "{text}");
        assert!(text.ends_with("on_ground=true"), "{text}");
        assert!(text.contains("pitch=-0.2718281828459045 rad"), "{text}");
        assert_eq!(text, signals_text(&flight(), None));
    }

    /// Short of room, the long values are shortened first and the Boolean
    /// stays; shorter still, the longest go and are counted.
    #[test]
    fn short_values_are_the_last_to_be_cut() {
        let text = signals_text(&flight(), Some(120));
        assert!(text.chars().count() <= 120, "{text}");
        assert!(text.contains("on_ground=true"), "{text}");
        assert!(text.contains("pitch=-0.2718 rad"), "{text}");
        assert!(!text.contains("more"), "{text}");
        let text = signals_text(&flight(), Some(60));
        assert!(text.chars().count() <= 60, "{text}");
        assert!(text.contains("on_ground=true"), "{text}");
        assert!(text.contains("more"), "{text}");
    }

    #[test]
    fn short_forms() {
        assert_eq!(short(&Value::Real(0.012345678)), "0.01235");
        assert_eq!(short(&Value::Real(12345.678)), "12346");
        assert_eq!(short(&Value::Real(-0.5)), "-0.5");
        assert_eq!(short(&Value::Real(1e-7)), "1.000e-7");
        assert_eq!(
            short(&Value::String("a long message here".into())),
            "\"a long messa\"…"
        );
    }
}
