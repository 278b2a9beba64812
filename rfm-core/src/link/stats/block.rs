//! The statistics block: 256 bytes of every area at
//! [`rfm_frames::area::STATS_OFFSET`] where the node stores its own figures
//! (the last second's step and wait times, the latency of each peer's
//! frames) about ten times a second, from its heartbeat thread: posted
//! stores, nothing read on the step's path. A reader copies it whole through
//! its seqlock and believes it only while the area's holder is the session
//! it watches (the ownership verdict).
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | +0 | 4 | sequence: odd while the node writes the block (a seqlock) |
//! | +4 | 4 | version: 1 (0: never written) |
//! | +8 | 4 | window: the milliseconds the figures cover |
//! | +12 | 4 | samples: the steps measured in the window |
//! | +16 | 4 | steps: the steps taken since the start (low 32 bits) |
//! | +20 | 4 | late: the warnings that a peer was late, since the start |
//! | +24 | 12 | step: median, p99, max (ns): the link's step, publish to frames taken |
//! | +36 | 12 | wait: median, p99, max (ns): the part of the step spent waiting for peers |
//! | +48 | 32 | step histogram: 16 counts (u16) |
//! | +80 | 32 | wait histogram: 16 counts (u16) |
//! | +112 | 4 | peers: how many peers were measured (the first 8 are listed) |
//! | +116 | 128 | 8 peers of 16 bytes: slot (u8), pad, samples (u16), latency median, p99, max (i32 ns) |
//! | +244 | 4 | failovers: times a peer's frames moved from ring A to ring B (redundant rings) |
//! | +248 | 2 | cards: per ring (A, B), what this node's card on it says (0 no watched card, 1 well, 2 its LCSR shows the ring open at this board, 3 its own data does not come back) |
//! | +250 | 2 | boards: per ring (A, B), the RFM2g node id of this node's card on it (where cards is not 0): the board a person looks for |
//! | +252 | 4 | unused |
//!
//! Histogram count i holds the values of `2^(i+8)` ns up to the next bucket
//! (count 0: under 512 ns; count 15: 8.4 ms and more). Times are i32
//! nanoseconds (up to 2.1 s, larger ones held at the largest); a latency is
//! the reader's wall clock when it first took a frame (a frame held over
//! steps counts once) minus the writer's when it stored it, so it is
//! negative between hosts whose clocks disagree.

use rfm_frames::area::STATS_LEN;
use rfm_memory::{seqlock, Region, RegionError};

/// The layout's version this build writes.
pub const VERSION: u32 = 1;
/// Histogram buckets per figure.
pub const BUCKETS: usize = 16;
/// Peers listed in the block.
pub const MAX_PEERS: usize = 8;

const VERSION_AT: usize = 4;
const WINDOW_AT: usize = 8;
const SAMPLES_AT: usize = 12;
const STEPS_AT: usize = 16;
const LATE_AT: usize = 20;
const STEP_AT: usize = 24;
const WAIT_AT: usize = 36;
const STEP_HISTOGRAM_AT: usize = 48;
const WAIT_HISTOGRAM_AT: usize = 80;
const PEERS_AT: usize = 112;
const PEER_LIST_AT: usize = 116;
const PEER_LEN: usize = 16;
const FAILOVERS_AT: usize = PEER_LIST_AT + MAX_PEERS * PEER_LEN;
const CARDS_AT: usize = FAILOVERS_AT + 4;

const BOARDS_AT: usize = CARDS_AT + 2;
const _: () = assert!(BOARDS_AT + 2 <= STATS_LEN);

/// What a node's card on one ring says ([`Stats::cards`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Card {
    /// No card watched there (host memory, or one ring).
    #[default]
    Unwatched,
    Well,
    /// Its LCSR shows the ring open at this board.
    OpenHere,
    /// The own-data test failed: its stores do not come back round.
    OwnDataLost,
}

const CARDS: [(Card, u8, &str); 4] = [
    (Card::Unwatched, 0, "unwatched"),
    (Card::Well, 1, "well"),
    (Card::OpenHere, 2, "open here"),
    (Card::OwnDataLost, 3, "own data lost"),
];

impl Card {
    fn code(self) -> u8 {
        CARDS.iter().find(|c| c.0 == self).map_or(0, |c| c.1)
    }

    fn of_code(code: u8) -> Card {
        CARDS
            .iter()
            .find(|c| c.1 == code)
            .map_or(Card::Unwatched, |c| c.0)
    }

    /// The word the JSON and the page use.
    pub fn word(self) -> &'static str {
        CARDS.iter().find(|c| c.0 == self).map_or("", |c| c.2)
    }
}

/// Median, 99th percentile and largest of a figure, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    pub median: i32,
    pub p99: i32,
    pub max: i32,
}

/// One peer's frames as this node took them: their latency (the take's wall
/// clock minus the store's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeerLatency {
    pub slot: u8,
    pub samples: u16,
    pub latency: Summary,
}

/// What a node published of itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Stats {
    pub window_ms: u32,
    pub samples: u32,
    pub steps: u32,
    pub late: u32,
    pub step: Summary,
    pub wait: Summary,
    pub step_histogram: [u16; BUCKETS],
    pub wait_histogram: [u16; BUCKETS],
    /// Peers measured (those past [`MAX_PEERS`] are counted, not listed).
    pub peers_measured: u32,
    pub peers: Vec<PeerLatency>,
    pub failovers: u32,
    /// What this node's card on each ring (A, B) says.
    pub cards: [Card; 2],
    /// The RFM2g node id of this node's card on each ring, where watched.
    pub boards: [Option<u8>; 2],
}

/// The histogram bucket of `ns`.
pub fn bucket(ns: i64) -> usize {
    let bits = 64 - (ns.max(0) as u64).leading_zeros() as usize;
    bits.saturating_sub(9).min(BUCKETS - 1)
}

/// The smallest value bucket `i` holds (ns), for a chart's axis.
pub fn bucket_floor(i: usize) -> u64 {
    if i == 0 {
        0
    } else {
        1 << (i + 8)
    }
}

fn put(out: &mut [u8], at: usize, word: u32) {
    out[at..at + 4].copy_from_slice(&word.to_le_bytes());
}

fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"))
}

fn put_summary(out: &mut [u8], at: usize, s: &Summary) {
    for (i, v) in [s.median, s.p99, s.max].into_iter().enumerate() {
        put(out, at + 4 * i, v as u32);
    }
}

fn summary(bytes: &[u8], at: usize) -> Summary {
    let v = |i: usize| word(bytes, at + 4 * i) as i32;
    Summary {
        median: v(0),
        p99: v(1),
        max: v(2),
    }
}

fn put_histogram(out: &mut [u8], at: usize, counts: &[u16; BUCKETS]) {
    for (i, c) in counts.iter().enumerate() {
        out[at + 2 * i..at + 2 * i + 2].copy_from_slice(&c.to_le_bytes());
    }
}

fn histogram(bytes: &[u8], at: usize) -> [u16; BUCKETS] {
    std::array::from_fn(|i| u16::from_le_bytes([bytes[at + 2 * i], bytes[at + 2 * i + 1]]))
}

impl Stats {
    /// The block's bytes (the sequence word left 0: the seqlock writes it).
    pub fn encode(&self) -> [u8; STATS_LEN] {
        let mut out = [0u8; STATS_LEN];
        put(&mut out, VERSION_AT, VERSION);
        put(&mut out, WINDOW_AT, self.window_ms);
        put(&mut out, SAMPLES_AT, self.samples);
        put(&mut out, STEPS_AT, self.steps);
        put(&mut out, LATE_AT, self.late);
        put_summary(&mut out, STEP_AT, &self.step);
        put_summary(&mut out, WAIT_AT, &self.wait);
        put_histogram(&mut out, STEP_HISTOGRAM_AT, &self.step_histogram);
        put_histogram(&mut out, WAIT_HISTOGRAM_AT, &self.wait_histogram);
        put(&mut out, PEERS_AT, self.peers_measured);
        for (i, p) in self.peers.iter().take(MAX_PEERS).enumerate() {
            let at = PEER_LIST_AT + i * PEER_LEN;
            out[at] = p.slot;
            out[at + 2..at + 4].copy_from_slice(&p.samples.to_le_bytes());
            put_summary(&mut out, at + 4, &p.latency);
        }
        put(&mut out, FAILOVERS_AT, self.failovers);
        out[CARDS_AT] = self.cards[0].code();
        out[CARDS_AT + 1] = self.cards[1].code();
        for (i, board) in self.boards.iter().enumerate() {
            out[BOARDS_AT + i] = board.unwrap_or(0);
        }
        out
    }

    /// The figures in `bytes` (a whole block), `None` when the block was
    /// never written (or by a version this build does not read).
    pub fn decode(bytes: &[u8; STATS_LEN]) -> Option<Stats> {
        if word(bytes, VERSION_AT) != VERSION {
            return None;
        }
        let peers_measured = word(bytes, PEERS_AT);
        let listed = (peers_measured as usize).min(MAX_PEERS);
        let cards = [
            Card::of_code(bytes[CARDS_AT]),
            Card::of_code(bytes[CARDS_AT + 1]),
        ];
        Some(Stats {
            window_ms: word(bytes, WINDOW_AT),
            samples: word(bytes, SAMPLES_AT),
            steps: word(bytes, STEPS_AT),
            late: word(bytes, LATE_AT),
            step: summary(bytes, STEP_AT),
            wait: summary(bytes, WAIT_AT),
            step_histogram: histogram(bytes, STEP_HISTOGRAM_AT),
            wait_histogram: histogram(bytes, WAIT_HISTOGRAM_AT),
            peers_measured,
            peers: (0..listed)
                .map(|i| {
                    let at = PEER_LIST_AT + i * PEER_LEN;
                    PeerLatency {
                        slot: bytes[at],
                        samples: u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]),
                        latency: summary(bytes, at + 4),
                    }
                })
                .collect(),
            failovers: word(bytes, FAILOVERS_AT),
            cards,
            boards: std::array::from_fn(|i| {
                (cards[i] != Card::Unwatched).then_some(bytes[BOARDS_AT + i])
            }),
        })
    }

    /// Stores the block into `area` (its own window) through its seqlock;
    /// `seq` is the writer's copy of the sequence.
    pub fn store(&self, area: &Region, seq: &mut u32) -> Result<(), RegionError> {
        seqlock::write(area, rfm_frames::area::STATS_OFFSET, seq, &self.encode())
    }

    /// The figures in `area` (its own window), if whole and written: a few
    /// tries while its writer is inside. On a window of two rings, the newer
    /// copy (the larger sequence): a node whose board of ring A is cut goes on
    /// publishing over ring B, and what its card says then matters most.
    pub fn read(area: &Region) -> Result<Option<Stats>, RegionError> {
        let mut newest: Option<(u32, [u8; STATS_LEN])> = None;
        for &ring in area.rings() {
            let Some((seq, buf)) = read_whole(&area.on(ring))? else {
                continue;
            };
            if newest.is_none_or(|(at, _)| seq.wrapping_sub(at) as i32 > 0) {
                newest = Some((seq, buf));
            }
        }
        Ok(newest.and_then(|(_, buf)| Stats::decode(&buf)))
    }
}

/// One memory's copy of the block and its sequence, if a try finds it whole.
fn read_whole(area: &Region) -> Result<Option<(u32, [u8; STATS_LEN])>, RegionError> {
    let mut buf = [0u8; STATS_LEN];
    for _ in 0..8 {
        if seqlock::read_once(area, rfm_frames::area::STATS_OFFSET, &mut buf)?.is_ok() {
            return Ok(Some((seqlock::sequence_of(&buf), buf)));
        }
        std::hint::spin_loop();
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_reads_back_as_written_and_a_blank_one_as_none() {
        let stats = Stats {
            window_ms: 1000,
            samples: 900,
            steps: 123_456,
            late: 2,
            step: Summary {
                median: 800,
                p99: 2_000,
                max: 9_000,
            },
            wait: Summary {
                median: 300,
                p99: 1_000,
                max: 5_000,
            },
            step_histogram: std::array::from_fn(|i| i as u16),
            wait_histogram: std::array::from_fn(|i| 100 - i as u16),
            peers_measured: 9,
            peers: (0..8)
                .map(|i| PeerLatency {
                    slot: i,
                    samples: 10 + u16::from(i),
                    latency: Summary {
                        median: -5,
                        p99: 600,
                        max: 700,
                    },
                })
                .collect(),
            failovers: 3,
            cards: [Card::OpenHere, Card::OwnDataLost],
            boards: [Some(0), Some(255)],
        };
        assert_eq!(Stats::decode(&stats.encode()), Some(stats));
        assert_eq!(Stats::decode(&[0; STATS_LEN]), None);
    }

    /// A node cut from ring A stores its block on ring B alone: a reader of
    /// both rings takes B's newer copy, not A's last one.
    #[test]
    fn a_reader_of_two_rings_takes_the_newer_copy() {
        let open = |name: &str| {
            rfm_memory::Device::open(&format!("loopback:stats-{name}"), &Default::default())
                .unwrap()
                .map(0, 4096)
                .unwrap()
        };
        let ring_a = open("a");
        let area = Region::redundant(ring_a.clone(), open("b")).unwrap();
        let mut seq = 0;
        let first = Stats {
            steps: 1,
            ..Stats::default()
        };
        first.store(&area, &mut seq).unwrap();
        area.withhold(rfm_memory::Network::A, true);
        let second = Stats {
            steps: 2,
            ..Stats::default()
        };
        second.store(&area, &mut seq).unwrap();
        assert_eq!(Stats::read(&ring_a).unwrap(), Some(first));
        assert_eq!(Stats::read(&area).unwrap(), Some(second));
    }

    #[test]
    fn each_bucket_holds_its_octave() {
        assert_eq!(bucket(-3), 0);
        assert_eq!(bucket(511), 0);
        assert_eq!(bucket(512), 1);
        assert_eq!(bucket(1023), 1);
        assert_eq!(bucket(1024), 2);
        assert_eq!(bucket(1 << 23), 15);
        assert_eq!(bucket(i64::MAX), 15);
        for i in 1..BUCKETS {
            assert_eq!(bucket(bucket_floor(i) as i64), i);
            assert_eq!(bucket(bucket_floor(i) as i64 - 1), i - 1);
        }
    }
}

/// The book's table of the statistics block (`docs/src/reference/memory-layout.md`)
/// and this module's say what the constants say.
#[cfg(test)]
mod book {
    use super::*;
    use crate::link::book_table::rows;

    const DEFINED: [(usize, &str); 16] = [
        (0, "sequence"),
        (VERSION_AT, "version"),
        (WINDOW_AT, "window"),
        (SAMPLES_AT, "samples"),
        (STEPS_AT, "steps"),
        (LATE_AT, "late"),
        (STEP_AT, "step"),
        (WAIT_AT, "wait"),
        (STEP_HISTOGRAM_AT, "step histogram"),
        (WAIT_HISTOGRAM_AT, "wait histogram"),
        (PEERS_AT, "peers"),
        (PEER_LIST_AT, "8 peers of 16 bytes"),
        (FAILOVERS_AT, "failovers"),
        (CARDS_AT, "cards"),
        (BOARDS_AT, "boards"),
        (BOARDS_AT + 2, "unused"),
    ];

    #[test]
    fn the_books_table_and_this_modules_name_every_field_at_its_offset() {
        let defined: Vec<(usize, String)> =
            DEFINED.iter().map(|&(at, n)| (at, n.to_owned())).collect();
        let rows_of = |text| rows(text, "| offset | bytes | field |", 3);
        let here = rows_of(include_str!("block.rs"));
        let book = rows_of(include_str!(
            "../../../../docs/src/reference/memory-layout.md"
        ));
        assert_eq!(here, defined, "block.rs's table");
        assert_eq!(book, defined, "memory-layout.md's table");
    }
}
