//! Is the peer speaking the same protocol? Checked on the first frame of each peer
//! session, and whenever the peer slot holds nothing this node can read.
//!
//! The checks read what this node expects ([`Expected`]) and the peer's area,
//! never the node itself: the node calls them, not the other way round.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use super::peer::Peer;
use super::{LinkConfig, LinkError};
use rfm_frames::frame::framed::{self, Header, SyncMode};
use rfm_frames::frame::{seed, FrameError};
use rfm_frames::session::Token;
use rfm_frames::slot::{ReadError, Ring};
use rfm_interface::Interface;
use rfm_interface::{declared, Found};
use rfm_memory::{Region, RegionError};

/// What a node expects of every peer's frames: its configuration and interface,
/// which the checks compare with. The node's one copy of them: the node and its
/// exchange read them from here.
#[derive(Debug, Clone)]
pub(crate) struct Expected {
    pub config: LinkConfig,
    pub interface: Arc<Interface>,
    pub fingerprint: u64,
    /// This node's index in the interface.
    pub me: usize,
}

fn incompatible(expected: &Expected, peer: &Peer, what: String) -> LinkError {
    LinkError::Incompatible {
        device: expected.config.settings.device.to_string(),
        peer_slot: peer.slot(),
        peer_session: peer.session(),
        what,
    }
}

/// The first frame of a live peer session must agree on slot, mode, lag and interface.
pub(crate) fn check_frame(c: &Expected, peer: &Peer, h: &Header) -> Result<(), LinkError> {
    let what = if h.writer_slot != peer.slot() {
        format!(
            "a frame in its area says it was written by slot {}: two nodes use the same nodeSlot",
            h.writer_slot
        )
    } else if h.fingerprint != c.fingerprint {
        return Err(other_interface(
            c,
            peer,
            &format!(
                "its frames carry interface fingerprint {:#018x}",
                h.fingerprint
            ),
        ));
    } else if peer.waited_for() && h.mode == SyncMode::Free {
        // A free writer never waits, so it overwrites frames a lockstep reader
        // still needs. The other way round is fine: a free reader takes the newest.
        let name = &c.interface.nodes[peer.node()].name;
        format!(
            "node `{name}` runs syncMode = free, and this node waits for it in lockstep: run \
             `{name}` with syncMode = lockstep, or list it in this node's `free` in the \
             interface file (then this node takes its newest frame)"
        )
    } else {
        return Ok(());
    };
    Err(incompatible(c, peer, what))
}

/// The peer was built from another interface: names the first difference its
/// descriptor shows from this node's file, and both nodes.
fn other_interface(c: &Expected, peer: &Peer, theirs: &str) -> LinkError {
    let expected = &c.interface.nodes[peer.node()];
    let described = peer.live_descriptor();
    let fingerprints = format!("{theirs}, this node's is {:#018x}", c.fingerprint);
    let difference = match &described {
        Some(d) => d
            .first_difference(expected, &peer.observed().geometry().payload)
            .or_else(|| declared::first_difference(&c.interface.declared(), &d.foreign))
            .unwrap_or_else(|| {
                format!(
                    "node `{}` publishes what this file says, so the files differ in another \
                     node (its log names the difference)",
                    expected.name
                )
            }),
        None => "its descriptor cannot be read".to_owned(),
    };
    let session = described.and_then(|d| d.session).or(peer.session());
    built_apart(c, (peer, session), &difference, &fingerprints)
}

/// A peer never taken from that has stopped or died may have been built from
/// another file: its descriptor says so, and that is what its end tells (its
/// master most likely failed on this very difference, and the user must fix
/// the files, not restart it).
pub(crate) fn check_described(c: &Expected, peer: &Peer) -> Result<(), LinkError> {
    match peer.live_descriptor() {
        Some(d) if d.fingerprint != c.fingerprint => Err(other_interface(
            c,
            peer,
            &format!(
                "its descriptor carries interface fingerprint {:#018x}",
                d.fingerprint
            ),
        )),
        _ => Ok(()),
    }
}

/// The peer's descriptor found elsewhere in the memory (`found`, live): built
/// from a file of another layout, it writes where this node's file does not
/// look, and waiting for it there would last `startupTimeout`.
pub(crate) fn misplaced(c: &Expected, peer: &Peer, found: &Found) -> LinkError {
    let expected = &c.interface.nodes[peer.node()];
    let geometry = peer.observed().geometry();
    let difference = found
        .descriptor
        .first_difference(expected, &geometry.payload)
        .or_else(|| declared::first_difference(&c.interface.declared(), &found.descriptor.foreign))
        .unwrap_or_else(|| {
            format!(
                "node `{}` is at offset {} there and {} here (the files differ in the nodes \
                 before it)",
                expected.name, found.area.offset, geometry.offset
            )
        });
    let fingerprints = format!(
        "its descriptor, at offset {}, carries interface fingerprint {:#018x}, this node's is \
         {:#018x}",
        found.area.offset, found.descriptor.fingerprint, c.fingerprint
    );
    let session = found.descriptor.session;
    built_apart(c, (peer, session), &difference, &fingerprints)
}

/// Nodes of one interface built from different files: this node and `peer`,
/// whose session (its token) is the one compared with.
fn built_apart(
    c: &Expected,
    (peer, session): (&Peer, Option<Token>),
    difference: &str,
    fingerprints: &str,
) -> LinkError {
    let me = &c.interface.nodes[c.me];
    let expected = &c.interface.nodes[peer.node()];
    LinkError::Incompatible {
        device: c.config.settings.device.to_string(),
        peer_slot: peer.slot(),
        peer_session: session,
        what: format!(
            "node `{}` (slot {}) and this node `{}` (slot {}) were built from different \
             interface files: {difference} ({fingerprints}); build every node's FMU from one file",
            expected.name,
            peer.slot(),
            me.name,
            me.slot
        ),
    }
}

/// A frame of another format version or interface shows as a complete frame that
/// does not decode.
///
/// A frame of another length is another interface's only if the descriptor
/// of a peer session of this run says so: the length word is checked before
/// the CRC (which cannot be computed over a length not known), so a bit
/// flipped in it looks the same as a writer of another interface, and must be
/// counted as a bad frame, not end the coupling; and an earlier run's frames
/// are not the peer's.
pub(crate) fn check_readable(c: &Expected, peer: &Peer, err: &ReadError) -> Result<(), LinkError> {
    if let ReadError::Unreadable { rejections, .. } = err {
        match rejections.last {
            Some(FrameError::BadVersion { found, expected }) => {
                return Err(incompatible(
                    c,
                    peer,
                    format!(
                    "it writes frame format version {found}, this build reads version {expected}"
                ),
                ))
            }
            // Only the descriptor of a session of this run says so: frames
            // an earlier run of another interface left are not the peer's.
            Some(FrameError::BadLength { .. }) => match peer.live_descriptor() {
                Some(d) if d.fingerprint != c.fingerprint => {
                    let theirs = format!(
                        "its frames are of another length and its descriptor carries interface \
                         fingerprint {:#018x}",
                        d.fingerprint
                    );
                    return Err(other_interface(c, peer, &theirs));
                }
                _ => {}
            },
            _ => {}
        }
    }
    Ok(())
}

/// Whether some ring entry of `area` holds a framed frame's magic.
fn holds_framed(area: &Region, ring: Ring) -> Result<bool, RegionError> {
    for i in 0..ring.depth as u64 {
        let word = area.load_u32(ring.entry_offset(i) + 8, Relaxed)?;
        if u32::from_le(word) == framed::MAGIC {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A peer writing the other layout leaves that layout's signature in its area.
///
/// The seed header alone is not enough: a framed writer's head word (its step
/// number) passes through 0x55AA55AA too. An area is taken for a seed writer's only
/// when it has the seed header and no framed frame in its ring, and only while
/// its holder may be writing it: beating, or holding no words at all (the
/// article's programs write none); a closed or silent holder's area is left over.
pub(crate) fn check_layout(
    c: &Expected,
    peer: &Peer,
    reading: rfm_frames::frame::Layout,
) -> Result<(), LinkError> {
    if !peer.may_be_writing() {
        return Ok(());
    }
    let ring = Ring::of(peer.observed().geometry());
    let found = match reading {
        rfm_frames::frame::Layout::Framed => {
            let word = peer.observed().area().load_u32(0, Relaxed)?;
            (u32::from_le(word) == seed::MAGIC && !holds_framed(peer.observed().area(), ring)?)
                .then_some(("seed (the article's FlightData)", "framed"))
        }
        rfm_frames::frame::Layout::Seed => {
            holds_framed(peer.observed().area(), ring)?.then_some(("framed", "seed"))
        }
    };
    match found {
        Some((theirs, ours)) => Err(incompatible(
            c,
            peer,
            format!("it uses layout {theirs}, this node layout {ours}"),
        )),
        None => Ok(()),
    }
}
