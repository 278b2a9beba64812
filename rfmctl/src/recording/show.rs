//! `show`: the interface, nodes, steps, gaps, restarts and bad frames of a
//! recording, and the foreign structs it holds.

use std::collections::BTreeMap;
use std::path::Path;

use rfm_frames::frame::framed::{self, HEADER_SIZE};
use rfm_record::{Header, Kind, Reader, Record};

use crate::failure::Failure;

/// What the frames of one writer slot showed.
#[derive(Debug, Default)]
struct Slot {
    frames: u64,
    /// (step, simulation time) of the first and last good frame.
    first: Option<(u64, f64)>,
    last: Option<(u64, f64)>,
    /// The writer's session: a change is a restart.
    epoch: Option<u64>,
    /// Steps skipped between two frames of one session.
    gaps: u64,
    restarts: u64,
    bad: u64,
    missed: u64,
}

pub fn show(file: &Path) -> Result<(), Failure> {
    let mut reader = Reader::open(file)?;
    print_header(file, reader.header());
    let mut slots: BTreeMap<u8, Slot> = BTreeMap::new();
    // Per foreign struct: its records, and the wall clock of its first and last.
    let mut structs: BTreeMap<u8, (u64, u64, u64)> = BTreeMap::new();
    let (mut first_ns, mut last_ns) = (None, 0u64);
    let ended = loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        first_ns.get_or_insert(record.recorded_ns);
        last_ns = record.recorded_ns;
        if record.kind == Kind::Struct {
            let s = structs
                .entry(record.slot)
                .or_insert((0, record.recorded_ns, 0));
            (s.0, s.2) = (s.0 + 1, record.recorded_ns);
        } else {
            slots.entry(record.slot).or_default().add(&record);
        }
    };
    println!(
        "records     {}, over {:.3} s of wall clock",
        reader.records_read(),
        first_ns.map_or(0.0, |f| last_ns.saturating_sub(f) as f64 * 1e-9)
    );
    print_slots(&slots);
    for (i, s) in reader.header().structs.iter().enumerate() {
        let (records, first, last) = structs.get(&(i as u8)).copied().unwrap_or_default();
        println!(
            "struct      `{}`: {records} whole structs over {:.3} s of wall clock",
            s.name,
            last.saturating_sub(first) as f64 * 1e-9
        );
    }
    match ended {
        None if reader.cut() > 0 => {
            println!(
                "end         cut short: {} bytes of an unfinished record after the last one (its \
                 writer stopped mid-record, e.g. killed)",
                reader.cut()
            );
            Ok(())
        }
        None => {
            println!("end         complete");
            Ok(())
        }
        Some(e) => Err(e.into()),
    }
}

impl Slot {
    /// Counts `record` of this slot: a frame (its step against the last one
    /// says gaps and restarts), a bad one, or the records the writer missed.
    fn add(&mut self, record: &Record) {
        if let Some(missed) = record.missed() {
            self.missed += missed;
            return;
        }
        debug_assert!(matches!(record.kind, Kind::Published | Kind::Taken));
        let Some(payload) = record.body.len().checked_sub(HEADER_SIZE) else {
            self.bad += 1;
            return;
        };
        let Ok(h) = framed::check(&record.body, payload) else {
            self.bad += 1;
            return;
        };
        self.frames += 1;
        match (self.epoch, self.last) {
            (Some(epoch), _) if epoch != h.epoch => self.restarts += 1,
            (Some(_), Some((step, _))) if h.step > step.saturating_add(1) => {
                self.gaps += h.step - step - 1
            }
            (Some(_), Some((step, _))) if h.step <= step => self.restarts += 1,
            _ => {}
        }
        self.epoch = Some(h.epoch);
        self.first.get_or_insert((h.step, h.sim_time));
        self.last = Some((h.step, h.sim_time));
    }
}

/// The recording's header: its interface, who recorded it, with which
/// parameters, and every node's signals.
fn print_header(file: &Path, header: &Header) {
    let nodes = header.nodes();
    println!("recording   {}", file.display());
    println!(
        "interface   {} (fingerprint {:#018x})",
        header.interface, header.fingerprint
    );
    println!(
        "recorded by {}",
        match header.node {
            None => "a recorder (no node)".to_owned(),
            Some(slot) => {
                let name = nodes
                    .iter()
                    .find(|n| n.slot == slot)
                    .map_or("?", |n| n.node.as_str());
                format!("node `{name}` (slot {slot})")
            }
        }
    );
    for line in header.parameters.lines() {
        println!("parameter   {line}");
    }
    for n in &nodes {
        let signals: Vec<&str> = n.signals.iter().map(|s| s.name.as_str()).collect();
        println!(
            "node        slot {:3} `{}`: {} signals ({})",
            n.slot,
            n.node,
            signals.len(),
            signals.join(", ")
        );
    }
    for s in &header.structs {
        let elements: Vec<String> = s.elements().into_iter().map(|(e, _)| e).collect();
        println!(
            "struct      `{}` at {:#x}, {} bytes, {}: {} elements ({})",
            s.name,
            s.offset,
            s.layout.size,
            s.layout.order.words(),
            elements.len(),
            elements.join(", ")
        );
    }
}

/// One row a slot: its frames, the steps and times they span, and what went
/// wrong.
fn print_slots(slots: &BTreeMap<u8, Slot>) {
    println!("slot  frames  steps               sim time s            gaps  restarts  bad  missed");
    for (slot, s) in slots {
        let (steps, times) = match (s.first, s.last) {
            (Some(f), Some(l)) => (
                format!("{}..{}", framed::step_of(f.0), framed::step_of(l.0)),
                format!("{:.3}..{:.3}", f.1, l.1),
            ),
            _ => ("-".into(), "-".into()),
        };
        println!(
            "{slot:4}  {:6}  {steps:18}  {times:20}  {:4}  {:8}  {:3}  {:6}",
            s.frames, s.gaps, s.restarts, s.bad, s.missed
        );
    }
}
