//! `doctor`: the article's troubleshooting list (its section 9.2) as checks a
//! PC can run before a lab's session: the vendor library and the board, the
//! ring, what the memory holds, and what on this PC makes a step late (cores
//! not isolated, a frequency governor or deep C-states, real-time throttling,
//! busy processes, the jitter of a polling loop, the packet's layout). Each
//! check gives a verdict and, where it is not a pass, the fix.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::Args;
use rfm_core::backend::rfm2g::BoardError;
use rfm_core::frame::seed::{self, FlightData};
use rfm_core::frame::Message;
use rfm_core::{interface, DeviceError, DeviceSpec};
use serde_json::json;

use crate::failure::Failure;
use crate::open::{coupling_region, open};

#[cfg(windows)]
mod windows;

pub const HELP: &str = "\
Checks, each PASS, WARN (works, but costs time or margin), FAIL or SKIP (does not apply
here), with the fix: library (the vendor library loads), board (the device opens),
node-id, ring (RFM2gCheckRingCont), memory (the couplings it describes, and overlaps),
isolated-cores, governor, c-states, rt-throttling, busy-processes (Linux), power-plan,
timer-resolution (Windows), jitter (a polling loop's longest gap over --seconds, the
article's DPC-latency check), packet-layout (the
article's FlightData, packed and little-endian). A redundant device (A+B) gets each
device check on both memories, the worse verdict, and its two boards' node ids compared.
Exit 1 when a check fails.

Example: rfmctl doctor /dev/rfm2g0
         rfmctl doctor /dev/rfm2g0+/dev/rfm2g1
         rfmctl doctor shm:lab --seconds 2 --json";

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
fn ring_check(dev: &rfm_core::Device) -> Check {
    let lcsr = dev.lcsr().ok();
    let state = lcsr.map(|l| format!("; {l}")).unwrap_or_default();
    match dev.check_ring() {
        Err(e) => check("ring", Verdict::Fail, format!("{e}{state}"))
            .fix("check the fibres and that every node is powered; rfmctl ring-check"),
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
fn memory_check(dev: &rfm_core::Device, device: &str) -> Check {
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

/// A file's text, trimmed; `None` when it cannot be read.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

#[cfg(target_os = "linux")]
fn host_checks() -> Vec<Check> {
    let isolated = match read("/sys/devices/system/cpu/isolated") {
        Some(list) if !list.is_empty() => check(
            "isolated-cores",
            Verdict::Pass,
            format!("cores {list} isolated"),
        ),
        Some(_) => check("isolated-cores", Verdict::Warn, "no core is isolated").fix(
            "boot with isolcpus=N nohz_full=N for the stepping core, and give it the coupling \
             (taskset -c N)",
        ),
        None => check(
            "isolated-cores",
            Verdict::Skip,
            "no /sys/devices/system/cpu/isolated",
        ),
    };
    let governors: Vec<String> = (0..available_cpus())
        .filter_map(|c| {
            read(format!(
                "/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
            ))
        })
        .collect();
    let governor = if governors.is_empty() {
        check(
            "governor",
            Verdict::Skip,
            "no cpufreq (a virtual machine, or frequency fixed by the firmware)",
        )
    } else if governors.iter().all(|g| g == "performance") {
        check("governor", Verdict::Pass, "performance on every core")
    } else {
        let mut kinds = governors.clone();
        kinds.sort();
        kinds.dedup();
        check(
            "governor",
            Verdict::Warn,
            format!("governor {}", kinds.join(", ")),
        )
        .fix("cpupower frequency-set -g performance")
    };
    let deep: Vec<String> = (1..16)
        .map_while(|s| {
            let dir = format!("/sys/devices/system/cpu/cpu0/cpuidle/state{s}");
            read(format!("{dir}/name")).map(|name| (name, read(format!("{dir}/disable"))))
        })
        .filter(|(_, disabled)| disabled.as_deref() != Some("1"))
        .map(|(name, _)| name)
        .collect();
    let cstates = match read("/sys/devices/system/cpu/cpu0/cpuidle/state0/name") {
        None => check("c-states", Verdict::Skip, "no cpuidle (a virtual machine)"),
        Some(_) if deep.is_empty() => check("c-states", Verdict::Pass, "no deep C-state enabled"),
        Some(_) => check(
            "c-states",
            Verdict::Warn,
            format!("enabled beyond polling: {}", deep.join(", ")),
        )
        .fix("cpupower idle-set -D 0, or boot with intel_idle.max_cstate=1 processor.max_cstate=1"),
    };
    let throttling = match read("/proc/sys/kernel/sched_rt_runtime_us").as_deref() {
        Some("-1") => check(
            "rt-throttling",
            Verdict::Pass,
            "off: a real-time thread may run 100 %",
        ),
        Some(us) => check(
            "rt-throttling",
            Verdict::Warn,
            format!("real-time threads stop {us} µs of each second's run"),
        )
        .fix("sysctl kernel.sched_rt_runtime_us=-1 (with an isolated core for the coupling)"),
        None => check(
            "rt-throttling",
            Verdict::Skip,
            "no /proc/sys/kernel/sched_rt_runtime_us",
        ),
    };
    let mut checks = vec![isolated, governor, cstates, throttling, busy_processes()];
    checks.extend(
        HOST_CHECKS[checks.len()..]
            .iter()
            .map(|n| check(n, Verdict::Skip, "a Windows check")),
    );
    checks
}

#[cfg(target_os = "linux")]
fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Processes other than this one that used more than half a core over 0.5 s.
#[cfg(target_os = "linux")]
fn busy_processes() -> Check {
    let ticks = || -> Vec<(u32, String, u64)> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| pid != std::process::id())
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let used =
                    fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
                Some((pid, name.to_owned(), used))
            })
            .collect()
    };
    let before = ticks();
    let period = Duration::from_millis(500);
    std::thread::sleep(period);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut busy: Vec<(f64, String)> = ticks()
        .into_iter()
        .filter_map(|(pid, name, after)| {
            let (_, _, was) = before.iter().find(|(p, _, _)| *p == pid)?;
            let share = (after.saturating_sub(*was)) as f64 / hz / period.as_secs_f64();
            (share > 0.5).then(|| (share, format!("{name} (pid {pid}, {:.0} %)", share * 100.0)))
        })
        .collect();
    busy.sort_by(|a, b| b.0.total_cmp(&a.0));
    if busy.is_empty() {
        check(
            "busy-processes",
            Verdict::Pass,
            "no other process used half a core",
        )
    } else {
        let names: Vec<String> = busy.into_iter().map(|(_, n)| n).collect();
        check("busy-processes", Verdict::Warn, names.join(", "))
            .fix("stop them, or keep them off the coupling's cores (taskset, isolcpus)")
    }
}

/// On Windows the Linux checks do not apply; the power plan and the timer
/// resolution do ([`windows`]).
#[cfg(windows)]
fn host_checks() -> Vec<Check> {
    let mut checks: Vec<Check> = HOST_CHECKS[..5]
        .iter()
        .map(|n| {
            check(
                n,
                Verdict::Skip,
                "a Linux check (Windows: power-plan, timer-resolution)",
            )
        })
        .collect();
    checks.extend([windows::power_plan(), windows::timer_resolution()]);
    checks
}

#[cfg(not(any(target_os = "linux", windows)))]
fn host_checks() -> Vec<Check> {
    HOST_CHECKS
        .into_iter()
        .map(|n| check(n, Verdict::Skip, "not checked on this system"))
        .collect()
}

/// The checks of this PC, in the order they print: Linux's, then Windows'.
const HOST_CHECKS: [&str; 7] = [
    "isolated-cores",
    "governor",
    "c-states",
    "rt-throttling",
    "busy-processes",
    "power-plan",
    "timer-resolution",
];

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

pub fn run(args: &DoctorArgs, library: Option<&Path>) -> Result<(), Failure> {
    let mut checks = device_checks(args.device.as_deref(), library);
    checks.extend(host_checks());
    checks.push(jitter(args.seconds));
    checks.push(packet_layout());
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
