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
//! | where | word | written by |
//! |---|---|---|
//! | +128 | owner: the holder's token (0: never held) | the claimant (`announce`); a bridge for another host's session |
//! | +132 | beat: moves every 10 ms while the holder runs | the holder's heartbeat thread |
//! | +136 | closed: the owner's token once it stopped | the holder (`close`) |
//! | +140, +144 | mirrored, mirrored by: the remote mark (owner == mirrored: held from another host, through that bridge) | a bridge |
//! | +148 | bridged: the token of a claim a bridge has seen and sends on | a bridge ([`acknowledge`]) |
//! | +152..+164 | ended: the token whose ending is recorded, how it ended ([`Ending`]), and the peer slot it concerns | the holder (`close`) |
//! | +164 | probe: a count stored through the driver, never read: the own-data test of a redundant device's cards | the holder's ring watch (`link/ring_watch.rs`) |
//! | +192 | descriptor, carrying its writer's token | the claimant (`announce`) |
//! | ring | frames, each carrying its writer's epoch | the holder |
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

use std::fmt;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::liveness::{token, Life, PeerWatch, Words, DEAD_AFTER};
use rfm_frames::area::{window, DESCRIPTOR_OFFSET, LIVENESS_OFFSET};
use rfm_interface::descriptor::Descriptor;
use rfm_interface::{descriptor_at, Found, Interface, MemoryMap};
use rfm_memory::{Region, RegionError, WORD};

const OWNER: usize = LIVENESS_OFFSET;
const CLOSED: usize = LIVENESS_OFFSET + 8;
const BRIDGED: usize = LIVENESS_OFFSET + 20;
const ENDED: usize = LIVENESS_OFFSET + 24;
const ENDING: usize = LIVENESS_OFFSET + 28;
const ENDED_ABOUT: usize = LIVENESS_OFFSET + 32;
/// The ring watch's own-data probe (the table above).
pub(crate) const PROBE: usize = LIVENESS_OFFSET + 36;

/// How a session ended, as it records it for its peers (one table: the code
/// in memory and the phrase a peer's message uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Its master terminated it.
    Terminated,
    /// Its first exchange found a peer built otherwise (another file, mode,
    /// layout or version).
    Incompatible,
    /// A peer's frame did not come within its timeout.
    Timeout,
    /// A peer stopped, died or restarted.
    PeerEnded,
    /// It failed otherwise (memory, configuration, a frame overwritten).
    Failed,
}

const ENDINGS: [(Ending, u32, &str); 5] = [
    (Ending::Terminated, 1, "its master terminated it"),
    (
        Ending::Incompatible,
        2,
        "it refused its first exchange: a peer is incompatible",
    ),
    (Ending::Timeout, 3, "it timed out waiting for a peer"),
    (
        Ending::PeerEnded,
        4,
        "a peer of its own stopped, died or restarted",
    ),
    (Ending::Failed, 5, "it failed"),
];

impl Ending {
    fn code(self) -> u32 {
        ENDINGS.iter().find(|e| e.0 == self).map_or(0, |e| e.1)
    }

    fn of_code(code: u32) -> Option<Ending> {
        ENDINGS.iter().find(|e| e.1 == code).map(|e| e.0)
    }
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let phrase = ENDINGS.iter().find(|e| e.0 == *self).map_or("", |e| e.2);
        f.write_str(phrase)
    }
}

/// What a stopped session recorded of its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    pub how: Ending,
    /// The peer slot the failure concerns, if one.
    pub about: Option<u8>,
}

impl Ended {
    /// How it ended, naming the peer it concerns as every other message
    /// does: by its node in `interface`, and its slot.
    pub fn describe(&self, interface: &rfm_interface::Interface) -> String {
        let Some(slot) = self.about else {
            return self.how.to_string();
        };
        match interface.nodes.iter().find(|n| n.slot == slot) {
            Some(n) => format!("{} (node `{}`, slot {slot})", self.how, n.name),
            None => format!("{} (slot {slot})", self.how),
        }
    }
}

/// Announces session `epoch`'s claim of the area `own`: its descriptor first
/// (`described`, encoded with its token and padded to words), then the owner
/// word, so that whoever sees the owner word also sees whose area it is.
pub(crate) fn announce(own: &Region, described: &[u8], epoch: u64) -> Result<(), RegionError> {
    own.write(DESCRIPTOR_OFFSET, described)?;
    own.store_u32(OWNER, token(epoch), Ordering::Release)?;
    own.store_u32(CLOSED, 0, Ordering::Release)?;
    own.store_u32(BRIDGED, 0, Ordering::Release)?;
    own.store_u32(ENDED, 0, Ordering::Release)
}

/// Marks session `epoch` stopped, `how` (and about which peer slot), if it
/// still holds `own`: the ending first, then the closed mark, so that a reader
/// that sees the mark reads why.
pub(crate) fn close(
    own: &Region,
    epoch: u64,
    how: Ending,
    about: Option<u8>,
) -> Result<(), RegionError> {
    // On two rings, a ring that missed the announce shows another owner; the
    // other's shows this session's.
    let mut holds = false;
    for &ring in own.rings() {
        holds |= own.load_u32_on(ring, OWNER, Ordering::Acquire)? == token(epoch);
    }
    if !holds {
        return Ok(());
    }
    own.store_u32(ENDING, how.code(), Ordering::Relaxed)?;
    own.store_u32(
        ENDED_ABOUT,
        about.map_or(u32::MAX, u32::from),
        Ordering::Relaxed,
    )?;
    own.store_u32(ENDED, token(epoch), Ordering::Release)?;
    own.store_u32(CLOSED, token(epoch), Ordering::Release)
}

/// How the session `owner` of `area` ended, if it recorded it.
/// On two rings, from the ring that holds it.
pub fn ended(area: &Region, owner: u32) -> Result<Option<Ended>, RegionError> {
    if owner == 0 {
        return Ok(None);
    }
    for &ring in area.rings() {
        if area.load_u32_on(ring, ENDED, Ordering::Acquire)? != owner {
            continue;
        }
        let about = area.load_u32_on(ring, ENDED_ABOUT, Ordering::Relaxed)?;
        let how = Ending::of_code(area.load_u32_on(ring, ENDING, Ordering::Relaxed)?);
        return Ok(how.map(|how| Ended {
            how,
            about: u8::try_from(about).ok(),
        }));
    }
    Ok(None)
}

/// A bridge records that it has seen the claim of `owner` and sends it on:
/// the claimant then settles long enough for other hosts' claims to arrive.
pub fn acknowledge(area: &Region, owner: u32) -> Result<(), RegionError> {
    area.store_u32(BRIDGED, owner, Ordering::Release)
}

/// Whether a bridge has acknowledged the claim of `owner`.
pub(crate) fn acknowledged(area: &Region, owner: u32) -> Result<bool, RegionError> {
    Ok(area.load_u32(BRIDGED, Ordering::Acquire)? == owner)
}

/// Whether a bridge has been at `area`: its holder is another host's, or a
/// bridge acknowledged a claim of it.
pub(crate) fn bridge_seen(area: &Region) -> Result<bool, RegionError> {
    Ok(area.load_u32(BRIDGED, Ordering::Acquire)? != 0
        || super::liveness::remote_holder(area)?.is_some())
}

/// The descriptor of the session holding `area` (the area's own window): the
/// one at its place whose token is the owner word. `None` when the area holds
/// none, or one an earlier session left.
/// On two rings, the holder (the current owner, [`Words::current`]) is
/// described on either: a ring that missed its announce holds the one before.
pub fn holder_descriptor(area: &Region) -> Result<Option<Descriptor>, RegionError> {
    let owner = Words::read(area)?.owner;
    if owner == 0 {
        return Ok(None);
    }
    for &ring in area.rings() {
        if let Some(d) = descriptor_at(&area.on(ring), DESCRIPTOR_OFFSET)
            .ok()
            .filter(|d| d.session == owner)
        {
            return Ok(Some(d));
        }
    }
    Ok(None)
}

/// Whether `found` (a descriptor found in `region`) is its area's holder's.
pub fn is_holders(region: &Region, found: &Found) -> Result<bool, RegionError> {
    let words = Words::read(&window(region, &found.area)?)?;
    Ok(words.owner != 0 && words.owner == found.descriptor.session)
}

/// The holder of an area, judged from its words watched over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// Never held.
    Free,
    /// Left over: its holder stopped cleanly (and recorded how, if it did).
    Closed { owner: u32, ended: Option<Ended> },
    /// Left over: its beat has not moved for [`DEAD_AFTER`].
    Dead { owner: u32, silent: Duration },
    /// Held, and its beat not yet seen to move: watch on.
    Unproven { owner: u32, since: Instant },
    /// Its beat was last seen moving at `last`; `remote`: the bridge that
    /// writes it from another host.
    Live {
        owner: u32,
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

/// Watches one area's holder over time, on the reader's monotonic clock.
#[derive(Debug, Clone)]
pub struct AreaWatch {
    watch: PeerWatch,
}

impl AreaWatch {
    /// Starts watching with the words read at `now`: a beat already there
    /// proves nothing, only a move seen from here on.
    pub fn new(words: Words, now: Instant) -> AreaWatch {
        AreaWatch {
            watch: PeerWatch::new(words, now),
        }
    }

    /// Judges the area (its own window) as read at `now`.
    pub fn judge(&mut self, area: &Region, now: Instant) -> Result<Holder, RegionError> {
        let words = Words::read(area)?;
        Ok(match self.watch.observe(words, now) {
            Life::Absent => Holder::Free,
            Life::Closed { owner } => Holder::Closed {
                owner,
                ended: ended(area, owner)?,
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
                remote: super::liveness::remote_holder(area)?,
            },
        })
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

/// The judgement of an area found by its descriptor, as every reader tells
/// it: `holders` when the descriptor is its holder's ([`is_holders`]), `whose`
/// when the reader has an interface file.
pub fn verdict(holder: &Holder, holders: bool, whose: Option<Whose>) -> &'static str {
    match (holder, whose) {
        (Holder::Free, _) if !holders => "free",
        (_, _) if !holders => "left over, written over",
        (Holder::Free, _) => "free",
        (Holder::Closed { .. }, _) => "left over, closed",
        (Holder::Dead { .. }, _) => "left over, dead",
        (Holder::Unproven { .. }, _) => "held, watching",
        (
            Holder::Live {
                remote: Some(_), ..
            },
            _,
        ) => "live, on another host",
        (Holder::Live { .. }, Some(Whose::ThisCoupling)) => "live, this coupling",
        (Holder::Live { .. }, Some(Whose::OtherFile)) => "live, this interface from another file",
        (Holder::Live { .. }, Some(Whose::OtherInterface)) => "live, another interface",
        (Holder::Live { .. }, None) => "live",
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
                &i.nodes[0],
                &geometry.payload,
                token(epoch),
            ))
        };
        assert_eq!(holder_descriptor(&a).unwrap(), None, "never held");
        announce(&a, &bytes(0x11), 0x11).unwrap();
        assert_eq!(holder_descriptor(&a).unwrap().unwrap().session, 0x11);
        // A new claimant's owner word over the old descriptor: not its.
        a.store_u32(OWNER, 0x33, Ordering::Release).unwrap();
        assert_eq!(holder_descriptor(&a).unwrap(), None);
        announce(&a, &bytes(0x33), 0x33).unwrap();
        assert_eq!(holder_descriptor(&a).unwrap().unwrap().session, 0x33);
    }

    #[test]
    fn a_session_records_how_it_ended_before_its_closed_mark_and_only_its_own() {
        let a = area("ended");
        announce(&a, &[], 0x21).unwrap();
        close(&a, 0x23, Ending::Timeout, Some(1)).unwrap();
        assert_eq!(Words::read(&a).unwrap().closed, 0, "not its area");
        close(&a, 0x21, Ending::Incompatible, Some(0)).unwrap();
        assert!(Words::read(&a).unwrap().is_closed());
        assert_eq!(
            ended(&a, 0x21).unwrap(),
            Some(Ended {
                how: Ending::Incompatible,
                about: Some(0)
            })
        );
        announce(&a, &[], 0x25).unwrap();
        assert_eq!(ended(&a, 0x25).unwrap(), None, "a new claim forgets it");
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
                &theirs.nodes[i],
                &area.payload,
                1,
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

    #[test]
    fn every_ending_has_one_code_and_one_phrase() {
        for (i, a) in ENDINGS.iter().enumerate() {
            assert_eq!(Ending::of_code(a.1), Some(a.0));
            assert!(ENDINGS[i + 1..].iter().all(|b| b.0 != a.0 && b.1 != a.1));
        }
    }
}
