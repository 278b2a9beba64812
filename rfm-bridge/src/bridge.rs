//! One bridge's main loop: the [`Watcher`] of this host's nodes, the
//! [`Outbox`] its messages leave by, and the timers of what it does now and
//! then (liveness words, the memory scan, hellos, pings, reports). Zenoh's
//! receiving thread runs the other side ([`crate::inbox::Inbox`]); the two
//! meet in [`Shared`].

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rfm_memory::{Region, RegionError};
use zenoh::Session;

use crate::inbox::Outbox;
use crate::local::{Event, Sink, Watcher};
use crate::remote::Writer;
use crate::report::{self, Report};
use crate::shared::Shared;
use crate::wire::{Message, Stamp};

/// How often liveness words are read (the heartbeat moves every 10 ms).
const WORDS_EVERY: Duration = Duration::from_millis(1);
/// How often, and how far, memory is scanned for new nodes (a load per area
/// boundary, every 64 bytes): host memory whole every 10 ms, so that a claim
/// is acknowledged well within the claimant's settle (`CLAIM_SETTLE`, 40 ms)
/// and two hosts' claims are decided at the claim; a card's loads cross PCIe
/// (1-3 µs each), so 64 boundaries a millisecond, at most 0.2 ms of loads, a
/// 1 MiB board in 0.26 s (a claim there may be acknowledged after its settle:
/// two hosts' simultaneous claims are then decided at the loser's first beat).
const SCAN_EVERY: Duration = Duration::from_millis(10);
const SCAN_EVERY_CARD: Duration = Duration::from_millis(1);
const SCAN_PLACES_CARD: usize = 64;
const HELLO_EVERY: Duration = Duration::from_millis(250);
/// A bridge not heard from for this long is forgotten (its return is a new
/// bridge: every session is announced to it again).
const PEER_GONE: Duration = Duration::from_secs(2);
const PING_EVERY: Duration = Duration::from_millis(500);
/// A ping not answered within this is forgotten.
const PING_FORGOTTEN: Duration = Duration::from_secs(5);

/// Something done every `every`, first at once.
#[derive(Debug, Clone, Copy)]
struct Timer {
    every: Duration,
    next: Instant,
}

impl Timer {
    fn new(every: Duration, start: Instant) -> Timer {
        Timer { every, next: start }
    }

    /// Whether it is due at `now`; if so, the next time is set from `now`.
    fn due(&mut self, now: Instant) -> bool {
        if now < self.next {
            return false;
        }
        self.next = now + self.every;
        true
    }
}

/// The bridge's timers, one per thing it does now and then.
#[derive(Debug)]
struct Timers {
    words: Timer,
    scan: Timer,
    hello: Timer,
    ping: Timer,
    /// `None`: reports only of changes.
    report: Option<Timer>,
}

/// What this host's memory is and how the bridge tells others of it.
#[derive(Debug, Clone)]
pub struct Config {
    /// The device as the user named it.
    pub device: String,
    pub memory_size: u64,
    /// An RFM2g board: its memory is scanned a little at a time.
    pub card: bool,
    /// Seconds between reports (`None`: only changes).
    pub report: Option<Duration>,
}

/// The watcher's output on the network: messages into the outbox, stamps
/// from the session's clock, events printed.
struct Net<'a> {
    outbox: &'a Outbox,
    session: &'a Session,
}

impl Sink for Net<'_> {
    fn send(&mut self, m: &Message) {
        self.outbox.send(m);
    }

    fn stamp(&mut self) -> Stamp {
        let ts = self.session.new_timestamp();
        Stamp {
            time: ts.get_time().as_u64(),
            id: ts.get_id().to_le_bytes(),
        }
    }

    fn event(&mut self, e: Event) {
        println!("rfm-bridge: {}", report::event(&e));
    }
}

/// One bridge: what it watches, sends and tells, turn by turn.
#[derive(Debug)]
pub struct Bridge {
    config: Config,
    session: Session,
    outbox: Arc<Outbox>,
    shared: Arc<Shared>,
    writer: Arc<Mutex<Writer>>,
    watcher: Watcher,
    timers: Timers,
    report: Report,
    ping_id: u64,
    /// The overruns already warned of.
    overrun_told: u64,
}

impl Bridge {
    /// The bridge of `memory` (mapped whole), sending by `outbox` on `session`.
    pub fn new(
        config: Config,
        session: Session,
        memory: Region,
        (outbox, shared, writer): (Arc<Outbox>, Arc<Shared>, Arc<Mutex<Writer>>),
    ) -> Bridge {
        let start = Instant::now();
        let scan = if config.card {
            SCAN_EVERY_CARD
        } else {
            SCAN_EVERY
        };
        let timers = Timers {
            words: Timer::new(WORDS_EVERY, start),
            scan: Timer::new(scan, start),
            hello: Timer::new(HELLO_EVERY, start),
            ping: Timer::new(PING_EVERY, start),
            report: config.report.map(|every| Timer::new(every, start + every)),
        };
        Bridge {
            report: Report::new(&shared.traffic, start),
            config,
            session,
            outbox,
            shared,
            writer,
            watcher: Watcher::new(memory),
            timers,
            ping_id: 0,
            overrun_told: 0,
        }
    }

    /// Why the bridge must stop, if the other side found a reason.
    pub fn fatal(&self) -> Option<String> {
        self.shared.fatal()
    }

    /// Closes the session once Zenoh has sent what it queued (the hello that
    /// tells a peer why this bridge stops among it).
    pub fn close(self) {
        // Closing drains the transmission pipeline onto the links; a failure
        // is the session already gone.
        let _ = zenoh::Wait::wait(self.session.close());
    }

    /// Tells every bridge this one is there, and of which memory.
    pub fn hello(&self) {
        self.outbox.send(&Message::Hello {
            memory_size: self.config.memory_size,
            device: &self.config.device,
        });
    }

    /// One turn at `now`: the frames local writers stored since the last
    /// turn, and whatever of the rest is due. Whether frames moved.
    pub fn turn(&mut self, now: Instant) -> Result<bool, RegionError> {
        let mut net = Net {
            outbox: &self.outbox,
            session: &self.session,
        };
        let moved = self.watcher.poll_frames(&self.shared.traffic, &mut net)?;
        if self.timers.words.due(now) {
            (self.watcher).poll_words(now, &self.shared, &mut net)?;
        }
        if self.timers.scan.due(now) {
            let places = if self.config.card {
                SCAN_PLACES_CARD
            } else {
                usize::MAX
            };
            self.watcher.scan(now, places)?;
        }
        if self.shared.resend.swap(false, Ordering::AcqRel) {
            self.watcher.announce_all(&self.shared, &mut net)?;
        }
        self.warn_overrun();
        if self.timers.hello.due(now) {
            self.hello();
            self.forget_silent(now);
        }
        if self.timers.ping.due(now) {
            self.ping(now);
        }
        if self.timers.report.as_mut().is_some_and(|t| t.due(now)) {
            let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            let line = self.report.line(now, &self.watcher, &w, &self.shared);
            println!("rfm-bridge: {line}");
        }
        Ok(moved)
    }

    /// Warns of frames overwritten in their rings before the bridge read them.
    fn warn_overrun(&mut self) {
        let overrun = self.shared.traffic.overrun.load(Ordering::Relaxed);
        if overrun > self.overrun_told {
            eprintln!(
                "rfm-bridge: warning: {} frame(s) of this host's nodes were overwritten in their \
                 rings before this bridge read them ({overrun} in all): the other hosts miss \
                 them (a lockstep coupling never laps its ring; is this host's CPU overloaded?)",
                overrun - self.overrun_told
            );
            self.overrun_told = overrun;
        }
    }

    /// Forgets the bridges silent for [`PEER_GONE`].
    fn forget_silent(&self, now: Instant) {
        self.shared.peers().retain(|id, p| {
            let gone = now.duration_since(p.last_hello) > PEER_GONE;
            if gone {
                println!("rfm-bridge: bridge {id} silent for {PEER_GONE:?}: forgotten");
            }
            !gone
        });
    }

    /// Pings the other bridges (their pongs give the round trip).
    fn ping(&mut self, now: Instant) {
        self.ping_id += 1;
        {
            let mut pings = self.shared.pings();
            pings.retain(|_, at| now.duration_since(*at) < PING_FORGOTTEN);
            pings.insert(self.ping_id, now);
        }
        self.outbox.send(&Message::Ping { id: self.ping_id });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_is_due_at_once_then_every_period_from_when_it_was_seen_due() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut t = Timer::new(ms(10), t0);
        assert!(t.due(t0));
        assert!(!t.due(t0 + ms(9)));
        // Seen late: the next is a period after it was seen.
        assert!(t.due(t0 + ms(25)));
        assert!(!t.due(t0 + ms(34)));
        assert!(t.due(t0 + ms(35)));
    }
}
