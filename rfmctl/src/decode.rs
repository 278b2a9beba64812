//! What the bytes of a coupling's memory are, by the descriptors its nodes wrote:
//! for `dump --decode`, and the signal text `watch` shows.

use rfm_core::area::{DESCRIPTOR_OFFSET, LIVENESS_LEN, LIVENESS_OFFSET};
use rfm_core::interface::descriptor::Described;
use rfm_core::interface::{Found, Value};
use rfm_core::link::liveness::Words;
use rfm_core::slot::{FramedReader, ReadError, Ring};
use rfm_core::Region;

/// `name=value unit` for each signal (the first `limit`, then how many more).
pub fn signals_text(signals: &[(String, Value, String)], limit: usize) -> String {
    let mut parts: Vec<String> = signals
        .iter()
        .take(limit)
        .map(|(name, value, unit)| {
            if unit.is_empty() {
                format!("{name}={value}")
            } else {
                format!("{name}={value} {unit}")
            }
        })
        .collect();
    if signals.len() > limit {
        parts.push(format!("… {} more", signals.len() - limit));
    }
    parts.join(", ")
}

/// Each described signal's value in `payload`, with its unit.
pub fn signals(described: &[Described], payload: &[u8]) -> Vec<(String, Value, String)> {
    described
        .iter()
        .filter_map(|d| {
            Value::read(d.kind, payload, d.offset).map(|v| (d.name.clone(), v, d.unit.clone()))
        })
        .collect()
}

/// Each part of a node's area that meets `[from, to)` (offsets from the start of
/// `region`): its first and last byte, what it is and what it holds now.
pub fn describe(region: &Region, found: &[Found], from: u64, to: u64) -> Vec<(u64, u64, String)> {
    let mut lines = Vec::new();
    for f in found {
        let a = &f.area;
        let d = &f.descriptor;
        let Ok(area) = rfm_core::area::window(region, a) else {
            continue;
        };
        let ring = Ring::of(a);
        let who = format!("node `{}` (slot {})", d.node, d.slot);
        let mut parts: Vec<(usize, usize, String)> = vec![
            (
                0,
                LIVENESS_OFFSET,
                format!(
                    "{who}: head, newest frame (low 32 bits) {}",
                    area.load_u32(0, std::sync::atomic::Ordering::Acquire)
                        .unwrap_or(0)
                ),
            ),
            (
                LIVENESS_OFFSET,
                LIVENESS_OFFSET + LIVENESS_LEN,
                match Words::read(&area) {
                    Ok(w) => format!(
                        "{who}: liveness, owner token {:#010x}, beat {}, closed {:#010x}",
                        w.owner, w.beat, w.closed
                    ),
                    Err(e) => format!("{who}: liveness, unreadable: {e}"),
                },
            ),
            (
                DESCRIPTOR_OFFSET,
                ring.offset,
                format!(
                    "{who}: descriptor of interface `{}` (fingerprint {:#018x}), {} signals, \
                     a ring of {} frames{}",
                    d.interface,
                    d.fingerprint,
                    d.signals.len(),
                    d.ring_depth,
                    d.period
                        .map_or(String::new(), |p| format!(", period {p} s"))
                ),
            ),
        ];
        let reader = FramedReader::new(area.clone(), ring).ok();
        for i in 0..ring.depth {
            let at = ring.entry_offset(i as u64);
            let text = match &reader {
                None => "unreadable".to_owned(),
                Some(r) => {
                    let mut buf = r.buffer();
                    match r.read_entry(i as u64, &mut buf) {
                        Ok(h) => format!(
                            "frame {} (step {}), t = {}, session {:#010x}: {}",
                            h.step,
                            h.writer_step(),
                            h.sim_time,
                            h.epoch as u32,
                            signals_text(&signals(&d.signals, buf.payload()), 8)
                        ),
                        Err(ReadError::Empty) => "empty".to_owned(),
                        Err(e) => e.to_string(),
                    }
                }
            };
            parts.push((
                at,
                at + ring.entry_len,
                format!("{who}: ring entry {i}: {text}"),
            ));
        }
        for (start, end, text) in parts {
            let (start, end) = (a.offset + start as u64, a.offset + end as u64);
            if start < to && from < end {
                lines.push((start, end - 1, text));
            }
        }
    }
    lines
}
