//! `export --csv`: one row per frame or foreign struct, one column per signal
//! of every node and element of every struct.

use std::io::Write;
use std::path::Path;

use rfm_frames::fmi::Value;
use rfm_record::{Kind, Reader};

use super::{items, values, Described, Item};
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

/// Writes the recording at `file` as CSV into `into` (standard output
/// without it; the recording is opened first, so a wrong recording never
/// leaves an empty CSV behind): `kind` (published, taken
/// or struct), `slot`, `node`, `step`, `time`, `wall_ns`, then
/// `<node>.<signal>` for every signal of every node and `<struct>.<element>`
/// for every element of every foreign struct; a row fills the columns of its
/// frame's node, or of its struct. A struct's row has no slot, step or time
/// (its program's struct carries none) and its `wall_ns` is when the recorder
/// read it; a frame's is its writer's clock.
pub fn export_csv(file: &Path, into: Option<&Path>) -> Result<(), Failure> {
    let reader = Reader::open(file)?;
    let sink: Box<dyn Write> = match into {
        None => Box::new(std::io::stdout().lock()),
        Some(path) => Box::new(std::fs::File::create(path).map_err(|e| {
            Failure::device(anyhow::anyhow!("cannot write {}: {e}", path.display()))
        })?),
    };
    let mut out = std::io::BufWriter::new(sink);
    let mut header_written = false;
    let mut failed = None;
    items(reader, |described, item| {
        if !header_written {
            header_written = true;
            if let Err(e) = writeln!(out, "{}", columns(described).join(",")) {
                failed = Some(e);
            }
        }
        let Some(row) = row(described, item) else {
            return Ok(());
        };
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

/// The CSV's first line.
fn columns(described: &Described) -> Vec<String> {
    let mut columns = ["kind", "slot", "node", "step", "time", "wall_ns"]
        .map(str::to_owned)
        .to_vec();
    for n in &described.nodes {
        columns.extend(
            n.elements()
                .map(|(s, i)| field(&format!("{}.{}", n.node, s.element_name(i)))),
        );
    }
    for s in &described.structs {
        columns.extend(
            s.elements()
                .into_iter()
                .map(|(e, _)| field(&format!("{}.{e}", s.name))),
        );
    }
    columns
}

/// The row of one frame or struct; `None` for a frame of a slot the header
/// does not describe.
fn row(described: &Described, item: Item) -> Option<Vec<String>> {
    let cells = |values: Vec<Option<Value>>| -> Vec<String> {
        values
            .iter()
            .map(|v| v.as_ref().map_or(String::new(), cell))
            .collect()
    };
    let (mut row, me, mut mine) = match item {
        Item::Frame(frame) => {
            let me = described.nodes.iter().position(|n| n.slot == frame.slot)?;
            let kind = match frame.kind {
                Kind::Published => "published",
                _ => "taken",
            };
            let row = vec![
                kind.to_owned(),
                frame.slot.to_string(),
                field(&described.nodes[me].node),
                frame.header.writer_step().to_string(),
                format!("{:?}", frame.header.sim_time),
                frame.header.wall_clock_ns.to_string(),
            ];
            (row, me, cells(values(&described.nodes[me], &frame.payload)))
        }
        Item::Struct(s) => {
            let of = described.structs.get(s.index)?;
            let row = vec![
                "struct".to_owned(),
                String::new(),
                field(&of.name),
                String::new(),
                String::new(),
                s.recorded_ns.to_string(),
            ];
            (
                row,
                described.nodes.len() + s.index,
                cells(of.values(&s.bytes)),
            )
        }
    };
    let widths = (described.nodes.iter().map(|n| n.elements().count()))
        .chain(described.structs.iter().map(|s| s.layout.elements()));
    for (i, width) in widths.enumerate() {
        if i == me {
            row.append(&mut mine);
        } else {
            row.extend(std::iter::repeat_n(String::new(), width));
        }
    }
    Some(row)
}
