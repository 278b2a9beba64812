//! The liveness block: the 64 bytes of every area at
//! [`rfm_frames::area::LIVENESS_OFFSET`] whose words say who holds the area,
//! whether it still runs and how it ended. Every word is defined here, once,
//! and only this module reads or writes them (and the descriptor an announce
//! writes with them): [`super`] (the ownership module it belongs to) states
//! the protocol and gives the one verdict on an area,
//! [`crate::link::liveness`] beats the heartbeat, both through what is here. A liveness block read whole, word by word in several places,
//! is how a protocol's verdict drifts; one reader keeps the order of its
//! loads and stores (owner before beat, descriptor before owner) in one file.
//!
//! | offset | word | written by |
//! |---|---|---|
//! | +0 | owner: the holder's token (0: never held) | the claimant (`announce`); a bridge for another host's session ([`write_mirrored`]) |
//! | +4 | beat: moves every [`rfm_frames::area::HEARTBEAT_PERIOD`] while the holder runs | the holder's heartbeat (`store_beat`) |
//! | +8 | closed: the owner's token once it stopped, else 0 | the holder (`close`) |
//! | +12 | mirrored: the token of a session on another host (owner == mirrored: held from there) | a bridge |
//! | +16 | mirrored by: the bridge that writes it | a bridge |
//! | +20 | bridged: the token of a claim a bridge has seen and sends on | a bridge ([`acknowledge`]) |
//! | +24 | ended: the token whose ending is recorded | the holder (`close`) |
//! | +28 | ending: how it ended ([`Ending`]) | the holder |
//! | +32 | ended about: the peer slot the ending concerns (`u32::MAX`: none) | the holder |
//! | +36 | probe: a count stored through the driver, never read: the own-data test of a redundant device's cards | the ring watch (`PROBE`) |
//! | +40 | ended about session: the token of the peer session the ending concerns (0: none or not known) | the holder |
//! | +44..+64 | unused | |
//!
//! A token is the low 32 bits of a session epoch ([`Token`]; epochs are odd,
//! so a token is never 0, and a word 0 is no session).

use std::sync::atomic::Ordering;

use super::ending::{Ended, Ending};
use super::Verdict;
use rfm_frames::area::{DESCRIPTOR_OFFSET, LIVENESS_LEN, LIVENESS_OFFSET};
use rfm_frames::session::Token;
use rfm_memory::{Network, Region, RegionError};

const OWNER: usize = LIVENESS_OFFSET;
const BEAT: usize = LIVENESS_OFFSET + 4;
const CLOSED: usize = LIVENESS_OFFSET + 8;
const MIRRORED: usize = LIVENESS_OFFSET + 12;
const MIRRORED_BY: usize = LIVENESS_OFFSET + 16;
const BRIDGED: usize = LIVENESS_OFFSET + 20;
const ENDED: usize = LIVENESS_OFFSET + 24;
const ENDING: usize = LIVENESS_OFFSET + 28;
const ENDED_ABOUT: usize = LIVENESS_OFFSET + 32;
/// The ring watch's own-data probe (the table above).
pub(crate) const PROBE: usize = LIVENESS_OFFSET + 36;
const ENDED_ABOUT_SESSION: usize = LIVENESS_OFFSET + 40;

const _: () = assert!(ENDED_ABOUT_SESSION + 4 <= LIVENESS_OFFSET + LIVENESS_LEN);

fn token_on(
    slot: &Region,
    ring: Network,
    at: usize,
    order: Ordering,
) -> Result<Option<Token>, RegionError> {
    Ok(Token::from_word(slot.load_u32_on(ring, at, order)?))
}

fn token_at(slot: &Region, at: usize) -> Result<Option<Token>, RegionError> {
    Ok(Token::from_word(slot.load_u32(at, Ordering::Acquire)?))
}

fn store_token(slot: &Region, at: usize, token: Option<Token>) -> Result<(), RegionError> {
    slot.store_u32(at, Token::word(token), Ordering::Release)
}

/// The liveness words of one slot, as read at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Words {
    pub owner: Option<Token>,
    pub beat: u32,
    pub closed: Option<Token>,
}

impl Words {
    /// Reads the words of `slot`: on two rings each ring's, and of the two
    /// what [`Words::current`] says.
    pub fn read(slot: &Region) -> Result<Words, RegionError> {
        let a = Words::read_on(slot, Network::A)?;
        if !slot.is_redundant() {
            return Ok(a);
        }
        Ok(a.current(Words::read_on(slot, Network::B)?))
    }

    /// Reads the words of `slot` on `ring` (the owner first: a beat read
    /// after it belongs to that owner or a later one).
    pub fn read_on(slot: &Region, ring: Network) -> Result<Words, RegionError> {
        Ok(Words {
            owner: token_on(slot, ring, OWNER, Ordering::Acquire)?,
            beat: slot.load_u32_on(ring, BEAT, Ordering::Acquire)?,
            closed: token_on(slot, ring, CLOSED, Ordering::Acquire)?,
        })
    }

    /// Of one slot's words on the two rings of a redundant device (`self` on
    /// ring A), the current: the rule of `docs/src/design/protocol.md`,
    /// "Two rings". A ring disagrees only where it lost stores (a cut at the
    /// writer's board, or at the reader's while they were made) or has them
    /// in flight; what it then shows is what the slot held before, which its
    /// holder's heartbeat writes again at its next beat.
    ///
    /// | the rings show | current |
    /// |---|---|
    /// | one owner | that owner; the later beat; closed when either shows it closed |
    /// | two owners, one held (not 0, not closed) | the held one |
    /// | two owners, both held or neither | the later beat (a new holder's beat counts on from the slot's, so it is ahead of a stale one) |
    pub fn current(self, other: Words) -> Words {
        let later = other.beat.wrapping_sub(self.beat) as i32 > 0;
        if self.owner == other.owner {
            return Words {
                owner: self.owner,
                beat: if later { other.beat } else { self.beat },
                closed: if other.is_closed() {
                    other.closed
                } else {
                    self.closed
                },
            };
        }
        let rank = |w: &Words| (w.is_held(), w.owner.is_some());
        match rank(&other).cmp(&rank(&self)) {
            std::cmp::Ordering::Greater => other,
            std::cmp::Ordering::Less => self,
            std::cmp::Ordering::Equal if later => other,
            std::cmp::Ordering::Equal => self,
        }
    }

    /// The owner stopped cleanly.
    pub fn is_closed(&self) -> bool {
        self.owner.is_some() && self.closed == self.owner
    }

    /// A session holds the slot and has not closed it (alive or not: only a
    /// beat seen moving proves that, see [`super::PeerWatch`]).
    pub fn is_held(&self) -> bool {
        self.owner.is_some() && !self.is_closed()
    }
}

/// The bridge that writes the holder of `slot` from another host (its id), or
/// `None` when the holder is of this host: a remote holder's token is in the
/// mirrored word as well as in the owner word.
pub fn remote_holder(slot: &Region) -> Result<Option<u32>, RegionError> {
    let owner = token_at(slot, OWNER)?;
    let mirrored = token_at(slot, MIRRORED)?;
    if owner.is_none() || owner != mirrored {
        return Ok(None);
    }
    Ok(Some(slot.load_u32(MIRRORED_BY, Ordering::Relaxed)?))
}

/// Writes the words of a session of another host into `slot`, as `bridge`
/// mirrors them: the mark first, so that no reader of this memory (a bridge
/// restarted here) ever sees that owner without it, then the words in the
/// order their writer stores them (owner, closed, beat), then its descriptor.
pub fn write_mirrored(
    slot: &Region,
    words: Words,
    bridge: u32,
    described: &[u8],
) -> Result<(), RegionError> {
    slot.store_u32(MIRRORED_BY, bridge, Ordering::Relaxed)?;
    store_token(slot, MIRRORED, words.owner)?;
    store_token(slot, OWNER, words.owner)?;
    store_token(slot, CLOSED, words.closed)?;
    slot.store_u32(BEAT, words.beat, Ordering::Release)?;
    slot.write(DESCRIPTOR_OFFSET, described)
}

/// A mirrored session's later words: its beat, then whether it closed.
pub fn write_mirrored_beat(slot: &Region, words: Words) -> Result<(), RegionError> {
    slot.store_u32(BEAT, words.beat, Ordering::Release)?;
    store_token(slot, CLOSED, words.closed)
}

/// The owner word on each ring of `slot` (one on a single ring): where the
/// rings disagree, each reader weighs them by its own rule (the heartbeat, the
/// close, the claim's verify; protocol.md, "Two rings").
///
/// An array, not a `Vec`: the heartbeat asks on every beat, and a beat
/// allocates nothing.
pub(crate) fn owners(
    slot: &Region,
) -> Result<impl Iterator<Item = (Network, Option<Token>)>, RegionError> {
    let mut words = [None; 2];
    for (word, &ring) in words.iter_mut().zip(slot.rings()) {
        *word = Some((ring, token_on(slot, ring, OWNER, Ordering::Acquire)?));
    }
    Ok(words.into_iter().flatten())
}

/// The beat word of `slot` on `ring`.
pub(crate) fn beat_on(slot: &Region, ring: Network) -> Result<u32, RegionError> {
    slot.load_u32_on(ring, BEAT, Ordering::Relaxed)
}

/// Stores the holder's next beat.
pub(crate) fn store_beat(slot: &Region, count: u32) -> Result<(), RegionError> {
    slot.store_u32(BEAT, count, Ordering::Release)
}

/// Writes a won claim's announce again (`described`, then the owner word
/// `token`, closed = 0), for a ring that missed it: the descriptor first, as
/// [`announce`] writes it.
pub(crate) fn announce_again(
    slot: &Region,
    described: &[u8],
    token: Token,
) -> Result<(), RegionError> {
    slot.write(DESCRIPTOR_OFFSET, described)?;
    store_token(slot, OWNER, Some(token))?;
    store_token(slot, CLOSED, None)
}

/// Announces session `epoch`'s claim of the area `own`: its descriptor first
/// (`described`, encoded with its token and padded to words), then the owner
/// word, so that whoever sees the owner word also sees whose area it is.
pub(crate) fn announce(own: &Region, described: &[u8], epoch: u64) -> Result<(), RegionError> {
    own.write(DESCRIPTOR_OFFSET, described)?;
    store_token(own, OWNER, Some(Token::of(epoch)))?;
    store_token(own, CLOSED, None)?;
    store_token(own, BRIDGED, None)?;
    store_token(own, ENDED, None)
}

/// Marks session `epoch` stopped as `ended` says (how, and about which peer),
/// if it still holds `own`: the ending first, then the closed mark, so that a
/// reader that sees the mark reads why.
pub(crate) fn close(own: &Region, epoch: u64, ended: Ended) -> Result<(), RegionError> {
    // On two rings, a ring that missed the announce shows another owner; the
    // other's shows this session's.
    let token = Token::of(epoch);
    if !owners(own)?.any(|(_, owner)| Verdict::of(owner, token).is_its()) {
        return Ok(());
    }
    own.store_u32(ENDING, ended.how.code(), Ordering::Relaxed)?;
    own.store_u32(
        ENDED_ABOUT,
        ended.about.map_or(u32::MAX, u32::from),
        Ordering::Relaxed,
    )?;
    own.store_u32(
        ENDED_ABOUT_SESSION,
        Token::word(ended.about_session),
        Ordering::Relaxed,
    )?;
    store_token(own, ENDED, Some(token))?;
    store_token(own, CLOSED, Some(token))
}

/// How the session `owner` of `area` ended, if it recorded it.
/// On two rings, from the ring that holds it.
pub fn ended(area: &Region, owner: Option<Token>) -> Result<Option<Ended>, RegionError> {
    let Some(owner) = owner else {
        return Ok(None);
    };
    for &ring in area.rings() {
        let ended = token_on(area, ring, ENDED, Ordering::Acquire)?;
        if !Verdict::of(ended, owner).is_its() {
            continue;
        }
        let about = area.load_u32_on(ring, ENDED_ABOUT, Ordering::Relaxed)?;
        let session = area.load_u32_on(ring, ENDED_ABOUT_SESSION, Ordering::Relaxed)?;
        let how = Ending::of_code(area.load_u32_on(ring, ENDING, Ordering::Relaxed)?);
        return Ok(how.map(|how| Ended {
            how,
            about: u8::try_from(about).ok(),
            about_session: Token::from_word(session),
        }));
    }
    Ok(None)
}

/// A bridge records that it has seen the claim of `owner` and sends it on:
/// the claimant then settles long enough for other hosts' claims to arrive.
pub fn acknowledge(area: &Region, owner: Token) -> Result<(), RegionError> {
    store_token(area, BRIDGED, Some(owner))
}

/// Whether a bridge has acknowledged the claim of `owner`.
pub(crate) fn acknowledged(area: &Region, owner: Token) -> Result<bool, RegionError> {
    let bridged = token_at(area, BRIDGED)?;
    Ok(Verdict::of(bridged, owner).is_its())
}

/// Whether a bridge has been at `area`: its holder is another host's, or a
/// bridge acknowledged a claim of it.
pub(crate) fn bridge_seen(area: &Region) -> Result<bool, RegionError> {
    Ok(token_at(area, BRIDGED)?.is_some() || remote_holder(area)?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfm_memory::{Device, OpenOptions};

    fn area(name: &str) -> Region {
        let device =
            Device::open(&format!("loopback:block-{name}"), &OpenOptions::default()).unwrap();
        device.map(0, 4096).unwrap()
    }

    #[test]
    fn a_session_records_how_it_ended_before_its_closed_mark_and_only_its_own() {
        let a = area("ended");
        announce(&a, &[], 0x21).unwrap();
        let timeout = Ended {
            how: Ending::Timeout,
            about: Some(1),
            about_session: None,
        };
        close(&a, 0x23, timeout).unwrap();
        assert_eq!(Words::read(&a).unwrap().closed, None, "not its area");
        let incompatible = Ended {
            how: Ending::Incompatible,
            about: Some(0),
            about_session: Some(Token::of(0x47)),
        };
        close(&a, 0x21, incompatible).unwrap();
        assert!(Words::read(&a).unwrap().is_closed());
        assert_eq!(
            ended(&a, Some(Token::of(0x21))).unwrap(),
            Some(incompatible)
        );
        announce(&a, &[], 0x25).unwrap();
        let new = Some(Token::of(0x25));
        assert_eq!(ended(&a, new).unwrap(), None, "a new claim forgets it");
    }
}

/// The book's table of the liveness words (`docs/src/reference/memory-layout.md`)
/// and this module's own say what the constants say: an offset moved or a word
/// added in one place fails here until the others follow.
#[cfg(test)]
mod book {
    use super::*;
    use crate::link::book_table::rows;

    /// The words this module defines, by the name its table gives them.
    const DEFINED: [(&str, usize); 11] = [
        ("owner", OWNER),
        ("beat", BEAT),
        ("closed", CLOSED),
        ("mirrored", MIRRORED),
        ("mirrored by", MIRRORED_BY),
        ("bridged", BRIDGED),
        ("ended", ENDED),
        ("ending", ENDING),
        ("ended about", ENDED_ABOUT),
        ("probe", PROBE),
        ("ended about session", ENDED_ABOUT_SESSION),
    ];

    #[test]
    fn the_books_table_and_this_modules_name_every_word_at_its_offset() {
        let defined: Vec<(usize, String)> = DEFINED
            .iter()
            .map(|&(name, at)| (at - LIVENESS_OFFSET, name.to_owned()))
            .collect();
        let words_of = |text| rows(text, "| offset | word | written by |", 2);
        let here = words_of(include_str!("block.rs"));
        let book = words_of(include_str!(
            "../../../../docs/src/reference/memory-layout.md"
        ));
        assert_eq!(here, defined, "block.rs's table");
        assert_eq!(book, defined, "memory-layout.md's table");
    }
}
