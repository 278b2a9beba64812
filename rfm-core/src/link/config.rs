//! What a link is asked to do: its settings, typed by the settings' table,
//! the slots and how it reads a card. [`LinkConfig::validate`] holds the
//! settings to each other and to the interface before anything is opened.

use std::sync::Arc;

use super::OpenError;
use crate::realtime::RealTime;
use rfm_frames::slot::WaitPoll;
use rfm_interface::settings::LinkSettings;
use rfm_interface::Interface;

/// Everything a link needs: the settings (typed by the table of
/// `rfm_interface::settings`, which the FMU's parameters and interface files
/// are held to) and what an FMU knows of itself.
#[derive(Debug, Clone, Default)]
pub struct LinkConfig {
    /// The signals exchanged; `None`: the attitude preset for `node_slot` and
    /// `peer_slot` ([`rfm_interface::attitude`]).
    pub interface: Option<Arc<Interface>>,
    pub settings: LinkSettings,
    /// This node's slot (with an interface: which of its nodes this is).
    pub node_slot: u8,
    /// The attitude preset's peer (with an interface, every other node is a peer).
    pub peer_slot: u8,
    /// How frames are read where every load is a PCIe round trip.
    pub card: CardReads,
    /// The cores and priority of the link's own heartbeat thread: what the
    /// stepping thread was granted of the FMU's real-time settings
    /// ([`crate::realtime`]), so a refused setting is not tried again.
    pub realtime: RealTime,
}

/// The configuration as one line of `key = value`, keyed by the FMU's
/// parameter names: what a master's log shows when the FMU's debug logging
/// is on, which a user compares with the parameters they set (a Rust
/// struct's `Debug` named fields they never saw).
impl std::fmt::Display for LinkConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.interface {
            Some(i) => {
                let node = i
                    .nodes
                    .iter()
                    .find(|n| n.slot == self.node_slot)
                    .map_or("?", |n| n.name.as_str());
                write!(
                    f,
                    "interface = {}, node = {node}, slot = {}",
                    i.name, self.node_slot
                )?
            }
            None => write!(
                f,
                "interface = attitude preset, nodeSlot = {}, peerSlot = {}",
                self.node_slot, self.peer_slot
            )?,
        }
        write!(f, ", {}", self.settings)?;
        match self.card.dma_from {
            Some(bytes) => write!(f, ", rfm2gReadThreshold = {bytes}")?,
            None => f.write_str(", rfm2gReadThreshold = 0 (word by word)")?,
        }
        write!(f, ", {}", self.realtime)
    }
}

/// How a link reads an RFM2g card, where each load of the mapping stalls for
/// a PCIe round trip (1-5 µs) and a DMA transfer has a fixed cost (~14.5 µs):
/// see the book's "The card's costs" (`docs/src/design/card-model.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardReads {
    /// Frames of at least this many bytes are read with one `RFM2gRead`, which
    /// the driver turns into DMA (only used when the driver's DMA threshold
    /// lets it); `None`: always word by word. The FMU's `rfm2gReadThreshold`.
    pub dma_from: Option<u32>,
    /// What a try of a lockstep wait loads; `None`: by the memory, [`WaitPoll::Head`]
    /// on an RFM2g board, [`WaitPoll::Entry`] in host memory.
    pub poll: Option<WaitPoll>,
}

/// The default [`CardReads::dma_from`]: one 64-byte ring packet. From about
/// 60 bytes on, one DMA transfer (14.5 µs fixed) costs less than word loads at
/// 1 µs each (`rfm_card_model`); at 3 µs a read it pays from about 20 bytes.
pub const DMA_READ_FROM: u32 = 64;

impl Default for CardReads {
    fn default() -> CardReads {
        CardReads {
            dma_from: Some(DMA_READ_FROM),
            poll: None,
        }
    }
}

impl LinkConfig {
    /// The settings held to each other and to the interface (the table's
    /// rule for what comes to the link apart: a lag and the rings it must
    /// fit); each value alone is the table's already, by its type.
    pub fn validate(&self) -> Result<(), OpenError> {
        Ok(self.settings.together(self.interface.as_deref())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FMU's default block size is where one DMA transfer starts to cost
    /// less than word loads at the cheapest round trip modeled.
    #[test]
    fn the_default_block_read_is_where_dma_starts_to_pay() {
        let at_1us = rfm_card_model::READ_ROUND_TRIPS_NS[0].1;
        let from = u64::from(DMA_READ_FROM);
        assert!(
            rfm_card_model::dma_pays(from, at_1us),
            "DMA pays at the default"
        );
        assert!(
            !rfm_card_model::dma_pays(from - 8, at_1us),
            "DMA pays already two words below the default: lower it"
        );
    }
}
