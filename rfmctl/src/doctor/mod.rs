//! `doctor`: the article's troubleshooting list (its section 9.2) as checks a
//! PC can run before a lab's session: the vendor library and the board, the
//! ring, what the memory holds, and what on this PC makes a step late (cores
//! not isolated, a frequency governor or deep C-states, real-time throttling,
//! busy processes, the jitter of a polling loop, the packet's layout). Each
//! check gives a verdict and, where it is not a pass, the fix.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::Args;
use rfm_frames::frame::seed::{self, FlightData};
use rfm_frames::frame::Message;
use serde_json::json;

use crate::failure::Failure;
use crate::foreign::{self, Structs};
use crate::open::{coupling_region, open};

mod device;
mod host;
mod memory;
#[cfg(windows)]
mod windows;

use device::device_checks;
use host::host_checks;

pub const HELP: &str = "\
Checks, each PASS, WARN (works, but costs time or margin), FAIL or SKIP (does not apply
here), with the fix: library (the vendor library loads), board (the device opens),
node-id, ring (RFM2gCheckRingCont), memory (the couplings it describes, and overlaps),
isolated-cores, governor, c-states, rt-throttling, busy-processes (Linux), power-plan,
timer-resolution (Windows), jitter (a polling loop's longest gap over --seconds, the
article's DPC-latency check), packet-layout (the
article's FlightData, packed and little-endian; skipped with --interface, whose nodes run the
framed layout, or where the device's nodes describe themselves), foreign-structs (with --interface FILE:
each struct a lab's own program writes, read by its handshake for --seconds; a WARN names
one whose marker, or whose bytes, never changed: its program is stopped or writes
elsewhere). A redundant device (A+B) gets each
device check on both memories, the worse verdict, and its two boards' node ids compared.
Exit 1 when a check fails.

Example: rfmctl doctor /dev/rfm2g0
         rfmctl doctor /dev/rfm2g0+/dev/rfm2g1
         rfmctl doctor shm:lab --seconds 2 --json
         rfmctl doctor /dev/rfm2g0 --interface lab.toml";

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// The device to check (none: only this PC's checks)
    pub device: Option<String>,
    /// Seconds of the polling-loop jitter measurement
    #[arg(long, default_value = "10", value_parser = parse_seconds)]
    pub seconds: f64,
    /// One JSON object with every check, instead of the table
    #[arg(long)]
    pub json: bool,
    /// An interface file whose foreign nodes (the structs a lab's own
    /// programs write) are watched for --seconds: a struct whose marker (or,
    /// without one, whose bytes) never changes is reported
    #[arg(long, value_name = "FILE")]
    pub interface: Option<PathBuf>,
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| (0.01..=3600.0).contains(s))
        .ok_or_else(|| format!("`{text}` is not a number of seconds from 0.01 to 3600"))
}

/// In order of weight: of a redundant device's two memories, the heavier
/// verdict is the check's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Skip,
    Pass,
    Warn,
    Fail,
}

impl Verdict {
    fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
            Verdict::Skip => "SKIP",
        }
    }
}

/// One check's outcome.
struct Check {
    name: &'static str,
    verdict: Verdict,
    detail: String,
    fix: Option<String>,
}

fn check(name: &'static str, verdict: Verdict, detail: impl Into<String>) -> Check {
    Check {
        name,
        verdict,
        detail: detail.into(),
        fix: None,
    }
}

impl Check {
    fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }
}

/// A polling loop's longest gap between two clock reads over `seconds`: what
/// an interrupt, a DPC or another thread on the core takes from a spinning
/// step.
fn jitter(seconds: f64) -> Check {
    let until = Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let (mut last, mut longest, mut reads, mut over) = (started, Duration::ZERO, 0u64, 0u64);
    loop {
        let now = Instant::now();
        let gap = now - last;
        longest = longest.max(gap);
        over += u64::from(gap > Duration::from_micros(50));
        reads += 1;
        last = now;
        if now - started >= until {
            break;
        }
    }
    let detail = format!(
        "longest gap {:.1} µs in {reads} reads over {seconds} s; {over} gaps over 50 µs",
        longest.as_secs_f64() * 1e6
    );
    if longest <= Duration::from_micros(100) {
        check("jitter", Verdict::Pass, detail)
    } else {
        check("jitter", Verdict::Warn, detail).fix(
            "isolate a core for the coupling and pin it there; look for the interrupts and \
             processes on that core (/proc/interrupts, busy-processes)",
        )
    }
}

/// Why the article's packet is not this lab's, if it is not: an interface
/// file's nodes run the framed layout (the seed layout is the attitude
/// FMU's alone), and so do nodes that describe themselves on the device.
/// `None`: it may be, and the packet is checked.
fn framed_lab(args: &DoctorArgs, library: Option<&Path>) -> Option<String> {
    if let Some(file) = &args.interface {
        return Some(format!(
            "{}'s nodes run the framed layout, not the article's packet",
            file.display()
        ));
    }
    let (_, region) = crate::open::coupling_memory(args.device.as_deref()?, library, 0).ok()?;
    let found = rfm_interface::discover(&region).unwrap_or_default();
    (!found.is_empty()).then(|| {
        format!(
            "{} nodes on the device describe themselves: the framed layout, not the article's \
             packet",
            found.len()
        )
    })
}

/// The article's `FlightData` as this build writes it: each field at the
/// packed offset, little-endian, 65 bytes.
fn packet_layout() -> Check {
    let p = FlightData {
        packet_id: 0x0102_0304_0506_0708,
        timestamp: 1.5,
        attitude: [0.25, -0.5, 2.0],
        status: 7,
        msg: Message::new("doctor").unwrap_or_default(),
    };
    let b = seed::encode(&p);
    let at = |o: usize, bytes: &[u8]| b[o..o + bytes.len()] == *bytes;
    let fields = [
        ("header", at(0, &seed::MAGIC.to_le_bytes())),
        ("packetId", at(4, &p.packet_id.to_le_bytes())),
        ("timestamp", at(12, &p.timestamp.to_le_bytes())),
        (
            "attitude",
            at(20, &0.25f32.to_le_bytes()) && at(28, &2.0f32.to_le_bytes()),
        ),
        ("status", at(32, &[7])),
        ("msg", at(33, b"doctor")),
    ];
    let wrong: Vec<&str> = fields
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(n, _)| *n)
        .collect();
    if !wrong.is_empty() || seed::PACKET_SIZE != 65 {
        check(
            "packet-layout",
            Verdict::Fail,
            format!("fields off their packed offsets: {}", wrong.join(", ")),
        )
        .fix("the article's programs use #pragma pack(push, 1); build both sides alike")
    } else if cfg!(target_endian = "big") {
        check(
            "packet-layout",
            Verdict::Warn,
            "this host is big-endian: the article's programs read their own byte order",
        )
        .fix("swap the fields, or couple through the framed layout")
    } else {
        check(
            "packet-layout",
            Verdict::Pass,
            "FlightData: 65 bytes packed, every field at the article's offset, little-endian",
        )
    }
}

/// The structs a lab's own programs write, watched for `seconds` on each
/// memory of `device`: do their programs move them?
fn foreign_structs(
    device: Option<&str>,
    file: Option<&Path>,
    seconds: f64,
    library: Option<&Path>,
) -> Result<Check, Failure> {
    const NAME: &str = "foreign-structs";
    let (Some(device), Some(file)) = (device, file) else {
        return Ok(check(
            NAME,
            Verdict::Skip,
            "no device or no --interface given",
        ));
    };
    let interface = foreign::load(file)?;
    let region_offset = interface
        .settings
        .link(&interface)
        .map_or(0, |s| s.region_offset);
    let mut watched = Vec::new();
    for memory in crate::open::memories(device) {
        let dev = open(&memory, library)?;
        let region = coupling_region(&dev, &memory, region_offset)?;
        watched.push((memory, Structs::new(&interface, &region, file)?));
    }
    let still = unmoved(&mut watched, seconds);
    let names: Vec<&str> = interface.foreign.iter().map(|f| f.name.as_str()).collect();
    Ok(if still.is_empty() {
        check(
            NAME,
            Verdict::Pass,
            format!(
                "every struct moved in {seconds} s ({}; regionOffset {region_offset:#x})",
                names.join(", ")
            ),
        )
    } else {
        check(
            NAME,
            Verdict::Warn,
            format!("not moved by its program: {}", still.join("; ")),
        )
        .fix(
            "start the program that writes it; or check its offset, byte order and handshake \
             against the program's header (rfmctl watch DEVICE --interface FILE shows it by \
             field; rfmctl header FILE.h STRUCT gives the compiler's offsets)",
        )
    })
}

/// Polls each memory's structs for `seconds`; the structs no program moved,
/// named with their memory when there are several.
fn unmoved(watched: &mut [(String, Structs)], seconds: f64) -> Vec<String> {
    let started = Instant::now();
    while started.elapsed().as_secs_f64() < seconds {
        let now = Instant::now();
        for (_, structs) in watched.iter_mut() {
            structs.poll(now);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let now = Instant::now();
    let several = watched.len() > 1;
    (watched.iter())
        .flat_map(|(memory, s)| {
            let memory = if several {
                format!("{memory}: ")
            } else {
                String::new()
            };
            s.still(now, Duration::from_secs_f64(seconds))
                .into_iter()
                .map(move |line| format!("{memory}{line}"))
        })
        .collect()
}

pub fn run(args: &DoctorArgs, library: Option<&Path>) -> Result<(), Failure> {
    let mut checks = device_checks(args.device.as_deref(), library);
    checks.extend(host_checks());
    checks.push(jitter(args.seconds));
    checks.push(match framed_lab(args, library) {
        Some(why) => check("packet-layout", Verdict::Skip, why),
        None => packet_layout(),
    });
    checks.push(foreign_structs(
        args.device.as_deref(),
        args.interface.as_deref(),
        args.seconds,
        library,
    )?);
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .map(|c| c.name)
        .collect();
    if args.json {
        let v = json!({
            "device": args.device,
            "checks": checks.iter().map(|c| json!({
                "name": c.name,
                "verdict": c.verdict.name().to_lowercase(),
                "detail": c.detail,
                "fix": c.fix,
            })).collect::<Vec<_>>(),
            "failed": failed,
        });
        println!("{v}");
    } else {
        for c in &checks {
            println!("{}  {:<15} {}", c.verdict.name(), c.name, c.detail);
            if let Some(fix) = &c.fix {
                println!("      {:<15} fix: {fix}", "");
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::check_failed(anyhow!(
            "{} check(s) failed: {}",
            failed.len(),
            failed.join(", ")
        )))
    }
}
