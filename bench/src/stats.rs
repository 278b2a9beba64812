//! Per-step time distributions, warm-up excluded.

use serde_json::json;

#[derive(Debug, Clone)]
pub struct Summary {
    pub name: String,
    pub steps: u64,
    pub warmup: u64,
    pub median: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    pub mean: f64,
    /// The measured samples after warm-up (for the histogram).
    pub samples: Vec<u64>,
}

impl Summary {
    /// `samples` are per-step ns (one sample may stand for a batch of steps).
    pub fn new(name: &str, steps: u64, samples: &[u64]) -> Summary {
        let warm = (samples.len() / 10).clamp(1, 10_000).min(samples.len() - 1);
        let mut sorted = samples[warm..].to_vec();
        sorted.sort_unstable();
        let pct = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
        Summary {
            name: name.to_owned(),
            steps,
            warmup: warm as u64 * (steps / samples.len() as u64).max(1),
            median: pct(0.5),
            p99: pct(0.99),
            p999: pct(0.999),
            max: *sorted.last().expect("samples after warm-up"),
            mean: sorted.iter().sum::<u64>() as f64 / sorted.len() as f64,
            samples: sorted,
        }
    }

    pub fn steps_per_second(&self) -> f64 {
        1e9 / self.mean
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "name": self.name,
            "steps": self.steps,
            "warmup_steps": self.warmup,
            "steps_per_second": self.steps_per_second().round(),
            "median_ns": self.median,
            "p99_ns": self.p99,
            "p99_9_ns": self.p999,
            "max_ns": self.max,
            "mean_ns": self.mean.round(),
        })
    }
}

/// Takes the samples a child process wrote to `file` (u64 nanoseconds,
/// little-endian), removing the file.
pub fn take_samples(file: &std::path::Path) -> std::io::Result<Vec<u64>> {
    let bytes = std::fs::read(file)?;
    let _ = std::fs::remove_file(file);
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}
