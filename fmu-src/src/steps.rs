//! Which of a node's own steps a master's `fmi2DoStep` takes.
//!
//! A node of period T steps on its grid `startTime + k·T`, whatever the master
//! does: lockstep on time is stated on node steps, so a master that steps
//! every FMU by one base step (libcosim, OMSimulator, FMPy in one process)
//! must not change which frame of a peer a step is paired with. A doStep from
//! t over H takes each step whose grid time lies in [t, t + H): none when H is
//! shorter than T and no grid time falls in it (inputs are held, outputs kept),
//! several when H is longer. Times are compared within 1e-9 relative plus 1 ns,
//! for masters whose clocks count whole nanoseconds (1/60 s is 16,666,667 ns
//! there).

use std::ops::Range;

use rfm_interface::Period;

/// How far two times may differ and still be one: 1e-9 relative plus 1 ns.
pub fn tolerance(time: f64) -> f64 {
    1e-9 * time.abs() + 1e-9
}

/// Whether `t` continues the master's previous point `expected` (its previous
/// t + H).
pub fn continues(t: f64, expected: f64) -> bool {
    t.is_finite() && (t - expected).abs() <= tolerance(expected)
}

/// The grid time of step `k` of a node of `period` started at `start`.
pub fn grid(period: Period, start: f64, k: u64) -> f64 {
    // Exactly the multiple, never a sum of periods (no drift over a million
    // steps): num·k / den in one division where it fits.
    match k.checked_mul(period.num()) {
        Some(n) => start + n as f64 / period.den() as f64,
        None => start + k as f64 * period.seconds(),
    }
}

/// The steps from `next` on (the first not taken yet) that a doStep from `t`
/// over `h` takes: those whose grid time lies before `t + h` (a grid time
/// within the tolerance of `t + h` is the next doStep's first).
pub fn taken(period: Period, start: f64, next: u64, t: f64, h: f64) -> Range<u64> {
    let end = t + h;
    let before = end - tolerance(end);
    let mut last = next;
    while grid(period, start, last) < before {
        last += 1;
    }
    next..last
}

/// The period as the grid's step: `k/60 s`, `k·0.001 s`.
pub fn grid_text(period: Period) -> String {
    if period.num() == 1 && period.to_string().contains('/') {
        format!("k/{} s", period.den())
    } else {
        format!("k·{period} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Period {
        Period::parse(text).unwrap()
    }

    /// Each doStep's steps, for a master stepping by `h` from 0, `n` times.
    fn schedule(period: Period, h: f64, n: usize) -> Vec<Range<u64>> {
        let (mut next, mut out) = (0, Vec::new());
        for j in 0..n {
            let steps = taken(period, 0.0, next, j as f64 * h, h);
            next = steps.end;
            out.push(steps);
        }
        out
    }

    #[test]
    fn a_step_of_the_period_takes_one_node_step() {
        for period in ["0.001", "1/60", "0.1", "1/3"] {
            let period = p(period);
            let s = schedule(period, period.seconds(), 10_000);
            assert!(
                s.iter()
                    .enumerate()
                    .all(|(j, r)| *r == (j as u64..j as u64 + 1)),
                "{period}"
            );
        }
    }

    #[test]
    fn a_longer_master_step_takes_every_node_step_in_it() {
        let period = p("1/60");
        let s = schedule(period, 3.0 * period.seconds(), 1000);
        assert!(s
            .iter()
            .enumerate()
            .all(|(j, r)| *r == (3 * j as u64..3 * j as u64 + 3)));
    }

    #[test]
    fn a_shorter_master_step_takes_a_node_step_where_its_grid_time_falls() {
        let period = p("1/60");
        // T/4: a step every fourth doStep, at the one that starts on it.
        let s = schedule(period, period.seconds() / 4.0, 400);
        for (j, r) in s.iter().enumerate() {
            let expected = if j % 4 == 0 { 1 } else { 0 };
            assert_eq!(r.end - r.start, expected, "doStep {j}");
        }
        // 1 ms: step k in the doStep whose [j ms, j+1 ms) holds k/60 s.
        let s = schedule(period, 0.001, 6000);
        for (j, r) in s.iter().enumerate() {
            for k in r.clone() {
                let g = k as f64 / 60.0;
                assert!(
                    j as f64 * 0.001 <= g + 1e-12 && g < (j + 1) as f64 * 0.001,
                    "{k} in {j}"
                );
            }
        }
        assert_eq!(s.last().unwrap().end, 360, "every grid time before 6 s");
    }

    /// libcosim's clock counts nanoseconds: a 1/60 s node stepped by
    /// 16,666,667 ns drifts a third of a nanosecond a step from its grid, and
    /// still takes one step a doStep (after 3 steps one doStep takes two, then
    /// one each, as the grid times fall), never losing or repeating one.
    #[test]
    fn a_master_clock_in_whole_nanoseconds_loses_no_step() {
        let period = p("1/60");
        let h = 16_666_667e-9;
        let s = schedule(period, h, 100_000);
        let total: u64 = s.iter().map(|r| r.end - r.start).sum();
        let end = 100_000.0 * h;
        assert_eq!(total, (end * 60.0 - 1e-6).floor() as u64 + 1);
        assert!(s.iter().all(|r| r.end - r.start <= 2));
        assert!(s.windows(2).all(|w| w[0].end == w[1].start));
    }

    #[test]
    fn times_continue_within_a_nanosecond() {
        assert!(continues(0.016666667, 1.0 / 60.0));
        assert!(!continues(0.0167, 1.0 / 60.0));
        assert!(!continues(f64::NAN, 0.0));
        assert_eq!(grid_text(p("1/60")), "k/60 s");
        assert_eq!(grid_text(p("0.001")), "k·0.001 s");
    }
}
