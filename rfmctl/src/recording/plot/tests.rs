//! The plot's axes, ticks and panels.
use super::y_range;
use super::*;

fn trace(label: &str, values: impl Fn(usize) -> f64) -> Trace {
    Trace {
        label: label.into(),
        unit: String::new(),
        boolean: label.ends_with("on_ground"),
        source: Source::Signal { slot: 0, index: 0 },
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
