//! What the bridge's two sides share: the watcher of this host's nodes (the
//! main thread) and the writer of other hosts' nodes (Zenoh's receiving
//! thread).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::wire::Stamp;
use rfm_frames::session::Token;

/// A session of this host the bridge announced: the receiving side orders
/// another host's claim of an overlapping area against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Announced {
    pub start: u64,
    pub end: u64,
    pub token: Option<Token>,
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
    pub peers: Mutex<HashMap<BridgeId, Peer>>,
    /// Pings sent and not yet answered: id → when.
    pub pings: Mutex<HashMap<u64, Instant>>,
    /// Bridges of another memory size, ignored.
    pub refused: Mutex<HashSet<BridgeId>>,
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

    pub fn peers(&self) -> std::sync::MutexGuard<'_, HashMap<BridgeId, Peer>> {
        self.peers.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn refused(&self) -> std::sync::MutexGuard<'_, HashSet<BridgeId>> {
        self.refused.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn pings(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Instant>> {
        self.pings.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A bridge, by its Zenoh id as its key names it (hexadecimal), checked once
/// where a key is read: the 32 bits it writes in the mirrored-by word come
/// with it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BridgeId {
    zid: String,
    word: u32,
}

/// Why a key's last part is no bridge's id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a Zenoh id (1 to 32 hexadecimal digits)")]
pub struct NotAnId(pub String);

impl BridgeId {
    /// The id Zenoh prints as `zid` (hexadecimal, as in a bridge's key).
    pub fn parse(zid: &str) -> Result<BridgeId, NotAnId> {
        if zid.is_empty() || zid.len() > 32 || !zid.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(NotAnId(zid.to_owned()));
        }
        let tail = &zid[zid.len().saturating_sub(8)..];
        let word = u32::from_str_radix(tail, 16).map_err(|_| NotAnId(zid.to_owned()))?;
        Ok(BridgeId {
            zid: zid.to_owned(),
            word,
        })
    }

    /// Its 32-bit id in the mirrored-by word: the low bits of its Zenoh id.
    pub fn word(&self) -> u32 {
        self.word
    }

    /// The Zenoh id whole, as its key writes it.
    pub fn zid(&self) -> &str {
        &self.zid
    }

    /// The short form in messages and reports.
    pub fn short(&self) -> &str {
        &self.zid[..self.zid.len().min(8)]
    }
}

impl std::fmt::Display for BridgeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.short())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bridge_id_is_the_hex_of_its_key_and_its_word_the_low_32_bits() {
        let id = BridgeId::parse("a1b2c3d4e5f60718293a4b5c6d7e8f90").unwrap();
        assert_eq!(id.word(), 0x6d7e_8f90);
        assert_eq!(id.short(), "a1b2c3d4");
        assert_eq!(BridgeId::parse("12").unwrap().word(), 0x12);
        for bad in ["", "xyz", "a1b2-c3", &"f".repeat(33)] {
            assert_eq!(BridgeId::parse(bad), Err(NotAnId(bad.to_owned())));
        }
    }
}
