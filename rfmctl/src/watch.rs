//! `watch`: every node's newest frame, decoded by name, refreshing in place.
//!
//! The watcher needs no interface file: each node describes itself in its own area
//! (see `rfm_core::interface::descriptor`), and the watcher finds those
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
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::Args;
use rfm_core::frame::{self, seed::FlightData};
use rfm_core::health::PeerHealth;
use rfm_core::interface::{self, Found, Value};
use rfm_core::link::liveness::{self, Words, MIN_SILENCE};
use rfm_core::link::observer::{described, Observer};
use rfm_core::link::ownership::{self, AreaWatch, Holder};
use rfm_core::link::Layout;
use rfm_core::slot::ReadError;
use rfm_core::{Device, Region};
use serde_json::json;

use crate::failure::Failure;
use crate::numbers::parse_u64;
use crate::open::{coupling_region, open, parse_wait, waiting};

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

Example: rfmctl watch shm:cockpit
         rfmctl watch /dev/rfm2g0 --slots 0,1 --once --json
         rfmctl watch /dev/rfm2g0 --layout seed --slots 0 --once";

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

#[derive(Args, Debug)]
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
    /// Wait for the memory to be created and its nodes (those of --slots) to
    /// describe themselves: at most SECONDS, the flag alone until interrupted
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "inf",
          value_parser = parse_wait)]
    pub wait: Option<f64>,
}

fn parse_interval(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| (0.01..=3600.0).contains(s))
        .ok_or_else(|| format!("`{text}` is not a number of seconds from 0.01 to 3600"))
}

/// What a slot's area is read as.
enum Reader {
    /// A framed area, decoded by its descriptor.
    Framed(Box<Found>),
    /// The article's packet.
    Seed,
    /// Nothing describes this slot.
    Undescribed,
}

/// A frame as shown: its header's facts and its signals by name.
#[derive(Clone)]
struct Shown {
    epoch: Option<u64>,
    /// The frame's index (framed) or packet id (seed).
    step: u64,
    sim_time: f64,
    signals: Vec<(String, Value, String)>,
}

impl Shown {
    /// The step as the FMU's `<peer>.step` numbers it (framed: the frame's
    /// index - 1); a seed packet's id as it is.
    fn shown_step(&self) -> i64 {
        match self.epoch {
            Some(_) => rfm_core::frame::framed::step_of(self.step),
            None => i64::try_from(self.step).unwrap_or(i64::MAX),
        }
    }
}

struct SlotView {
    slot: u8,
    node: String,
    /// The node's area as the link's peers observe one (none: undescribed).
    observer: Option<Observer>,
    /// The health of an area that has no observer: nothing seen.
    unobserved: PeerHealth,
    /// The area's holder, watched as every reader of the protocol does.
    holder: Option<(AreaWatch, Holder)>,
    /// Whether the descriptor shown is its holder's.
    holders: bool,
    /// The bridge that writes the holder here from another host (its id).
    remote: Option<u32>,
    reader: Reader,
    latest: Option<Shown>,
    seen_at: Option<Instant>,
    /// Why the last read gave no frame.
    problem: Option<String>,
    /// Whether that was an empty slot (never written, or cleared), rather than
    /// an unreadable one.
    empty: bool,
    /// (when, step) at the start of the current rate interval.
    mark: Option<(Instant, u64)>,
    rate: Option<f64>,
}

impl SlotView {
    fn new(slot: u8, node: String, observer: Option<Observer>, reader: Reader) -> SlotView {
        let now = Instant::now();
        let holder = observer.as_ref().and_then(|o| {
            let mut watch = AreaWatch::new(Words::read(o.area()).ok()?, now);
            let judged = watch.judge(o.area(), now).ok()?;
            Some((watch, judged))
        });
        SlotView {
            slot,
            node,
            observer,
            unobserved: PeerHealth::new(),
            holder,
            holders: true,
            remote: None,
            reader,
            latest: None,
            seen_at: None,
            problem: None,
            empty: false,
            mark: None,
            rate: None,
        }
    }

    fn step(&self) -> Option<u64> {
        self.latest.as_ref().map(|l| l.step)
    }

    /// The holder as the link would judge it: live while its beat moved within
    /// the shortest silence that ever counts as death.
    fn holder(&self, now: Instant) -> (&'static str, Option<f64>) {
        let Some((_, holder)) = &self.holder else {
            return ("none", None);
        };
        let silent = |t: Instant| now.saturating_duration_since(t);
        match *holder {
            Holder::Free => ("none", None),
            Holder::Closed { .. } => ("closed", None),
            Holder::Live { last, .. } if silent(last) < MIN_SILENCE => ("live", None),
            Holder::Live { last: t, .. } | Holder::Unproven { since: t, .. } => {
                ("silent", Some(silent(t).as_secs_f64()))
            }
            Holder::Dead { silent, .. } => ("silent", Some(silent.as_secs_f64())),
        }
    }

    /// The protocol's judgement of the area ([`ownership::verdict`]).
    fn judged(&self) -> &'static str {
        match &self.holder {
            Some((_, holder)) => ownership::verdict(holder, self.holders, None),
            None => "undescribed",
        }
    }

    /// The holder's state, and "remote" when a bridge writes it from another
    /// host (`rfm-bridge`).
    fn holder_text(&self, now: Instant) -> String {
        let state = match self.holder(now) {
            ("silent", Some(s)) => format!("silent {s:.1}s"),
            (state, _) => state.to_owned(),
        };
        match self.remote {
            Some(_) => format!("{state} remote"),
            None => state,
        }
    }

    fn health(&self) -> &PeerHealth {
        self.observer
            .as_ref()
            .map_or(&self.unobserved, Observer::health)
    }

    fn poll(&mut self, now: Instant) {
        let Some(observer) = &mut self.observer else {
            self.empty = true;
            self.problem = Some(format!(
                "no node describes slot {} in this memory (not started, or started \
                 without a descriptor)",
                self.slot
            ));
            return;
        };
        if let Some((watch, judged)) = &mut self.holder {
            if let Ok(holder) = watch.judge(observer.area(), now) {
                *judged = holder;
            }
        }
        self.holders = match &self.reader {
            Reader::Framed(found) => {
                Words::read(observer.area()).is_ok_and(|w| w.owner == found.descriptor.session)
            }
            _ => true,
        };
        // The liveness block is at the same place in both layouts.
        self.remote = liveness::remote_holder(observer.area()).ok().flatten();
        let read = if observer.is_seed() {
            observer.read_seed()
        } else {
            // What the ring still holds since the last look is seen, not missed.
            observer.take_held(now);
            observer.read_latest()
        };
        match read {
            Ok(h) => {
                self.problem = None;
                let epoch = (!observer.is_seed()).then_some(h.epoch);
                if observer.accept(h, epoch, now) {
                    let payload = observer.payload();
                    self.latest = Some(match &self.reader {
                        Reader::Framed(found) => Shown {
                            epoch,
                            step: h.step,
                            sim_time: h.sim_time,
                            signals: crate::decode::signals(&found.descriptor.signals, payload),
                        },
                        _ => seed_shown(&frame::seed::from_payload(payload, h.step, h.sim_time)),
                    });
                    self.seen_at = Some(now);
                    if self.mark.is_none() {
                        self.mark = Some((now, h.step));
                    }
                }
            }
            Err(e) => {
                if let ReadError::Unreadable { rejections, .. } = &e {
                    if rejections.saw_bad_frame() {
                        observer.observe_bad();
                    }
                }
                self.empty = matches!(e, ReadError::Empty);
                self.problem = Some(e.to_string());
            }
        }
    }

    fn measure_rate(&mut self, now: Instant) {
        if let Some(step) = self.step() {
            if let Some((then, from)) = self.mark {
                let dt = now.duration_since(then).as_secs_f64();
                if dt > 0.0 && step >= from {
                    self.rate = Some((step - from) as f64 / dt);
                }
            }
            self.mark = Some((now, step));
        }
    }

    /// The row of the table, cut to `width` columns (`None`: whole).
    fn row(&self, now: Instant, width: Option<usize>) -> String {
        let h = self.health();
        let tail = format!(
            "{:>9} {:>6} {:>4} {:>8}",
            self.rate.map_or("-".into(), |r| format!("{r:.0}")),
            h.lost,
            h.bad_frames,
            h.restarts
        );
        let age = self.seen_at.map_or("-".into(), |t| {
            format!("{:.3}", now.duration_since(t).as_secs_f64())
        });
        let holder = self.holder_text(now);
        let head = format!("{:>4} {:<12} {holder:>12}", self.slot, self.node);
        let Some(f) = &self.latest else {
            return format!(
                "{head}  {}",
                self.problem.as_deref().unwrap_or("nothing read yet")
            );
        };
        let facts = format!(
            "{head} {:>8} {:>12} {:>11.3} {:>8} {tail}  ",
            f.epoch.map_or("-".into(), |e| format!("{:08x}", e as u32)),
            f.shown_step(),
            f.sim_time,
            age,
        );
        // At least a Boolean's room, however narrow the terminal.
        let room = width.map(|w| w.saturating_sub(facts.chars().count()).max(16));
        facts + &crate::decode::signals_text(&f.signals, room)
    }

    fn json(&self, now: Instant) -> serde_json::Value {
        let h = self.health();
        let (holder, silent_s) = self.holder(now);
        let mut v = json!({
            "slot": self.slot,
            "node": self.node,
            "holder": {
                "state": holder,
                "owner": self.holder.as_ref().and_then(|(_, h)| match *h {
                    Holder::Free => None,
                    Holder::Closed { owner, .. }
                    | Holder::Dead { owner, .. }
                    | Holder::Unproven { owner, .. }
                    | Holder::Live { owner, .. } => Some(owner),
                }),
                "judged": self.judged(),
                "silent_s": silent_s,
                "remote": self.remote.is_some(),
                "bridge": self.remote.map(|b| format!("{b:08x}")),
            },
            "state": match (&self.latest, &self.problem) {
                (Some(_), _) => "ok",
                (None, Some(_)) if !self.empty => "unreadable",
                _ => "empty",
            },
            "age_s": self.seen_at.map(|t| now.duration_since(t).as_secs_f64()),
            "rate_hz": self.rate,
            "frames_seen": h.frames,
            "missed": h.lost,
            "bad_frames": h.bad_frames,
            "restarts": h.restarts,
            "problem": self.problem,
        });
        let frame = match &self.latest {
            None => json!(null),
            Some(f) => {
                let signals: serde_json::Map<String, serde_json::Value> = f
                    .signals
                    .iter()
                    .map(|(name, value, _)| (name.clone(), json_value(value)))
                    .collect();
                json!({
                    "epoch": f.epoch,
                    "step": f.shown_step(),
                    "frame_index": f.epoch.map(|_| f.step),
                    "sim_time": f.sim_time,
                    "signals": signals,
                })
            }
        };
        v["frame"] = frame;
        v
    }
}

fn json_value(v: &Value) -> serde_json::Value {
    match v {
        Value::Real(x) => json!(x),
        Value::Integer(i) => json!(i),
        Value::Boolean(b) => json!(b),
        Value::String(s) => json!(s),
    }
}

/// The article's packet shown as the attitude preset's signals.
fn seed_shown(p: &FlightData) -> Shown {
    let real = |x: f32| Value::Real(f64::from(x));
    let rad = || "rad".to_owned();
    Shown {
        epoch: None,
        step: p.packet_id,
        sim_time: p.timestamp,
        signals: vec![
            ("roll".into(), real(p.attitude[0]), rad()),
            ("pitch".into(), real(p.attitude[1]), rad()),
            ("yaw".into(), real(p.attitude[2]), rad()),
            (
                "status".into(),
                Value::Integer(i32::from(p.status)),
                String::new(),
            ),
            (
                "message".into(),
                Value::String(p.msg.to_string_lossy()),
                String::new(),
            ),
        ],
    }
}

const HEADER: &str = "slot node               holder    epoch         step    sim time s    age s    rate/s missed  bad restarts  signals";

/// The views of `--layout seed`: the article's packet at each slot's area.
fn seed_views(region: &Region, slots: &[u8]) -> Result<Vec<SlotView>, Failure> {
    let slots = if slots.is_empty() { &[0, 1][..] } else { slots };
    slots
        .iter()
        .map(|&s| {
            let area =
                rfm_core::area::window(region, &interface::attitude_area(s)).map_err(|e| {
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
fn framed_views(region: &Region, slots: &[u8]) -> Result<Vec<SlotView>, Failure> {
    let chosen = described(region, slots).map_err(Failure::device)?;
    let mut views = Vec::new();
    for f in chosen {
        let area = rfm_core::area::window(region, &f.area).map_err(Failure::device)?;
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
    if views.is_empty() {
        return Err(Failure::check_failed(anyhow!(
            "no node describes itself in this memory: is a simulator running on it, with the \
             same regionOffset? (the article's programs write no descriptor: use --layout seed)"
        ))
        .not_yet());
    }
    Ok(views)
}

/// An area the memory describes that no row shows (another interface's, or
/// one a later node wrote over), judged as every reader of the protocol does.
struct Other {
    found: Found,
    area: Region,
    watch: AreaWatch,
    holder: Holder,
}

impl Other {
    fn judged(&self) -> &'static str {
        let holders =
            Words::read(&self.area).is_ok_and(|w| w.owner == self.found.descriptor.session);
        ownership::verdict(&self.holder, holders, None)
    }

    fn text(&self) -> String {
        let d = &self.found.descriptor;
        format!(
            "  node `{}` (slot {}) of interface `{}`, bytes {}..{}: {}",
            d.node,
            d.slot,
            d.interface,
            self.found.area.offset,
            self.found.area.end(),
            self.judged()
        )
    }
}

/// The described areas of `region` that no view shows.
fn others(region: &Region, views: &[SlotView]) -> Result<Vec<Other>, Failure> {
    let shown: Vec<u64> = views
        .iter()
        .filter_map(|v| match &v.reader {
            Reader::Framed(f) => Some(f.area.offset),
            _ => None,
        })
        .collect();
    let now = Instant::now();
    let mut others = Vec::new();
    for found in interface::discover(region).map_err(Failure::device)? {
        if shown.contains(&found.area.offset) {
            continue;
        }
        let area = rfm_core::area::window(region, &found.area).map_err(Failure::device)?;
        let mut watch = AreaWatch::new(Words::read(&area).map_err(Failure::device)?, now);
        let holder = watch.judge(&area, now).map_err(Failure::device)?;
        others.push(Other {
            found,
            area,
            watch,
            holder,
        });
    }
    Ok(others)
}

/// The memory and the views of its nodes, once they are there: with
/// `--wait`, every slot of `--slots` described.
fn views(
    args: &WatchArgs,
    library: Option<&Path>,
) -> Result<(Device, Region, Vec<SlotView>), Failure> {
    let device = open(&args.device, library)?;
    let region = coupling_region(&device, &args.device, args.region_offset)?;
    let views = if args.layout == "seed" {
        seed_views(&region, &args.slots)?
    } else {
        framed_views(&region, &args.slots)?
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
    Ok((device, region, views))
}

pub fn run(args: &WatchArgs, library: Option<&Path>) -> Result<(), Failure> {
    let (_device, region, mut views) = waiting(args.wait, || views(args, library))?;
    let mut others = if args.layout == "seed" || !args.slots.is_empty() {
        Vec::new()
    } else {
        others(&region, &views)?
    };
    let interval = Duration::from_secs_f64(args.interval);
    let refreshes = if args.once { Some(1) } else { args.count };
    let terminal = std::io::stdout().is_terminal() && !args.json;
    let mut stdout = std::io::stdout().lock();
    let mut done = 0u64;
    loop {
        let start = Instant::now();
        while start.elapsed() < interval {
            let now = Instant::now();
            for v in &mut views {
                v.poll(now);
            }
            for o in &mut others {
                if let Ok(holder) = o.watch.judge(&o.area, now) {
                    o.holder = holder;
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let now = Instant::now();
        for v in &mut views {
            v.measure_rate(now);
        }
        let out = if args.json {
            json!({
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
            })
            .to_string()
                + "\n"
        } else {
            let mut text = format!(
                "{}{} ({} layout, regionOffset {:#x}), every {} s\n{HEADER}\n",
                if terminal { "\x1b[H\x1b[2J" } else { "" },
                args.device,
                args.layout,
                args.region_offset,
                args.interval
            );
            let width = terminal_width();
            for v in &views {
                text.push_str(&v.row(now, width));
                text.push('\n');
            }
            if !others.is_empty() {
                text.push_str("also described in this memory:\n");
                for o in &others {
                    text.push_str(&o.text());
                    text.push('\n');
                }
            }
            if !terminal {
                text.push('\n');
            }
            text
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
        Ok(())
    } else {
        Err(Failure::check_failed(anyhow!(
            "no valid frame in {}",
            silent.join("; ")
        )))
    }
}
