//! Why a lockstep step waited out its timeout for a peer.

use rfm_frames::session::Token;
use std::time::Duration;

/// Why a lockstep step waited out its timeout for a peer: what the code
/// decides on (a ring explains only a peer that stopped beating), and what
/// the message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Late {
    /// Its area holds frames that fail their magic or CRC.
    Corrupt,
    /// Its area holds a frame of session `epoch`, which is not proven live.
    LeftOver { epoch: u64, holder: LeftBy },
    /// Nothing from it since this node started.
    Nothing {
        node: String,
        interface: String,
        fingerprint: u64,
    },
    /// Its heartbeat stopped `silent` ago.
    Silent { silent: Duration },
    /// Its heartbeat beats, but the frame was not published.
    Paused,
}

/// Who holds the slot whose frame a [`Late::LeftOver`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftBy {
    /// Its session closed the slot.
    Closed,
    /// Another session (its token) holds it.
    Other(Token),
    /// Its session's heartbeat has not moved since this node started.
    Still,
}

impl std::fmt::Display for Late {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Late::Corrupt => f.write_str("its area holds corrupted frames (bad magic or CRC)"),
            Late::LeftOver { epoch, holder } => {
                let holder = match holder {
                    LeftBy::Closed => "which has closed the slot".to_owned(),
                    LeftBy::Other(owner) => {
                        format!("while session token {owner} holds the slot")
                    }
                    LeftBy::Still => {
                        "whose heartbeat has not moved since this node started".to_owned()
                    }
                };
                write!(
                    f,
                    "its area holds a frame of session {epoch:#018x}, {holder}: frames left by an \
                     earlier run are never taken; is the peer's master running?"
                )
            }
            Late::Nothing {
                node,
                interface,
                fingerprint,
            } => write!(
                f,
                "nothing from node `{node}`: is it running, on the same device and regionOffset, \
                 built from the same interface (`{interface}`, fingerprint {fingerprint:#018x}), \
                 and has its master left initialization?"
            ),
            Late::Silent { silent } => {
                write!(
                    f,
                    "it stopped beating {silent:.3?} ago: its process died or is stalled"
                )
            }
            Late::Paused => f.write_str(
                "it has not published that frame though its heartbeat beats (its master is \
                 paused, stalled or much slower): raise idleTimeout to wait longer",
            ),
        }
    }
}
