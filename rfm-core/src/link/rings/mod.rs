//! The rings and cards a link runs over, owned here whole: a redundant
//! device's two cards watched from a thread of their own ([`watch`]), what the
//! link tells and reports of its two rings ([`redundant`]), and a single card
//! asked what it saw when a step failed ([`state`]). What each ring delivered
//! of each peer, and the rule that picks a frame's ring, are the observer's
//! (`observer/ring_stats.rs`, beside the reads it counts); the rule that
//! weighs the rings' liveness words is `block.rs`'s.

mod redundant;
mod state;
mod watch;

pub(crate) use redundant::Redundant;
pub use redundant::RingsReport;
pub(crate) use state::explain;
pub use state::{ring_state, RingState};
