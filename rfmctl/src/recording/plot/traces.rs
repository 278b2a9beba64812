//! What `plot` draws: each signal or struct element asked for, where it is
//! read from, and the runs of (time, value) read of it.

use anyhow::anyhow;
use rfm_frames::fmi::FmiType;
use rfm_frames::fmi::Value;
use rfm_interface::descriptor::Descriptor;
use rfm_record::RecordedStruct;

use crate::failure::Failure;

/// Where a trace's values are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// Signal `index` of the node writing slot `slot`.
    Signal { slot: u8, index: usize },
    /// Element `element` of foreign struct `index` of the header: a record
    /// at each move of its program, plotted at the time of the step that read
    /// it, its value held until the next.
    Element { index: usize, element: usize },
}

/// One plotted signal: where it is, and what was read of it.
pub(super) struct Trace {
    pub(super) label: String,
    /// Its unit, as the file declares it (empty: none).
    pub(super) unit: String,
    /// A Boolean: its axis reads off and on.
    pub(super) boolean: bool,
    pub(super) source: Source,
    /// Runs of (time, value) without a gap or restart between them.
    pub(super) runs: Vec<Vec<(f64, f64)>>,
    /// A Boolean or Integer: drawn as steps (it holds its value until the next
    /// frame), not as slopes between frames.
    pub(super) steps: bool,
    /// Times at which its writer restarted.
    pub(super) restarts: Vec<f64>,
    /// The last (epoch, step) seen, to find gaps and restarts.
    pub(super) last: Option<(u64, u64)>,
}

impl Trace {
    /// The value `y` of the frame of (epoch, step) `at`, at `time`: a gap in
    /// the steps starts a new run, a new epoch a new run and a restart mark.
    pub(super) fn add(&mut self, at: (u64, u64), time: f64, y: Option<f64>) {
        // A struct is recorded when its program moves it, not every step:
        // only a restart breaks its line.
        let gaps = matches!(self.source, Source::Signal { .. });
        match self.last {
            Some((epoch, _)) if epoch != at.0 => {
                self.restarts.push(time);
                self.runs.push(Vec::new());
            }
            Some((_, step)) if gaps && Some(at.1) != step.checked_add(1) => {
                self.runs.push(Vec::new())
            }
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

pub(super) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Real(x) => Some(*x),
        Value::Integer(i) => Some(f64::from(*i)),
        Value::Boolean(b) => Some(f64::from(u8::from(*b))),
        Value::String(_) => None,
    }
}

/// Every signal of `nodes` that plots (not the Strings), as `node.signal`.
pub(super) fn numeric(nodes: &[Descriptor]) -> Vec<String> {
    nodes
        .iter()
        .flat_map(|n| {
            n.elements()
                .filter(|(s, _)| s.is_number())
                .map(move |(s, i)| format!("{}.{}", n.node, s.element_name(i)))
        })
        .collect()
}

/// The traces of `names` (`node.signal`, or `struct.element` of a foreign
/// struct the recording holds), or why one cannot be plotted.
pub(super) fn traces(
    nodes: &[Descriptor],
    structs: &[RecordedStruct],
    names: &[String],
) -> Result<Vec<Trace>, Failure> {
    names
        .iter()
        .map(|name| {
            let (node, signal) = name.split_once('.').ok_or_else(|| {
                Failure::usage(anyhow!(
                    "`{name}`: name a signal as NODE.SIGNAL, e.g. cockpit.roll"
                ))
            })?;
            if let Some(index) = structs.iter().position(|s| s.name == node) {
                if !nodes.iter().any(|n| n.node == node) {
                    return element_trace(name, (index, &structs[index]), signal);
                }
            }
            let n = nodes.iter().find(|n| n.node == node).ok_or_else(|| {
                let known: Vec<&str> = (nodes.iter().map(|n| n.node.as_str()))
                    .chain(structs.iter().map(|s| s.name.as_str()))
                    .collect();
                Failure::usage(anyhow!(
                    "`{name}`: no node `{node}` in the recording (it has {})",
                    known.join(", ")
                ))
            })?;
            // An array's elements by name (`counters[1]`), as the FMU's.
            let (index, (d, _)) = (n.elements().enumerate())
                .find(|(_, (d, i))| d.element_name(*i) == signal)
                .ok_or_else(|| {
                    let known: Vec<String> = n.elements().map(|(d, i)| d.element_name(i)).collect();
                    Failure::usage(anyhow!(
                        "`{name}`: node `{node}` has no signal `{signal}` (it has {})",
                        known.join(", ")
                    ))
                })?;
            if !d.is_number() {
                return Err(Failure::usage(anyhow!(
                    "`{name}` is a String: only numbers plot"
                )));
            }
            let source = Source::Signal {
                slot: n.slot,
                index,
            };
            Ok(Trace::new(name, &d.unit, d.kind.fmi_type(), source))
        })
        .collect()
}

/// The trace of element `element` of foreign struct `index`.
fn element_trace(
    name: &str,
    (index, s): (usize, &RecordedStruct),
    element: &str,
) -> Result<Trace, Failure> {
    let elements = s.elements();
    let at = elements
        .iter()
        .position(|(e, _)| e == element)
        .ok_or_else(|| {
            let known: Vec<&str> = elements.iter().map(|(e, _)| e.as_str()).collect();
            Failure::usage(anyhow!(
                "`{name}`: foreign struct `{}` has no element `{element}` (it has {})",
                s.name,
                known.join(", ")
            ))
        })?;
    let kind = s.element_type(at).unwrap_or(FmiType::String);
    if kind == FmiType::String {
        return Err(Failure::usage(anyhow!(
            "`{name}` is a String: only numbers plot"
        )));
    }
    let unit = elements[at].1.unwrap_or("");
    let source = Source::Element { index, element: at };
    Ok(Trace::new(name, unit, kind, source))
}

impl Trace {
    fn new(label: &str, unit: &str, kind: FmiType, source: Source) -> Trace {
        Trace {
            label: label.to_owned(),
            unit: unit.to_owned(),
            boolean: kind == FmiType::Boolean,
            source,
            steps: matches!(kind, FmiType::Boolean | FmiType::Integer)
                || matches!(source, Source::Element { .. }),
            runs: vec![Vec::new()],
            restarts: Vec::new(),
            last: None,
        }
    }
}
