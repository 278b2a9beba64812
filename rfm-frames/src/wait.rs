//! Waiting for exactly step k of a peer: the lockstep primitive.
//!
//! The strategies are the article's polling table, and one that combines them:
//! `Adaptive` (the default: spins briefly, then yields, then sleeps, so that it
//! is as fast as `Spin` when the peer answers within microseconds and gives the
//! core away when more nodes than cores take turns or a peer is paused), `Spin`
//! (a core at 100 %, the lowest latency, for pinned dedicated cores), `Yield`
//! (`Sleep(0)`: gives the core away between polls), `Sleep` (low CPU, latency of
//! the sleep granularity). Each poll reads one word (the slot head) until the
//! step is there, then the frame.

use std::time::{Duration, Instant};

use crate::frame::framed::{FrameBuf, Header};
use crate::slot::{FramedReader, ReadError, StepPoll};

/// How to spend the time between polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WaitStrategy {
    /// Spinning as long as spinning has paid in this node's recent waits (at
    /// most [`ADAPTIVE_SPINS`] polls), then yielding for [`ADAPTIVE_YIELDS`]
    /// polls, then sleeping [`SLEEP_QUANTUM`] between polls ([`Waiter`]).
    #[default]
    Adaptive,
    /// Busy-poll with a spin hint.
    Spin,
    /// `sched_yield` between polls.
    Yield,
    /// Sleep [`SLEEP_QUANTUM`] between polls.
    Sleep,
    /// RFM2g network interrupts: the writer signals every publish and the reader
    /// sleeps in `RFM2gWaitForEvent`. Needs a device, so only `rfm_core::link::Link`
    /// waits this way; [`wait_step`], which has none, yields between polls instead.
    Event,
}

/// Most polls an adaptive wait spins for: a few microseconds, longer than a
/// peer on another core takes to publish (a step's exchange is well under one),
/// far shorter than the time slice a descheduled peer needs to run.
pub const ADAPTIVE_SPINS: u64 = 256;

/// At no spin budget, one wait in this many spins [`ADAPTIVE_PROBE_SPINS`]
/// polls: the probe that finds out when spinning pays again (a peer back on a
/// core of its own).
pub const ADAPTIVE_PROBE: u32 = 64;

/// The polls a probe spins: enough for a peer running on another core, which
/// answers within a few hundred nanoseconds; a probe that pays doubles from
/// here.
pub const ADAPTIVE_PROBE_SPINS: u64 = 16;

/// Polls an adaptive wait yields for after its spins, before it sleeps: a few
/// milliseconds when nothing else wants the core, so that a paused or much
/// slower peer costs this node almost no CPU.
pub const ADAPTIVE_YIELDS: u64 = 4096;

/// How a node spends the time between polls, with what its adaptive waits
/// learned: how long spinning pays.
///
/// Spinning pays only while the peer runs on another core; with more nodes
/// than cores the peer a node waits for is often descheduled, and every spin
/// holds the core it needs. So the spin budget follows what the spins did: a
/// wait that ended while spinning doubles it (up to [`ADAPTIVE_SPINS`]), one
/// that outlasted its spins halves it, down to none: the wait then yields at
/// once, as `yield` does, and one wait in [`ADAPTIVE_PROBE`] spins a little to
/// find out whether spinning pays again. Two nodes with cores to
/// spare keep the whole budget; three on two cores soon spin hardly at all.
#[derive(Debug, Clone, Copy)]
pub struct Waiter {
    strategy: WaitStrategy,
    /// Adaptive: the polls a wait spins for, learned.
    budget: u64,
    /// The polls this wait spins for: the budget, or a probe's.
    current: u64,
    /// Waits since the last probe, at no budget.
    since_probe: u32,
}

impl Waiter {
    pub fn new(strategy: WaitStrategy) -> Waiter {
        Waiter {
            strategy,
            budget: ADAPTIVE_SPINS,
            current: ADAPTIVE_SPINS,
            since_probe: 0,
        }
    }

    pub fn strategy(&self) -> WaitStrategy {
        self.strategy
    }

    /// A wait begins (its first poll found nothing): how long it spins.
    #[inline]
    pub fn begin(&mut self) {
        self.current = self.budget;
        if self.budget == 0 {
            self.since_probe += 1;
            if self.since_probe >= ADAPTIVE_PROBE {
                self.since_probe = 0;
                self.current = ADAPTIVE_PROBE_SPINS;
            }
        }
    }

    /// Spends the time after poll `polls` (counted from 0 in this wait) until
    /// the next. `Event` yields here: waiting on an interrupt needs the device,
    /// which only the link holds.
    #[inline]
    pub fn pause(&self, polls: u64) {
        match self.strategy {
            WaitStrategy::Spin => std::hint::spin_loop(),
            WaitStrategy::Adaptive if polls < self.current => std::hint::spin_loop(),
            WaitStrategy::Adaptive if polls < self.current + ADAPTIVE_YIELDS => {
                std::thread::yield_now()
            }
            WaitStrategy::Yield | WaitStrategy::Event => std::thread::yield_now(),
            WaitStrategy::Sleep | WaitStrategy::Adaptive => std::thread::sleep(SLEEP_QUANTUM),
        }
    }

    /// Whether the pause after poll `polls` is a spin, short enough that the
    /// clock need not be read after it (it costs more than a poll).
    #[inline]
    pub fn spins(&self, polls: u64) -> bool {
        match self.strategy {
            WaitStrategy::Spin => true,
            WaitStrategy::Adaptive => polls < self.current,
            _ => false,
        }
    }

    /// The wait begun last ended after `polls` unsuccessful polls: adapts the
    /// spin budget to whether its spins served it.
    #[inline]
    pub fn waited(&mut self, polls: u64) {
        if self.strategy != WaitStrategy::Adaptive || polls == 0 {
            return;
        }
        if polls <= self.current {
            self.budget = (self.current * 2).clamp(1, ADAPTIVE_SPINS);
        } else if self.current > 0 {
            self.budget /= 2;
        }
    }
}

/// The sleep between polls of [`WaitStrategy::Sleep`].
pub const SLEEP_QUANTUM: Duration = Duration::from_micros(100);

/// Each strategy by the word the FMU's `waitStrategy` parameter gives it.
impl crate::names::Named for WaitStrategy {
    const KIND: &'static str = "wait strategy";
    const NAMES: &'static [(&'static str, WaitStrategy)] = &[
        ("adaptive", WaitStrategy::Adaptive),
        ("spin", WaitStrategy::Spin),
        ("yield", WaitStrategy::Yield),
        ("sleep", WaitStrategy::Sleep),
        ("event", WaitStrategy::Event),
    ];
}

crate::named_words!(WaitStrategy);

/// Why no frame came.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WaitError {
    #[error("no frame for step {step} after {waited:?}")]
    Timeout { step: u64, waited: Duration },
    #[error("the frame of step {step} was already overwritten by step {found}: the peer ran more than the ring's depth ahead")]
    Overwritten { step: u64, found: u64 },
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Polls `reader` until it holds step `step` (copied into `buf`) or `timeout` has passed.
///
/// Reads that only raced the writer are retried until the timeout; a complete but
/// invalid frame (magic, version, CRC) is returned at once as [`WaitError::Read`],
/// for the caller to count and decide on.
pub fn wait_step(
    reader: &FramedReader,
    buf: &mut FrameBuf,
    step: u64,
    timeout: Duration,
    strategy: WaitStrategy,
) -> Result<Header, WaitError> {
    // The clock is read only every few spins: it costs more than a poll of local memory.
    const SPINS_PER_CLOCK: u64 = 64;
    let mut start: Option<Instant> = None;
    let mut waiter = Waiter::new(strategy);
    waiter.begin();
    let mut polls = 0u64;
    loop {
        match reader.poll_step(step, buf) {
            Ok(StepPoll::Ready(header)) => return Ok(header),
            Ok(StepPoll::Overwritten { found, .. }) => {
                return Err(WaitError::Overwritten { step, found })
            }
            Ok(StepPoll::NotYet) => {}
            // The writer was inside the frame on every attempt (it can be descheduled
            // mid-write): that is "not yet", not a fault.
            Err(ReadError::Unreadable { rejections, .. }) if !rejections.saw_bad_frame() => {}
            Err(err) => return Err(err.into()),
        }
        if !waiter.spins(polls) || polls.is_multiple_of(SPINS_PER_CLOCK) {
            let now = Instant::now();
            let waited = now - *start.get_or_insert(now);
            if waited >= timeout {
                return Err(WaitError::Timeout { step, waited });
            }
        }
        waiter.pause(polls);
        polls += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::area::{Area, RING_DEPTH};
    use crate::payload::{Payload, SignalType::*};
    use crate::slot::{FramedWriter, Ring};
    use rfm_memory::{Device, OpenOptions};

    fn pair(name: &str) -> (FramedWriter, FramedReader) {
        let d = Device::open(&format!("loopback:wait-{name}"), &OpenOptions::default()).unwrap();
        // An area of the attitude's payload (the seed packet's signals).
        let kinds = [Real, Real, Real, Integer, String { size: 31 }];
        let geometry = Area::new(0, 0, Payload::of(kinds), 0, 0, RING_DEPTH);
        let region = d.map(0, geometry.len).unwrap();
        let area = crate::area::window(&region, &geometry).unwrap();
        let ring = Ring::of(&geometry);
        (
            FramedWriter::new(area.clone(), ring).unwrap(),
            FramedReader::new(area, ring).unwrap(),
        )
    }

    fn publish(w: &mut FramedWriter, step: u64) {
        let mut f = FrameBuf::new(crate::frame::seed::payload::LEN);
        w.publish(
            &mut f,
            &Header {
                step,
                ..Header::default()
            },
        )
        .unwrap();
    }

    #[test]
    fn returns_the_step_asked_for_or_says_why_not() {
        let (mut w, r) = pair("basic");
        for strategy in [WaitStrategy::Spin, WaitStrategy::Yield, WaitStrategy::Sleep] {
            let err = wait_step(&r, &mut r.buffer(), 0, Duration::ZERO, strategy).unwrap_err();
            assert!(matches!(err, WaitError::Timeout { step: 0, .. }), "{err:?}");
        }
        for step in 0..20 {
            publish(&mut w, step);
        }
        assert_eq!(
            wait_step(&r, &mut r.buffer(), 19, Duration::ZERO, WaitStrategy::Spin)
                .unwrap()
                .step,
            19
        );
        let err =
            wait_step(&r, &mut r.buffer(), 2, Duration::ZERO, WaitStrategy::Spin).unwrap_err();
        assert_eq!(err, WaitError::Overwritten { step: 2, found: 18 });
        assert!(err.to_string().contains("overwritten by step 18"), "{err}");
    }

    #[test]
    fn a_writer_stuck_mid_frame_is_waited_for_and_corruption_is_reported() {
        let (mut w, r) = pair("stuck");
        publish(&mut w, 1);
        // Sequence word left odd, as by a writer descheduled inside the frame.
        let entry = r.ring().entry_offset(1);
        let region = r.region();
        region
            .store_u32(entry, 5, std::sync::atomic::Ordering::Relaxed)
            .unwrap();
        let err = wait_step(
            &r,
            &mut r.buffer(),
            1,
            Duration::from_millis(5),
            WaitStrategy::Yield,
        )
        .unwrap_err();
        assert!(matches!(err, WaitError::Timeout { step: 1, .. }), "{err:?}");
        // A flipped bit in a complete frame is reported at once, not waited out.
        publish(&mut w, 1);
        let word = region
            .load_u32(entry + 48, std::sync::atomic::Ordering::Relaxed)
            .unwrap();
        region
            .store_u32(entry + 48, word ^ 1, std::sync::atomic::Ordering::Relaxed)
            .unwrap();
        let err = wait_step(
            &r,
            &mut r.buffer(),
            1,
            Duration::from_secs(60),
            WaitStrategy::Spin,
        )
        .unwrap_err();
        assert!(err.to_string().contains("bad CRC"), "{err}");
    }

    #[test]
    #[cfg_attr(miri, ignore = "real-time wait")]
    fn waits_for_a_frame_published_later() {
        let (mut w, r) = pair("later");
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            let mut f = FrameBuf::new(crate::frame::seed::payload::LEN);
            f.payload_mut()[0] = 9;
            let h = Header {
                sim_time: 2.5,
                ..Header::default()
            };
            w.publish(&mut f, &h).unwrap();
        });
        let mut buf = r.buffer();
        let h = wait_step(
            &r,
            &mut buf,
            0,
            Duration::from_secs(10),
            WaitStrategy::Yield,
        )
        .unwrap();
        assert_eq!((h.sim_time, buf.payload()[0]), (2.5, 9));
        t.join().unwrap();
    }

    /// More nodes than cores: waits that outlast the spins halve them until an
    /// adaptive wait yields at once; waits that end while spinning win them back.
    #[test]
    fn an_adaptive_wait_spins_only_while_spinning_pays() {
        let mut w = Waiter::new(WaitStrategy::Adaptive);
        assert!(w.spins(ADAPTIVE_SPINS - 1) && !w.spins(ADAPTIVE_SPINS));
        // Waits that outlast their spins halve them, to none.
        for _ in 0..9 {
            w.begin();
            w.waited(ADAPTIVE_SPINS + 10);
        }
        w.begin();
        assert!(!w.spins(0), "{w:?}");
        // A wait that found its frame at once says nothing about spinning.
        w.waited(0);
        // Yielding waits do not change it; one wait in ADAPTIVE_PROBE probes,
        // and when the probe pays, the budget grows back.
        let mut waits = 0;
        loop {
            w.begin();
            waits += 1;
            if w.spins(0) {
                assert!(!w.spins(ADAPTIVE_PROBE_SPINS), "{w:?}");
                w.waited(3);
                break;
            }
            w.waited(3);
        }
        // (The wait begun above, at no budget, was the first of them.)
        assert_eq!(waits + 1, ADAPTIVE_PROBE);
        for _ in 0..5 {
            w.begin();
            w.waited(3);
        }
        w.begin();
        assert!(
            w.spins(ADAPTIVE_SPINS - 1) && !w.spins(ADAPTIVE_SPINS),
            "{w:?}"
        );
        let mut spin = Waiter::new(WaitStrategy::Spin);
        spin.waited(1 << 20);
        assert!(spin.spins(1 << 40));
        assert!(!Waiter::new(WaitStrategy::Yield).spins(0));
    }

    #[test]
    fn parses_the_strategy_names() {
        assert_eq!("spin".parse(), Ok(WaitStrategy::Spin));
        assert_eq!("adaptive".parse(), Ok(WaitStrategy::Adaptive));
        assert_eq!("sleep".parse(), Ok(WaitStrategy::Sleep));
        assert_eq!("event".parse(), Ok(WaitStrategy::Event));
        let err = "poll".parse::<WaitStrategy>().unwrap_err();
        assert_eq!(err.words, ["adaptive", "spin", "yield", "sleep", "event"]);
        assert_eq!(
            err.to_string(),
            "unknown wait strategy `poll`; expected adaptive, spin, yield, sleep or event"
        );
    }
}
