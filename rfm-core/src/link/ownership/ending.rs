//! How a session ended, as it records it in its liveness block's words
//! ([`super::block`]'s ended, ending and ended-about words) for its peers: one
//! table of the codes in memory and the phrases messages use.

use std::fmt;

use rfm_frames::session::Token;

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
    pub(super) fn code(self) -> u32 {
        ENDINGS.iter().find(|e| e.0 == self).map_or(0, |e| e.1)
    }

    pub(super) fn of_code(code: u32) -> Option<Ending> {
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
    /// The token of the peer session it concerns, if known: a peer that
    /// never saw this session run (it gave up first) still learns that it
    /// ended over that peer, and why ([`crate::link::lookout`]).
    pub about_session: Option<Token>,
}

impl Ended {
    /// Its master terminated it.
    pub const TERMINATED: Ended = Ended {
        how: Ending::Terminated,
        about: None,
        about_session: None,
    };

    /// It failed otherwise, about no peer (a claim refused, frame 0 not
    /// published).
    pub const FAILED: Ended = Ended {
        how: Ending::Failed,
        about: None,
        about_session: None,
    };

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ending_has_one_code_and_one_phrase() {
        for (i, a) in ENDINGS.iter().enumerate() {
            assert_eq!(Ending::of_code(a.1), Some(a.0));
            assert!(ENDINGS[i + 1..].iter().all(|b| b.0 != a.0 && b.1 != a.1));
        }
    }
}
