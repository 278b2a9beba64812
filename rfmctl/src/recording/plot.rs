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
use rfm_frames::{payload::SignalType, value::Value};
use rfm_interface::descriptor::Descriptor;
use rfm_record::Reader;

use super::frames;
use crate::failure::Failure;

/// Fonts tried in turn (Debian's fonts-dejavu-core, then Windows').
const FONTS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// One plotted signal: where it is, and what was read of it.
struct Trace {
    label: String,
    /// Its unit, as the file declares it (empty: none).
    unit: String,
    /// A Boolean: its axis reads off and on.
    boolean: bool,
    slot: u8,
    index: usize,
    /// Runs of (time, value) without a gap or restart between them.
    runs: Vec<Vec<(f64, f64)>>,
    /// A Boolean or Integer: drawn as steps (it holds its value until the next
    /// frame), not as slopes between frames.
    steps: bool,
    /// Times at which its writer restarted.
    restarts: Vec<f64>,
    /// The last (epoch, step) seen, to find gaps and restarts.
    last: Option<(u64, u64)>,
}

impl Trace {
    /// The value `y` of the frame of (epoch, step) `at`, at `time`: a gap in
    /// the steps starts a new run, a new epoch a new run and a restart mark.
    fn add(&mut self, at: (u64, u64), time: f64, y: Option<f64>) {
        match self.last {
            Some((epoch, _)) if epoch != at.0 => {
                self.restarts.push(time);
                self.runs.push(Vec::new());
            }
            Some((_, step)) if Some(at.1) != step.checked_add(1) => self.runs.push(Vec::new()),
            _ => {}
        }
        self.last = Some(at);
        // A time or value that is not finite has no place on the axes: it
        // loses its own point, nothing else.
        if let Some(y) = y.filter(|y| y.is_finite() && time.is_finite()) {
            self.runs.last_mut().expect("a run").push((time, y));
        }
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Real(x) => Some(*x),
        Value::Integer(i) => Some(f64::from(*i)),
        Value::Boolean(b) => Some(f64::from(u8::from(*b))),
        Value::String(_) => None,
    }
}

/// Every signal of `nodes` that plots (not the Strings), as `node.signal`.
fn numeric(nodes: &[Descriptor]) -> Vec<String> {
    nodes
        .iter()
        .flat_map(|n| {
            n.signals
                .iter()
                .filter(|s| !matches!(s.kind, SignalType::String { .. }))
                .map(move |s| format!("{}.{}", n.node, s.name))
        })
        .collect()
}

/// The traces of `names` (`node.signal`), or why one cannot be plotted.
fn traces(nodes: &[Descriptor], names: &[String]) -> Result<Vec<Trace>, Failure> {
    names
        .iter()
        .map(|name| {
            let (node, signal) = name.split_once('.').ok_or_else(|| {
                Failure::usage(anyhow!(
                    "`{name}`: name a signal as NODE.SIGNAL, e.g. cockpit.roll"
                ))
            })?;
            let n = nodes.iter().find(|n| n.node == node).ok_or_else(|| {
                let known: Vec<&str> = nodes.iter().map(|n| n.node.as_str()).collect();
                Failure::usage(anyhow!(
                    "`{name}`: no node `{node}` in the recording (it has {})",
                    known.join(", ")
                ))
            })?;
            let index = n
                .signals
                .iter()
                .position(|s| s.name == signal)
                .ok_or_else(|| {
                    let known: Vec<&str> = n.signals.iter().map(|s| s.name.as_str()).collect();
                    Failure::usage(anyhow!(
                        "`{name}`: node `{node}` has no signal `{signal}` (it has {})",
                        known.join(", ")
                    ))
                })?;
            if matches!(n.signals[index].kind, SignalType::String { .. }) {
                return Err(Failure::usage(anyhow!(
                    "`{name}` is a String: only numbers plot"
                )));
            }
            Ok(Trace {
                label: name.clone(),
                unit: n.signals[index].unit.clone(),
                boolean: n.signals[index].kind == SignalType::Boolean,
                slot: n.slot,
                index,
                steps: matches!(
                    n.signals[index].kind,
                    SignalType::Boolean | SignalType::Integer
                ),
                runs: vec![Vec::new()],
                restarts: Vec::new(),
                last: None,
            })
        })
        .collect()
}

fn font() -> Result<(), Failure> {
    let bytes = FONTS
        .iter()
        .find_map(|f| std::fs::read(f).ok())
        .ok_or_else(|| {
            Failure::device(anyhow!(
                "plot needs a font: {} (Debian: fonts-dejavu-core)",
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
    let mut traces = traces(&nodes, signals)?;
    let mut seen = HashSet::new();
    frames(reader, |nodes, f| {
        // A frame recorded twice (published and taken) is plotted once.
        if !seen.insert((f.slot, f.header.epoch, f.header.step)) {
            return Ok(());
        }
        let Some(node) = nodes.iter().find(|n| n.slot == f.slot) else {
            return Ok(());
        };
        let values = super::values(node, &f.payload);
        let time = f.header.sim_time;
        for t in traces.iter_mut().filter(|t| t.slot == f.slot) {
            let y = values[t.index].as_ref().and_then(number);
            t.add((f.header.epoch, f.header.step), time, y);
        }
        Ok(())
    })?;
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
mod tests {
    use super::y_range;
    use super::*;

    fn trace(label: &str, values: impl Fn(usize) -> f64) -> Trace {
        Trace {
            label: label.into(),
            unit: String::new(),
            boolean: label.ends_with("on_ground"),
            slot: 0,
            index: 0,
            steps: label.ends_with("on_ground") || label.ends_with("gear"),
            runs: vec![(0..30000).map(|k| (k as f64 * 0.0002, values(k))).collect()],
            restarts: Vec::new(),
            last: None,
        }
    }

    /// Five signals, one Boolean: each inside its own panel.
    #[test]
    fn every_signal_stays_inside_its_own_panel() {
        let traces = [
            trace("flight.yaw", |k| (k as f64 * 0.01).sin()),
            trace("flight.on_ground", |k| f64::from(u8::from(k / 3 % 2 == 0))),
            trace("flight.buffet", |k| 0.01 * f64::from(k as u8 % 2)),
            trace("platform.heave", |k| 0.1 * (k as f64 * 0.003).cos()),
            trace("flight.gear", |k| f64::from((k / 200) as u8 % 3)),
        ];
        assert_eq!(
            stepped(&[(0.0, 1.0), (1.0, 0.0), (2.0, 1.0)]),
            [(0.0, 1.0), (1.0, 1.0), (1.0, 0.0), (2.0, 0.0), (2.0, 1.0)]
        );
        inside_own_panels(&traces);
    }

    /// A lab's nineteen signals (the lab of issue 50) fill two columns of a
    /// picture under 1,800 pixels tall (it was 1200 × 4240), each still
    /// inside its own panel.
    #[test]
    fn a_labs_nineteen_signals_make_a_picture_of_sensible_size() {
        let traces: Vec<Trace> = (0..19)
            .map(|i| {
                trace(&format!("node.s{i}"), move |k| {
                    ((k + 97 * i) as f64 * 0.01).sin()
                })
            })
            .collect();
        let (w, h) = size(traces.len());
        assert!(w <= 1600 && h <= 1800, "{w} × {h}");
        inside_own_panels(&traces);
    }

    /// A panel names its unit; a Boolean's axis reads off and on.
    #[test]
    fn panels_name_their_units_and_booleans_read_off_and_on() {
        let mut t = trace("cockpit.altitude", |_| 0.0);
        assert_eq!(title(&t), "cockpit.altitude");
        t.unit = "m".into();
        assert_eq!(title(&t), "cockpit.altitude (m)");
        assert_eq!(y_label(true, 1.5, 0.0), "off");
        assert_eq!(y_label(true, 1.5, 1.0), "on");
        assert_eq!(y_label(true, 1.5, 0.5), "");
        assert_eq!(y_label(false, 1.5, 0.5), "0.5");
    }

    /// The rows and columns in which each trace's own colour was drawn: every
    /// one must be in its own panel of the grid (a Boolean toggling faster
    /// than the pixels was drawn over the panels above and below it).
    fn inside_own_panels(traces: &[Trace]) {
        let (w, h) = size(traces.len());
        let (columns, panel_rows) = grid(traces.len());
        let mut pixels = vec![0u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
            if font().is_err() {
                eprintln!("no font here: the plot cannot be drawn");
                return;
            }
            draw_on(&root, traces, (0.0, 4.0)).unwrap();
            root.present().unwrap();
        }
        let (panel_h, panel_w) = (h / panel_rows as u32, w / columns as u32);
        for i in 0..traces.len() {
            let (r, g, b) = color(i, traces.len()).rgb();
            let at = |x: u32, y: u32| {
                let p = ((y * w + x) * 3) as usize;
                pixels[p..p + 3] == [r, g, b]
            };
            let rows: Vec<u32> = (0..h).filter(|&y| (0..w).any(|x| at(x, y))).collect();
            let cols: Vec<u32> = (0..w).filter(|&x| (0..h).any(|y| at(x, y))).collect();
            let label = &traces[i].label;
            assert!(
                rows.len() > 30,
                "{label}: drawn on only {} rows",
                rows.len()
            );
            let (row, column) = ((i / columns) as u32, (i % columns) as u32);
            let own_rows = panel_h * row..panel_h * (row + 1);
            let own_cols = panel_w * column..panel_w * (column + 1);
            let (first, last) = (rows[0], rows[rows.len() - 1]);
            assert!(
                own_rows.contains(&first) && own_rows.contains(&last),
                "{label} drawn on rows {first}..={last}, its panel is {own_rows:?}"
            );
            let (left, right) = (cols[0], cols[cols.len() - 1]);
            assert!(
                own_cols.contains(&left) && own_cols.contains(&right),
                "{label} drawn on columns {left}..={right}, its panel is {own_cols:?}"
            );
        }
    }

    #[test]
    fn axis_labels_stay_short() {
        assert_eq!(super::axis_number(1e10, 1.0), "1.000e10");
        assert_eq!(super::axis_number(-2.5, 1.0), "-2.5");
        assert_eq!(super::axis_number(0.0, 1.0), "0");
        assert_eq!(super::axis_number(12345.5, 1.0), "12345.5");
        assert_eq!(super::axis_number(1e-5, 1e-4), "1.000e-5");
    }

    #[test]
    fn a_tick_that_sums_to_almost_zero_reads_zero() {
        // A zero reached by adding steps of 0.1 from -0.3 (2.776e-17).
        let tick = -0.3 + 0.1 + 0.1 + 0.1;
        assert_ne!(tick, 0.0);
        assert_eq!(super::axis_number(tick, 0.66), "0");
        // A value small beside its axis, but not at the float's noise: kept.
        assert_eq!(super::axis_number(1e-7, 0.66), "1.000e-7");
        // The whole range of f64: nothing is snapped (its span is infinite).
        assert_eq!(super::axis_number(1.0, f64::INFINITY), "1");
    }

    #[test]
    fn a_panel_axis_holds_its_values_with_room_whatever_their_size() {
        for (lo, hi) in [
            (1e10, 1e10),
            (0.0, 0.0),
            (-5.0, -5.0),
            (1e300, 1e300),
            (-1e308, 1e308),
            (1e307, 1e307),
            (0.1, 0.1000000001),
            (-1.0, 3.0),
        ] {
            let (a, b) = y_range(lo, hi);
            assert!(
                a < lo && hi < b && a.is_finite() && b.is_finite(),
                "{lo}..{hi}: {a}..{b}"
            );
        }
        assert_eq!(y_range(f64::INFINITY, f64::NEG_INFINITY), (0.0, 1.0));
    }
}
