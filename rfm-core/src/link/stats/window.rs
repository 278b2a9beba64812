//! The figures a node measures of its own steps, kept for the last second:
//! the step thread adds a sample at most once a millisecond (a comparison of
//! the time it read anyway on every other step), and the heartbeat thread
//! sums them up into the statistics block ten times a second, so that no
//! sort and no store of the block ever runs on the step's path.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::block::{bucket, Card, PeerLatency, Stats, Summary, BUCKETS};
use rfm_memory::{Region, RegionError};

/// How often the step thread takes a sample.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(1);
/// How long a sample counts.
pub const WINDOW: Duration = Duration::from_secs(1);
/// Samples kept per figure at most (a second of one a millisecond).
const KEPT: usize = 1024;
/// How many heartbeats apart the block is stored (10 ms each: ten times a
/// second).
pub const STORE_EVERY_BEATS: u32 = 10;

/// One figure's samples: (when, ns), in room made once (a step allocates
/// nothing).
#[derive(Debug)]
struct Series(VecDeque<(Instant, i64)>);

impl Default for Series {
    fn default() -> Series {
        Series(VecDeque::with_capacity(KEPT))
    }
}

impl Series {
    fn push(&mut self, at: Instant, ns: i64) {
        if self.0.len() == KEPT {
            self.0.pop_front();
        }
        self.0.push_back((at, ns));
    }

    fn forget_before(&mut self, t: Instant) {
        while self.0.front().is_some_and(|&(at, _)| at < t) {
            self.0.pop_front();
        }
    }

    fn values(&self) -> Vec<i64> {
        self.0.iter().map(|&(_, v)| v).collect()
    }
}

/// The median, 99th percentile and largest of `values`, sorted in place.
fn summary(values: &mut [i64]) -> Summary {
    if values.is_empty() {
        return Summary::default();
    }
    values.sort_unstable();
    let at = |q: f64| {
        let i = ((values.len() - 1) as f64 * q).round() as usize;
        values[i].clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
    };
    Summary {
        median: at(0.5),
        p99: at(0.99),
        max: at(1.0),
    }
}

fn histogram(values: &[i64]) -> [u16; BUCKETS] {
    let mut counts = [0u16; BUCKETS];
    for &v in values {
        counts[bucket(v)] = counts[bucket(v)].saturating_add(1);
    }
    counts
}

/// What both threads share.
#[derive(Debug, Default)]
struct Window {
    step: Series,
    wait: Series,
    /// Per peer slot, its frames' latencies.
    peers: Vec<(u8, Series)>,
    counts: Counts,
}

/// What the node counts besides its times, as of its last sampled step.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counts {
    pub steps: u64,
    pub late: u32,
    pub failovers: u64,
    pub cards: [Card; 2],
    pub boards: [Option<u8>; 2],
}

impl Window {
    fn summed(&mut self, now: Instant) -> Stats {
        let since = now.checked_sub(WINDOW).unwrap_or(now);
        self.step.forget_before(since);
        self.wait.forget_before(since);
        let (mut step, mut wait) = (self.step.values(), self.wait.values());
        let peers: Vec<PeerLatency> = self
            .peers
            .iter_mut()
            .map(|(slot, series)| {
                series.forget_before(since);
                let mut v = series.values();
                PeerLatency {
                    slot: *slot,
                    samples: v.len().min(usize::from(u16::MAX)) as u16,
                    latency: summary(&mut v),
                }
            })
            .collect();
        Stats {
            window_ms: WINDOW.as_millis() as u32,
            samples: step.len() as u32,
            steps: self.counts.steps as u32,
            late: self.counts.late,
            failovers: self.counts.failovers.min(u64::from(u32::MAX)) as u32,
            cards: self.counts.cards,
            boards: self.counts.boards,
            step_histogram: histogram(&step),
            wait_histogram: histogram(&wait),
            step: summary(&mut step),
            wait: summary(&mut wait),
            peers_measured: peers.len() as u32,
            peers,
        }
    }
}

/// One step's figures, as the step thread measured them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    /// The step's start, before it published.
    pub start: Instant,
    /// After it published, when it began to take its peers' frames.
    pub published: Instant,
    /// When it had them.
    pub end: Instant,
}

/// The step thread's side: decides when a step is sampled and adds it.
#[derive(Debug)]
pub(crate) struct Recorder {
    window: Arc<Mutex<Window>>,
    next: Option<Instant>,
}

impl Recorder {
    /// The recorder of a node whose peers are in `peer_slots`.
    pub(crate) fn new(peer_slots: impl Iterator<Item = u8>) -> Recorder {
        let window = Window {
            peers: peer_slots.map(|s| (s, Series::default())).collect(),
            ..Window::default()
        };
        Recorder {
            window: Arc::new(Mutex::new(window)),
            next: None,
        }
    }

    /// Whether the step that started at `start` is to be sampled.
    #[inline]
    pub(crate) fn due(&self, start: Instant) -> bool {
        self.next.is_none_or(|n| start >= n)
    }

    /// Adds a sampled step: its times, and each peer's frame it took
    /// (`(slot, the writer's wall clock at its store)`), against the wall
    /// clock `wall_end_ns` at its end; `counts`: the counts so far.
    /// Never waits: a sample that finds the heartbeat summing is left out.
    #[cold]
    pub(crate) fn add(
        &mut self,
        sample: Sample,
        wall_end_ns: u64,
        taken: impl Iterator<Item = (u8, u64)>,
        counts: Counts,
    ) {
        self.next = Some(sample.start + SAMPLE_EVERY);
        let Ok(mut w) = self.window.try_lock() else {
            return;
        };
        let ns = |d: Duration| d.as_nanos().min(i64::MAX as u128) as i64;
        w.step.push(sample.end, ns(sample.end - sample.start));
        w.wait.push(sample.end, ns(sample.end - sample.published));
        for (slot, stored_ns) in taken {
            let latency = wall_end_ns as i64 - stored_ns as i64;
            if let Some((_, series)) = w.peers.iter_mut().find(|(s, _)| *s == slot) {
                series.push(sample.end, latency);
            }
        }
        w.counts = counts;
    }

    /// The heartbeat thread's side, storing into `area`.
    pub(crate) fn publisher(&self, area: Region) -> Publisher {
        Publisher {
            window: Arc::clone(&self.window),
            area,
            seq: 0,
            beats: 0,
        }
    }
}

/// Stores the window's figures into the statistics block every
/// [`STORE_EVERY_BEATS`] beats.
#[derive(Debug, Clone)]
pub struct Publisher {
    window: Arc<Mutex<Window>>,
    area: Region,
    seq: u32,
    beats: u32,
}

impl Publisher {
    /// Called at every beat: stores the block when it is due.
    pub fn beat(&mut self, now: Instant) -> Result<(), RegionError> {
        self.beats = self.beats.wrapping_add(1);
        if self.beats % STORE_EVERY_BEATS != 1 {
            return Ok(());
        }
        let stats = self
            .window
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .summed(now);
        stats.store(&self.area, &mut self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_sums_up_the_last_second_only() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut r = Recorder::new([3u8].into_iter());
        for i in 0..10u64 {
            let start = ms(100 * i);
            assert!(r.due(start));
            let sample = Sample {
                start,
                published: start + Duration::from_micros(1),
                end: start + Duration::from_micros(1 + i),
            };
            let wall = 1_000_000 + 1000 * i;
            let counts = Counts {
                steps: i,
                ..Counts::default()
            };
            r.add(sample, wall, [(3u8, wall - 500)].into_iter(), counts);
            assert!(!r.due(start + Duration::from_micros(999)));
        }
        let stats = r.window.lock().unwrap().summed(ms(1450));
        // The samples of 500..900 ms: waits of 5..9 µs.
        assert_eq!(stats.samples, 5);
        assert_eq!(stats.wait.median, 7_000);
        assert_eq!(stats.wait.max, 9_000);
        assert_eq!(stats.step.max, 10_000);
        assert_eq!(stats.peers.len(), 1);
        assert_eq!(stats.peers[0].latency.median, 500);
        assert_eq!(
            stats
                .wait_histogram
                .iter()
                .map(|&c| u32::from(c))
                .sum::<u32>(),
            5
        );
    }
}
