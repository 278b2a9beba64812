//! Why a `shm:` object could not be opened or mapped.

use crate::region::OutsideMemory;
use std::io;

use super::{object_path, NO_ROOM, NO_ROOM_HINT, STALE_HINT};

/// Why a `shm:` object could not be opened or mapped; every variant names the
/// device string it was asked for.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    #[error("device `{device}`: {reason}")]
    BadName { device: String, reason: String },
    #[error("device `{device}`: {op} failed: {source}")]
    Os {
        device: String,
        op: &'static str,
        #[source]
        source: io::Error,
    },
    #[error(
        "device `{device}` holds {found} bytes but {expected} were asked for; every program \
         sharing it must use the same size ({STALE_HINT})"
    )]
    SizeMismatch {
        device: String,
        expected: u64,
        found: u64,
    },
    #[error("device `{device}`: a size of {size} bytes cannot be used")]
    BadSize { device: String, size: u64 },
    #[error(
        "device `{device}` does not exist: no program has created {}",
        object_path(name)
    )]
    NoSuchMemory { device: String, name: String },
    #[error(
        "device `{device}`: {NO_ROOM} its {size} bytes ({source}): {NO_ROOM_HINT} or use a \
         smaller memory"
    )]
    NoSpace {
        device: String,
        size: u64,
        #[source]
        source: io::Error,
    },
    /// `owner` and `me`: `uid N` on Unix, a SID on Windows.
    #[error(
        "device `{device}` is owned by {owner}, not by this user ({me}); refusing memory \
         another user controls"
    )]
    NotOwner {
        device: String,
        owner: String,
        me: String,
    },
    #[error(
        "device `{device}` has mode {mode:o}: others may write it; refusing (it must be 600, \
         as this library creates it)"
    )]
    OpenToOthers { device: String, mode: u32 },
    /// Windows: the mapping's access rules grant `who`, not only this user.
    #[error(
        "device `{device}` grants access to {who}, not only to this user; refusing (this \
         library creates it with one rule, for its owner)"
    )]
    GrantedToOthers { device: String, who: String },
    #[error(transparent)]
    WindowOutOfRange(OutsideMemory),
}
