//! `watch`: every node's newest frame, decoded by name, refreshing in place.
//!
//! The watcher needs no interface file: each node describes itself in its own area
//! (see `rfm_interface::descriptor`), and the watcher finds those
//! descriptors in the memory and decodes each node's signals by them.
//!
//! The watcher looks every millisecond: it takes each node's frames that the
//! node's ring still holds since its last look, and feeds them to the same
//! health tracker the FMU uses. Its "missed" count is frames that left the
//! ring (16 frames by default) before it looked: none for a node at 500 Hz,
//! even one publishing in bursts, nearly all at microsecond steps. That is the
//! watcher's sampling, not the link's loss (the FMU reports the link's own in
//! `link.lost`). Bad frames (complete but corrupt: CRC, magic) and restarts
//! are real findings.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::Args;
use rfm_core::link::observer::{described, Observer};
use rfm_frames::frame::Layout;
use rfm_interface as interface;
use rfm_memory::{Device, Region};
use serde_json::json;

use crate::failure::Failure;
use crate::foreign::{self, Structs};

mod lab;
mod others;
mod slot;
mod wait;
use crate::numbers::parse_u64;
use crate::open::{coupling_memory, parse_wait};
pub(crate) use lab::Lab;
use others::Other;
use slot::{Reader, SlotView};

pub const HELP: &str = "\
Nodes are found by the descriptor each one writes into its own area: no interface
file is needed. Areas the memory describes that no row shows (another interface's,
or ones a later node wrote over) are listed below the table with the judgement
every reader of the ownership protocol makes (free; left over, closed; left over,
dead; held, watching; live; live, on another host). Columns: node and slot; holder: the area's holder by its heartbeat
(live; silent N s: its beat has not moved for that long, a dead program or one stopped whole (a debugger's breakpoint, SIGSTOP);
closed: it stopped cleanly; none: no heartbeat, e.g. an article program); the
writer's session epoch (low 32 bits), its step as the FMU's <node>.step output
numbers it (-1: its initial values; packet id for seed), simulation time; age: time since this watcher last saw a new frame; rate: steps per second
over the last interval; missed: frames the node's ring no longer held when the
watcher looked (it looks every millisecond: none at 500 Hz, most at microsecond
steps; the watcher's sampling, not the link's loss, which the FMU counts in
link.lost); bad: complete but corrupt frames (CRC, magic);
restarts: epoch changes (seed: the packet id going back); then the signals by name
(on a terminal, as many as its width holds: long values shortened, then left out and
counted, short ones such as Booleans last; piped, all; --json gives all).
--interface FILE adds the structs a lab's own programs write (the file's foreign
nodes, which write no descriptor), read by their handshakes as the FMU reads them:
whether their programs moved them since the watcher's first look, the reads' retries
and give-ups, and every field by name.

Example: rfmctl watch shm:cockpit
         rfmctl watch /dev/rfm2g0 --slots 0,1 --once --json
         rfmctl watch /dev/rfm2g0 --layout seed --slots 0 --once
         rfmctl watch shm:lab --interface lab.toml --once";

/// The terminal's width in columns where the table is shown on one (rows are
/// cut to it, long values first), `None` where it goes to a file or pipe
/// (rows whole).
fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ writes one winsize into the struct it is given,
        // which lives across the call.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: as above; stdout is a terminal (checked), and a failing
        // ioctl leaves the zeroed struct, handled below.
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
        if ok && size.ws_col > 0 {
            return Some(usize::from(size.ws_col));
        }
    }
    Some(
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(120),
    )
}

#[derive(Args, Debug, Clone)]
pub struct WatchArgs {
    pub device: String,
    /// Slots to show (default: every node found; for seed, 0 and 1)
    #[arg(long, value_delimiter = ',')]
    pub slots: Vec<u8>,
    /// framed (the FMU's default) or seed (the article's FlightData)
    #[arg(long, default_value = "framed", value_parser = ["framed", "seed"])]
    pub layout: String,
    /// The FMU's regionOffset: where the coupling's areas start
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    pub region_offset: u64,
    /// Seconds between refreshes, over which rates are measured
    #[arg(long, default_value = "0.5", value_parser = parse_interval)]
    pub interval: f64,
    /// Look for one interval, print once, exit (1 if a slot holds no valid frame)
    #[arg(long)]
    pub once: bool,
    /// Stop after this many refreshes (exit status as for --once)
    #[arg(long)]
    pub count: Option<u64>,
    /// One JSON object per refresh, one per line, instead of the table
    #[arg(long)]
    pub json: bool,
    /// Wait for the memory to be created and its nodes to run: those of
    /// --slots, else the --interface file's, else every node described, each
    /// described and beating (a node an earlier run left, closed or dead, is
    /// waited past): at most SECONDS, the flag alone until interrupted
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "inf",
          value_parser = parse_wait)]
    pub wait: Option<f64>,
    /// An interface file whose foreign nodes (the structs a lab's own
    /// programs write, which no descriptor names) are shown too, by field
    #[arg(long, value_name = "FILE")]
    pub interface: Option<PathBuf>,
}

fn parse_interval(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| (0.01..=3600.0).contains(s))
        .ok_or_else(|| format!("`{text}` is not a number of seconds from 0.01 to 3600"))
}

const HEADER: &str = "slot node               holder    epoch         step    sim time s    age s    rate/s missed  bad restarts step µs p50/p99 wait µs p50/p99  signals";

/// The views of `--layout seed`: the article's packet at each slot's area.
fn seed_views(region: &Region, slots: &[u8]) -> Result<Vec<SlotView>, Failure> {
    let slots = if slots.is_empty() { &[0, 1][..] } else { slots };
    slots
        .iter()
        .map(|&s| {
            let area =
                rfm_frames::area::window(region, &interface::attitude_area(s)).map_err(|e| {
                    Failure::device(anyhow!(
                        "slot {s} of the attitude layout does not fit the memory: {e}"
                    ))
                })?;
            let observer = Observer::new(area, &interface::attitude_area(s), Layout::Seed)
                .map_err(Failure::device)?;
            Ok(SlotView::new(
                s,
                format!("slot{s}"),
                Some(observer),
                Reader::Seed,
            ))
        })
        .collect()
}

/// The views of the framed layout: every node whose descriptor is in `region`
/// (of `slots`, if given); a slot holding two (a stale one left by an earlier
/// coupling) shows the one whose holder is live, else the last found.
fn framed_views(region: &Region, slots: &[u8], foreign: bool) -> Result<Vec<SlotView>, Failure> {
    let chosen = described(region, slots).map_err(Failure::device)?;
    let mut views = Vec::new();
    for f in chosen {
        let area = rfm_frames::area::window(region, &f.area).map_err(Failure::device)?;
        let observer = Observer::new(area, &f.area, Layout::Framed).map_err(Failure::device)?;
        views.push(SlotView::new(
            f.descriptor.slot,
            f.descriptor.node.clone(),
            Some(observer),
            Reader::Framed(Box::new(f)),
        ));
    }
    for &s in slots {
        if !views.iter().any(|v| v.slot == s) {
            views.push(SlotView::new(s, "?".into(), None, Reader::Undescribed));
        }
    }
    if views.is_empty() && !foreign {
        return Err(Failure::check_failed(anyhow!(
            "no node describes itself in this memory: is a simulator running on it, with the \
             same regionOffset? (the article's programs write no descriptor: use --layout seed)"
        ))
        .not_yet());
    }
    Ok(views)
}

/// The memory and the views of its nodes, once they are there: with
/// `--wait` (framed), every slot wanted ([`wanted`]) described and live.
fn views(
    args: &WatchArgs,
    library: Option<&Path>,
) -> Result<(Device, Region, Vec<SlotView>), Failure> {
    let (device, region) = coupling_memory(&args.device, library, args.region_offset)?;
    let views = if args.layout == "seed" {
        seed_views(&region, &args.slots)?
    } else {
        framed_views(&region, &args.slots, args.interface.is_some())?
    };
    let missing: Vec<String> = views
        .iter()
        .filter(|v| matches!(v.reader, Reader::Undescribed))
        .map(|v| v.slot.to_string())
        .collect();
    if args.wait.is_some() && !missing.is_empty() {
        return Err(Failure::check_failed(anyhow!(
            "no node describes slot {} in this memory yet",
            missing.join(", ")
        ))
        .not_yet());
    }
    if args.wait.is_some() && args.layout == "framed" {
        let why = wait::not_live(&region, &views, &wanted(args, &views)?);
        if !why.is_empty() {
            return Err(Failure::check_failed(anyhow!("{}", why.join("; "))).not_yet());
        }
    }
    Ok((device, region, views))
}

/// The slots `--wait` waits for: those of `--slots`; else the FMU nodes the
/// `--interface` file declares; else every node described.
fn wanted(args: &WatchArgs, views: &[SlotView]) -> Result<Vec<u8>, Failure> {
    Ok(match &args.interface {
        _ if !args.slots.is_empty() => args.slots.clone(),
        Some(file) => (foreign::load(file)?.nodes.iter())
            .map(|n| n.slot)
            .collect(),
        None => views.iter().map(|v| v.slot).collect(),
    })
}

impl WatchArgs {
    /// What `serve` watches: every node of `device`'s framed layout.
    pub(crate) fn for_serve(
        device: &str,
        region_offset: u64,
        wait: Option<f64>,
        interface: &Option<PathBuf>,
    ) -> WatchArgs {
        WatchArgs {
            device: device.to_owned(),
            slots: Vec::new(),
            layout: "framed".to_owned(),
            region_offset,
            interval: 0.1,
            once: false,
            count: None,
            json: true,
            wait,
            interface: interface.clone(),
        }
    }
}

pub fn run(args: &WatchArgs, library: Option<&Path>) -> Result<(), Failure> {
    let mut lab = Lab::open(args, library)?;
    let interval = Duration::from_secs_f64(args.interval);
    let refreshes = if args.once { Some(1) } else { args.count };
    let terminal = std::io::stdout().is_terminal() && !args.json;
    let mut stdout = std::io::stdout().lock();
    let mut done = 0u64;
    loop {
        lab.poll_for(interval);
        let shown = lab.shown(Instant::now());
        let out = match args.json {
            true => json_value(args, &shown).to_string() + "\n",
            false => as_table(args, &shown, terminal),
        };
        stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(|e| Failure::device(anyhow!("writing the view: {e}")))?;
        done += 1;
        if refreshes.is_some_and(|n| done >= n) {
            break;
        }
    }
    silent_slots(&lab.views, lab.ring)
}

/// A watch fails when a slot it was asked for showed no valid frame, saying
/// why for each and where the ring is open, while it is.
fn silent_slots(views: &[SlotView], ring: Option<String>) -> Result<(), Failure> {
    let silent: Vec<String> = views
        .iter()
        .filter(|v| v.latest.is_none())
        .map(|v| {
            format!(
                "slot {}: {}",
                v.slot,
                v.problem.as_deref().unwrap_or("nothing read")
            )
        })
        .collect();
    if silent.is_empty() {
        return Ok(());
    }
    let open = ring.map_or(String::new(), |state| format!("; {state}"));
    Err(Failure::check_failed(anyhow!(
        "no valid frame in {}{open}",
        silent.join("; ")
    )))
}

/// What one refresh shows.
#[derive(Clone, Copy)]
struct Shown<'a> {
    views: &'a [SlotView],
    others: &'a [Other],
    structs: Option<&'a Structs>,
    /// Where the card's ring is open and what to check, while it is.
    ring: Option<&'a str>,
    now: Instant,
}

/// One refresh as JSON: every slot, and the other areas described.
fn json_value(args: &WatchArgs, shown: &Shown) -> serde_json::Value {
    let Shown {
        views,
        others,
        structs,
        ring,
        now,
    } = *shown;
    json!({
        "ring_open": ring,
        "device": args.device,
        "layout": args.layout,
        "region_offset": args.region_offset,
        "slots": views.iter().map(|v| v.json(now)).collect::<Vec<_>>(),
        "others": others.iter().map(|o| json!({
            "node": o.found.descriptor.node,
            "slot": o.found.descriptor.slot,
            "interface": o.found.descriptor.interface,
            "start": o.found.area.offset,
            "end": o.found.area.end(),
            "judged": o.judged(),
        })).collect::<Vec<_>>(),
        "foreign": structs.map(|s| s.json(now)),
    })
}

/// One refresh as the table (on a terminal, in place and cut to its width),
/// then the other areas described.
fn as_table(args: &WatchArgs, shown: &Shown, terminal: bool) -> String {
    let Shown {
        views,
        others,
        structs,
        ring,
        now,
    } = *shown;
    let mut text = format!(
        "{}{} ({} layout, regionOffset {:#x}), every {} s\n{HEADER}\n",
        if terminal { "\x1b[H\x1b[2J" } else { "" },
        args.device,
        args.layout,
        args.region_offset,
        args.interval
    );
    if let Some(state) = ring {
        text.push_str(&format!(
            "{state}; the nodes it cuts off look silent from here though they may run\n"
        ));
    }
    let width = terminal_width();
    for v in views {
        text.push_str(&v.row(now, width));
        text.push('\n');
    }
    if !others.is_empty() {
        text.push_str("also described in this memory:\n");
        for o in others {
            text.push_str(&o.text());
            text.push('\n');
        }
    }
    if let Some(s) = structs {
        text.push_str(&s.table(now));
    }
    if !terminal {
        text.push('\n');
    }
    text
}
