//! A node's published statistics (its area's statistics block,
//! `rfm_core::link::stats`) as `watch` and `serve` show them: one JSON shape,
//! one table cell.

use rfm_core::link::stats::{block::bucket_floor, Card, Stats, Summary};
use serde_json::{json, Value};

fn summary(s: &Summary) -> Value {
    json!({ "median_ns": s.median, "p99_ns": s.p99, "max_ns": s.max })
}

/// The statistics as JSON (the reference's `stats` object).
pub fn json(s: &Stats) -> Value {
    let floors: Vec<u64> = (0..s.step_histogram.len()).map(bucket_floor).collect();
    json!({
        "window_ms": s.window_ms,
        "samples": s.samples,
        "steps": s.steps,
        "late": s.late,
        "step": summary(&s.step),
        "wait": summary(&s.wait),
        "histogram_floors_ns": floors,
        "step_histogram": s.step_histogram,
        "wait_histogram": s.wait_histogram,
        "peers_measured": s.peers_measured,
        "failovers": s.failovers,
        "cards": s.cards.map(Card::word),
        "boards": s.boards,
        "peers": s.peers.iter().map(|p| json!({
            "slot": p.slot,
            "samples": p.samples,
            "latency": summary(&p.latency),
        })).collect::<Vec<_>>(),
    })
}

/// A figure's median and p99 in µs (`figure` picks the step's or the
/// wait's), for the table (`-`: none published).
pub fn cell(s: Option<&Stats>, figure: impl Fn(&Stats) -> Summary) -> String {
    match s {
        Some(s) if s.samples > 0 => {
            let f = figure(s);
            format!(
                "{:.1}/{:.1}",
                f64::from(f.median) / 1e3,
                f64::from(f.p99) / 1e3
            )
        }
        _ => "-".to_owned(),
    }
}
