//! This host's nodes: finding them in memory, and turning what they store
//! (frames, liveness words) into messages for the other bridges.
//!
//! A node is local once its area is described by its own session (the
//! descriptor's token is the owner word), held by a token that no bridge
//! marked as another host's, and its beat has been seen to move: a session
//! left by a dead program, or one a bridge wrote here before it was
//! restarted, is never announced. A claim is acknowledged at first sight
//! ([`block::acknowledge`]), so that the claimant settles until other
//! hosts' claims of the area can have arrived, and announced once it beats:
//! two hosts' claims of one area are decided while both still settle.

use std::ops::ControlFlow;
use std::time::Instant;

use rfm_core::link::ownership::block::{self, Words};
use rfm_core::link::ownership::{self, AreaWatch, Holder, Verdict, Watched};
use rfm_frames::area::{self, Area};
use rfm_frames::session::Token;
use rfm_interface::{Found, Scan};
use rfm_memory::{Region, RegionError, WORD};

use crate::shared::{Announced, Shared, Traffic};
use crate::wire::{Message, Stamp};

mod send;

use send::{announce, send_new_frames, send_stats};

/// A local session being mirrored.
#[derive(Debug)]
struct Session {
    area: Area,
    node: String,
    window: Region,
    token: Option<Token>,
    head: u32,
    words: Words,
    buf: Vec<u8>,
    /// Its ring holds its own frames (frame 0 is published): until then the
    /// ring holds what the last session left, and the claim is sent alone.
    framed: bool,
    /// The sequence of the statistics block last sent.
    stats: u32,
}

/// A held area whose beat has not yet been seen moving, watched by the one
/// verdict on an area ([`ownership::AreaWatch`]).
#[derive(Debug)]
struct Candidate {
    found: Found,
    watch: AreaWatch,
}

impl Watched for Candidate {
    fn found(&self) -> &Found {
        &self.found
    }

    fn watch(&mut self) -> &mut AreaWatch {
        &mut self.watch
    }
}

/// Where the watcher's output goes: messages for the other bridges, the
/// stamps that order a new session's claim against other hosts' (Zenoh's
/// clock), and what changed, for the bridge's log. The bridge's is the
/// network; a test's keeps everything.
pub trait Sink {
    fn send(&mut self, m: &Message);
    fn stamp(&mut self) -> Stamp;
    fn event(&mut self, e: Event);
}

/// What the watcher saw change, for the bridge's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Started {
        node: String,
        slot: u8,
        area: (u64, u64),
    },
    Ended {
        node: String,
        slot: u8,
        closed: bool,
    },
}

#[derive(Debug)]
pub struct Watcher {
    memory: Region,
    sessions: Vec<Session>,
    candidates: Vec<Candidate>,
    scan: Scan,
    /// Where candidates were found in the scan under way.
    seen: Vec<u64>,
}

/// Bytes of a frame as a bridge carries it: whole words.
fn carried(area: &Area) -> usize {
    area.frame_len().next_multiple_of(WORD)
}

impl Watcher {
    pub fn new(memory: Region) -> Watcher {
        Watcher {
            memory,
            sessions: Vec::new(),
            candidates: Vec::new(),
            scan: Scan::default(),
            seen: Vec::new(),
        }
    }

    /// The local nodes, by name and slot.
    pub fn nodes(&self) -> Vec<(String, u8)> {
        self.sessions
            .iter()
            .map(|s| (s.node.clone(), s.area.slot))
            .collect()
    }

    /// Looks for described areas held by this host's sessions at up to
    /// `places` area boundaries (one load each), going on from where the
    /// last call ended: a whole scan of a card's memory at once would hold
    /// the frames back for as long as its loads take.
    pub fn scan(&mut self, now: Instant, places: usize) -> Result<(), RegionError> {
        let mut found = Vec::new();
        let wrapped = self.scan.step(&self.memory, places, &mut found)?;
        for found in found {
            let window = area::window(&self.memory, &found.area)?;
            let session = found.descriptor.session;
            // Held by the session that described it, from this host.
            let (watch, verdict) = AreaWatch::start_for(&window, now, session)?;
            if !verdict.is_unproven() || block::remote_holder(&window)?.is_some() {
                continue;
            }
            let known = self.sessions.iter().any(|s| {
                s.area.offset == found.area.offset && Verdict::of(s.token, session).is_its()
            });
            if known {
                continue;
            }
            self.seen.push(found.area.offset);
            if let Some(session) = session {
                block::acknowledge(&window, session)?;
            }
            let candidate = Candidate { found, watch };
            match self
                .candidates
                .iter()
                .position(|c| c.found.area.offset == candidate.found.area.offset)
            {
                Some(i) if self.candidates[i].found == candidate.found => {}
                Some(i) => self.candidates[i] = candidate,
                None => self.candidates.push(candidate),
            }
        }
        if wrapped {
            let seen = std::mem::take(&mut self.seen);
            self.candidates
                .retain(|c| seen.contains(&c.found.area.offset));
        }
        Ok(())
    }

    /// Publishes the frames local writers stored since the last call; whether
    /// there were any.
    pub fn poll_frames(
        &mut self,
        traffic: &Traffic,
        out: &mut dyn Sink,
    ) -> Result<bool, RegionError> {
        let mut any = false;
        for s in &mut self.sessions {
            any |= send_new_frames(s, traffic, out)?;
        }
        Ok(any)
    }

    /// Reads the liveness words of local sessions and candidates: publishes
    /// beats and ends, and announces a candidate once its beat moved.
    pub fn poll_words(
        &mut self,
        now: Instant,
        shared: &Shared,
        out: &mut dyn Sink,
    ) -> Result<(), RegionError> {
        self.poll_sessions(shared, out)?;
        self.poll_candidates(now, shared, out)
    }

    /// Publishes each session's changed words; a session whose writer closed
    /// or lost its area ends, its last frames sent first.
    fn poll_sessions(&mut self, shared: &Shared, out: &mut dyn Sink) -> Result<(), RegionError> {
        let mut i = 0;
        while i < self.sessions.len() {
            let s = &mut self.sessions[i];
            let words = Words::read(&s.window)?;
            let held = ownership::owned_by(&words, s.token);
            let ended = !held || words.is_closed();
            if ended && held {
                // Its writer closed: the frames it stored since the last
                // poll go out before its closed mark, or a reader still
                // waiting for one of them would see the close first and
                // fail ("stopped before step ..."), and they would never go.
                send_new_frames(s, &shared.traffic, out)?;
            }
            if words != s.words && held {
                out.send(&Message::Beat {
                    offset: s.area.offset,
                    words,
                });
                s.words = words;
                send_stats(s, out)?;
            }
            if !ended {
                i += 1;
                continue;
            }
            let s = self.sessions.remove(i);
            shared
                .announced()
                .retain(|a| !(a.start == s.area.offset && Verdict::of(a.token, s.token).is_its()));
            out.event(Event::Ended {
                node: s.node,
                slot: s.area.slot,
                closed: held,
            });
        }
        Ok(())
    }

    /// Starts mirroring each candidate whose descriptor's session is live
    /// here; drops those closed, dead, taken, or held from another host.
    fn poll_candidates(
        &mut self,
        now: Instant,
        shared: &Shared,
        out: &mut dyn Sink,
    ) -> Result<(), RegionError> {
        let memory = self.memory.clone();
        let mut candidates = std::mem::take(&mut self.candidates);
        let swept = ownership::sweep(&memory, &mut candidates, now, |c, verdict| {
            // Closed, dead, taken, or held from another host since: dropped.
            if let Verdict::Its(Holder::Live { remote: None, .. }) = verdict {
                let window = area::window(&memory, &c.found.area)?;
                let words = Words::read(&window)?;
                self.start(c.found, window, words, shared, out)?;
            }
            Ok(ControlFlow::<()>::Continue(()))
        });
        self.candidates = candidates;
        // Every candidate is judged: none stops the sweep.
        let _pending = swept?;
        Ok(())
    }

    /// Mirrors the session that holds `found` (its `window`, its `words`).
    fn start(
        &mut self,
        found: Found,
        window: Region,
        words: Words,
        shared: &Shared,
        out: &mut dyn Sink,
    ) -> Result<(), RegionError> {
        let stamp = out.stamp();
        let area = found.area;
        self.sessions.retain(|s| !s.area.overlaps(&area));
        {
            let mut announced = shared.announced();
            announced.retain(|a| !area.overlaps_bytes(a.start, a.end));
            announced.push(Announced {
                start: area.offset,
                end: area.end(),
                token: words.owner,
                stamp,
                slot: area.slot,
            });
        }
        let buf = vec![0u8; area.entry_len];
        let mut s = Session {
            node: found.descriptor.node.clone(),
            area,
            window,
            token: words.owner,
            head: 0,
            words,
            buf,
            framed: false,
            stats: 0,
        };
        out.event(Event::Started {
            node: s.node.clone(),
            slot: s.area.slot,
            area: (s.area.offset, s.area.end()),
        });
        announce(&mut s, stamp, out)?;
        self.sessions.push(s);
        Ok(())
    }

    /// Announces every local session again (a bridge joined), with a
    /// snapshot of its area.
    pub fn announce_all(&mut self, shared: &Shared, out: &mut dyn Sink) -> Result<(), RegionError> {
        let announced = shared.announced().clone();
        for s in &mut self.sessions {
            let stamp = announced
                .iter()
                .find(|a| a.start == s.area.offset && Verdict::of(a.token, s.token).is_its())
                .map(|a| a.stamp);
            if let Some(stamp) = stamp {
                announce(s, stamp, out)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
