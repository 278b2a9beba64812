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

use std::time::{Duration, Instant};

use super::block::Ending;
use super::ownership::{AreaWatch, Holder, Whose};
use rfm_frames::area::window;
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

/// What a look at the strangers decided.
#[derive(Debug)]
pub(crate) enum Judged {
    /// None of them holds its area (none left, or all closed, taken or dead).
    Clear,
    /// Some are held and have not beaten yet: look again.
    Watching,
    /// This one's beat moved (it runs), or it ended refusing this session.
    Met(Box<Found>),
}

/// Whether `holder`, the holder of an area described by `session`, closed
/// refusing session `me`: it ran beside this node.
fn refused(holder: &Holder, session: u32, me: u32) -> bool {
    matches!(holder, Holder::Closed { owner, ended: Some(e) }
        if *owner == session && e.how == Ending::Incompatible && e.about_session == Some(me))
}

/// The strangers of `region` that hold their areas (a session's token, not
/// closed, described by that session), or that closed refusing session `me`,
/// wherever they are.
pub(crate) fn find(
    region: &Region,
    interface: &Interface,
    map: &MemoryMap,
    me: u32,
    now: Instant,
) -> Result<Vec<Stranger>, RegionError> {
    let fingerprint = interface.fingerprint();
    let mut strangers = Vec::new();
    for found in discover(region)? {
        if Whose::of(&found, interface, fingerprint, map) == Whose::ThisCoupling {
            continue;
        }
        // Held by the session that described it: open, its owner word the
        // descriptor's token.
        let (watch, holder) = AreaWatch::start(&window(region, &found.area)?, now)?;
        let session = found.descriptor.session;
        if matches!(holder, Holder::Unproven { owner, .. } if owner == session)
            || refused(&holder, session, me)
        {
            strangers.push(Stranger { found, watch });
        }
    }
    Ok(strangers)
}

/// Judges each stranger again at `now`: one seen beating since it was first
/// seen, or closed refusing session `me`, is met; ones closed otherwise,
/// taken over or dead are dropped.
pub(crate) fn judge(
    region: &Region,
    strangers: &mut Vec<Stranger>,
    me: u32,
    now: Instant,
) -> Result<Judged, RegionError> {
    let mut i = 0;
    while i < strangers.len() {
        let s = &mut strangers[i];
        let session = s.found.descriptor.session;
        match s.watch.judge(&window(region, &s.found.area)?, now)? {
            Holder::Live { owner, .. } if owner == session => {
                return Ok(Judged::Met(Box::new(strangers.swap_remove(i).found)));
            }
            holder if refused(&holder, session, me) => {
                return Ok(Judged::Met(Box::new(strangers.swap_remove(i).found)));
            }
            Holder::Unproven { owner, .. } if owner == session => i += 1,
            _ => {
                strangers.swap_remove(i);
            }
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
    /// This session's token.
    me: u32,
    /// Strangers of this interface whose beat has not moved yet.
    watched: Vec<Stranger>,
    /// Strangers of this interface met: seen live, or closed refusing this
    /// session.
    met: Vec<Found>,
}

impl Lookout {
    /// The lookout of session `me` (its token).
    pub(crate) fn new(region: Region, map: MemoryMap, me: u32) -> Lookout {
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
    /// for every peer at once: the strangers found new, then every one
    /// watched judged (a new one at once: it may have closed already).
    pub(crate) fn look_for(
        &mut self,
        interface: &Interface,
        peer: usize,
        now: Instant,
    ) -> Result<Option<Found>, RegionError> {
        if self.next.is_none_or(|next| now >= next) {
            self.next = Some(now + LOOK_EVERY);
            for stranger in find(&self.region, interface, &self.map, self.me, now)? {
                let at = stranger.found.area.offset;
                let known = (self.watched.iter().map(|s| &s.found))
                    .chain(&self.met)
                    .any(|f| f.area.offset == at);
                let kin = Whose::of(
                    &stranger.found,
                    interface,
                    interface.fingerprint(),
                    &self.map,
                ) == Whose::OtherFile;
                if kin && !known {
                    self.watched.push(stranger);
                }
            }
            while let Judged::Met(found) = judge(&self.region, &mut self.watched, self.me, now)? {
                self.met.push(*found);
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
