//! The memory a device string ([`crate::spec`]) opens.

use std::path::PathBuf;
use std::sync::Arc;

use crate::backend::loopback::{self, LoopbackMemory};
use crate::backend::rfm2g::{self, Board, Interrupt, Lcsr, RingEvent, LINK_EVENT};

/// A device's network interrupts, enabled while it lives: how a link waits for
/// its peers on an RFM2g board ([`Device::events`]).
pub use crate::backend::rfm2g::Events;
use crate::backend::shm::{self, ShmMapping};
use crate::error::DeviceError;
use crate::region::{OutsideMemory, Region, WORD};
use crate::spec::DeviceSpec;

/// Size of `shm:` and `loopback:` memories unless the caller asks otherwise: room
/// for all 256 slots. (RFM2g boards have their own size: 64, 128 or 256 MB.)
pub const DEFAULT_MEMORY_SIZE: usize = 1 << 20;

pub use crate::region::MAX_MEMORY_SIZE;

/// How to open a device.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Size of a `shm:`/`loopback:` memory (ignored for RFM2g boards).
    pub memory_size: usize,
    /// The vendor library; `None` loads [`rfm2g::DEFAULT_LIBRARY`] from the search path.
    pub rfm2g_library: Option<PathBuf>,
    /// Open a `shm:` object only if it exists, with its own size (`memory_size` is
    /// ignored): for tools that inspect memory and must never create it.
    pub existing_only: bool,
    /// RFM2g: read frames of at least this many bytes with one `RFM2gRead`,
    /// when the driver turns a read that long into DMA; `None`: word by word.
    pub dma_reads_from: Option<u32>,
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions {
            memory_size: DEFAULT_MEMORY_SIZE,
            rfm2g_library: None,
            existing_only: false,
            dma_reads_from: None,
        }
    }
}

#[derive(Debug)]
enum Memory {
    Rfm2g(Arc<Board>),
    Shm(Arc<ShmMapping>),
    Loopback(Arc<LoopbackMemory>),
}

/// An open reflective memory (a board, a shared-memory object or a loopback buffer).
#[derive(Debug)]
pub struct Device {
    name: String,
    spec: DeviceSpec,
    memory: Memory,
}

/// What a device is, for diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub device: String,
    pub size: u64,
    /// The board's node id (RFM2g only).
    pub node_id: Option<u16>,
    /// The vendor library in use (RFM2g only).
    pub library: Option<String>,
    /// `RFM2gBoardID` (RFM2g only, when the library has it).
    pub board_id: Option<u8>,
}

impl Device {
    /// Opens the memory a device string names.
    pub fn open(device: &str, options: &OpenOptions) -> Result<Device, DeviceError> {
        Device::open_spec(DeviceSpec::parse(device)?, options)
    }

    /// Opens one memory of a parsed device string.
    pub fn open_spec(spec: DeviceSpec, options: &OpenOptions) -> Result<Device, DeviceError> {
        let device = &spec.to_string();
        let sized = |size: usize| {
            if size == 0 || !size.is_multiple_of(WORD) {
                Err(DeviceError::BadSize {
                    device: device.to_owned(),
                    size: size as u64,
                })
            } else if size as u64 > MAX_MEMORY_SIZE {
                Err(DeviceError::TooLarge {
                    device: device.to_owned(),
                    size: size as u64,
                })
            } else {
                Ok(size)
            }
        };
        let memory = match &spec {
            DeviceSpec::Rfm2g { path } => Memory::Rfm2g(rfm2g::open(
                path,
                options.rfm2g_library.as_deref(),
                options.dma_reads_from,
            )?),
            DeviceSpec::Shm { name } => {
                let size = if options.existing_only {
                    None
                } else {
                    Some(sized(options.memory_size)?)
                };
                Memory::Shm(shm::open(device, name, size)?)
            }
            DeviceSpec::Loopback { name } => {
                Memory::Loopback(loopback::open(device, name, sized(options.memory_size)?)?)
            }
        };
        Ok(Device {
            name: device.to_owned(),
            spec,
            memory,
        })
    }

    /// The device string it was opened with.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn spec(&self) -> &DeviceSpec {
        &self.spec
    }

    /// Bytes of memory.
    pub fn size(&self) -> u64 {
        match &self.memory {
            Memory::Rfm2g(board) => board.size(),
            Memory::Shm(shm) => shm.len() as u64,
            Memory::Loopback(lb) => lb.size() as u64,
        }
    }

    pub fn info(&self) -> DeviceInfo {
        let (node_id, library, board_id) = match &self.memory {
            Memory::Rfm2g(board) => (
                Some(board.node_id()),
                Some(board.library().to_owned()),
                board.board_id(),
            ),
            _ => (None, None, None),
        };
        DeviceInfo {
            device: self.name.clone(),
            size: self.size(),
            node_id,
            library,
            board_id,
        }
    }

    /// RFM2g network interrupts for the link's wake-ups; `None` on devices without
    /// them (shm, loopback) or when the vendor library lacks the event functions.
    pub fn events(&self) -> Result<Option<Events>, DeviceError> {
        self.interrupts(LINK_EVENT)
    }

    /// Interrupt `kind`, enabled on this board while the result lives; `None` as
    /// for [`Device::events`].
    pub fn interrupts(&self, kind: Interrupt) -> Result<Option<Events>, DeviceError> {
        match &self.memory {
            Memory::Rfm2g(board) => Ok(board.events(kind)?),
            _ => Ok(None),
        }
    }

    fn board(&self, what: &'static str) -> Result<&Arc<Board>, DeviceError> {
        match &self.memory {
            Memory::Rfm2g(board) => Ok(board),
            _ => Err(DeviceError::NotRfm2g {
                device: self.name.clone(),
                what,
            }),
        }
    }

    /// Sends network interrupt `kind` with 32-bit `data` to node `to`, or to every
    /// other node with `None` (RFM2g only).
    pub fn send_interrupt(
        &self,
        to: Option<u16>,
        kind: Interrupt,
        data: u32,
    ) -> Result<(), DeviceError> {
        Ok(self
            .board("sending a network interrupt")?
            .send_interrupt(to, kind, data)?)
    }

    /// `RFM2gCheckRingCont`: `Ok` when a packet sent round the ring comes back.
    pub fn check_ring(&self) -> Result<(), DeviceError> {
        Ok(self.board("the ring continuity test")?.check_ring()?)
    }

    /// The card's local control and status register: its view of its ring (RFM2g only).
    pub fn lcsr(&self) -> Result<Lcsr, DeviceError> {
        Ok(self.board("the board's status register")?.lcsr()?)
    }

    /// The own-data test: whether this board's stores came back round the ring
    /// since the last call, which clears the bit (RFM2g only).
    pub fn clear_own_data(&self) -> Result<bool, DeviceError> {
        Ok(self.board("the own-data test")?.clear_own_data()?)
    }

    /// Enables the card's error event (again, after it fired); false when the
    /// library has no event functions (RFM2g only).
    pub fn enable_ring_event(&self, event: RingEvent) -> Result<bool, DeviceError> {
        Ok(self
            .board("the card's error events")?
            .enable_ring_event(event)?)
    }

    /// Whether the card's error event fired since it was enabled (RFM2g only).
    pub fn ring_event_fired(&self, event: RingEvent) -> Result<bool, DeviceError> {
        Ok(self
            .board("the card's error events")?
            .ring_event_fired(event)?)
    }

    /// Stores `value` at `offset` through the driver (`RFM2gWrite`), not a
    /// mapping: the own-data test's probe, which the card sends round its
    /// ring (RFM2g only).
    pub fn probe(&self, offset: u32, value: u32) -> Result<(), DeviceError> {
        Ok(self
            .board("the own-data probe")?
            .write_word(offset, value)?)
    }

    /// The driver's DMA threshold in bytes: `RFM2gRead` calls longer than
    /// this are DMA transfers; `u32::MAX` is off (RFM2g only).
    pub fn dma_threshold(&self) -> Result<u32, DeviceError> {
        Ok(self.board("the DMA threshold")?.dma_threshold()?)
    }

    /// Sets the driver's DMA threshold, for the whole board (RFM2g only).
    pub fn set_dma_threshold(&self, bytes: u32) -> Result<(), DeviceError> {
        Ok(self.board("the DMA threshold")?.set_dma_threshold(bytes)?)
    }

    /// The RFM2g driver's version, when the driver or emulator says (RFM2g only).
    pub fn driver_version(&self) -> Result<Option<String>, DeviceError> {
        Ok(self.board("the driver version")?.driver_version())
    }

    /// Maps the window `[offset, offset + len)`; it stays valid after the device is dropped.
    pub fn map(&self, offset: u64, len: usize) -> Result<Region, DeviceError> {
        if !offset.is_multiple_of(WORD as u64) {
            return Err(DeviceError::UnalignedWindow {
                device: self.name.clone(),
                offset,
            });
        }
        let size = self.size();
        if !len.is_multiple_of(WORD) || offset.checked_add(len as u64).is_none_or(|end| end > size)
        {
            return Err(DeviceError::WindowOutOfRange(OutsideMemory {
                device: self.name.clone(),
                offset,
                len: len as u64,
                size,
            }));
        }
        let whole = match &self.memory {
            Memory::Rfm2g(board) => return Ok(board.map(offset, len)?),
            Memory::Shm(shm) => shm.region(),
            Memory::Loopback(lb) => lb.region(),
        };
        Ok(whole
            .subregion(offset as usize, len)
            .expect("window checked against the memory size above"))
    }
}
