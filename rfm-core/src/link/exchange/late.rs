//! What a step says of a peer it waits for: late (a warning every few
//! seconds while it waits), timed out (why, with what a master's stepping
//! means for it), or restarted. Cold paths, apart from the wait.

use std::time::{Duration, Instant};

use super::super::LinkError;
use super::{Exchange, StepWait};

impl Exchange {
    /// Tells the master's logger which peers step `k` still waits for.
    #[cold]
    pub(super) fn warn_late(&self, k: u64, waited: Duration) {
        let c = &self.expected.config;
        for peer in self.peers.iter().filter(|p| p.waited_for() && !p.got()) {
            let need = peer.need().unwrap_or(0);
            let (state, limit, name) = match peer.bound() {
                Some(_) => (
                    "whose heartbeat beats: its master is paused or slower, or steps its \
                     FMUs one after the other in one thread (then every node needs lag 1 or \
                     more)"
                        .to_owned(),
                    c.settings.idle_timeout,
                    "idleTimeout",
                ),
                None => match peer.closed_before(&self.expected.interface) {
                    Some(closed) => (
                        format!(
                            "{closed}; it is waited for as a node starting again, but if this \
                             node alone was restarted it will not come back: a lockstep lab \
                             restarted in part needs every node restarted"
                        ),
                        c.settings.startup_timeout,
                        "startupTimeout",
                    ),
                    None => (
                        "which has not started yet (or its master is this one, stepping its \
                         FMUs one after the other in one thread: then every node needs lag 1 \
                         or more)"
                            .to_owned(),
                        c.settings.startup_timeout,
                        "startupTimeout",
                    ),
                },
            };
            log::warn!(
                "step {k} has waited {:.0} s for frame {need} (its step {}) of node `{}` (slot {}), \
                 {state}; waiting up to {name} ({} s)",
                waited.as_secs_f64(),
                need as i64 - 1,
                peer.name(&self.expected.interface),
                peer.slot(),
                limit.as_secs_f64()
            );
        }
    }

    /// The peers the step under way still waits for, as a sentence names
    /// them: "frame 42 (its step 41) of node `ios` (slot 2)", joined by "and".
    #[cold]
    pub fn awaited(&self) -> String {
        let names: Vec<String> = (self.peers.iter())
            .filter(|p| p.waited_for() && !p.got())
            .map(|peer| {
                let need = peer.need().unwrap_or(0);
                format!(
                    "frame {need} (its step {}) of node `{}` (slot {})",
                    need as i64 - 1,
                    peer.name(&self.expected.interface),
                    peer.slot()
                )
            })
            .collect();
        names.join(" and ")
    }

    pub(super) fn restarted(&mut self, i: usize, k: u64, old: u64, new: String) -> LinkError {
        let peer = &mut self.peers[i];
        peer.count_restart();
        LinkError::PeerRestarted {
            device: self.expected.config.settings.device.to_string(),
            peer: peer.name(&self.expected.interface).to_owned(),
            peer_slot: peer.slot(),
            step: k,
            old,
            new,
        }
    }

    pub(super) fn timeout(
        &self,
        i: usize,
        wait: &StepWait,
        waited: Duration,
        now: Instant,
    ) -> LinkError {
        let peer = &self.peers[i];
        let why = peer.why_late(now, &self.expected.interface, self.expected.fingerprint);
        let mut also = String::new();
        if let Some(m) = self
            .master_step
            .filter(|m| m.index > 0 && peer.bound().is_some())
        {
            also.push_str(&format!(
                "; this is step {} of {} of this node that one master step of {} s takes, and \
                 a master that steps its FMUs one after the other cannot let a peer publish \
                 during this node's step: give this node lag {} or more (it runs lag {}), step \
                 the master by at most this node's period, or step the FMUs in threads of \
                 their own",
                m.index + 1,
                m.steps,
                m.size,
                m.steps,
                self.expected.config.settings.lag
            ));
        }
        LinkError::Timeout {
            device: self.expected.config.settings.device.to_string(),
            node_slot: self.expected.config.node_slot,
            peer: peer.name(&self.expected.interface).to_owned(),
            peer_slot: peer.slot(),
            step: wait.step,
            waited,
            why: Box::new(why),
            also,
        }
    }
}
