//! The results: a table on stdout, JSON, and a latency histogram PNG.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use crate::stats::Summary;

pub fn table(cases: &[Summary]) -> String {
    let mut out = format!(
        "{:<44} {:>9} {:>12} {:>10} {:>10} {:>10} {:>11}\n",
        "case", "steps", "steps/s", "median ns", "p99 ns", "p99.9 ns", "max ns"
    );
    for c in cases {
        out += &format!(
            "{:<44} {:>9} {:>12.0} {:>10} {:>10} {:>10} {:>11}\n",
            c.name,
            c.steps,
            c.steps_per_second(),
            c.median,
            c.p99,
            c.p999,
            c.max
        );
    }
    out
}

/// Share of steps per log-spaced bin, one line per case.
pub fn histogram(cases: &[Summary], path: &Path) -> Result<()> {
    let font = std::fs::read("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
        .context("the histogram needs DejaVu Sans (Debian: fonts-dejavu-core)")?;
    let font: &'static [u8] = Box::leak(font.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, font)
        .map_err(|_| anyhow::anyhow!("DejaVuSans.ttf is not a usable font"))?;
    let root = BitMapBackend::new(path, (1200, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let (lo, hi) = (10f64, 1e6f64);
    let bins = 120usize;
    let edge = |i: usize| lo * (hi / lo).powf(i as f64 / bins as f64);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Per-step time of a coupled step (warm-up excluded)",
            ("sans-serif", 26),
        )
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((lo..hi).log_scale(), 0f64..0.6f64)?;
    chart
        .configure_mesh()
        .x_desc("ns per step (log scale)")
        .y_desc("share of steps per bin")
        .label_style(("sans-serif", 16))
        .draw()?;
    // One hue per case, spread around the wheel: any number of cases gets
    // distinct colors.
    let colors = (0..cases.len()).map(|i| HSLColor(i as f64 / cases.len() as f64, 0.85, 0.4));
    for (c, color) in cases.iter().zip(colors) {
        let mut counts = vec![0usize; bins];
        for &s in &c.samples {
            let x = (s as f64).clamp(lo, hi * 0.999);
            let i = ((x / lo).ln() / (hi / lo).ln() * bins as f64) as usize;
            counts[i.min(bins - 1)] += 1;
        }
        let n = c.samples.len() as f64;
        let points: Vec<(f64, f64)> = counts
            .iter()
            .enumerate()
            .map(|(i, &k)| ((edge(i) * edge(i + 1)).sqrt(), k as f64 / n))
            .collect();
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(format!("{} (median {} ns)", c.name, c.median))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()?;
    Ok(())
}
