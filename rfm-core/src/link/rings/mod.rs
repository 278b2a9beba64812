//! The rings and cards a link runs over, owned here whole: a redundant
//! device's two cards watched from a thread of their own ([`watch`]), what the
//! link tells and reports of its two rings ([`redundant`]), and a single card
//! asked what it saw when a step failed ([`state`]). What each ring delivered
//! of each peer, and the rule that picks a frame's ring, are the observer's
//! (`observer/ring_stats.rs`, beside the reads it counts); the rule that
//! weighs the rings' liveness words is `ownership/block.rs`'s.

mod redundant;
mod state;
mod watch;

pub(crate) use redundant::Redundant;
pub use redundant::RingsReport;
pub(crate) use state::explain;
pub use state::{ring_state, RingState};

use rfm_interface::{Interface, MemoryMap};
use rfm_memory::{Device, Region};

use super::LinkConfig;

/// The card a link watches its ring through: one card's device, or the
/// redundant rings' pair (each watched with the own-data probe, a word of
/// this node's own area); none for host memory.
pub(crate) fn watched(
    config: &LinkConfig,
    interface: &Interface,
    map: &MemoryMap,
    region: &Region,
    device: Device,
    twin: Option<Device>,
) -> (Option<Device>, Option<Redundant>) {
    let one_card = twin.is_none()
        && !region.is_redundant()
        && matches!(device.spec(), rfm_memory::DeviceSpec::Rfm2g { .. });
    if one_card {
        return (Some(device), None);
    }
    let probe = interface
        .nodes
        .iter()
        .position(|n| n.slot == config.node_slot)
        .map_or(0, |me| map.area(me).offset)
        + config.settings.region_offset
        + super::ownership::block::PROBE as u64;
    let redundant = Redundant::of(region, &config.settings.device, (device, twin), probe);
    (None, redundant)
}
