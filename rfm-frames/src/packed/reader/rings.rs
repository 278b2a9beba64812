//! The struct on a redundant memory (`A+B`, every program writing both
//! rings): the newest whole struct of either ring, never one older than a
//! struct already given, and which ring gave it.
//!
//! | handshake | each read loads | which ring's struct is taken |
//! |---|---|---|
//! | counter | the ring last taken from, as on one ring; the other ring's marker (one load, two for 8 bytes); that ring's struct only when its marker is newer | the newer counter (modulo its width); never one older than the last taken, unless both rings agree on it (a restarted program) |
//! | flag, none | both rings, as on one ring | the struct both rings hold, else that of the ring that moved while the other stood still over two of its moves (a cut ring) |
//!
//! What no ring can say without a counter: which of two different whole
//! structs is newer. A ring cut in the middle of a write keeps a torn
//! struct that looks whole (its writer stalled over both copies), and a
//! mended ring may show a write the other ring already replaced. So a
//! struct held by one ring only is taken once the other ring has stood
//! still over two writes: the first write after a cut is not given, and
//! while a writer is between its two rings' stores the read is
//! [`Outcome::Unsettled`].

use rfm_memory::{Network, RegionError};

use super::{Outcome, Read, StructReader};

impl StructReader {
    /// Whether counter `c` is newer than `than` (modulo the counter's width:
    /// ahead by less than half its range).
    fn newer(&self, c: u64, than: u64) -> bool {
        let mask = self.counter_mask();
        let ahead = c.wrapping_sub(than) & mask;
        ahead != 0 && ahead <= mask / 2
    }

    /// A struct counted by the counter of `width` bytes at `at`, on two
    /// rings (see the module's table).
    pub(super) fn read_counted_rings(
        &mut self,
        (at, width): (usize, usize),
        out: &mut [u8],
    ) -> Result<Read, RegionError> {
        let (cur, other) = (self.current, 1 - self.current);
        let first = self.whole(cur)?;
        let (mut retries, mut marked) = (first.retries, first.marked);
        let peek = self.rings[other].marker(self.skip + at, width, self.order)?;
        let mut counters: [Option<u64>; 2] = [None; 2];
        counters[cur] = first.taken.flatten();
        let behind = |r: &StructReader, c: u64| r.last_counter.is_some_and(|l| r.newer(l, c));
        // The other ring is read whole when it may hold a newer struct, or
        // when this one gave none or one older than the last taken.
        let look = match counters[cur] {
            None => true,
            Some(c) => self.newer(peek, c) || behind(self, c),
        };
        if look {
            let second = self.whole(other)?;
            retries += second.retries;
            marked |= second.marked;
            counters[other] = second.taken.flatten();
        }
        let pick = match counters {
            [Some(a), Some(b)] if self.newer(b, a) => Some((1, b)),
            [Some(a), _] => Some((0, a)),
            [None, Some(b)] => Some((1, b)),
            [None, None] => None,
        };
        let Some((ring, c)) = pick else {
            return Ok(self.nothing(retries, marked));
        };
        // Older than the last taken: a ring that lags (mended, or cut), not
        // given; both rings agreeing on it is the program restarted.
        let lags = behind(self, c) && counters[0] != counters[1];
        let mut changed = false;
        if !lags {
            self.count_move(c);
            changed = self.last_counter.replace(c) != Some(c);
        }
        if changed {
            let now = Self::struct_of(&self.rings[ring].copy, self.skip, self.size);
            out[..self.size].copy_from_slice(now);
            self.current = ring;
        }
        // A ring holds the struct taken when its counter is it or newer (the
        // other ring's peek, where it was not read whole): it carries the
        // writes.
        // (Taken now, or before: the older `c` was not.)
        let last = self.last_counter.unwrap_or(c);
        let carries = |x: u64| x == last || self.newer(x, last);
        let mut holding = [false; 2];
        holding[cur] = counters[cur].is_some_and(carries);
        holding[other] = carries(counters[other].unwrap_or(peek));
        Ok(Read {
            outcome: Outcome::Taken,
            retries,
            changed,
            ring: Network::BOTH[self.current],
            holding,
        })
    }

    /// A struct without a counter on two rings (see the module's table).
    pub(super) fn read_moved_rings(&mut self, out: &mut [u8]) -> Result<Read, RegionError> {
        let (mut retries, mut marked) = (0, false);
        let mut whole = [false; 2];
        let mut moved = [false; 2];
        for r in 0..2 {
            let w = self.whole(r)?;
            retries += w.retries;
            marked |= w.marked;
            whole[r] = w.taken.is_some();
            if whole[r] {
                let (skip, size) = (self.skip, self.size);
                let ring = &mut self.rings[r];
                let now = &ring.copy[skip..skip + size];
                if ring.seen.as_deref() != Some(now) {
                    ring.seen = Some(now.to_vec());
                    moved[r] = true;
                }
            }
        }
        for r in 0..2 {
            if moved[r] {
                self.rings[r].still = 0;
            } else if moved[1 - r] {
                self.rings[r].still = self.rings[r].still.saturating_add(1);
            }
        }
        let bytes = |r: usize| whole[r].then(|| self.rings[r].seen.as_deref()).flatten();
        let given = self.last.as_deref();
        let new = |r: usize| bytes(r).is_some_and(|b| Some(b) != given);
        let both = bytes(0).is_some() && bytes(0) == bytes(1);
        let (cur, other) = (self.current, 1 - self.current);
        let pick = if both && new(0) {
            Some(cur)
        } else {
            [cur, other]
                .into_iter()
                .find(|&r| new(r) && self.rings[1 - r].still >= 2)
        };
        if let Some((r, now)) = pick.and_then(|r| Some((r, bytes(r)?.to_vec()))) {
            out[..self.size].copy_from_slice(&now);
            self.last = Some(now);
            self.current = r;
        }
        let held = |r: usize| whole[r] && bytes(r) == self.last.as_deref();
        let holding = [held(0), held(1)];
        let outcome = match (pick, holding) {
            (Some(_), _) => Outcome::Taken,
            (None, [false, false]) if whole.contains(&true) => Outcome::Unsettled,
            (None, [false, false]) => return Ok(self.nothing(retries, marked)),
            (None, _) => Outcome::Taken,
        };
        Ok(Read {
            outcome,
            retries,
            changed: pick.is_some(),
            ring: Network::BOTH[self.current],
            holding,
        })
    }
}
