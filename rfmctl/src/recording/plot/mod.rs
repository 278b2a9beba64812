//! `plot`: the signals of a recording over simulation time (every number of
//! every node unless some are chosen), one panel per signal on a shared time
//! axis; a gap in a writer's steps breaks its line, and a
//! restart (a new session) is marked by a vertical line. Each panel names its
//! signal with its unit; a Boolean reads off and on; a lab's many signals
//! fill two columns rather than a picture four thousand pixels tall.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{anyhow, Context};
use plotters::prelude::*;
use rfm_record::Reader;

use super::{items, Item};
use crate::failure::Failure;
use traces::{number, numeric, traces, Source, Trace};

mod traces;

/// Fonts tried in turn (Debian's fonts-dejavu-core, then Windows').
const FONTS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Registers the charts' font (`plot`'s PNGs, `serve`'s SVGs, which
/// plotters lays out with it too).
pub(crate) fn font() -> Result<(), Failure> {
    let bytes = FONTS
        .iter()
        .find_map(|f| std::fs::read(f).ok())
        .ok_or_else(|| {
            Failure::device(anyhow!(
                "the charts need a font: {} (Debian: fonts-dejavu-core)",
                FONTS.join(" or ")
            ))
        })?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| Failure::device(anyhow!("the font is not usable")))
}

pub fn plot(file: &Path, signals: &[String], out: &Path) -> Result<(), Failure> {
    let reader = Reader::open(file)?;
    let nodes = reader.header().nodes();
    let every;
    let signals = match signals {
        [] => {
            every = numeric(&nodes);
            if every.is_empty() {
                return Err(Failure::check_failed(anyhow!(
                    "{}: its nodes publish no number to plot (only Strings)",
                    file.display()
                )));
            }
            &every[..]
        }
        chosen => chosen,
    };
    let structs = reader.header().structs.clone();
    let mut traces = traces(&nodes, &structs, signals)?;
    fill(reader, &structs, &mut traces)?;
    let points = traces.iter().flat_map(|t| t.runs.iter().flatten());
    let (t0, t1) = points
        .clone()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &(x, _)| {
            (a.min(x), b.max(x))
        });
    if !t0.is_finite() {
        return Err(Failure::check_failed(anyhow!(
            "no frame of {} in {}",
            signals.join(", "),
            file.display()
        )));
    }
    font()?;
    draw(&traces, (t0, t1.max(t0 + 1e-9)), out)
        .with_context(|| format!("writing {}", out.display()))
        .map_err(Failure::device)?;
    println!(
        "wrote {} ({} signals over {:.3} s of simulation time)",
        out.display(),
        traces.len(),
        t1 - t0
    );
    Ok(())
}

/// Each trace's points, from every frame and struct of the recording.
fn fill<R: std::io::Read>(
    reader: Reader<R>,
    structs: &[rfm_record::RecordedStruct],
    traces: &mut [Trace],
) -> Result<(), Failure> {
    let mut seen = HashSet::new();
    items(reader, |described, item| {
        match item {
            Item::Frame(f) => {
                // A frame recorded twice (published and taken) is plotted once.
                if !seen.insert((f.slot, f.header.epoch, f.header.step)) {
                    return Ok(());
                }
                let Some(node) = described.nodes.iter().find(|n| n.slot == f.slot) else {
                    return Ok(());
                };
                let values = super::values(node, &f.payload);
                for t in traces.iter_mut() {
                    if let Source::Signal { slot, index } = t.source {
                        if slot == f.slot {
                            let y = values[index].as_ref().and_then(number);
                            t.add((f.header.epoch, f.header.step), f.header.sim_time, y);
                        }
                    }
                }
            }
            Item::Struct(s) => {
                let (Some((epoch, step, time)), Some(of)) = (s.at, structs.get(s.index)) else {
                    return Ok(());
                };
                let values = of.values(&s.bytes);
                for t in traces.iter_mut() {
                    if let Source::Element { index, element } = t.source {
                        if index == s.index {
                            let y = values[element].as_ref().and_then(number);
                            t.add((epoch, step), time, y);
                        }
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// The y axis of a panel whose values span `lo..=hi` (infinite: none): 5 %
/// more each side, and a range that stays a range in floating point. A fixed
/// pad of 1e-9 vanished beside a constant 1e10 (lo + pad == lo), and the
/// panel's scale divided by zero: the line was drawn above its panel.
fn y_range(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    let pad = match hi - lo {
        span if span > 0.0 && span.is_finite() => span * 0.05,
        _ => (hi.abs().max(lo.abs()) * 0.05).max(1.0),
    };
    let (a, b) = (lo - pad, hi + pad);
    // Near the ends of f64 the pad may overflow: the ends themselves then.
    (
        if a.is_finite() { a } else { f64::MIN },
        if b.is_finite() { b } else { f64::MAX },
    )
}

/// A y-axis label of an axis `span` high that fits its 80 pixels: large and
/// tiny numbers in scientific form (1e10 printed whole was cut at the
/// panel's edge), and a tick within a billionth of the span of zero as 0:
/// plotters reaches its ticks by adding steps, and the zero of a roll
/// swinging ±0.3 rad was labelled -5.551e-17.
fn axis_number(y: f64, span: f64) -> String {
    let a = y.abs();
    if span.is_finite() && a <= span.abs() * 1e-9 {
        return "0".to_owned();
    }
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        format!("{y:.3e}")
    } else {
        let text = format!("{y:.6}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// A value held from its frame until the next: each point followed by the
/// next one's time at its own value.
fn stepped(run: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut points = Vec::with_capacity(run.len() * 2);
    for (i, &(t, y)) in run.iter().enumerate() {
        points.push((t, y));
        if let Some(&(next, _)) = run.get(i + 1) {
            points.push((next, y));
        }
    }
    points
}

/// The panels' grid for `panels` panels, as (columns, rows): one column up
/// to six, two beyond (19 panels were a picture 4240 pixels tall).
fn grid(panels: usize) -> (usize, usize) {
    let columns = if panels <= 6 { 1 } else { 2 };
    (columns, panels.div_ceil(columns).max(1))
}

/// The picture's size for `panels` panels: lower panels when there are many
/// rows, so that a lab's signals fit a screen or two.
fn size(panels: usize) -> (u32, u32) {
    let (columns, rows) = grid(panels);
    let (width, height) = match columns {
        1 => (1200, 220),
        _ => (1600, 170),
    };
    (width, 60 + height * rows as u32)
}

/// A panel's title: the signal, and its unit if the file declares one.
fn title(t: &Trace) -> String {
    match t.unit.is_empty() {
        true => t.label.clone(),
        false => format!("{} ({})", t.label, t.unit),
    }
}

/// A y-axis label: a Boolean's 0 and 1 as off and on (its other ticks
/// unlabelled), any other number as [`axis_number`].
fn y_label(boolean: bool, span: f64, y: f64) -> String {
    match boolean {
        true if y.abs() < 1e-9 => "off".to_owned(),
        true if (y - 1.0).abs() < 1e-9 => "on".to_owned(),
        true => String::new(),
        false => axis_number(y, span),
    }
}

/// The colour of panel `i` of `n`.
fn color(i: usize, n: usize) -> HSLColor {
    HSLColor(i as f64 / n as f64, 0.8, 0.4)
}

fn draw(traces: &[Trace], times: (f64, f64), out: &Path) -> anyhow::Result<()> {
    let root = BitMapBackend::new(out, size(traces.len())).into_drawing_area();
    draw_on(&root, traces, times)?;
    root.present()?;
    Ok(())
}

fn draw_on<B: DrawingBackend>(
    root: &DrawingArea<B, plotters::coord::Shift>,
    traces: &[Trace],
    (t0, t1): (f64, f64),
) -> anyhow::Result<()>
where
    B::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (columns, rows) = grid(traces.len());
    let panels = root.split_evenly((rows, columns));
    for (i, (t, panel)) in traces.iter().zip(panels).enumerate() {
        let ys = t.runs.iter().flatten().map(|&(_, y)| y);
        let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
            (a.min(y), b.max(y))
        });
        let (lo, hi) = match t.boolean {
            true => (-0.25, 1.25),
            false => y_range(lo, hi),
        };
        let color = color(i, traces.len());
        let mut chart = ChartBuilder::on(&panel)
            .caption(title(t), ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(80)
            .build_cartesian_2d(t0..t1, lo..hi)?;
        let boolean = t.boolean;
        chart
            .configure_mesh()
            .y_labels(if boolean { 3 } else { 10 })
            .y_label_formatter(&|y| y_label(boolean, hi - lo, *y))
            .x_desc("simulation time (s)")
            .label_style(("sans-serif", 13))
            .draw()?;
        // One pixel wide: plotters turns a wider line into a polygon, whose
        // joins at a fast-toggling signal's reversals reached hundreds of
        // pixels past the points, over the panels above and below. A line one
        // pixel wide is drawn segment by segment, each between two points of
        // the panel.
        for run in &t.runs {
            let points: Vec<(f64, f64)> = match t.steps {
                true => stepped(run),
                false => run.clone(),
            };
            chart.draw_series(LineSeries::new(points, color.stroke_width(1)))?;
        }
        for &r in &t.restarts {
            chart.draw_series(LineSeries::new([(r, lo), (r, hi)], RED.stroke_width(2)))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
