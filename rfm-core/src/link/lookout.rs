//! The lookout: a peer never seen may have been built from a file of another
//! layout, and write somewhere else. While a peer has never been seen, the
//! waiting node looks for it among the nodes the memory describes that this
//! file does not (`interface::discover`, judged by [`super::ownership`]):
//! waiting for it where this file puts it would last the whole
//! `startupTimeout` and then blame the wrong thing. (What a node finds over
//! its own areas at its claim is the claim's business: [`super::claim`].)
//!
//! A stranger counts as met once its beat is seen to move, or once it has
//! closed recording that it refused this very session: it may find this node
//! first and give up before this node's next look sees it beat (a look every
//! [`LOOK_EVERY`]), and then only its ending says that it ran, and why.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use super::ownership::ending::Ending;
use super::ownership::{sweep, AreaWatch, Holder, Verdict, Watched, Whose};
use rfm_frames::area::window;
use rfm_frames::session::Token;
use rfm_interface::{discover, Found};
use rfm_interface::{Interface, MemoryMap};
use rfm_memory::{Region, RegionError};

/// How often a node waiting for a peer it has never seen looks for it among the
/// strangers (each look reads one word per 64 bytes of the memory).
pub(crate) const LOOK_EVERY: Duration = Duration::from_millis(200);

/// A stranger found, and its holder watched since (the one verdict of
/// [`ownership`], on its clock: a stranger is dropped once judged dead).
#[derive(Debug, Clone)]
pub(crate) struct Stranger {
    pub found: Found,
    watch: AreaWatch,
}

/// A stranger as one look found it.
#[derive(Debug)]
pub(crate) enum Sighting {
    /// It holds its area: watched until its beat is seen to move.
    Held(Stranger),
    /// It closed refusing this session: it ran beside this node (met).
    Refused(Found),
}

impl Sighting {
    fn found(&self) -> &Found {
        match self {
            Sighting::Held(s) => &s.found,
            Sighting::Refused(found) => found,
        }
    }
}

/// Whether the session an area was judged for (`verdict`) closed refusing
/// session `me`: it ran beside this node.
fn refused(verdict: &Verdict, me: Token) -> bool {
    verdict
        .ended()
        .is_some_and(|e| e.how == Ending::Incompatible && Verdict::of(e.about_session, me).is_its())
}

impl Watched for Stranger {
    fn found(&self) -> &Found {
        &self.found
    }

    fn watch(&mut self) -> &mut AreaWatch {
        &mut self.watch
    }
}

/// The strangers of `region` that hold their areas (a session's token, not
/// closed, described by that session), or that closed refusing session `me`,
/// wherever they are.
pub(crate) fn find(
    region: &Region,
    interface: &Interface,
    map: &MemoryMap,
    me: Token,
    now: Instant,
) -> Result<Vec<Sighting>, RegionError> {
    let fingerprint = interface.fingerprint();
    let mut sightings = Vec::new();
    for found in discover(region)? {
        if Whose::of(&found, interface, fingerprint, map) == Whose::ThisCoupling {
            continue;
        }
        // Held by the session that described it: open, its owner word the
        // descriptor's token.
        let session = found.descriptor.session;
        let (watch, verdict) = AreaWatch::start_for(&window(region, &found.area)?, now, session)?;
        if refused(&verdict, me) {
            sightings.push(Sighting::Refused(found));
        } else if verdict.is_unproven() {
            sightings.push(Sighting::Held(Stranger { found, watch }));
        }
    }
    Ok(sightings)
}

/// Judges each stranger again at `now`, until one is met: seen beating since
/// it was first seen, or closed refusing session `me`. Ones closed otherwise,
/// taken over or dead are dropped; `None` when none is met.
pub(crate) fn judge(
    region: &Region,
    strangers: &mut Vec<Stranger>,
    me: Token,
    now: Instant,
) -> Result<Option<Found>, RegionError> {
    let met = sweep(region, strangers, now, |s, verdict| {
        Ok(match verdict {
            Verdict::Its(Holder::Live { .. }) => ControlFlow::Break(s.found),
            v if refused(&v, me) => ControlFlow::Break(s.found),
            // Closed otherwise, dead, or written over: dropped.
            _ => ControlFlow::Continue(()),
        })
    })?;
    Ok(match met {
        ControlFlow::Break(found) => Some(found),
        ControlFlow::Continue(_) => None,
    })
}

/// The whole coupling memory and this file's map of it, and the strangers of
/// this interface a node waiting for peers it has never seen has found.
#[derive(Debug)]
pub(crate) struct Lookout {
    pub region: Region,
    pub map: MemoryMap,
    next: Option<Instant>,
    /// This session's token.
    me: Token,
    /// Strangers of this interface whose beat has not moved yet.
    watched: Vec<Stranger>,
    /// Strangers of this interface met: seen live, or closed refusing this
    /// session.
    met: Vec<Found>,
}

impl Lookout {
    /// The lookout of session `me` (its token).
    pub(crate) fn new(region: Region, map: MemoryMap, me: Token) -> Lookout {
        Lookout {
            region,
            map,
            next: None,
            me,
            watched: Vec::new(),
            met: Vec::new(),
        }
    }

    /// A stranger of this interface met in the slot or with the name of node
    /// `peer`. The memory is looked at again at most every [`LOOK_EVERY`],
    /// for every peer at once: the strangers watched since earlier looks
    /// judged, then the new ones found (each judged as it is found: one may
    /// have closed refusing this session already).
    pub(crate) fn look_for(
        &mut self,
        interface: &Interface,
        peer: usize,
        now: Instant,
    ) -> Result<Option<Found>, RegionError> {
        if self.next.is_none_or(|next| now >= next) {
            self.next = Some(now + LOOK_EVERY);
            while let Some(found) = judge(&self.region, &mut self.watched, self.me, now)? {
                self.met.push(found);
            }
            for sighting in find(&self.region, interface, &self.map, self.me, now)? {
                let found = sighting.found();
                let known = (self.watched.iter().map(|s| &s.found))
                    .chain(&self.met)
                    .any(|f| f.area.offset == found.area.offset);
                let kin = Whose::of(found, interface, interface.fingerprint(), &self.map)
                    == Whose::OtherFile;
                match sighting {
                    _ if !kin || known => {}
                    Sighting::Held(stranger) => self.watched.push(stranger),
                    Sighting::Refused(found) => self.met.push(found),
                }
            }
        }
        let spec = &interface.nodes[peer];
        Ok(self
            .met
            .iter()
            .find(|f| f.descriptor.node == spec.name || f.descriptor.slot == spec.slot)
            .cloned())
    }
}
