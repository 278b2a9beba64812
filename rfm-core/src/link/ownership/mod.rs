//! Who owns an area of the memory: the protocol, whole, and the one judgement
//! of an area that every reader uses (the node at its claim, its peers, the
//! lookout, `rfmctl watch` and `record`, the bridge).
//!
//! Reflective memory outlives every run, and the interface may change between
//! runs, so an area can hold what any earlier run of any interface left. What a
//! session writes is therefore only believed while that session holds the
//! area, and every word that speaks for a session carries its token (the low
//! 32 bits of its epoch; odd, never 0).
//!
//! # The words of an area
//!
//! The liveness block's words (owner, beat, closed, the bridge's marks, how
//! the holder ended) are [`block`]'s, each defined there once; the
//! descriptor follows the block (+192), carrying its writer's token, and the
//! ring of frames, each carrying its writer's epoch.
//!
//! # Transitions
//!
//! | transition | writes, in order | invariant kept |
//! |---|---|---|
//! | claim: observe | nothing; scans the descriptors over the areas of the coupling and watches their holders, and this area's own words | a live holder is never written over: one seen beating refuses the claim, naming it |
//! | claim: announce | the descriptor (own token), then owner (own token), closed = 0, ended = 0; the heartbeat starts | a reader that sees the owner word sees the holder's descriptor after it |
//! | claim: settle | nothing for [`super::claim::CLAIM_SETTLE`] (and, once a bridge acknowledged the claim, [`super::claim::BRIDGE_SETTLE`] more) | every claim that read this area free before the announce has announced by the end |
//! | claim: verify | nothing; the owner word must still be this token, and no other announced claim over this area may have a lower token | exactly one of two simultaneous claimants goes on; the other writes nothing more |
//! | describe | the ring cleared, the descriptor again, frame 0 | what an earlier run left in the ring is gone before frame 0 |
//! | publish, beat | frames; the beat word | only while the owner word is this token (the heartbeat stops when it is not) |
//! | beat, two rings | on a ring whose owner word shows what it held before the announce (a cut at this board lost the announce there), once won: the descriptor, then the owner word, before the beat | a mended ring holds the holder's words again within one beat; readers believe the current ring meanwhile ([`Words::current`]) |
//! | close | ended, then closed = own token | readers learn at once that the holder stopped, and why |
//! | crash | nothing more: the beat stops | readers judge the holder dead after [`DEAD_AFTER`] of silence |
//! | take over | an announce over a closed (at once) or dead (after [`DEAD_AFTER`]) holder | leftovers never refuse a claim |
//! | mirror | a bridge writes another host's session: remote mark, owner, closed, beat, descriptor, frames | a session is sent on once described by its own token; two hosts' claims of one area are decided by the earlier announcement, at both ends alike |
//!
//! # The judgement
//!
//! A descriptor describes its area only while its token is the owner word
//! there ([`holder_descriptor`]): a claimant's area holds the last run's
//! descriptor until its own is written, and judging a new beat against an old
//! descriptor is what once refused couplings over leftovers. The holder's life
//! is then judged by its words, watched over time on the reader's clock
//! ([`AreaWatch`]), and whose it is by the reader's interface ([`Whose`]):
//!
//! | words | [`Holder`] | shown as |
//! |---|---|---|
//! | owner 0, no descriptor | `Free` | free |
//! | closed == owner | `Closed` | left over, closed |
//! | held, beat still for [`DEAD_AFTER`] | `Dead` | left over, dead |
//! | held, beat not yet seen to move | `Unproven` | held, watching |
//! | beat seen moving, owner ≠ mirrored | `Live` | live, this coupling / this interface from another file / another interface |
//! | beat seen moving, owner == mirrored | `Live` (remote) | live, on another host |

pub mod block;
pub mod ending;
mod watch;

use std::time::{Duration, Instant};

use block::Words;
use ending::Ended;
use rfm_frames::area::{window, DESCRIPTOR_OFFSET};
use rfm_frames::session::Token;
use rfm_interface::descriptor::Descriptor;
use rfm_interface::{descriptor_at, Found, Interface, MemoryMap};
use rfm_memory::{Region, RegionError, WORD};
pub use watch::{sweep, AreaWatch, Life, PeerWatch, Watched};

/// A slot whose beat has not moved for this long (on the taker's clock) may be taken
/// by another session: 50 missed beats, far beyond any scheduling delay of a live
/// heartbeat thread.
pub const DEAD_AFTER: Duration = Duration::from_millis(500);

/// The descriptor of the session holding `area` (the area's own window): the
/// one at its place whose token is the owner word. `None` when the area holds
/// none, or one an earlier session left.
/// On two rings, the holder (the current owner, [`Words::current`]) is
/// described on either: a ring that missed its announce holds the one before.
pub fn holder_descriptor(area: &Region) -> Result<Option<Descriptor>, RegionError> {
    let owner = Words::read(area)?.owner;
    if owner.is_none() {
        return Ok(None);
    }
    for &ring in area.rings() {
        if let Some(d) = descriptor_at(&area.on(ring), DESCRIPTOR_OFFSET)
            .ok()
            .filter(|d| Verdict::of(owner, d.session).is_its())
        {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

/// Whether `found` (a descriptor found in `region`) is its area's holder's.
pub fn is_holders(region: &Region, found: &Found) -> Result<bool, RegionError> {
    describes_holder(&window(region, &found.area)?, found.descriptor.session)
}

/// Whether a descriptor of session `session` is the holder's of `area` (its
/// own window): the owner word is that session's, open or closed.
pub fn describes_holder(area: &Region, session: Option<Token>) -> Result<bool, RegionError> {
    Ok(owned_by(&Words::read(area)?, session))
}

/// The holder of an area, judged from its words watched over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// Never held.
    Free,
    /// Left over: its holder stopped cleanly (and recorded how, if it did).
    Closed { owner: Token, ended: Option<Ended> },
    /// Left over: its beat has not moved for [`DEAD_AFTER`].
    Dead { owner: Token, silent: Duration },
    /// Held, and its beat not yet seen to move: watch on.
    Unproven { owner: Token, since: Instant },
    /// Its beat was last seen moving at `last`; `remote`: the bridge that
    /// writes it from another host.
    Live {
        owner: Token,
        last: Instant,
        remote: Option<u32>,
    },
}

impl Holder {
    /// Left over: closed or dead, so the area may be taken.
    pub fn is_left_over(&self) -> bool {
        matches!(self, Holder::Closed { .. } | Holder::Dead { .. })
    }
}

/// What a reader knows of an area's holder, of which a [`Verdict`] is given:
/// the holder as judged from its area ([`Holder`]), from its words alone
/// ([`Life`], the handshake's on the step's path) or an owner word itself.
pub trait Held: Copy {
    /// The token of the session whose area it is (or was), if it was ever
    /// held.
    fn owner(&self) -> Option<Token>;
}

impl Held for Option<Token> {
    fn owner(&self) -> Option<Token> {
        *self
    }
}

impl Held for Holder {
    fn owner(&self) -> Option<Token> {
        match *self {
            Holder::Free => None,
            Holder::Closed { owner, .. }
            | Holder::Dead { owner, .. }
            | Holder::Unproven { owner, .. }
            | Holder::Live { owner, .. } => Some(owner),
        }
    }
}

/// What one ring's owner word says of session `token`, which announced over
/// what that ring held `before` (protocol.md, "Two rings"): a ring that
/// still shows what it held before missed the announce (a cut at this board
/// while it was made) and is written again once the claim holds; any other
/// owner is another session's. The claim's verify and the heartbeat both
/// weigh each ring by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RingOwner {
    Its,
    Missed(Option<Token>),
    Other(Option<Token>),
}

impl RingOwner {
    /// `owner` (one ring's word) judged for `token`; `before`: that ring's
    /// word before the announce, when it is known.
    pub(crate) fn of(
        owner: Option<Token>,
        token: Token,
        before: Option<Option<Token>>,
    ) -> RingOwner {
        match Verdict::of(owner, token) {
            Verdict::Its(_) => RingOwner::Its,
            _ if before == Some(owner) => RingOwner::Missed(owner),
            _ => RingOwner::Other(owner),
        }
    }
}

/// Whether session `session` holds the area whose words are `words`: the
/// owner word is its token, open or closed.
pub fn owned_by(words: &Words, session: impl Into<Option<Token>>) -> bool {
    Verdict::of(words.owner, session).is_its()
}

/// The verdict on an area for the session a reader looks for (the one whose
/// descriptor it found there, its peer's, or its own): whether that session
/// holds it, and how (`H`: what the reader knows of the holder, [`Held`]).
/// The one question every reader of an area asks, answered here alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict<H = Holder> {
    /// Never held.
    Free,
    /// The session looked for holds it (or left it so).
    Its(H),
    /// Another session holds it (or left it): what was looked for was
    /// written over.
    Other(H),
}

impl<H: Held> Verdict<H> {
    /// `held` judged for session `session` (`None`: a descriptor of no
    /// session, which no holder is).
    pub fn of(held: H, session: impl Into<Option<Token>>) -> Verdict<H> {
        match (held.owner(), session.into()) {
            (None, _) => Verdict::Free,
            (Some(owner), Some(session)) if owner == session => Verdict::Its(held),
            (Some(_), _) => Verdict::Other(held),
        }
    }

    /// The session looked for holds it.
    pub fn is_its(&self) -> bool {
        matches!(self, Verdict::Its(_))
    }
}

impl Verdict<Holder> {
    /// The session looked for holds the area and its beat has not been seen
    /// to move yet: watch on.
    pub fn is_unproven(&self) -> bool {
        matches!(self, Verdict::Its(Holder::Unproven { .. }))
    }

    /// The session looked for closed the area, saying how.
    pub fn ended(&self) -> Option<Ended> {
        match self {
            Verdict::Its(Holder::Closed { ended, .. }) => *ended,
            _ => None,
        }
    }

    /// The verdict as every reader shows it; `whose` when the reader has an
    /// interface file.
    pub fn text(&self, whose: Option<Whose>) -> &'static str {
        match (self, whose) {
            (Verdict::Free, _) => "free",
            (Verdict::Other(_), _) => "left over, written over",
            (Verdict::Its(Holder::Free), _) => "free",
            (Verdict::Its(Holder::Closed { .. }), _) => "left over, closed",
            (Verdict::Its(Holder::Dead { .. }), _) => "left over, dead",
            (Verdict::Its(Holder::Unproven { .. }), _) => "held, watching",
            (
                Verdict::Its(Holder::Live {
                    remote: Some(_), ..
                }),
                _,
            ) => "live, on another host",
            (Verdict::Its(Holder::Live { .. }), Some(Whose::ThisCoupling)) => "live, this coupling",
            (Verdict::Its(Holder::Live { .. }), Some(Whose::OtherFile)) => {
                "live, this interface from another file"
            }
            (Verdict::Its(Holder::Live { .. }), Some(Whose::OtherInterface)) => {
                "live, another interface"
            }
            (Verdict::Its(Holder::Live { .. }), None) => "live",
        }
    }
}

/// Whose a described area is, for a reader with an interface file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// The node this file puts there: a peer of this coupling (or this node's
    /// own slot).
    ThisCoupling,
    /// A node of this interface (its name, and a node of this file's by its
    /// name) built from another file.
    OtherFile,
    /// Another interface (or one that only shares this one's name).
    OtherInterface,
}

impl Whose {
    /// Whose `found` is, read with `interface` laid out as `map`.
    pub fn of(found: &Found, interface: &Interface, fingerprint: u64, map: &MemoryMap) -> Whose {
        let d = &found.descriptor;
        let named = interface.nodes.iter().position(|n| n.name == d.node);
        match named {
            Some(i) if d.fingerprint == fingerprint && map.area(i).offset == found.area.offset => {
                Whose::ThisCoupling
            }
            Some(_) if d.interface == interface.name => Whose::OtherFile,
            _ => Whose::OtherInterface,
        }
    }
}

/// A descriptor padded to whole words, as [`announce`] writes it.
pub(crate) fn padded(mut described: Vec<u8>) -> Vec<u8> {
    described.resize(described.len().next_multiple_of(WORD), 0);
    described
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfm_memory::{Device, OpenOptions};

    /// A memory of the test's own (tests run at once, and loopback memory is
    /// shared by name).
    fn area(name: &str) -> Region {
        let device = Device::open(
            &format!("loopback:ownership-{name}"),
            &OpenOptions::default(),
        )
        .unwrap();
        device.map(0, 4096).unwrap()
    }

    #[test]
    fn a_descriptor_describes_its_area_only_while_its_session_holds_it() {
        let a = area("descriptor");
        let i = rfm_interface::attitude(0, 1);
        let map = i.map().unwrap();
        let geometry = map.area(0);
        let bytes = |epoch: u64| {
            padded(rfm_interface::descriptor::encode(
                &i.name,
                i.fingerprint(),
                (&i.nodes[0], &[]),
                &geometry.payload,
                Some(Token::of(epoch)),
            ))
        };
        assert_eq!(holder_descriptor(&a).unwrap(), None, "never held");
        block::announce(&a, &bytes(0x11), 0x11).unwrap();
        assert_eq!(
            holder_descriptor(&a).unwrap().unwrap().session,
            Some(Token::of(0x11))
        );
        // A new claimant's owner word over the old descriptor: not its.
        block::announce(&a, &[], 0x33).unwrap();
        assert_eq!(holder_descriptor(&a).unwrap(), None);
        block::announce(&a, &bytes(0x33), 0x33).unwrap();
        assert_eq!(
            holder_descriptor(&a).unwrap().unwrap().session,
            Some(Token::of(0x33))
        );
    }

    /// Whose a described area is: the node this file puts there; a node of
    /// this interface (its name, and a node of that name) from another file;
    /// or another interface, also one that only shares the name.
    #[test]
    fn another_interface_that_shares_this_ones_name_is_another_interface() {
        use rfm_interface::{Interface, Reserved};
        let file = |nodes: &str| {
            Interface::parse(
                "f.toml",
                &format!("name = \"lab\"\n{nodes}"),
                &Reserved::NONE,
            )
            .unwrap()
        };
        let node = |name: &str, slot: u8, signals: &str| {
            format!("[[node]]\nname = \"{name}\"\nslot = {slot}\nsignals = [{signals}]\n")
        };
        let x = "{ name = \"x\", type = \"Real\" }";
        let xy = "{ name = \"x\", type = \"Real\" }, { name = \"y\", type = \"Real\" }";
        let ours = file(&(node("cockpit", 0, x) + &node("visual", 1, x)));
        let map = ours.map().unwrap();
        let found_in = |theirs: &Interface, i: usize| {
            let m = theirs.map().unwrap();
            let area = m.area(i).clone();
            let bytes = rfm_interface::descriptor::encode(
                &theirs.name,
                theirs.fingerprint(),
                (&theirs.nodes[i], &[]),
                &area.payload,
                Some(Token::of(1)),
            );
            Found {
                descriptor: rfm_interface::descriptor::decode(&bytes).unwrap(),
                area,
            }
        };
        let whose = |theirs: &Interface, i| {
            Whose::of(&found_in(theirs, i), &ours, ours.fingerprint(), &map)
        };
        assert_eq!(whose(&ours, 1), Whose::ThisCoupling);
        let edited = file(&(node("cockpit", 0, xy) + &node("visual", 1, x)));
        assert_eq!(whose(&edited, 1), Whose::OtherFile);
        let namesake = file(&(node("flight", 0, xy) + &node("motion", 1, x)));
        assert_eq!(whose(&namesake, 1), Whose::OtherInterface);
        let moved = file(&(node("cockpit", 0, x) + &node("visual", 2, x)));
        assert_eq!(
            whose(&moved, 1),
            Whose::OtherFile,
            "another slot, same node"
        );
    }
}
