//! A list of cores, as `taskset -c` writes it.

use std::fmt;
use std::str::FromStr;

/// The largest core number a list may name (Windows masks a group's 64 cores;
/// Linux's `cpu_set_t` holds 1024).
pub const MAX_CPU: usize = if cfg!(windows) { 63 } else { 1023 };

/// Cores by number, as `taskset -c` and `isolcpus=` write them: `3`, `2-3`,
/// `0,2-3`. Sorted, without repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub(super) Vec<usize>);

/// Why a core list does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("core list `{text}`: {reason}; expected core numbers 0..={MAX_CPU} and ranges, as `3`, `2-3` or `0,2-3`")]
pub struct CpuListError {
    pub text: String,
    pub reason: String,
}

impl FromStr for CpuList {
    type Err = CpuListError;

    fn from_str(text: &str) -> Result<CpuList, CpuListError> {
        let bad = |reason: String| CpuListError {
            text: text.to_owned(),
            reason,
        };
        let number = |s: &str| -> Result<usize, CpuListError> {
            let n: usize = s
                .trim()
                .parse()
                .map_err(|_| bad(format!("`{}` is not a core number", s.trim())))?;
            if n > MAX_CPU {
                return Err(bad(format!("core {n} is above {MAX_CPU}")));
            }
            Ok(n)
        };
        let mut cpus = Vec::new();
        for part in text.split(',') {
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (number(a)?, number(b)?);
                    if a > b {
                        return Err(bad(format!("range {a}-{b} runs backwards")));
                    }
                    cpus.extend(a..=b);
                }
                None => cpus.push(number(part)?),
            }
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(CpuList(cpus))
    }
}

impl fmt::Display for CpuList {
    /// Runs of consecutive cores as ranges: `0,2-3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end += 1;
            }
            if start != self.0[0] {
                f.write_str(",")?;
            }
            if end == start {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

impl CpuList {
    pub fn contains(&self, cpu: usize) -> bool {
        self.0.binary_search(&cpu).is_ok()
    }

    pub fn cpus(&self) -> &[usize] {
        &self.0
    }
}
