//! What a run tells: `coupling.json` (every case, the card's counts, the
//! ratios against their targets) and the lines printed beside the table.

use anyhow::Result;
use serde_json::json;

use crate::cases::{Cases, REALS};
use crate::machine;
use rfm_bench::stats::Summary;

/// The run's results as `coupling.json` holds them: every case, the card's
/// counts, and the ratios held against their targets.
pub(crate) fn results(cases: &Cases, card: serde_json::Value) -> serde_json::Value {
    let card_targets = card_targets(&card);
    json!({
        "machine": machine(),
        // Each case over emulated RFM2g boards, counted, and modeled on a card.
        "card": card,
        "card_targets": card_targets,
        "shm_gate": shm_gate(cases),
        "bridge": bridge(cases),
        "cases": cases.0.iter().map(Summary::to_json).collect::<Vec<_>>(),
        "reals100": reals100(cases),
        "reals1000": reals1000(cases),
        // Not a target: the raw exchange of as many bytes per frame as the FMU moves.
        "same_bytes": {
            "raw128_median_ns": cases.get("1b ").median,
            "fmu_coupled_over_raw128": rounded(ratio(cases, "2 ", "1b ")),
        },
        "few_cores": few_cores(cases),
        "ratios": ratios(cases),
    })
}

/// `value` held against `op limit` (`<=`, `<` or `>=`).
fn target(value: f64, op: &str, limit: f64) -> serde_json::Value {
    let met = match op {
        "<=" => value <= limit,
        "<" => value < limit,
        _ => value >= limit,
    };
    json!({ "value": rounded(value), "target": format!("{op} {limit}"), "met": met })
}

/// Three decimals.
fn rounded(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The median of the case named by prefix `a` over that of `b`.
fn ratio(cases: &Cases, a: &str, b: &str) -> f64 {
    cases.get(a).median as f64 / cases.get(b).median as f64
}

/// The shared-memory figures of the last full run on an Intel Xeon VM, kept as
/// a gate: none may grow by more than a fifth (noise) above them.
fn shm_gate(cases: &Cases) -> serde_json::Value {
    let gate = |value: f64, recorded: f64| target(value, "<=", rounded(recorded * 1.2));
    json!({
        "fmu_coupled_median_over_raw_median": gate(ratio(cases, "2 ", "1 "), 1.63),
        "fmu_alone_median_ns": gate(cases.get("5 ").median as f64, 92.0),
        "reals1000_median_over_raw_same_payload": gate(ratio(cases, "7b ", "1c "), 1.34),
        "fmu_coupled_p99_over_median": gate(p99_over_median(cases), 1.46),
        "fmu_coupled_median_over_iceoryx2_median": gate(ratio(cases, "2 ", "8 "), 0.35),
    })
}

/// The coupled step's p99 over its median.
fn p99_over_median(cases: &Cases) -> f64 {
    let coupled = cases.get("2 ");
    coupled.p99 as f64 / coupled.median as f64
}

fn card_targets(card: &serde_json::Value) -> serde_json::Value {
    json!({
        "attitude_new_reads_within_bound": card["attitude"]["new"]["reads_within_bound"],
        "attitude_new_without_dma_reads_within_bound": card["attitude"]["new_without_dma"]["reads_within_bound"],
        "reals1000_new_modeled_read_3us_ns": target(
            card["reals1000"]["new"]["modeled_card_ns"]["read_3us"].as_f64().unwrap_or(f64::MAX),
            "<=",
            100_000.0,
        ),
    })
}

/// PCs without cards: a coupled step over two bridges against Zenoh's own
/// round trip and UDP's, medians in ns.
fn bridge(cases: &Cases) -> serde_json::Value {
    let bridged = cases.get("12a ");
    json!({
        "fmu_coupled_over_bridges_median_ns": bridged.median,
        "fmu_coupled_over_bridges_p99_ns": bridged.p99,
        "zenoh_pingpong_median_ns": cases.get("12b ").median,
        "udp_blocking_median_ns": cases.get("4a ").median,
        "udp_busy_poll_median_ns": cases.get("4b ").median,
        "bridged_step_over_zenoh_round_trip": target(ratio(cases, "12a ", "12b "), "<=", 1.5),
    })
}

fn reals100(cases: &Cases) -> serde_json::Value {
    let reals = cases.get("7 ");
    json!({
        "median_ns_per_step": reals.median,
        "median_ns_per_signal": (reals.median as f64 / REALS[0] as f64 * 10.0).round() / 10.0,
        "over_attitude_coupled": rounded(ratio(cases, "7 ", "2 ")),
    })
}

fn reals1000(cases: &Cases) -> serde_json::Value {
    let reals1000 = cases.get("7b ");
    json!({
        "median_ns_per_step": reals1000.median,
        "median_ns_per_signal": (reals1000.median as f64 / REALS[1] as f64 * 10.0).round() / 10.0,
        "raw_same_payload_median_ns": cases.get("1c ").median,
    })
}

/// Waiting on few cores: steps per second of node 0 (mean over its steps).
fn few_cores(cases: &Cases) -> serde_json::Value {
    let per_second = |prefix: &str| cases.get(prefix).steps_per_second().round();
    json!({
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "three_nodes_steps_per_s": {
            "adaptive": per_second("9a "),
            "spin": per_second("9b "),
            "yield": per_second("9c "),
        },
        "three_rate_lab_cockpit_steps_per_s": per_second("10 "),
    })
}

/// The ratios held against their targets.
fn ratios(cases: &Cases) -> serde_json::Value {
    let per_second = |prefix: &str| cases.get(prefix).steps_per_second();
    json!({
        "three_nodes_adaptive_over_yield_steps_per_s": target(per_second("9a ") / per_second("9c "), ">=", 1.0),
        "two_nodes_adaptive_median_over_spin_median": target(ratio(cases, "2d ", "2 "), "<=", 1.2),
        "fmu_coupled_median_over_raw_median": target(ratio(cases, "2 ", "1 "), "<=", 1.6),
        "fmu_coupled_median_over_iceoryx2_median": target(ratio(cases, "2 ", "8 "), "<", 1.0),
        "udp_blocking_median_over_fmu_coupled_median": target(ratio(cases, "4a ", "2 "), ">=", 100.0),
        "fmu_alone_median_ns": target(cases.get("5 ").median as f64, "<=", 60.0),
        "fmu_coupled_p99_over_median": target(p99_over_median(cases), "<=", 2.5),
        "reals1000_median_over_raw_same_payload": target(ratio(cases, "7b ", "1c "), "<=", 1.5),
        "fmu_recording_median_over_fmu_coupled_median": target(ratio(cases, "2r ", "2 "), "<=", 1.2),
    })
}

/// The figures the table does not show: per signal, few cores, the ratios and
/// the card.
pub(crate) fn print_results(results: &serde_json::Value, cases: &Cases) -> Result<()> {
    let (reals, reals1000, raw8008) = (cases.get("7 "), cases.get("7b "), cases.get("1c "));
    let reals1000_over_raw = reals1000.median as f64 / raw8008.median as f64;
    println!(
        "100 Reals each way: {} ns per step, {} ns per signal",
        reals.median, results["reals100"]["median_ns_per_signal"]
    );
    println!(
        "1,000 Reals each way: {} ns per step, {} ns per signal, {:.2} x the raw exchange of the same payload",
        reals1000.median, results["reals1000"]["median_ns_per_signal"], reals1000_over_raw
    );
    println!(
        "FMU coupled over the raw exchange of 128-byte frames: {}",
        results["same_bytes"]["fmu_coupled_over_raw128"]
    );
    println!(
        "few cores ({} here): three lockstep nodes {} steps/s adaptive, {} spin, {} yield; the \
         three-rate lab's cockpit {} steps/s",
        results["few_cores"]["cores"],
        results["few_cores"]["three_nodes_steps_per_s"]["adaptive"],
        results["few_cores"]["three_nodes_steps_per_s"]["spin"],
        results["few_cores"]["three_nodes_steps_per_s"]["yield"],
        results["few_cores"]["three_rate_lab_cockpit_steps_per_s"]
    );
    println!(
        "ratios (targets): {}",
        serde_json::to_string_pretty(&results["ratios"])?
    );
    for (case, paths) in results["card"].as_object().into_iter().flatten() {
        for (path, r) in paths.as_object().into_iter().flatten() {
            println!(
                "on the card, {case} {path}: {} reads ({} polls), {} vendor calls, {} DMA, {} ring \
                 bytes per step; modeled {} ns at 1 µs a read, {} ns at 3 µs ({})",
                r["pio_reads_per_step"],
                r["polls_per_step"],
                r["vendor_calls_per_step"],
                r["dma_per_step"],
                r["ring_bytes_per_step"],
                r["modeled_card_ns"]["read_1us"],
                r["modeled_card_ns"]["read_3us"],
                r["dominant_term"]["read_3us"],
            );
        }
    }
    println!(
        "card targets: {}\nshared-memory gate: {}",
        serde_json::to_string_pretty(&results["card_targets"])?,
        serde_json::to_string_pretty(&results["shm_gate"])?
    );
    Ok(())
}
