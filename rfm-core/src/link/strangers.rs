//! Nodes the memory describes that this node's interface file does not: a node
//! of another interface, or of this one built from another file, found by the
//! descriptors every node writes into its area (`interface::discover`).
//!
//! A node of another interface whose heartbeat beats over an area this coupling
//! uses would be overwritten by this node, or would overwrite it: the node
//! refuses to start before it writes anything. What dead or closed runs left
//! may be overwritten, as always. While a peer has never been seen, the waiting
//! node looks for it among the strangers too: built from a file of another
//! layout, it writes somewhere else, and waiting for it where this file puts it
//! would last the whole `startupTimeout` and then blame the wrong thing.

use std::time::{Duration, Instant};

use super::liveness::{Words, HEARTBEAT_PERIOD};
use crate::area::window;
use crate::interface::{discover, Found};
use crate::interface::{Interface, MemoryMap};
use crate::region::{Region, RegionError};

/// How long a stranger's beat is watched before it is judged left over: several
/// beats of a live heartbeat thread.
pub(crate) const WATCH: Duration = Duration::from_millis(100);

/// How often a node waiting for a peer it has never seen looks for it among the
/// strangers (each look reads one word per 64 bytes of the memory).
pub(crate) const LOOK_EVERY: Duration = Duration::from_millis(200);

const _: () = assert!(WATCH.as_millis() > 4 * HEARTBEAT_PERIOD.as_millis());

/// A stranger found, and its liveness words when first seen.
#[derive(Debug, Clone)]
pub(crate) struct Stranger {
    pub found: Found,
    words: Words,
    since: Instant,
}

/// What a look at the strangers decided.
#[derive(Debug)]
pub(crate) enum Judged {
    /// None of them holds its area (none left, or all closed or silent for [`WATCH`]).
    Clear,
    /// Some are held and have not beaten yet: look again.
    Watching,
    /// This one's beat moved: it runs.
    Live(Box<Found>),
}

/// Whether `found` is the node this file puts there: the same fingerprint, at
/// the place the map gives that node.
fn belongs(found: &Found, fingerprint: u64, interface: &Interface, map: &MemoryMap) -> bool {
    found.descriptor.fingerprint == fingerprint
        && interface
            .nodes
            .iter()
            .position(|n| n.name == found.descriptor.node)
            .is_some_and(|i| map.area(i).offset == found.area.offset)
}

/// Whether `found`'s area overlaps an area of `map`.
pub(crate) fn overlaps_map(found: &Found, map: &MemoryMap) -> bool {
    map.areas.iter().any(|a| a.overlaps(&found.area))
}

/// The strangers of `region` that hold their areas (a session's token, not
/// closed), wherever they are.
pub(crate) fn find(
    region: &Region,
    interface: &Interface,
    map: &MemoryMap,
    now: Instant,
) -> Result<Vec<Stranger>, RegionError> {
    let fingerprint = interface.fingerprint();
    let mut strangers = Vec::new();
    for found in discover(region)? {
        if belongs(&found, fingerprint, interface, map) {
            continue;
        }
        let words = Words::read(&window(region, &found.area)?)?;
        if words.is_held() {
            strangers.push(Stranger {
                found,
                words,
                since: now,
            });
        }
    }
    Ok(strangers)
}

/// Reads each stranger's words again at `now`: one whose beat moved since it
/// was first seen is live (also when it has closed since: a node that ran and
/// then failed was live); ones closed, taken over or silent for [`WATCH`]
/// are dropped.
pub(crate) fn judge(
    region: &Region,
    strangers: &mut Vec<Stranger>,
    now: Instant,
) -> Result<Judged, RegionError> {
    let mut i = 0;
    while i < strangers.len() {
        let s = &strangers[i];
        let words = Words::read(&window(region, &s.found.area)?)?;
        if words.owner == s.words.owner && words.beat != s.words.beat {
            return Ok(Judged::Live(Box::new(strangers.swap_remove(i).found)));
        }
        if words.owner != s.words.owner
            || !words.is_held()
            || now.saturating_duration_since(s.since) >= WATCH
        {
            strangers.swap_remove(i);
        } else {
            i += 1;
        }
    }
    Ok(if strangers.is_empty() {
        Judged::Clear
    } else {
        Judged::Watching
    })
}

/// The whole coupling memory and this file's map of it, and the strangers of
/// this interface a node waiting for peers it has never seen has found.
#[derive(Debug)]
pub(crate) struct Lookout {
    pub region: Region,
    pub map: MemoryMap,
    next: Option<Instant>,
    /// Strangers of this interface whose beat has not moved yet.
    watched: Vec<Stranger>,
    /// Strangers of this interface seen live.
    live: Vec<Found>,
}

impl Lookout {
    pub(crate) fn new(region: Region, map: MemoryMap) -> Lookout {
        Lookout {
            region,
            map,
            next: None,
            watched: Vec::new(),
            live: Vec::new(),
        }
    }

    /// A live stranger of this interface in the slot or with the name of node
    /// `peer`. The memory is looked at again at most every [`LOOK_EVERY`],
    /// for every peer at once.
    pub(crate) fn look_for(
        &mut self,
        interface: &Interface,
        peer: usize,
        now: Instant,
    ) -> Result<Option<Found>, RegionError> {
        if self.next.is_none_or(|next| now >= next) {
            self.next = Some(now + LOOK_EVERY);
            while let Judged::Live(found) = judge(&self.region, &mut self.watched, now)? {
                self.live.push(*found);
            }
            for stranger in find(&self.region, interface, &self.map, now)? {
                let at = stranger.found.area.offset;
                let known = (self.watched.iter().map(|s| &s.found))
                    .chain(&self.live)
                    .any(|f| f.area.offset == at);
                if stranger.found.descriptor.interface == interface.name && !known {
                    self.watched.push(stranger);
                }
            }
        }
        let spec = &interface.nodes[peer];
        Ok(self
            .live
            .iter()
            .find(|f| f.descriptor.node == spec.name || f.descriptor.slot == spec.slot)
            .cloned())
    }
}
