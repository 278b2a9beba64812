//! Watching an area's holder over time, on the reader's monotonic clock: its
//! words alone ([`PeerWatch`], what the handshake reads on the step's path)
//! and with what the area says besides (how a closed holder ended, whether a
//! live one is another host's: [`AreaWatch`]), and the loop every watcher of
//! sessions runs ([`sweep`]). A session is live once its beat has been seen to
//! move since the reader started watching it; no wall clocks are compared
//! across PCs.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use super::block::{self, Words};
use super::{Held, Holder, Verdict, DEAD_AFTER};
use rfm_frames::area::window;
use rfm_frames::session::Token;
use rfm_interface::Found;
use rfm_memory::{Region, RegionError};

/// What a reader knows of a slot's holder from its words alone, watched over
/// time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    /// Nobody ever held the slot (or an older build wrote it).
    Absent,
    /// The holder `owner` stopped cleanly.
    Closed { owner: Token },
    /// The beat of `owner` has not moved since the reader began watching it.
    Unproven { owner: Token, since: Instant },
    /// The beat of `owner` was last seen moving at `last`.
    Beating { owner: Token, last: Instant },
}

impl Held for Life {
    fn owner(&self) -> Option<Token> {
        match *self {
            Life::Absent => None,
            Life::Closed { owner } | Life::Unproven { owner, .. } | Life::Beating { owner, .. } => {
                Some(owner)
            }
        }
    }
}

impl Life {
    /// How long the holder's beat has not been seen to move (zero when closed or absent).
    pub fn silent_for(&self, now: Instant) -> Duration {
        match *self {
            Life::Unproven { since: t, .. } | Life::Beating { last: t, .. } => {
                now.saturating_duration_since(t)
            }
            Life::Absent | Life::Closed { .. } => Duration::ZERO,
        }
    }
}

impl Verdict<Life> {
    /// The session looked for holds the slot, not closed, and beat within
    /// `bound` before `now`.
    pub fn is_live(&self, now: Instant, bound: Duration) -> bool {
        matches!(*self, Verdict::Its(Life::Beating { last, .. }) if now.saturating_duration_since(last) < bound)
    }
}

/// Watches one slot's liveness words over time, on the reader's monotonic clock.
#[derive(Debug, Clone)]
pub struct PeerWatch {
    words: Words,
    life: Life,
}

impl PeerWatch {
    /// Starts watching at `now` with the words read then. A beat already there
    /// proves nothing: only a move seen from here on does.
    pub fn new(words: Words, now: Instant) -> PeerWatch {
        PeerWatch {
            words,
            life: Self::first_sight(&words, now),
        }
    }

    fn first_sight(w: &Words, now: Instant) -> Life {
        match w.owner {
            None => Life::Absent,
            Some(owner) if w.is_closed() => Life::Closed { owner },
            Some(owner) => Life::Unproven { owner, since: now },
        }
    }

    /// Takes a new reading at `now`.
    pub fn observe(&mut self, w: Words, now: Instant) -> Life {
        let before = std::mem::replace(&mut self.words, w);
        self.life = match w.owner {
            Some(owner) if w.owner == before.owner && !w.is_closed() && w.beat != before.beat => {
                Life::Beating { owner, last: now }
            }
            Some(_) if w.owner == before.owner && !w.is_closed() => self.life,
            _ => Self::first_sight(&w, now),
        };
        self.life
    }

    /// The verdict of the last reading.
    pub fn life(&self) -> Life {
        self.life
    }
}

/// An area watched for the session whose descriptor was found there.
pub trait Watched {
    fn found(&self) -> &Found;
    fn watch(&mut self) -> &mut AreaWatch;
}

/// The loop every watcher of sessions runs (the lookout, the claim, the
/// bridge): each of `watched` judged again at `now` for its session; those
/// still unproven kept, every other (live, closed, dead, written over)
/// removed and handed to `seen` with its verdict, which may stop the sweep
/// with a value. Otherwise, whether any is still unproven.
pub fn sweep<W: Watched, B>(
    region: &Region,
    watched: &mut Vec<W>,
    now: Instant,
    mut seen: impl FnMut(W, Verdict) -> Result<ControlFlow<B>, RegionError>,
) -> Result<ControlFlow<B, bool>, RegionError> {
    let (mut i, mut pending) = (0, false);
    while i < watched.len() {
        let w = &mut watched[i];
        let (area, session) = (
            window(region, &w.found().area)?,
            w.found().descriptor.session,
        );
        let verdict = w.watch().judge_for(&area, now, session)?;
        if verdict.is_unproven() {
            pending = true;
            i += 1;
        } else if let ControlFlow::Break(b) = seen(watched.remove(i), verdict)? {
            return Ok(ControlFlow::Break(b));
        }
    }
    Ok(ControlFlow::Continue(pending))
}

/// Watches one area's holder over time, on the reader's monotonic clock.
#[derive(Debug, Clone)]
pub struct AreaWatch {
    watch: PeerWatch,
}

impl AreaWatch {
    /// Starts watching `area` (its own window) at `now`, with the first
    /// verdict, of one read of its words: a beat already there proves
    /// nothing, only a move seen from here on (a held area is `Unproven`).
    pub fn start(area: &Region, now: Instant) -> Result<(AreaWatch, Holder), RegionError> {
        let words = Words::read(area)?;
        let mut watch = AreaWatch {
            watch: PeerWatch::new(words, now),
        };
        let holder = watch.verdict(area, words, now)?;
        Ok((watch, holder))
    }

    /// [`AreaWatch::start`], judged for session `session`.
    pub fn start_for(
        area: &Region,
        now: Instant,
        session: impl Into<Option<Token>>,
    ) -> Result<(AreaWatch, Verdict), RegionError> {
        let (watch, holder) = AreaWatch::start(area, now)?;
        Ok((watch, Verdict::of(holder, session)))
    }

    /// [`AreaWatch::judge`], for session `session`.
    pub fn judge_for(
        &mut self,
        area: &Region,
        now: Instant,
        session: impl Into<Option<Token>>,
    ) -> Result<Verdict, RegionError> {
        Ok(Verdict::of(self.judge(area, now)?, session))
    }

    /// Judges the area (its own window) as read at `now`.
    pub fn judge(&mut self, area: &Region, now: Instant) -> Result<Holder, RegionError> {
        let words = Words::read(area)?;
        self.verdict(area, words, now)
    }

    fn verdict(
        &mut self,
        area: &Region,
        words: Words,
        now: Instant,
    ) -> Result<Holder, RegionError> {
        Ok(match self.watch.observe(words, now) {
            Life::Absent => Holder::Free,
            Life::Closed { owner } => Holder::Closed {
                owner,
                ended: block::ended(area, Some(owner))?,
            },
            life @ (Life::Unproven { owner, .. } | Life::Beating { owner, .. })
                if life.silent_for(now) >= DEAD_AFTER =>
            {
                Holder::Dead {
                    owner,
                    silent: life.silent_for(now),
                }
            }
            Life::Unproven { owner, since } => Holder::Unproven { owner, since },
            Life::Beating { owner, last } => Holder::Live {
                owner,
                last,
                remote: block::remote_holder(area)?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::link::liveness::MIN_SILENCE;

    fn words(owner: u32, beat: u32, closed: u32) -> Words {
        Words {
            owner: Token::from_word(owner),
            beat,
            closed: Token::from_word(closed),
        }
    }

    const T7: Token = Token::of(7);
    const T9: Token = Token::of(9);

    /// Whether `life` is `session`'s, beating within the minimum silence.
    fn live(life: Life, session: Token, now: Instant) -> bool {
        Verdict::of(life, session).is_live(now, MIN_SILENCE)
    }

    #[test]
    fn a_holder_is_live_only_once_its_beat_is_seen_to_move() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut w = PeerWatch::new(words(7, 41, 0), t0);
        assert_eq!(
            w.life(),
            Life::Unproven {
                owner: T7,
                since: t0
            }
        );
        assert!(!live(w.life(), T7, t0));
        assert_eq!(
            w.observe(words(7, 41, 0), ms(300)).silent_for(ms(300)),
            ms(300) - t0
        );
        let life = w.observe(words(7, 42, 0), ms(301));
        assert!(live(life, T7, ms(301)));
        assert!(!live(life, T9, ms(301)), "another session");
        assert!(!live(life, T7, ms(401)), "silent for the bound");
        // A new holder starts unproven again; a closed one is closed at once.
        assert!(matches!(
            w.observe(words(9, 42, 0), ms(402)),
            Life::Unproven { owner: T9, .. }
        ));
        assert_eq!(
            w.observe(words(9, 43, 9), ms(403)),
            Life::Closed { owner: T9 }
        );
        assert_eq!(PeerWatch::new(Words::default(), t0).life(), Life::Absent);
    }
}
