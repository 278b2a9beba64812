//! Nodes at their own rates: each node's period (an exact fraction of a second),
//! whom it waits for, which frame of a peer a lockstep step takes, and how deep
//! each node's ring must be so that no lockstep reader ever finds the frame it
//! needs overwritten.
//!
//! The rule: node N (period T_N, lag L) after its step k holds each lockstep
//! peer P's frame of P's step j = floor((k − L)·T_N / T_P), or P's initial frame
//! while k − L < 0. Exact rationals, so that 1/60 s is 1/60 s and equal periods
//! give j = k − L exactly.
//!
//! Ring depth: a writer P can run ahead of a reader N only as far as the waits
//! between them allow. P publishing step m has finished step m − 1, so every node
//! it waits for has published the frame that step needed, and so on along a chain
//! of waits back to N. Counting time in a unit every period is a whole number of
//! (t_X = T_X / unit), one wait of A on B, with `floor(a/b) ≥ (a − b + 1)/b`,
//! costs at most (1 + L)·t_A + t_B − 1; over the chain P → … → N of least cost D,
//! N has reached a step whose need from P is at most (D + L·t_N + t_P − 1)/t_P
//! frames behind P's newest. The ring holds one more than that, rounded up to a
//! power of two (the entry of a step is then a mask, not a division). With equal
//! periods and L = 7 this is 16, the depth every file without periods has.

use std::fmt;

/// A node's step in seconds, `num / den` in lowest terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Period {
    num: u64,
    den: u64,
}

/// The greatest common divisor.
fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Most decimal digits a period may give (so that its fraction fits 64 bits).
const MAX_DIGITS: usize = 18;

impl Period {
    /// `num / den` seconds, in lowest terms; `None` unless both are positive.
    pub fn new(num: u64, den: u64) -> Option<Period> {
        if num == 0 || den == 0 {
            return None;
        }
        let g = gcd(u128::from(num), u128::from(den)) as u64;
        Some(Period {
            num: num / g,
            den: den / g,
        })
    }

    /// The period a file writes: a decimal (`0.001`, `1e-3`, `2`) or a fraction
    /// (`1/60`), taken exactly as written (the decimal's digits, not the nearest
    /// binary float).
    pub fn parse(text: &str) -> Result<Period, String> {
        let text = text.trim();
        let rule = || {
            format!(
                "period `{text}`: expected a positive number of seconds, a decimal such as \
                 0.001 or an exact fraction such as \"1/60\" (at most {MAX_DIGITS} digits each)"
            )
        };
        let parsed = match text.split_once('/') {
            Some((n, d)) => {
                let (n, d) = (decimal(n.trim()), decimal(d.trim()));
                match (n, d) {
                    (Some((a, b)), Some((c, d))) => ratio(a * d, b * c),
                    _ => None,
                }
            }
            None => decimal(text).and_then(|(n, d)| ratio(n, d)),
        };
        parsed.ok_or_else(rule)
    }

    pub fn num(&self) -> u64 {
        self.num
    }

    pub fn den(&self) -> u64 {
        self.den
    }

    pub fn seconds(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// Whether `seconds` is this period, within a relative 1e-9.
    pub fn matches(&self, seconds: f64) -> bool {
        (seconds - self.seconds()).abs() <= 1e-9 * self.seconds()
    }
}

/// `n / d` reduced, if both fit 64 bits and are positive.
fn ratio(n: u128, d: u128) -> Option<Period> {
    if n == 0 || d == 0 {
        return None;
    }
    let g = gcd(n, d);
    Period::new(u64::try_from(n / g).ok()?, u64::try_from(d / g).ok()?)
}

/// A non-negative decimal `123.456e-7` as the fraction (numerator, denominator).
fn decimal(text: &str) -> Option<(u128, u128)> {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{frac}");
    if digits.is_empty() || digits.len() > MAX_DIGITS || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let n: u128 = digits.parse().ok()?;
    let scale = i32::try_from(frac.len()).ok()? - exponent;
    if scale.unsigned_abs() > MAX_DIGITS as u32 {
        return None;
    }
    let pow = 10u128.pow(scale.unsigned_abs());
    Some(if scale >= 0 { (n, pow) } else { (n * pow, 1) })
}

impl fmt::Display for Period {
    /// As a decimal when it has one (`0.001`, `0.0125`), else as the fraction
    /// (`1/60`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A decimal exists when the denominator divides a power of ten.
        let mut places = 0usize;
        let mut scaled = u128::from(self.num);
        let mut rest = u128::from(self.den);
        while rest != 1 && places < 40 {
            let g = gcd(rest, 10);
            if g == 1 {
                return write!(f, "{}/{}", self.num, self.den);
            }
            rest /= g;
            scaled *= 10 / g;
            places += 1;
        }
        if rest != 1 {
            return write!(f, "{}/{}", self.num, self.den);
        }
        let pow = 10u128.pow(places as u32);
        let (whole, frac) = (scaled / pow, scaled % pow);
        if places == 0 {
            write!(f, "{whole}")
        } else {
            write!(f, "{whole}.{frac:0places$}")
        }
    }
}

/// T_reader / T_writer in lowest terms: how many of the writer's steps one of the
/// reader's spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepRatio {
    num: u64,
    den: u64,
}

impl StepRatio {
    /// Equal periods (and nodes without periods): step k needs step k.
    pub const ONE: StepRatio = StepRatio { num: 1, den: 1 };

    /// The ratio of the reader's period to the writer's; `None` when it does not
    /// fit 64 bits each way (periods the parser refuses together).
    pub fn of(reader: Period, writer: Period) -> Option<StepRatio> {
        let p = ratio(
            u128::from(reader.num) * u128::from(writer.den),
            u128::from(reader.den) * u128::from(writer.num),
        )?;
        Some(StepRatio {
            num: p.num,
            den: p.den,
        })
    }

    /// The writer's frame index (0: its initial frame; step j's frame is j + 1)
    /// that the reader's step `k` takes with lag `lag`.
    #[inline]
    pub fn frame_needed(&self, k: u64, lag: u8) -> u64 {
        let Some(behind) = k.checked_sub(u64::from(lag)) else {
            return 0;
        };
        if self.num == self.den {
            return behind + 1;
        }
        let j = match behind.checked_mul(self.num) {
            Some(n) => n / self.den,
            None => (u128::from(behind) * u128::from(self.num) / u128::from(self.den)) as u64,
        };
        j + 1
    }
}

/// How the rates of an interface's nodes fail together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    #[error(
        "node `{reader}` waits for `{writer}` in lockstep, but `{writer}` never waits for \
         `{reader}`, neither directly nor through nodes that wait for it: it could run any number \
         of steps ahead and overwrite the frames `{reader}` needs; list `{writer}` in \
         `{reader}`'s free, or let `{writer}` wait for `{reader}`"
    )]
    Unbounded { reader: String, writer: String },
    #[error(
        "the periods of `{a}` ({pa} s) and `{b}` ({pb} s) have no common unit of time that \
         fits 64 bits: give periods of fewer digits"
    )]
    Incommensurable {
        a: String,
        pa: Period,
        b: String,
        pb: Period,
    },
    #[error(
        "node `{node}` would need a ring of more than {MAX_DEPTH} frames for its slowest \
         lockstep reader (`{reader}`): bring their periods closer, lower max_lag, or list \
         `{node}` in `{reader}`'s free"
    )]
    TooDeep { node: String, reader: String },
}

/// The deepest ring a node may have.
pub const MAX_DEPTH: usize = 1 << 22;

/// What the depth computation needs of one node.
#[derive(Debug, Clone)]
pub struct RateNode<'a> {
    pub name: &'a str,
    /// `None`: the interface gives no periods (every node steps alike).
    pub period: Option<Period>,
    /// Indices of the nodes this one waits for in lockstep.
    pub waits_for: Vec<usize>,
}

/// Each node's ring depth (a power of two, at least `floor`), for readers of lag
/// at most `max_lag`.
pub fn ring_depths(
    nodes: &[RateNode<'_>],
    max_lag: u8,
    floor: usize,
) -> Result<Vec<usize>, RateError> {
    let n = nodes.len();
    let units = units(nodes)?;
    let lag = u128::from(max_lag);
    // cost[a][b]: the least D over chains of waits from a to b (a waits for …
    // which waits for b); u128::MAX where no chain exists.
    let mut cost = vec![vec![u128::MAX; n]; n];
    for (a, node) in nodes.iter().enumerate() {
        for &b in &node.waits_for {
            cost[a][b] = cost[a][b].min((1 + lag) * units[a] + units[b] - 1);
        }
    }
    for via in 0..n {
        let through = cost[via].clone();
        for row in cost.iter_mut() {
            let first = row[via];
            if first == u128::MAX {
                continue;
            }
            for (best, &second) in row.iter_mut().zip(&through) {
                if second != u128::MAX && first + second < *best {
                    *best = first + second;
                }
            }
        }
    }
    let mut depths = vec![floor.next_power_of_two(); n];
    for (reader, node) in nodes.iter().enumerate() {
        for &writer in &node.waits_for {
            if writer == reader {
                continue;
            }
            let d = cost[writer][reader];
            if d == u128::MAX {
                return Err(RateError::Unbounded {
                    reader: node.name.to_owned(),
                    writer: nodes[writer].name.to_owned(),
                });
            }
            let (tw, tr) = (units[writer], units[reader]);
            let behind = (d + lag * tr).div_ceil(tw);
            let needed = usize::try_from(behind + 1)
                .ok()
                .filter(|&x| x <= MAX_DEPTH)
                .ok_or_else(|| RateError::TooDeep {
                    node: nodes[writer].name.to_owned(),
                    reader: node.name.to_owned(),
                })?;
            depths[writer] = depths[writer].max(needed.next_power_of_two());
        }
    }
    Ok(depths)
}

/// Every node's period as a whole number of one common unit (all 1 without periods).
fn units(nodes: &[RateNode<'_>]) -> Result<Vec<u128>, RateError> {
    let with: Vec<(usize, Period)> = nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.period.map(|p| (i, p)))
        .collect();
    if with.is_empty() {
        return Ok(vec![1; nodes.len()]);
    }
    // The unit is 1 / lcm(denominators) seconds: T_X = num_X·(lcm / den_X) units.
    let mut lcm: u128 = 1;
    let too_fine = |i: usize, j: usize| RateError::Incommensurable {
        a: nodes[i].name.to_owned(),
        pa: nodes[i].period.expect("with a period"),
        b: nodes[j].name.to_owned(),
        pb: nodes[j].period.expect("with a period"),
    };
    for &(i, p) in &with {
        let d = u128::from(p.den);
        lcm = (lcm / gcd(lcm, d))
            .checked_mul(d)
            .filter(|&l| l <= u128::from(u64::MAX))
            .ok_or_else(|| too_fine(with[0].0, i))?;
    }
    let mut units = vec![1; nodes.len()];
    for &(i, p) in &with {
        units[i] = (lcm / u128::from(p.den))
            .checked_mul(u128::from(p.num))
            .filter(|&t| t <= u128::from(u64::MAX))
            .ok_or_else(|| too_fine(with[0].0, i))?;
    }
    Ok(units)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Period {
        Period::parse(text).unwrap()
    }

    #[test]
    fn periods_are_the_fractions_written() {
        assert_eq!(p("0.001"), Period::new(1, 1000).unwrap());
        assert_eq!(p("1e-3"), Period::new(1, 1000).unwrap());
        assert_eq!(p("1/60"), Period::new(1, 60).unwrap());
        assert_eq!(p("2/120"), Period::new(1, 60).unwrap());
        assert_eq!(p("0.5/30"), Period::new(1, 60).unwrap());
        assert_eq!(p("2"), Period::new(2, 1).unwrap());
        assert_eq!(p("0.1").to_string(), "0.1");
        assert_eq!(p("1/60").to_string(), "1/60");
        assert_eq!(p("0.0125").to_string(), "0.0125");
        for bad in [
            "0",
            "-1",
            "1/0",
            "x",
            "",
            "1/",
            "0.0000000000000000001",
            "1e40",
        ] {
            assert!(Period::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_step_takes_the_peer_step_that_began_at_or_before_its_own_less_the_lag() {
        let ms = p("0.001");
        let visual = p("1/60");
        let ios = p("0.1");
        let cockpit_reads_ios = StepRatio::of(ms, ios).unwrap();
        // Cockpit step 59 (t = 0.059) takes ios step 0 (index 1), step 100 ios step 1.
        assert_eq!(cockpit_reads_ios.frame_needed(59, 0), 1);
        assert_eq!(cockpit_reads_ios.frame_needed(100, 0), 2);
        assert_eq!(cockpit_reads_ios.frame_needed(99, 0), 1);
        assert_eq!(cockpit_reads_ios.frame_needed(100, 1), 1);
        let visual_reads_cockpit = StepRatio::of(visual, ms).unwrap();
        // Visual step 1 begins at 1/60 s = 16.67 ms: cockpit step 16.
        assert_eq!(visual_reads_cockpit.frame_needed(1, 0), 17);
        assert_eq!(visual_reads_cockpit.frame_needed(3, 0), 51);
        assert_eq!(visual_reads_cockpit.frame_needed(3, 2), 17);
        assert_eq!(visual_reads_cockpit.frame_needed(1, 2), 0);
        assert_eq!(StepRatio::ONE.frame_needed(5, 2), 4);
        assert_eq!(StepRatio::ONE.frame_needed(1, 2), 0);
        // k·num overflows 64 bits; the quotient does not.
        let fine = StepRatio::of(p("1/1000000007"), p("1/999999937")).unwrap();
        let k = 1u64 << 40;
        let exact = (u128::from(k) * 999_999_937 / 1_000_000_007) as u64 + 1;
        assert_eq!(fine.frame_needed(k, 0), exact);
    }

    fn node(name: &'static str, period: &str, waits_for: &[usize]) -> RateNode<'static> {
        RateNode {
            name,
            period: Some(p(period)),
            waits_for: waits_for.to_vec(),
        }
    }

    #[test]
    fn equal_periods_give_the_ring_of_sixteen() {
        let two = [node("a", "0.001", &[1]), node("b", "0.001", &[0])];
        assert_eq!(ring_depths(&two, 7, 16).unwrap(), [16, 16]);
        let plain: Vec<RateNode> = (0..3)
            .map(|i| RateNode {
                name: "n",
                period: None,
                waits_for: (0..3).filter(|&j| j != i).collect(),
            })
            .collect();
        assert_eq!(ring_depths(&plain, 7, 16).unwrap(), [16, 16, 16]);
        // Depth 2L + 2 for lag L: 2 frames at lag 0.
        assert_eq!(ring_depths(&two, 0, 1).unwrap(), [2, 2]);
    }

    #[test]
    fn a_fast_writer_keeps_a_ring_as_long_as_its_slowest_reader_lags() {
        let lab = [
            node("cockpit", "0.001", &[1, 2]),
            node("visual", "1/60", &[0]),
            node("ios", "0.1", &[0, 1]),
        ];
        let depths = ring_depths(&lab, 2, 16).unwrap();
        // ios steps 100 cockpit steps at a time, lagging 2 of its own: 304 frames
        // of the cockpit; 23 of the visual, whose chain to ios runs through the cockpit.
        assert_eq!(depths, [512, 32, 16]);
        let unbounded = [node("a", "0.001", &[1]), node("b", "0.01", &[])];
        assert_eq!(
            ring_depths(&unbounded, 0, 16).unwrap_err(),
            RateError::Unbounded {
                reader: "a".into(),
                writer: "b".into()
            }
        );
    }
}
