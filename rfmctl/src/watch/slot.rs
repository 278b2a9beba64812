//! One slot as the watcher shows it: what its area is read as, its newest
//! frame decoded by name, its health and its holder, as a table row or JSON.

use std::time::Instant;

use rfm_core::health::PeerHealth;
use rfm_core::link::liveness::MIN_SILENCE;
use rfm_core::link::observer::Observer;
use rfm_core::link::ownership::block;
use rfm_core::link::ownership::{AreaWatch, Held, Holder, Verdict};
use rfm_core::link::stats::Stats;
use rfm_frames::fmi::Value;
use rfm_frames::frame::{self, seed::FlightData};
use rfm_frames::session::Token;
use rfm_frames::slot::ReadError;
use rfm_interface::Found;
use serde_json::json;

/// How often the watcher reads a node's statistics block (the node stores
/// it ten times a second).
const STATS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// What a slot's area is read as.
pub(super) enum Reader {
    /// A framed area, decoded by its descriptor.
    Framed(Box<Found>),
    /// The article's packet.
    Seed,
    /// Nothing describes this slot.
    Undescribed,
}

/// A frame as shown: its header's facts and its signals by name.
#[derive(Clone)]
pub(super) struct Shown {
    epoch: Option<u64>,
    /// The frame's index (framed) or packet id (seed).
    step: u64,
    sim_time: f64,
    signals: Vec<(String, Value, String)>,
    /// The writer's sync mode and lag, as its frame says (framed).
    mode: Option<(String, u8)>,
}

impl Shown {
    /// The step as the FMU's `<peer>.step` numbers it (framed: the frame's
    /// index - 1); a seed packet's id as it is.
    fn shown_step(&self) -> i64 {
        match self.epoch {
            Some(_) => rfm_frames::frame::framed::step_of(self.step),
            None => i64::try_from(self.step).unwrap_or(i64::MAX),
        }
    }
}

pub(super) struct SlotView {
    pub(super) slot: u8,
    node: String,
    /// The node's area as the link's peers observe one (none: undescribed).
    observer: Option<Observer>,
    /// The health of an area that has no observer: nothing seen.
    unobserved: PeerHealth,
    /// The area's holder, watched as every reader of the protocol does.
    holder: Option<(AreaWatch, Holder)>,
    /// The bridge that writes the holder here from another host (its id).
    remote: Option<u32>,
    pub(super) reader: Reader,
    pub(super) latest: Option<Shown>,
    seen_at: Option<Instant>,
    /// Why the last read gave no frame.
    pub(super) problem: Option<String>,
    /// Whether that was an empty slot (never written, or cleared), rather than
    /// an unreadable one.
    empty: bool,
    /// (when, step) at the start of the current rate interval.
    mark: Option<(Instant, u64)>,
    rate: Option<f64>,
    /// What the node published of its own timing (while the session shown
    /// holds the area), and when it was last read.
    stats: Option<Stats>,
    stats_read: Option<Instant>,
}

/// A frame of header `h` and `payload`, decoded as `reader` reads it.
fn shown(reader: &Reader, h: &frame::framed::Header, epoch: Option<u64>, payload: &[u8]) -> Shown {
    match reader {
        Reader::Framed(found) => Shown {
            epoch,
            step: h.step,
            sim_time: h.sim_time,
            signals: crate::decode::signals(&found.descriptor.signals, payload),
            mode: Some((h.mode.to_string(), h.lag)),
        },
        _ => seed_shown(&frame::seed::from_payload(payload, h.step, h.sim_time)),
    }
}

impl SlotView {
    pub(super) fn new(
        slot: u8,
        node: String,
        observer: Option<Observer>,
        reader: Reader,
    ) -> SlotView {
        let now = Instant::now();
        let holder = (observer.as_ref()).and_then(|o| AreaWatch::start(o.area(), now).ok());
        SlotView {
            slot,
            node,
            observer,
            unobserved: PeerHealth::new(),
            holder,
            remote: None,
            reader,
            latest: None,
            seen_at: None,
            problem: None,
            empty: false,
            mark: None,
            rate: None,
            stats: None,
            stats_read: None,
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

    /// The protocol's judgement of the area ([`Verdict`]): for
    /// the session whose descriptor is shown; an article program's packet
    /// has none, and its area is judged as it is.
    fn judged(&self) -> &'static str {
        self.verdict().map_or("undescribed", |v| v.text(None))
    }

    fn verdict(&self) -> Option<Verdict> {
        let holder = self.holder.as_ref()?.1;
        Some(match &self.reader {
            Reader::Framed(found) => Verdict::of(holder, found.descriptor.session),
            _ => Verdict::Its(holder),
        })
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

    pub(super) fn poll(&mut self, now: Instant) {
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
        // The liveness block is at the same place in both layouts.
        self.remote = block::remote_holder(observer.area()).ok().flatten();
        if self.stats_read.is_none_or(|t| now >= t + STATS_EVERY) {
            self.stats_read = Some(now);
            let its = matches!(self.verdict(), Some(Verdict::Its(_)));
            let area = self.observer.as_ref().map(Observer::area);
            self.stats = area
                .filter(|_| its)
                .and_then(|a| Stats::read(a).ok().flatten());
        }
        let Some(observer) = &mut self.observer else {
            return;
        };
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
                    self.latest = Some(shown(&self.reader, &h, epoch, observer.payload()));
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

    pub(super) fn measure_rate(&mut self, now: Instant) {
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
    pub(super) fn row(&self, now: Instant, width: Option<usize>) -> String {
        let h = self.health();
        let tail = format!(
            "{:>9} {:>6} {:>4} {:>8} {:>13} {:>13}",
            self.rate.map_or("-".into(), |r| format!("{r:.0}")),
            h.lost,
            h.bad_frames,
            h.restarts,
            crate::stats::cell(self.stats.as_ref(), |s| s.step),
            crate::stats::cell(self.stats.as_ref(), |s| s.wait),
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

    pub(super) fn json(&self, now: Instant) -> serde_json::Value {
        let h = self.health();
        let (holder, silent_s) = self.holder(now);
        let mut v = json!({
            "slot": self.slot,
            "node": self.node,
            "holder": {
                "state": holder,
                "owner": self.holder.as_ref().and_then(|(_, h)| h.owner()).map(Token::get),
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
            "period_s": match &self.reader {
                Reader::Framed(found) => found.descriptor.period.map(|p| p.seconds()),
                _ => None,
            },
            "stats": self.stats.as_ref().map(crate::stats::json),
        });
        v["frame"] = self.latest.as_ref().map_or(json!(null), frame_json);
        v
    }
}

/// A frame as the JSON shows it: its step, time, writer's mode and lag,
/// signals and their units.
fn frame_json(f: &Shown) -> serde_json::Value {
    let signals: serde_json::Map<String, serde_json::Value> = f
        .signals
        .iter()
        .map(|(name, value, _)| (name.clone(), json_value(value)))
        .collect();
    let units: serde_json::Map<String, serde_json::Value> = f
        .signals
        .iter()
        .filter(|(_, _, unit)| !unit.is_empty())
        .map(|(name, _, unit)| (name.clone(), json!(unit)))
        .collect();
    json!({
        "epoch": f.epoch,
        "step": f.shown_step(),
        "frame_index": f.epoch.map(|_| f.step),
        "sim_time": f.sim_time,
        "mode": f.mode.as_ref().map(|m| &m.0),
        "lag": f.mode.as_ref().map(|m| m.1),
        "signals": signals,
        "units": units,
    })
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
        mode: None,
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
