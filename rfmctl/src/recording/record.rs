//! `record`: a third-party recorder. It reads the frames of every node in a live
//! memory, as `watch` does (reading only, never writing), and records each one
//! into a recording; frames it could not read before their ring entry was
//! reused are counted as missed records. With `--interface`, the structs a
//! lab's own programs write (its foreign nodes) are recorded too, each whole
//! struct once: the first, then each one its program moved.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::Args;
use rfm_frames::slot::{FramedReader, Ring, StepPoll};
use rfm_interface::{declared, descriptor, Found};
use rfm_memory::{Device, Region};
use rfm_record::{queue_capacity, Header, Kind, RecordedStruct, Recorder, MAX_STRUCTS};

use crate::failure::Failure;
use crate::foreign::{self, Structs};
use crate::numbers::parse_u64;
use crate::open::{coupling_memory, parse_wait, waiting};
use rfm_core::link::observer::described;

#[derive(Args, Debug)]
pub struct RecordArgs {
    pub device: String,
    /// The recording to write (an existing file is refused unless --overwrite)
    #[arg(long)]
    pub out: PathBuf,
    /// Replace the file at --out if it exists
    #[arg(long)]
    pub overwrite: bool,
    /// Slots to record (default: every node that describes itself)
    #[arg(long, value_delimiter = ',')]
    pub slots: Vec<u8>,
    /// The FMU's regionOffset: where the coupling's areas start
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    pub region_offset: u64,
    /// How long to record
    #[arg(long, default_value = "10")]
    pub seconds: f64,
    /// Wait for the memory to be created and its nodes (those of --slots) to
    /// describe themselves: at most SECONDS, the flag alone until interrupted
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "inf",
          value_parser = parse_wait)]
    pub wait: Option<f64>,
    /// The interface file whose foreign nodes (the structs a lab's own
    /// programs write) are recorded too: each whole struct once, the first,
    /// then each one its program moved
    #[arg(long, value_name = "FILE")]
    pub interface: Option<PathBuf>,
}

/// The foreign structs being recorded, and which struct of each was last.
struct Foreign {
    structs: Structs,
    last: Vec<Option<u64>>,
    recorded: Vec<u64>,
}

impl Foreign {
    /// Reads every struct and records those that are new; whether any was.
    fn sweep(&mut self, recorder: &mut Recorder) -> bool {
        self.structs.poll(Instant::now());
        let mut any = false;
        for (i, last) in self.last.iter_mut().enumerate() {
            let Some((bytes, which)) = self.structs.newest(i) else {
                continue;
            };
            if *last != Some(which) {
                *last = Some(which);
                // `last` has at most MAX_STRUCTS entries: `i` fits the slot byte.
                recorder.record(Kind::Struct, i as u8, rfm_frames::wall::now_ns(), bytes);
                self.recorded[i] += 1;
                any = true;
            }
        }
        any
    }
}

/// One recorded slot.
struct Source {
    slot: u8,
    reader: FramedReader,
    buf: rfm_frames::frame::framed::FrameBuf,
    /// The next frame index to record (`None`: start at the newest).
    next: Option<u64>,
    frames: u64,
    missed: u64,
}

pub fn record(args: &RecordArgs, library: Option<&Path>) -> Result<(), Failure> {
    if !(args.seconds > 0.0 && args.seconds <= 86_400.0) {
        return Err(Failure::usage(anyhow!(
            "--seconds {}: expected more than 0, at most a day (86400)",
            args.seconds
        )));
    }
    let (_device, region, found) = waiting(args.wait, || find(args, library))?;
    let mut header = header(args, &found);
    let mut foreign = match &args.interface {
        Some(file) => Some(structs(file, &region, &found, &mut header)?),
        None => None,
    };
    let mut sources = Vec::new();
    for f in &found {
        let area = rfm_frames::area::window(&region, &f.area).map_err(Failure::device)?;
        let reader = FramedReader::new(area, Ring::of(&f.area)).map_err(Failure::device)?;
        sources.push(Source {
            slot: f.descriptor.slot,
            buf: reader.buffer(),
            reader,
            next: None,
            frames: 0,
            missed: 0,
        });
    }
    let by = format!("rfmctl record (process {})", std::process::id());
    let structs = foreign.as_ref().map_or(0, |f| f.last.len());
    // The header's largest record: its nodes' largest frame, or a struct.
    let capacity = queue_capacity(header.largest_record(), sources.len() + structs);
    let mut recorder = Recorder::create(&args.out, &header, capacity, args.overwrite, &by)
        .map_err(|e| match e {
            rfm_record::RecorderError::Exists { .. } => {
                Failure::usage(anyhow!("{e}: pass --overwrite to replace it"))
            }
            e => Failure::device(e),
        })?;
    let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
    let mut first = true;
    while Instant::now() < deadline {
        let mut idle = true;
        for s in &mut sources {
            idle &= !sweep(s, &mut recorder);
        }
        if let Some(f) = &mut foreign {
            idle &= !f.sweep(&mut recorder);
        }
        if std::mem::take(&mut first) {
            // Once what the memory holds now is taken: what a script that
            // starts the writers after the recorder waits for.
            eprintln!("rfmctl: recording into {}", args.out.display());
        }
        if idle {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
    let dropped = recorder.dropped();
    recorder.finish().map_err(Failure::device)?;
    report(args, &sources, foreign.as_ref(), dropped);
    Ok(())
}

/// The foreign nodes of the interface file `file` read in `region`, into
/// `header`; a file of another interface than the nodes `found` run is
/// refused, as the recording would say its structs are theirs.
fn structs(
    file: &Path,
    region: &Region,
    found: &[Found],
    header: &mut Header,
) -> Result<Foreign, Failure> {
    let interface = foreign::load(file)?;
    if interface.fingerprint() != header.fingerprint {
        // Named where their descriptor declares the lab's structs.
        let theirs = &found[0].descriptor;
        let difference = declared::first_difference(&interface.declared(), &theirs.foreign)
            .map_or(String::new(), |d| format!(" ({d})"));
        return Err(Failure::usage(anyhow!(
            "{} is not the interface the nodes run: its fingerprint {:#018x}, theirs ({}) \
             {:#018x}{difference}; give the file their FMUs were built from",
            file.display(),
            interface.fingerprint(),
            theirs.interface,
            header.fingerprint
        )));
    }
    if interface.foreign.len() > MAX_STRUCTS {
        return Err(Failure::usage(anyhow!(
            "{} declares {} foreign nodes and a recording holds at most {MAX_STRUCTS}",
            file.display(),
            interface.foreign.len()
        )));
    }
    let structs = Structs::new(&interface, region, file)?;
    header.structs = structs.nodes().iter().map(RecordedStruct::of).collect();
    Ok(Foreign {
        last: vec![None; header.structs.len()],
        recorded: vec![0; header.structs.len()],
        structs,
    })
}

/// The device, its coupling region and the areas that describe the slots
/// asked for (of a slot described twice, the live one, as `watch` chooses);
/// not yet while none does, or, with `--wait`, while one of them does not.
fn find(
    args: &RecordArgs,
    library: Option<&Path>,
) -> Result<(Device, Region, Vec<Found>), Failure> {
    let (device, region) = coupling_memory(&args.device, library, args.region_offset)?;
    let found = described(&region, &args.slots).map_err(Failure::device)?;
    let missing: Vec<String> = args
        .slots
        .iter()
        .filter(|s| !found.iter().any(|f| f.descriptor.slot == **s))
        .map(u8::to_string)
        .collect();
    if found.is_empty() || (args.wait.is_some() && !missing.is_empty()) {
        return Err(Failure::check_failed(anyhow!(
            "no node describes {} in `{}` (regionOffset {:#x}): is a simulator running on it?",
            match missing.is_empty() {
                true => "itself".to_owned(),
                false => format!("slot {}", missing.join(", ")),
            },
            args.device,
            args.region_offset
        ))
        .not_yet());
    }
    Ok((device, region, found))
}

/// The recording's header: the interface of the first node found, the
/// recorder as its parameters, and every node's descriptor (of no session).
fn header(args: &RecordArgs, found: &[Found]) -> Header {
    let first = &found[0];
    Header {
        fingerprint: first.descriptor.fingerprint,
        node: None,
        started_ns: rfm_frames::wall::now_ns(),
        interface: first.descriptor.interface.clone(),
        parameters: format!(
            "device={}\nregionOffset={}\nrecorder=rfmctl record\n",
            args.device, args.region_offset
        ),
        structs: Vec::new(),
        descriptors: found
            .iter()
            .map(|f| {
                let d = &f.descriptor;
                descriptor::encode(
                    &d.interface,
                    d.fingerprint,
                    (&d.node_spec(), &d.foreign),
                    &f.area.payload,
                    None,
                )
            })
            .collect(),
    }
}

/// What was recorded, slot by slot, and the records the disk lost.
fn report(args: &RecordArgs, sources: &[Source], foreign: Option<&Foreign>, dropped: u64) {
    println!(
        "recorded {} for {:.1} s into {}",
        args.device,
        args.seconds,
        args.out.display()
    );
    for s in sources {
        println!(
            "slot {:3}: {} frames, {} missed (overwritten before they were read)",
            s.slot, s.frames, s.missed
        );
    }
    if let Some(f) = foreign {
        for (node, recorded) in f.structs.nodes().iter().zip(&f.recorded) {
            println!(
                "struct `{}`: {recorded} whole structs (the first, then each one its program moved)",
                node.name
            );
        }
    }
    if dropped > 0 {
        println!("{dropped} records dropped: the disk fell behind");
    }
}

/// Records every frame of `s` published since the last sweep; whether any was.
fn sweep(s: &mut Source, recorder: &mut Recorder) -> bool {
    let next = match s.next {
        Some(next) => next,
        None => match s.reader.read_latest(&mut s.buf) {
            Ok(h) => h.step,
            Err(_) => return false,
        },
    };
    let mut k = next;
    loop {
        match s.reader.poll_step(k, &mut s.buf) {
            Ok(StepPoll::Ready(_)) => {
                let now = rfm_frames::wall::now_ns();
                recorder.record(Kind::Taken, s.slot, now, s.buf.bytes());
                s.frames += 1;
                k += 1;
            }
            Ok(StepPoll::Overwritten { .. }) => {
                // Too slow for the ring: go on from the newest, counting the rest.
                let Ok(h) = s.reader.read_latest(&mut s.buf) else {
                    break;
                };
                let missed = h.step.saturating_sub(k);
                let now = rfm_frames::wall::now_ns();
                recorder.record(Kind::Missed, s.slot, now, &missed.to_le_bytes());
                s.missed += missed;
                k = h.step;
            }
            // Not published yet, or the writer mid-frame: the next sweep.
            Ok(StepPoll::NotYet) | Err(_) => break,
        }
    }
    s.next = Some(k);
    k != next
}
