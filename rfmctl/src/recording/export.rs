//! `export --csv`: one row per frame, one column per signal of every node.

use std::io::Write;
use std::path::Path;

use rfm_core::interface::Value;
use rfm_core::record::{Kind, Reader};

use super::{frames, values};
use crate::failure::Failure;

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

fn cell(value: &Value) -> String {
    match value {
        // Shortest text that reads back as the same double.
        Value::Real(x) => format!("{x:?}"),
        Value::Integer(i) => i.to_string(),
        Value::Boolean(b) => u8::from(*b).to_string(),
        Value::String(s) => field(s),
    }
}

/// Writes the recording at `file` as CSV to stdout: `kind` (published or taken),
/// `slot`, `node`, `step`, `time`, `wall_ns`, then `<node>.<signal>` for every
/// signal of every node; a row fills the columns of its frame's node.
pub fn export_csv(file: &Path) -> Result<(), Failure> {
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut header_written = false;
    let mut failed = None;
    frames(Reader::open(file)?, |nodes, frame| {
        if !header_written {
            header_written = true;
            let mut columns = vec!["kind", "slot", "node", "step", "time", "wall_ns"]
                .into_iter()
                .map(str::to_owned)
                .collect::<Vec<_>>();
            for n in nodes {
                columns.extend(
                    n.signals
                        .iter()
                        .map(|s| field(&format!("{}.{}", n.node, s.name))),
                );
            }
            if let Err(e) = writeln!(out, "{}", columns.join(",")) {
                failed = Some(e);
            }
        }
        let Some(me) = nodes.iter().position(|n| n.slot == frame.slot) else {
            return Ok(());
        };
        let kind = match frame.kind {
            Kind::Published => "published",
            _ => "taken",
        };
        let mut row = vec![
            kind.to_owned(),
            frame.slot.to_string(),
            field(&nodes[me].node),
            frame.header.writer_step().to_string(),
            format!("{:?}", frame.header.sim_time),
            frame.header.wall_clock_ns.to_string(),
        ];
        for (i, n) in nodes.iter().enumerate() {
            if i == me {
                row.extend(
                    values(n, &frame.payload)
                        .iter()
                        .map(|v| v.as_ref().map_or(String::new(), cell)),
                );
            } else {
                row.extend(std::iter::repeat_n(String::new(), n.signals.len()));
            }
        }
        if let Err(e) = writeln!(out, "{}", row.join(",")) {
            failed.get_or_insert(e);
        }
        Ok(())
    })?;
    if let Some(e) = failed.or_else(|| out.flush().err()) {
        return Err(Failure::device(anyhow::anyhow!("writing the CSV: {e}")));
    }
    Ok(())
}
