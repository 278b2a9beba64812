//! The step-time histogram: constant memory for 10^9 steps.

/// Step-time histogram: 16 sub-buckets per power of two, so percentiles are
/// within 1/16 of their value, in constant memory for 10^8 steps.
pub struct Histogram {
    counts: Vec<u64>,
    pub max: u64,
    total: u64,
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0; 64 * 16],
            max: 0,
            total: 0,
        }
    }

    fn index(ns: u64) -> usize {
        if ns < 16 {
            return ns as usize;
        }
        let top = 63 - ns.leading_zeros() as usize; // >= 4
        let sub = ((ns >> (top - 4)) & 15) as usize;
        (top - 3) * 16 + sub
    }

    fn low(index: usize) -> u64 {
        if index < 16 {
            return index as u64;
        }
        let (top, sub) = (index / 16 + 3, (index % 16) as u64);
        (16 + sub) << (top - 4)
    }

    pub fn add(&mut self, ns: u64) {
        self.counts[Self::index(ns)] += 1;
        self.max = self.max.max(ns);
        self.total += 1;
    }

    pub fn percentile(&self, p: f64) -> u64 {
        let want = ((self.total as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= want {
                return Self::low(i);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::Histogram;

    #[test]
    fn buckets_bracket_their_values_within_a_sixteenth() {
        for ns in [
            0u64,
            1,
            15,
            16,
            17,
            31,
            32,
            100,
            999,
            1000,
            123_456,
            u64::MAX / 2,
        ] {
            let i = Histogram::index(ns);
            let low = Histogram::low(i);
            assert!(
                low <= ns && ns - low <= low / 16 + 1,
                "{ns}: bucket {i} starts at {low}"
            );
            assert!(Histogram::low(i + 1) > ns, "{ns}");
        }
        let mut h = Histogram::new();
        for ns in 1..=1000 {
            h.add(ns);
        }
        assert_eq!(h.percentile(0.5), 496);
        assert_eq!(h.max, 1000);
    }
}
