//! `watch`: the frames in each slot, decoded, refreshing in place.
//!
//! The watcher samples: it reads each slot's newest frame every millisecond and
//! feeds what it sees to the same health tracker the FMU uses. Its "missed"
//! count is frames published between two of its reads, which at microsecond
//! steps is nearly all of them: that is the watcher's sampling, not the link's
//! loss (the FMU reports the link's own in `link.lost`). Bad frames (complete but
//! corrupt: CRC, magic) and restarts are real findings.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::Args;
use rfm_core::frame::framed::Frame;
use rfm_core::frame::seed::FlightData;
use rfm_core::frame::{self, slot};
use rfm_core::health::{FrameId, Observation, PeerHealth};
use rfm_core::link::liveness::{Life, PeerWatch, Words, MIN_SILENCE};
use rfm_core::link::Sample;
use rfm_core::slot::{FramedReader, ReadError, SeedReader};
use serde_json::json;

use crate::failure::Failure;
use crate::numbers::parse_u64;
use crate::open::open;

pub const HELP: &str = "\
Columns: holder: the slot's holder by its heartbeat (live; silent N s: its beat has
not moved for that long, a dead or paused program; closed: it stopped cleanly;
none: no heartbeat, e.g. an article program); the writer's slot and session epoch
(low 32 bits), its step (packet id for seed), simulation time, attitude (rad), status byte, message; age: time since this
watcher last saw a new frame; rate: steps per second over the last interval;
missed: frames published between two of the watcher's reads (sampling, not loss);
bad: complete but corrupt frames (CRC, magic); restarts: epoch changes (seed: the
packet id going back).

Example: rfmctl watch shm:cockpit --slots 0,1
         rfmctl watch /dev/rfm2g0 --layout seed --slots 0 --once --json";

#[derive(Args, Debug)]
pub struct WatchArgs {
    pub device: String,
    /// Slots to show (the FMU's nodeSlot and peerSlot)
    #[arg(long, value_delimiter = ',', default_value = "0,1")]
    pub slots: Vec<u8>,
    /// framed (the FMU's default) or seed (the article's FlightData)
    #[arg(long, default_value = "framed", value_parser = ["framed", "seed"])]
    pub layout: String,
    /// The FMU's regionOffset: where slot 0 starts
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
}

fn parse_interval(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| (0.01..=3600.0).contains(s))
        .ok_or_else(|| format!("`{text}` is not a number of seconds from 0.01 to 3600"))
}

enum Reader {
    Framed(FramedReader),
    Seed(SeedReader),
}

#[derive(Clone, Copy)]
enum Latest {
    Framed(Frame),
    Seed(FlightData),
}

struct SlotView {
    slot: u8,
    /// The whole slot, for its liveness words.
    memory: rfm_core::Region,
    holder: PeerWatch,
    reader: Reader,
    health: PeerHealth,
    latest: Option<Latest>,
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
    fn step(&self) -> Option<u64> {
        self.latest.map(|l| match l {
            Latest::Framed(f) => f.step,
            Latest::Seed(p) => p.packet_id,
        })
    }

    /// The holder as the link would judge it: live while its beat moved within
    /// the shortest silence that ever counts as death.
    fn holder(&self, now: Instant) -> (&'static str, Option<f64>) {
        match self.holder.life() {
            Life::Absent => ("none", None),
            Life::Closed { .. } => ("closed", None),
            life => {
                let silent = life.silent_for(now);
                match life {
                    Life::Beating { .. } if silent < MIN_SILENCE => ("live", None),
                    _ => ("silent", Some(silent.as_secs_f64())),
                }
            }
        }
    }

    fn holder_text(&self, now: Instant) -> String {
        match self.holder(now) {
            ("silent", Some(s)) => format!("silent {s:.1}s"),
            (state, _) => state.to_owned(),
        }
    }

    fn poll(&mut self, now: Instant) {
        if let Ok(words) = Words::read(&self.memory) {
            self.holder.observe(words, now);
        }
        let read = match &self.reader {
            Reader::Framed(r) => r.read_latest().map(|f| {
                let id = FrameId {
                    epoch: Some(f.epoch),
                    step: f.step,
                    digest: Sample::from(&f).digest(),
                };
                (Latest::Framed(f), id)
            }),
            Reader::Seed(r) => r.read().map(|p| {
                let id = FrameId {
                    epoch: None,
                    step: p.packet_id,
                    digest: Sample::from(&p).digest(),
                };
                (Latest::Seed(p), id)
            }),
        };
        match read {
            Ok((latest, id)) => {
                self.problem = None;
                if matches!(
                    self.health.observe(id, now),
                    Observation::First | Observation::Fresh { .. } | Observation::Restarted { .. }
                ) {
                    self.latest = Some(latest);
                    self.seen_at = Some(now);
                    if self.mark.is_none() {
                        self.mark = Some((now, id.step));
                    }
                }
            }
            Err(e) => {
                if let ReadError::Unreadable { rejections, .. } = &e {
                    if rejections.saw_bad_frame() {
                        self.health.observe_bad();
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

    fn row(&self, now: Instant) -> String {
        let h = &self.health;
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
        match self.latest {
            None => format!(
                "{:>4} {holder:>12}  {}",
                self.slot,
                self.problem.as_deref().unwrap_or("nothing read yet")
            ),
            Some(Latest::Framed(f)) => format!(
                "{:>4} {holder:>12} {:>6} {:08x} {:>12} {:>11.3} {:>+8.4} {:>+8.4} {:>+8.4} {:>3} {:>8} {tail}  {}",
                self.slot,
                f.writer_slot,
                f.epoch as u32,
                f.step,
                f.sim_time,
                f.attitude[0],
                f.attitude[1],
                f.attitude[2],
                f.status,
                age,
                f.message.to_string_lossy()
            ),
            Some(Latest::Seed(p)) => format!(
                "{:>4} {holder:>12} {:>6} {:>8} {:>12} {:>11.3} {:>+8.4} {:>+8.4} {:>+8.4} {:>3} {:>8} {tail}  {}",
                self.slot,
                "-",
                "-",
                p.packet_id,
                p.timestamp,
                p.attitude[0],
                p.attitude[1],
                p.attitude[2],
                p.status,
                age,
                p.msg.to_string_lossy()
            ),
        }
    }

    fn json(&self, now: Instant) -> serde_json::Value {
        let h = &self.health;
        let (holder, silent_s) = self.holder(now);
        let mut v = json!({
            "slot": self.slot,
            "holder": {
                "state": holder,
                "owner": self.holder.life().owner(),
                "silent_s": silent_s,
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
        let frame = match self.latest {
            None => json!(null),
            Some(Latest::Framed(f)) => json!({
                "writer_slot": f.writer_slot,
                "epoch": f.epoch,
                "ack_epoch": f.ack_epoch,
                "step": f.step,
                "sim_time": f.sim_time,
                "attitude": f.attitude,
                "status": f.status,
                "message": f.message.to_string_lossy(),
                "lag": f.lag,
                "mode": format!("{:?}", f.mode).to_lowercase(),
            }),
            Some(Latest::Seed(p)) => json!({
                "packet_id": p.packet_id,
                "timestamp": p.timestamp,
                "attitude": p.attitude,
                "status": p.status,
                "message": p.msg.to_string_lossy(),
            }),
        };
        v["frame"] = frame;
        v
    }
}

const HEADER: &str = "slot       holder writer    epoch         step    sim time s     roll    pitch      yaw  st    age s    rate/s missed  bad restarts  message";

pub fn run(args: &WatchArgs, library: Option<&Path>) -> Result<(), Failure> {
    let device = open(&args.device, library)?;
    let highest = *args
        .slots
        .iter()
        .max()
        .ok_or_else(|| Failure::usage(anyhow!("--slots names no slot")))?;
    let region = device
        .map(args.region_offset, frame::region_len(highest))
        .map_err(|e| {
            Failure::device(anyhow!(
                "slots 0..={highest} at regionOffset {:#x} do not fit `{}`: {e}",
                args.region_offset,
                args.device
            ))
        })?;
    let mut views = Vec::new();
    for &s in &args.slots {
        let one = slot(&region, s).map_err(Failure::device)?;
        let reader = if args.layout == "seed" {
            Reader::Seed(SeedReader::new(one.clone()).map_err(Failure::device)?)
        } else {
            Reader::Framed(FramedReader::new(one.clone()).map_err(Failure::device)?)
        };
        let words = Words::read(&one).map_err(Failure::device)?;
        views.push(SlotView {
            slot: s,
            memory: one.clone(),
            holder: PeerWatch::new(words, Instant::now()),
            reader,
            health: PeerHealth::new(),
            latest: None,
            seen_at: None,
            problem: None,
            empty: false,
            mark: None,
            rate: None,
        });
    }
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
            for v in &views {
                text.push_str(&v.row(now));
                text.push('\n');
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
