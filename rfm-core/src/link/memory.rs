//! Opening a link's memory: the device its config names (or, for a replay, a
//! loopback memory of the node's own), its wait events, and the window over
//! the interface, with an error that names what to change when it does not fit.

use super::error::open_config;
use super::{clock::new_epoch, replay, LinkConfig, OpenError};
use rfm_frames::slot::WaitPoll;
use rfm_frames::wait::WaitStrategy;
use rfm_interface::{Interface, MemoryMap};
use rfm_memory::OutsideMemory;
use rfm_memory::{Device, DeviceError, DeviceSetting, DeviceSpec, Events, OpenOptions, Region};

/// What [`open`] opened.
pub(super) struct Opened {
    pub device: Device,
    /// A redundant device's second memory.
    pub twin: Option<Device>,
    /// The window over the interface (and as far as its memory_size).
    pub region: Region,
    /// `device = replay:PATH`: the recording the peers are played from.
    pub player: Option<replay::Player>,
    /// Network interrupts (waitStrategy = event only).
    pub events: Option<Events>,
}

/// Opens the memory `config` names for `interface` (laid out as `map`), and settles how the link
/// polls it (`config.card.poll`, if not given).
pub(super) fn open(
    config: &mut LinkConfig,
    interface: &Interface,
    map: &MemoryMap,
) -> Result<Opened, OpenError> {
    let len = usize::try_from(map.len()).expect("the map fits its memory_size");
    let options = OpenOptions {
        rfm2g_library: config.settings.rfm2g_library.clone(),
        // A `shm:` object this node creates is the memory the interface
        // declares, as a card's would be: an interface placed beyond it
        // is refused below, on every device alike.
        memory_size: usize::try_from(interface.memory_size)
            .expect("memory_size was checked against the map"),
        dma_reads_from: config.card.dma_from,
        ..OpenOptions::default()
    };
    let (player, device, twin) = match &config.settings.device {
        // Replay: the node runs on a loopback memory of its own and the
        // peers are played from the recording.
        DeviceSetting::Replay(path) => {
            let player = replay::Player::open(path, interface, config.node_slot)?;
            let own = DeviceSpec::Loopback {
                name: format!("replay-{:x}", new_epoch()),
            };
            (Some(player), Device::open_spec(own, &options)?, None)
        }
        DeviceSetting::One(a) => (None, Device::open_spec(a.clone(), &options)?, None),
        // A redundant device: the second memory is opened and checked
        // against the first, then mapped alike below.
        DeviceSetting::Rings(a, b) => {
            let device = Device::open_spec(a.clone(), &options)?;
            let twin = Device::open_spec(b.clone(), &options)?;
            check_twins(config, &device, &twin)?;
            (None, device, Some(twin))
        }
    };
    // A card counts loads (each a PCIe round trip), host memory cache lines.
    let on_card = device.info().node_id.is_some();
    config.card.poll.get_or_insert(if on_card {
        WaitPoll::Head
    } else {
        WaitPoll::Entry
    });
    let events = events(config, &device)?;
    let region = window(config, interface, (&device, twin.as_ref()), len)?;
    Ok(Opened {
        device,
        region,
        player,
        events,
        twin,
    })
}

/// Network interrupts, for waitStrategy = event.
fn events(config: &LinkConfig, device: &Device) -> Result<Option<Events>, OpenError> {
    if config.settings.wait != WaitStrategy::Event {
        return Ok(None);
    }
    let events = device.events()?.ok_or_else(|| {
        open_config(
            "waitStrategy",
            "event",
            format!(
                "RFM2g network interrupts need an RFM2g device whose library has the event \
                 functions; `{}` has none: use spin, yield or sleep",
                config.settings.device
            ),
        )
    })?;
    Ok(Some(events))
}

/// The window over the interface (`len` bytes) on the device and its twin.
/// It reaches as far as the interface's memory_size (and the device), not
/// only to its last area: the descriptors of nodes written from other files
/// may lie beyond (see `claim` and `lookout`).
fn window(
    config: &LinkConfig,
    interface: &Interface,
    (device, twin): (&Device, Option<&Device>),
    len: usize,
) -> Result<Region, OpenError> {
    let scanned = (interface.memory_size)
        .min(device.size().saturating_sub(config.settings.region_offset))
        .try_into()
        .unwrap_or(len);
    let window = |device: &Device| device.map(config.settings.region_offset, len.max(scanned));
    window(device)
        .and_then(|a| match twin {
            Some(twin) => Ok(Region::redundant(a, window(twin)?)
                .expect("the two memories were checked to be as large")),
            None => Ok(a),
        })
        .map_err(|e| match e {
            DeviceError::WindowOutOfRange(OutsideMemory { size, .. }) => {
                does_not_fit(config, interface, len, size, &e)
            }
            other => other.into(),
        })
}

/// The interface does not fit the memory from regionOffset: what to change.
fn does_not_fit(
    config: &LinkConfig,
    interface: &Interface,
    len: usize,
    size: u64,
    e: &DeviceError,
) -> OpenError {
    // The attitude preset's slots are the config's; an interface places its nodes.
    let (what, remedy) = if config.interface.is_none() {
        (
            format!(
                "slots 0..={} (nodeSlot {}, peerSlot {})",
                config.node_slot.max(config.peer_slot),
                config.node_slot,
                config.peer_slot
            ),
            "lower regionOffset or the slot numbers",
        )
    } else {
        (
            format!("interface `{}`", interface.name),
            "lower regionOffset, or give the nodes smaller offsets",
        )
    };
    open_config(
        "regionOffset",
        config.settings.region_offset,
        format!(
            "{what} need {len} bytes from there, which does not fit the \
             {size}-byte memory of `{}`: {remedy} ({e})",
            config.settings.device
        ),
    )
}

/// The two memories of a redundant device must be one coupling's: as large,
/// and, on cards, the same node on both rings. Two cards that disagree in the
/// redundant-mode switch (each packet sent on both of a card's fibres) still
/// couple, with a warning.
fn check_twins(config: &LinkConfig, a: &Device, b: &Device) -> Result<(), OpenError> {
    let (ia, ib) = (a.info(), b.info());
    if ia.size != ib.size {
        return Err(open_config(
            "device",
            &config.settings.device,
            format!(
                "the two memories of a redundant device differ in size: `{}` holds {} bytes, \
                 `{}` {}; both rings carry one coupling, so give both the same memory",
                ia.device, ia.size, ib.device, ib.size
            ),
        ));
    }
    if ia.node_id != ib.node_id {
        return Err(open_config(
            "device",
            &config.settings.device,
            format!(
                "the two boards of a redundant device are different nodes: `{}` is node {}, \
                 `{}` node {}; a PC is one node on both rings, so set both boards' node \
                 switches alike",
                ia.device,
                ia.node_id.unwrap_or_default(),
                ib.device,
                ib.node_id.unwrap_or_default()
            ),
        ));
    }
    if let (Ok(la), Ok(lb)) = (a.lcsr(), b.lcsr()) {
        if la.redundant() != lb.redundant() {
            log::warn!(
                "redundant device {}: `{}` is {} redundant mode and `{}` {} (the switch on \
                 each card): both rings couple, but set the cards alike",
                config.settings.device,
                ia.device,
                if la.redundant() { "in" } else { "not in" },
                ib.device,
                if lb.redundant() { "in" } else { "not in" },
            );
        }
    }
    Ok(())
}
