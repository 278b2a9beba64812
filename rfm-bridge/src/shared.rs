//! What the bridge's two sides share: the watcher of this host's nodes (the
//! main thread) and the writer of other hosts' nodes (Zenoh's receiving
//! thread).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::wire::Stamp;

/// A session of this host the bridge announced: the receiving side orders
/// another host's claim of an overlapping area against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Announced {
    pub start: u64,
    pub end: u64,
    pub token: u32,
    pub stamp: Stamp,
    pub slot: u8,
}

/// Bytes and frames each way, for the report.
#[derive(Debug, Default)]
pub struct Traffic {
    pub bytes_out: AtomicU64,
    pub bytes_in: AtomicU64,
    pub frames_out: AtomicU64,
    pub frames_in: AtomicU64,
    /// Messages from other bridges that could not be decoded or applied.
    pub rejected: AtomicU64,
    /// Frames a local writer published faster than the bridge read them
    /// (overwritten in its ring before they were sent).
    pub overrun: AtomicU64,
}

impl Traffic {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Another bridge, as its hellos and pongs told.
#[derive(Debug, Clone)]
pub struct Peer {
    pub device: String,
    pub last_hello: Instant,
    /// The latest round trip of a ping, on this bridge's clock.
    pub rtt: Option<Duration>,
}

#[derive(Debug, Default)]
pub struct Shared {
    pub announced: Mutex<Vec<Announced>>,
    /// A new bridge appeared: announce every local session again.
    pub resend: AtomicBool,
    /// Why the bridge must stop (a peer's memory of another size).
    pub fatal: Mutex<Option<String>>,
    pub traffic: Traffic,
    pub peers: Mutex<HashMap<String, Peer>>,
    /// Pings sent and not yet answered: id → when.
    pub pings: Mutex<HashMap<u64, Instant>>,
    /// Bridges of another memory size, ignored (by Zenoh id).
    pub refused: Mutex<HashSet<String>>,
}

impl Shared {
    pub fn fail(&self, why: String) {
        let mut fatal = self.fatal.lock().unwrap_or_else(|e| e.into_inner());
        fatal.get_or_insert(why);
    }

    pub fn fatal(&self) -> Option<String> {
        self.fatal.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn announced(&self) -> std::sync::MutexGuard<'_, Vec<Announced>> {
        self.announced.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn peers(&self) -> std::sync::MutexGuard<'_, HashMap<String, Peer>> {
        self.peers.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn refused(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.refused.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn pings(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Instant>> {
        self.pings.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The short form of a Zenoh id in messages and reports.
pub fn short(zid: &str) -> &str {
    &zid[..zid.len().min(8)]
}

/// A bridge's 32-bit id in the mirrored-by word: the low bits of its Zenoh id
/// (hexadecimal, as Zenoh prints it).
pub fn bridge_id(zid: &str) -> u32 {
    let tail = &zid[zid.len().saturating_sub(8)..];
    u32::from_str_radix(tail, 16).unwrap_or(0)
}
