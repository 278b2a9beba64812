//! Waiting for exactly step k of a peer: the lockstep primitive.
//!
//! The strategies are the article's polling table: `Spin` (a core at 100 %, the
//! lowest latency: what flight simulators run), `Yield` (`Sleep(0)`: gives the
//! core away between polls), `Sleep` (low CPU, latency of the sleep granularity).
//! Each poll reads one word (the slot head) until the step is there, then the frame.

use std::time::{Duration, Instant};

use crate::frame::framed::{FrameBuf, Header};
use crate::slot::{FramedReader, ReadError, StepPoll};

/// How to spend the time between polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WaitStrategy {
    /// Busy-poll with a spin hint.
    #[default]
    Spin,
    /// `sched_yield` between polls.
    Yield,
    /// Sleep [`SLEEP_QUANTUM`] between polls.
    Sleep,
    /// RFM2g network interrupts: the writer signals every publish and the reader
    /// sleeps in `RFM2gWaitForEvent`. Needs a device, so only [`crate::link::Link`]
    /// waits this way; [`wait_step`], which has none, yields between polls instead.
    Event,
}

impl WaitStrategy {
    /// Spends the time between two polls. `Event` yields here: waiting on an
    /// interrupt needs the device, which only the link holds.
    pub fn pause(self) {
        match self {
            WaitStrategy::Spin => std::hint::spin_loop(),
            WaitStrategy::Yield | WaitStrategy::Event => std::thread::yield_now(),
            WaitStrategy::Sleep => std::thread::sleep(SLEEP_QUANTUM),
        }
    }
}

/// The sleep between polls of [`WaitStrategy::Sleep`].
pub const SLEEP_QUANTUM: Duration = Duration::from_micros(100);

impl std::str::FromStr for WaitStrategy {
    type Err = String;

    fn from_str(s: &str) -> Result<WaitStrategy, String> {
        match s {
            "spin" => Ok(WaitStrategy::Spin),
            "yield" => Ok(WaitStrategy::Yield),
            "sleep" => Ok(WaitStrategy::Sleep),
            "event" => Ok(WaitStrategy::Event),
            other => Err(format!(
                "unknown wait strategy `{other}`; expected spin, yield, sleep or event"
            )),
        }
    }
}

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
    const SPINS_PER_CLOCK: u32 = 64;
    let mut start: Option<Instant> = None;
    let mut spins = 0u32;
    loop {
        match reader.poll_step(step, buf) {
            Ok(StepPoll::Ready(header)) => return Ok(header),
            Ok(StepPoll::Overwritten { found }) => {
                return Err(WaitError::Overwritten { step, found })
            }
            Ok(StepPoll::NotYet) => {}
            // The writer was inside the frame on every attempt (it can be descheduled
            // mid-write): that is "not yet", not a fault.
            Err(ReadError::Unreadable { rejections, .. }) if !rejections.saw_bad_frame() => {}
            Err(err) => return Err(err.into()),
        }
        spins += 1;
        if strategy != WaitStrategy::Spin || spins % SPINS_PER_CLOCK == 1 {
            let now = Instant::now();
            let waited = now - *start.get_or_insert(now);
            if waited >= timeout {
                return Err(WaitError::Timeout { step, waited });
            }
        }
        strategy.pause();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot::{FramedWriter, Ring};
    use crate::{Device, OpenOptions};

    fn pair(name: &str) -> (FramedWriter, FramedReader) {
        let d = Device::open(&format!("loopback:wait-{name}"), &OpenOptions::default()).unwrap();
        let map = crate::interface::attitude(0, 0).map().unwrap();
        let region = d.map(0, map.len() as usize).unwrap();
        let area = crate::area::window(&region, map.area(0)).unwrap();
        let ring = Ring::of(map.area(0));
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

    #[test]
    fn parses_the_strategy_names() {
        assert_eq!("spin".parse(), Ok(WaitStrategy::Spin));
        assert_eq!("sleep".parse(), Ok(WaitStrategy::Sleep));
        assert_eq!("event".parse(), Ok(WaitStrategy::Event));
        let err = "poll".parse::<WaitStrategy>().unwrap_err();
        assert!(
            err.contains("expected spin, yield, sleep or event"),
            "{err}"
        );
    }
}
