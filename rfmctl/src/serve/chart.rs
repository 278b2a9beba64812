//! The page's charts, drawn by the plotting crate `plot` already uses
//! (plotters), as SVG: a signal over time, and a node's step and wait
//! histograms.

use plotters::prelude::*;

/// A chart's size in pixels.
const SIZE: (u32, u32) = (560, 240);

fn failed(e: impl std::fmt::Display) -> String {
    format!("drawing the chart: {e}")
}

/// `points` (time ms, value) of `signal` (with `unit`) over the last
/// `seconds` before `now_ms`, as an SVG line chart.
pub fn signal(
    signal: &str,
    unit: &str,
    points: &[(u64, f64)],
    (now_ms, seconds): (u64, u64),
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let t = |ms: u64| -(now_ms.saturating_sub(ms) as f64) / 1e3;
        let (lo, hi) = points
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &(_, v)| {
                (lo.min(v), hi.max(v))
            });
        let (lo, hi) = match (lo, hi) {
            (lo, hi) if lo > hi => (-1.0, 1.0),
            (lo, hi) if (hi - lo).abs() < 1e-12 => (lo - 1.0, hi + 1.0),
            (lo, hi) => (lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)),
        };
        let caption = match unit {
            "" => signal.to_owned(),
            u => format!("{signal} [{u}]"),
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(60)
            .build_cartesian_2d(-(seconds as f64)..0.0, lo..hi)
            .map_err(failed)?;
        chart
            .configure_mesh()
            .x_desc("s before now")
            .draw()
            .map_err(failed)?;
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|&(ms, v)| (t(ms), v)),
                BLUE.stroke_width(2),
            ))
            .map_err(failed)?;
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

/// A node's step and wait histograms (`floors`: each bucket's lowest ns) as
/// an SVG bar chart, side by side per bucket.
pub fn timing(node: &str, floors: &[u64], step: &[u64], wait: &[u64]) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let top = step.iter().chain(wait).copied().max().unwrap_or(0).max(1);
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{node}: step (blue) and wait (orange), last second"),
                ("sans-serif", 14),
            )
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(40)
            .build_cartesian_2d(0f64..floors.len() as f64, 0u64..top + top / 10 + 1)
            .map_err(failed)?;
        let label = |x: &f64| {
            let i = (*x as usize).min(floors.len().saturating_sub(1));
            match floors.get(i).copied().unwrap_or(0) {
                0 => "0".to_owned(),
                ns if ns >= 1_000_000 => format!("{}ms", ns / 1_000_000),
                ns if ns >= 1_000 => format!("{}µs", ns / 1_000),
                ns => format!("{ns}ns"),
            }
        };
        chart
            .configure_mesh()
            .x_labels(8)
            .x_label_formatter(&label)
            .x_desc("from")
            .draw()
            .map_err(failed)?;
        let bars = |counts: &[u64], shift: f64, color: RGBColor| {
            counts
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    let x = i as f64 + shift;
                    Rectangle::new([(x, 0), (x + 0.4, c)], color.filled())
                })
                .collect::<Vec<_>>()
        };
        chart
            .draw_series(bars(step, 0.1, RGBColor(31, 119, 180)))
            .map_err(failed)?;
        chart
            .draw_series(bars(wait, 0.5, RGBColor(255, 127, 14)))
            .map_err(failed)?;
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_and_a_histogram_are_svg_with_their_caption() {
        // plotters lays text out with the font even in SVG.
        crate::recording::plot::font().unwrap();
        let points: Vec<(u64, f64)> = (0..50)
            .map(|i| (1000 + 100 * i, (i as f64).sin()))
            .collect();
        let svg = signal("roll", "rad", &points, (6000, 10)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("roll [rad]"),
            "{svg}"
        );
        assert!(svg.contains("<polyline"), "a line drawn");
        let floors: Vec<u64> = (0..16)
            .map(|i| if i == 0 { 0 } else { 1 << (i + 8) })
            .collect();
        let svg = timing("cockpit", &floors, &[5; 16], &[3; 16]).unwrap();
        assert!(
            svg.contains("cockpit: step") && svg.contains("<rect"),
            "{svg}"
        );
    }
}
