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
use rfm_interface as interface;
use rfm_memory::backend::rfm2g::BoardError;
use rfm_memory::{DeviceError, DeviceSpec};
use serde_json::json;

use crate::failure::Failure;
use crate::foreign::{self, Structs};
use crate::open::{coupling_region, open};

mod host;
#[cfg(windows)]
mod windows;

use host::host_checks;

pub const HELP: &str = "\
Checks, each PASS, WARN (works, but costs time or margin), FAIL or SKIP (does not apply
here), with the fix: library (the vendor library loads), board (the device opens),
node-id, ring (RFM2gCheckRingCont), memory (the couplings it describes, and overlaps),
isolated-cores, governor, c-states, rt-throttling, busy-processes (Linux), power-plan,
timer-resolution (Windows), jitter (a polling loop's longest gap over --seconds, the
article's DPC-latency check), packet-layout (the
article's FlightData, packed and little-endian), foreign-structs (with --interface FILE:
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

/// The checks of the device: library, board, node id, ring, memory; of a
/// redundant device (`A+B`), each check of both memories, the worse verdict
/// and both details under one name, and the node ids compared.
fn device_checks(device: Option<&str>, library: Option<&Path>) -> Vec<Check> {
    let names = ["library", "board", "node-id", "ring", "memory"];
    let Some(device) = device else {
        return names
            .iter()
            .map(|n| check(n, Verdict::Skip, "no device given"))
            .collect();
    };
    match device.split_once('+') {
        Some((a, b)) => redundant_checks([a, b], library),
        None => memory_checks(device, library).0,
    }
}

fn redundant_checks(devices: [&str; 2], library: Option<&Path>) -> Vec<Check> {
    let [(a, x), (b, y)] = devices.map(|d| memory_checks(d, library));
    let ids = [x, y];
    let mut checks: Vec<Check> = a
        .into_iter()
        .zip(b)
        .map(|(a, b)| Check {
            name: a.name,
            verdict: a.verdict.max(b.verdict),
            detail: format!(
                "ring A `{}`: {}; ring B `{}`: {}",
                devices[0], a.detail, devices[1], b.detail
            ),
            fix: a.fix.or(b.fix),
        })
        .collect();
    if let [Some(x), Some(y)] = ids {
        if x != y {
            let ids = checks
                .iter_mut()
                .find(|c| c.name == "node-id")
                .expect("every device has the node-id check");
            ids.verdict = Verdict::Fail;
            ids.fix =
                Some("a PC is one node on both rings: set both boards' node switches alike".into());
        }
    }
    checks
}

/// The device checks of one memory, and its node id if it has one.
fn memory_checks(device: &str, library: Option<&Path>) -> (Vec<Check>, Option<u16>) {
    let card = matches!(DeviceSpec::parse(device), Ok(DeviceSpec::Rfm2g { .. }));
    let dev = match open(device, library) {
        Ok(dev) => dev,
        Err(f) => {
            let why = format!("{:#}", f.error);
            let library_failed = matches!(
                f.error.downcast_ref::<DeviceError>(),
                Some(DeviceError::Board(
                    BoardError::LibraryNotLoaded { .. } | BoardError::SymbolMissing { .. }
                ))
            );
            let checks = vec![
                match (card, library_failed) {
                    (false, _) => check("library", Verdict::Skip, "not an RFM2g device"),
                    (true, true) => check("library", Verdict::Fail, why.clone())
                        .fix("install the vendor's librfm2g, or give --library PATH"),
                    (true, false) => check("library", Verdict::Pass, "loaded"),
                },
                check("board", Verdict::Fail, why).fix(if card {
                    "check the driver (ls -l /dev/rfm2g*; modinfo rfm2g) and the device path"
                } else {
                    "start the coupling first (rfmctl only inspects memory)"
                }),
                check("node-id", Verdict::Skip, "the device did not open"),
                check("ring", Verdict::Skip, "the device did not open"),
                check("memory", Verdict::Skip, "the device did not open"),
            ];
            return (checks, None);
        }
    };
    let info = dev.info();
    let mut checks = Vec::new();
    if card {
        checks.push(check(
            "library",
            Verdict::Pass,
            info.library.clone().unwrap_or_else(|| "loaded".into()),
        ));
    } else {
        checks.push(check("library", Verdict::Skip, "not an RFM2g device"));
    }
    checks.push(check(
        "board",
        Verdict::Pass,
        format!("`{device}` opens, {} bytes", info.size),
    ));
    checks.push(match (card, info.node_id) {
        (false, _) => check("node-id", Verdict::Skip, "shared memory has no node id"),
        (true, Some(id)) => check("node-id", Verdict::Pass, format!("node {id}")),
        (true, None) => check("node-id", Verdict::Warn, "the library gave no node id")
            .fix("check the board's node switches and the driver"),
    });
    checks.push(if card {
        ring_check(&dev)
    } else {
        check("ring", Verdict::Skip, "shared memory has no ring")
    });
    checks.push(memory_check(&dev, device));
    (checks, info.node_id)
}

/// The continuity test, and the card's own view of its ring (its LCSR) where
/// the library gives it: a ring that passes the test while its receiver reports
/// lost sync or bad data is a fibre about to fail.
fn ring_check(dev: &rfm_memory::Device) -> Check {
    use rfm_core::link::RingState;
    let lcsr = dev.lcsr().ok();
    let state = lcsr.map(|l| format!("; {l}")).unwrap_or_default();
    match dev.check_ring() {
        Err(e) => {
            // Where: this board's receiver lost sync, or another board's.
            let open = match lcsr {
                Some(l) if !l.ring_ok() => RingState::OpenHere(l.to_string()),
                _ => RingState::OpenElsewhere(
                    lcsr.map_or("the library gives no LCSR".into(), |l| l.to_string()),
                ),
            };
            check(
                "ring",
                Verdict::Fail,
                format!(
                    "{}: {e}; a coupling on it sees the nodes it cuts off fall silent though \
                     they may run",
                    open.describe().unwrap_or_default()
                ),
            )
            .fix(open.fix().unwrap_or_default())
        }
        Ok(()) => match lcsr {
            Some(l) if !l.ring_ok() => check(
                "ring",
                Verdict::Warn,
                format!("a packet sent round the ring came back, but the card reports {l}"),
            )
            .fix("clean or replace the fibre into this card and check its connectors"),
            _ => check(
                "ring",
                Verdict::Pass,
                format!("a packet sent round the ring came back{state}"),
            ),
        },
    }
}

/// What the memory describes: each coupling's interface and its nodes; two
/// interfaces whose areas overlap are named (a leftover of an earlier run is
/// fine, two live couplings on one memory are not).
fn memory_check(dev: &rfm_memory::Device, device: &str) -> Check {
    let region = match coupling_region(dev, device, 0) {
        Ok(r) => r,
        Err(f) => return check("memory", Verdict::Fail, format!("{:#}", f.error)),
    };
    let found = match interface::discover(&region) {
        Ok(found) => found,
        Err(e) => return check("memory", Verdict::Fail, e.to_string()),
    };
    if found.is_empty() {
        return check(
            "memory",
            Verdict::Pass,
            "no node describes itself (no coupling has run here, or it runs at another \
             regionOffset)",
        );
    }
    let mut interfaces: Vec<&str> = found
        .iter()
        .map(|f| f.descriptor.interface.as_str())
        .collect();
    interfaces.sort_unstable();
    interfaces.dedup();
    let overlaps: Vec<String> = found
        .iter()
        .enumerate()
        .flat_map(|(i, a)| found[i + 1..].iter().map(move |b| (a, b)))
        .filter(|(a, b)| {
            a.descriptor.interface != b.descriptor.interface
                && a.area.offset < b.area.end()
                && b.area.offset < a.area.end()
        })
        .map(|(a, b)| {
            format!(
                "`{}` of `{}` and `{}` of `{}`",
                a.descriptor.node,
                a.descriptor.interface,
                b.descriptor.node,
                b.descriptor.interface
            )
        })
        .collect();
    let detail = format!(
        "{} nodes described, of {}",
        found.len(),
        interfaces
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if overlaps.is_empty() {
        check("memory", Verdict::Pass, detail)
    } else {
        check(
            "memory",
            Verdict::Warn,
            format!("{detail}; overlapping: {}", overlaps.join("; ")),
        )
        .fix("a leftover of an earlier run is overwritten by the next; two live couplings need their own devices or regionOffsets (rfmctl watch judges each area)")
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
    let region_offset = match interface.settings.get("regionOffset") {
        Some(rfm_frames::value::Value::Integer(o)) => u64::try_from(*o).unwrap_or(0),
        _ => 0,
    };
    let mut watched = Vec::new();
    for memory in device.split('+') {
        let dev = open(memory, library)?;
        let region = coupling_region(&dev, memory, region_offset)?;
        watched.push((memory, Structs::new(&interface, &region, file)?));
    }
    let started = Instant::now();
    while started.elapsed().as_secs_f64() < seconds {
        let now = Instant::now();
        for (_, structs) in &mut watched {
            structs.poll(now);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let now = Instant::now();
    let still: Vec<String> = (watched.iter())
        .flat_map(|(memory, s)| {
            let memory = if watched.len() > 1 {
                format!("{memory}: ")
            } else {
                String::new()
            };
            s.still(now, Duration::from_secs_f64(seconds))
                .into_iter()
                .map(move |line| format!("{memory}{line}"))
        })
        .collect();
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

pub fn run(args: &DoctorArgs, library: Option<&Path>) -> Result<(), Failure> {
    let mut checks = device_checks(args.device.as_deref(), library);
    checks.extend(host_checks());
    checks.push(jitter(args.seconds));
    checks.push(packet_layout());
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
