//! What a local session's area becomes on the wire: its claim with its
//! descriptor, its frames as they are stored (the whole ring the first time),
//! and its statistics block when it moved.

use rfm_core::link::ownership::block::Words;
use rfm_frames::area::{self, Area, DESCRIPTOR_OFFSET};
use rfm_frames::frame::framed;
use rfm_frames::mirror;
use rfm_frames::session::Token;
use rfm_memory::{seqlock, Region, RegionError};

use super::{carried, Session, Sink};
use crate::shared::Traffic;
use crate::wire::{Message, Stamp};

/// Whether the newest frame in `window` is of the session holding it
/// (`owner`): a node announces its claim, clears its ring once the claim
/// holds and then publishes frame 0; until then the ring holds the last
/// session's frames, which are never sent as the new session's.
fn published(window: &Region, area: &Area, owner: Option<Token>) -> Result<bool, RegionError> {
    let head = mirror::head(window)?;
    let mut buf = vec![0u8; carried(area)];
    if !mirror::read_entry(window, area.entry_offset(u64::from(head)), &mut buf)? {
        return Ok(false);
    }
    Ok(
        match framed::check(&buf[..area.frame_len()], area.payload.len) {
            Ok(h) => owner.is_some_and(|t| t.is_of(h.epoch)),
            Err(_) => false,
        },
    )
}

/// Publishes the frames session `s`'s writer stored since the last call
/// (its whole ring the first time it published); whether there were any.
pub(super) fn send_new_frames(
    s: &mut Session,
    traffic: &Traffic,
    out: &mut dyn Sink,
) -> Result<bool, RegionError> {
    if !s.framed {
        if !published(&s.window, &s.area, s.token)? {
            return Ok(false);
        }
        send_ring(s, out)?;
        s.framed = true;
        return Ok(true);
    }
    let head = mirror::head(&s.window)?;
    if head == s.head {
        return Ok(false);
    }
    let mut new = head.wrapping_sub(s.head);
    let depth = s.area.depth as u32;
    if new > u32::MAX / 2 {
        // Backwards: the writer cleared its ring (a node of this
        // interface from another file sharing the area); its newest
        // frame is all there is.
        new = 1;
    }
    if new > depth {
        Traffic::add(&traffic.overrun, u64::from(new - depth));
    }
    let first = head.wrapping_sub(new.min(depth) - 1);
    let len = carried(&s.area);
    for i in 0..new.min(depth) {
        let step = first.wrapping_add(i);
        let entry = s.area.entry_offset(u64::from(step));
        if !mirror::read_entry(&s.window, entry, &mut s.buf[..len])? {
            // The writer was rewriting it at every attempt: lapped.
            Traffic::add(&traffic.overrun, 1);
            continue;
        }
        out.send(&Message::Frame {
            offset: s.area.offset,
            entry: entry as u32,
            head: (step == head).then_some(head),
            bytes: &s.buf[..len],
        });
        Traffic::add(&traffic.frames_out, 1);
    }
    s.head = head;
    Ok(true)
}

/// The session (its claim: words and descriptor), then, once it publishes,
/// every entry of its ring and the head: what a bridge needs to write the
/// area whole on its host.
/// The session's statistics block, when its node stored a new one since
/// the last sent (looked at with each beat: it stores one every tenth).
pub(super) fn send_stats(s: &mut Session, out: &mut dyn Sink) -> Result<(), RegionError> {
    let seq = s
        .window
        .load_u32(area::STATS_OFFSET, std::sync::atomic::Ordering::Acquire)?;
    if seq == s.stats || seq & 1 == 1 {
        return Ok(());
    }
    let mut block = [0u8; area::STATS_LEN];
    if seqlock::read_once(&s.window, area::STATS_OFFSET, &mut block)?.is_ok() {
        s.stats = seqlock::sequence_of(&block);
        out.send(&Message::Stats {
            offset: s.area.offset,
            block: &block,
        });
    }
    Ok(())
}

pub(super) fn announce(
    s: &mut Session,
    stamp: Stamp,
    out: &mut dyn Sink,
) -> Result<(), RegionError> {
    let mut descriptor = vec![0u8; s.area.descriptor_len];
    s.window.read(DESCRIPTOR_OFFSET, &mut descriptor)?;
    s.words = Words::read(&s.window)?;
    out.send(&Message::Session {
        offset: s.area.offset,
        words: s.words,
        stamp,
        descriptor: &descriptor,
    });
    if s.framed {
        send_ring(s, out)?;
    }
    Ok(())
}

/// Every entry of a session's ring, then its head.
fn send_ring(s: &mut Session, out: &mut dyn Sink) -> Result<(), RegionError> {
    let len = carried(&s.area);
    let head = mirror::head(&s.window)?;
    let newest = s.area.entry_offset(u64::from(head));
    for i in 0..s.area.depth {
        let entry = s.area.entry_offset(i as u64);
        if entry == newest || !mirror::read_entry(&s.window, entry, &mut s.buf[..len])? {
            continue;
        }
        out.send(&Message::Frame {
            offset: s.area.offset,
            entry: entry as u32,
            head: None,
            bytes: &s.buf[..len],
        });
    }
    if mirror::read_entry(&s.window, newest, &mut s.buf[..len])? {
        out.send(&Message::Frame {
            offset: s.area.offset,
            entry: newest as u32,
            head: Some(head),
            bytes: &s.buf[..len],
        });
    }
    s.head = head;
    Ok(())
}
