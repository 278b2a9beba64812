//! A path such as `/dev/rfm2g0`: an RFM2g board through the vendor library,
//! loaded at run time so that nothing here needs the SDK to build.

pub mod emulated;
mod lcsr;

pub use lcsr::Lcsr;

use rfm2g_sys::{ffi, status_name, Rfm2gError};

mod error;
mod events;
mod library;
pub use error::BoardError;
pub use events::{Events, Interrupt, RingEvent, LINK_EVENT};
use library::{load, Api, EventApi};

use std::ffi::{c_void, CStr, CString};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

use ffi::{RFM2GHANDLE, RFM2G_NODE, RFM2G_STATUS, RFM2G_UINT32};

use crate::counts;
use crate::region::OutsideMemory;
use crate::region::{DmaRead, Region};

/// The library loaded when the caller names none.
pub const DEFAULT_LIBRARY: &str = if cfg!(windows) {
    "rfm2gdll_stdc_64.dll"
} else {
    "librfm2g.so"
};

/// `RFM2gUserMemory` maps whole pages from a page-aligned offset.
pub const PAGE_SIZE: u64 = 4096;

/// How a user gets the library, quoted in every load error: this platform's way.
pub const BUILD_HINT: &str = if cfg!(windows) {
    "install the RFM2g driver and SDK for Windows, which bring rfm2gdll_stdc_64.dll; put it in the \
    master program's folder or a folder on PATH, or give its full path (parameter rfm2gLibrary). \
    Without a card, the rfm2g-sim emulator's rfm2g.dll, renamed rfm2gdll_stdc_64.dll, stands in"
} else {
    "the vendor ships only a static librfm2g.a on Linux; build a shared one from the RFM2g SDK \
    with `gcc -shared -fPIC -O2 api/*.c -lpthread -o librfm2g.so` and put it on \
    LD_LIBRARY_PATH, or give its full path (parameter rfm2gLibrary)"
};

/// An open board; closed on drop (after every mapping, which holds an Arc to it).
pub(crate) struct Board {
    api: Api,
    handle: RFM2GHANDLE,
    device: String,
    size: u64,
    node_id: u16,
    board_id: Option<u8>,
    /// Dma of at least this many bytes are read with one `RFM2gRead`
    /// ([`Board::dma_reads`], decided at open).
    dma_reads: Option<usize>,
}

// SAFETY: the handle is an opaque token the vendor library accepts from any thread;
// this crate never dereferences it.
unsafe impl Send for Board {}
// SAFETY: as above; the calls made through `&Board` (map, unmap) are ones the
// vendor library serialises internally.
unsafe impl Sync for Board {}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("device", &self.device)
            .field("library", &self.api.library)
            .field("size", &self.size)
            .field("node_id", &self.node_id)
            .finish()
    }
}

impl Board {
    fn check(&self, call: &'static str, status: RFM2G_STATUS) -> Result<(), Rfm2gError> {
        check(&self.api, &self.device, call, status)
    }

    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    pub(crate) fn node_id(&self) -> u16 {
        self.node_id
    }

    pub(crate) fn library(&self) -> &str {
        &self.api.library
    }

    pub(crate) fn board_id(&self) -> Option<u8> {
        self.board_id
    }

    /// The driver's version: the kernel module's (`/sys/module/rfm2g/version`), or
    /// the emulator's; `None` when neither says.
    pub(crate) fn driver_version(&self) -> Option<String> {
        if let Ok(config) = self.config() {
            let text = &config.DriverVersion;
            let len = text.iter().position(|c| *c == 0).unwrap_or(text.len());
            if len > 0 {
                let bytes: Vec<u8> = text[..len].iter().map(|c| *c as u8).collect();
                return Some(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        std::fs::read_to_string("/sys/module/rfm2g/version")
            .ok()
            .map(|v| format!("rfm2g driver {}", v.trim()))
    }

    /// `RFM2gGetConfig`, into room for a larger struct than release R09.00's:
    /// a library of another release that lays out more fields writes them into
    /// the spare room, never past it.
    pub(crate) fn config(&self) -> Result<ffi::RFM2GCONFIG, BoardError> {
        #[repr(C)]
        struct Room {
            config: ffi::RFM2GCONFIG,
            _spare: [u64; 128],
        }
        let get = self
            .api
            .get_config
            .ok_or_else(|| self.missing("RFM2gGetConfig"))?;
        // SAFETY: all-zero is a valid Room (integers and char arrays).
        let mut room: Room = unsafe { std::mem::zeroed() };
        // SAFETY: open handle; the out pointer has room for any release's layout.
        self.check("RFM2gGetConfig", unsafe {
            get(self.handle, &mut room.config)
        })?;
        Ok(room.config)
    }

    /// The card's local control and status register.
    pub(crate) fn lcsr(&self) -> Result<Lcsr, BoardError> {
        Ok(Lcsr(self.config()?.Lcsr1))
    }

    /// `RFM2gClearOwnData`: whether this board's own data came back since the
    /// last call, which clears it.
    pub(crate) fn clear_own_data(&self) -> Result<bool, BoardError> {
        let clear = self
            .api
            .clear_own_data
            .ok_or_else(|| self.missing("RFM2gClearOwnData"))?;
        let mut state: ffi::RFM2G_BOOL = 0;
        // SAFETY: open handle, valid out pointer.
        self.check("RFM2gClearOwnData", unsafe {
            clear(self.handle, &mut state)
        })?;
        Ok(state != 0)
    }

    /// `RFM2gWrite` of one word at `offset`: a store the card sends round
    /// its ring, whose return the own-data bit shows.
    pub(crate) fn write_word(&self, offset: u32, value: u32) -> Result<(), BoardError> {
        let write = self.api.write.ok_or_else(|| self.missing("RFM2gWrite"))?;
        let mut bytes = value.to_le_bytes();
        // SAFETY: open handle; a 4-byte buffer the call only reads.
        Ok(self.check("RFM2gWrite", unsafe {
            write(self.handle, offset, bytes.as_mut_ptr().cast(), 4)
        })?)
    }

    /// `RFM2gCheckRingCont`: whether a packet sent around the ring comes back.
    pub(crate) fn check_ring(&self) -> Result<(), BoardError> {
        let check_ring = self
            .api
            .check_ring
            .ok_or_else(|| BoardError::SymbolMissing {
                library: self.api.library.clone(),
                symbol: "RFM2gCheckRingCont",
            })?;
        // SAFETY: open handle.
        Ok(self.check("RFM2gCheckRingCont", unsafe { check_ring(self.handle) })?)
    }

    /// The driver's DMA threshold in bytes (`RFM2gGetDMAThreshold`): reads of
    /// more than this many bytes are DMA transfers (the vendor's words).
    /// `u32::MAX` is off.
    pub(crate) fn dma_threshold(&self) -> Result<u32, BoardError> {
        let get = self
            .api
            .get_dma_threshold
            .ok_or_else(|| self.missing("RFM2gGetDMAThreshold"))?;
        let mut bytes: RFM2G_UINT32 = 0;
        // SAFETY: open handle, valid out pointer.
        self.check("RFM2gGetDMAThreshold", unsafe {
            get(self.handle, &mut bytes)
        })?;
        Ok(bytes)
    }

    /// Sets the driver's DMA threshold (`RFM2gSetDMAThreshold`), board-wide.
    pub(crate) fn set_dma_threshold(&self, bytes: u32) -> Result<(), BoardError> {
        let set = self
            .api
            .set_dma_threshold
            .ok_or_else(|| self.missing("RFM2gSetDMAThreshold"))?;
        // SAFETY: open handle; a plain count.
        Ok(self.check("RFM2gSetDMAThreshold", unsafe { set(self.handle, bytes) })?)
    }

    fn missing(&self, symbol: &'static str) -> BoardError {
        BoardError::SymbolMissing {
            library: self.api.library.clone(),
            symbol,
        }
    }

    /// From how many bytes a frame is read with one `RFM2gRead`, if ever: from
    /// the asked size on, and only when the driver turns a read that long into
    /// DMA (one longer than its threshold). Without DMA the driver copies by
    /// PIO itself, the same round trip per word plus a system call, so word
    /// loads of the mapping are cheaper.
    fn dma_reads(&self, asked: Option<u32>) -> Option<usize> {
        let asked = asked?;
        self.api.read?;
        let dma = match self.dma_threshold() {
            Ok(dma) => dma,
            Err(e) => {
                log::info!("frames are read word by word: {e}");
                return None;
            }
        };
        if dma == u32::MAX {
            log::info!(
                "device `{}`: frames are read word by word: the driver's DMA threshold is off \
                 (RFM2gSetDMAThreshold, or `rfmctl dma-threshold {} BYTES`, turns DMA on)",
                self.device,
                self.device
            );
            return None;
        }
        Some(asked.max(dma.saturating_add(1)) as usize)
    }

    /// Sends network interrupt `kind` with `data` to node `to` (`None`: all others),
    /// without enabling anything on this board.
    pub(crate) fn send_interrupt(
        &self,
        to: Option<u16>,
        kind: Interrupt,
        data: u32,
    ) -> Result<(), BoardError> {
        Ok(self.send(self.event_api()?, to, kind, data)?)
    }

    /// `RFM2gSendEvent` to node `to`, or to all others with `None`.
    fn send(
        &self,
        api: EventApi,
        to: Option<u16>,
        kind: Interrupt,
        data: u32,
    ) -> Result<(), Rfm2gError> {
        let node = to.unwrap_or(ffi::RFM2G_NODE_ALL as RFM2G_NODE);
        // SAFETY: open handle; plain arguments.
        let status = unsafe { (api.send)(self.handle, node, kind.raw(), data) };
        counts::vendor_call(0, false);
        self.check("RFM2gSendEvent", status)
    }

    fn event_api(&self) -> Result<EventApi, BoardError> {
        self.api.events.ok_or_else(|| BoardError::SymbolMissing {
            library: self.api.library.clone(),
            symbol: "RFM2gSendEvent",
        })
    }

    /// Maps `[offset, offset + len)` through `RFM2gUserMemory`, rounded out to pages.
    pub(crate) fn map(self: &Arc<Self>, offset: u64, len: usize) -> Result<Region, BoardError> {
        let page_offset = offset - offset % PAGE_SIZE;
        let span = offset - page_offset + len as u64;
        let pages = u32::try_from(span.div_ceil(PAGE_SIZE)).map_err(|_| {
            BoardError::WindowOutOfRange(OutsideMemory {
                device: self.device.clone(),
                offset,
                len: len as u64,
                size: self.size,
            })
        })?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: the handle is open; `ptr` is a valid out pointer.
        let status = unsafe { (self.api.user_memory)(self.handle, &mut ptr, page_offset, pages) };
        self.check("RFM2gUserMemory", status)?;
        let Some(page_base) = NonNull::new(ptr.cast::<u8>()) else {
            return Err(BoardError::Call(Rfm2gError {
                call: "RFM2gUserMemory",
                device: self.device.clone(),
                code: 0,
                name: status_name(0),
                message: "returned success but a NULL mapping".into(),
            }));
        };
        let mapping = Arc::new(Mapping {
            board: Arc::clone(self),
            page_base,
            pages,
        });
        // SAFETY: `offset - page_offset < PAGE_SIZE` lies inside the `pages` pages
        // the library just mapped.
        let base = unsafe { page_base.add((offset - page_offset) as usize) };
        // SAFETY: the library mapped `pages` pages at `page_base`, which cover
        // `[base, base + len)`; base is word-aligned because the callers check
        // `offset`; the mapping lives until `Mapping` is dropped, and the board and
        // other nodes change it only by aligned word writes.
        let region = unsafe { Region::from_raw_parts(base, len, mapping as _) };
        Ok(match self.dma_reads {
            Some(from) => region.with_dma_reads(Arc::clone(self) as _, offset, from),
            None => region,
        })
    }
}

impl DmaRead for Board {
    fn read_dma(&self, offset: u64, buf: &mut [u8]) -> Result<(), Rfm2gError> {
        let read = self
            .api
            .read
            .expect("DMA reads are set up only with RFM2gRead");
        // Region checked the window, which lies inside the board's memory,
        // whose size is a u32.
        let (offset, len) = (offset as RFM2G_UINT32, buf.len() as RFM2G_UINT32);
        // SAFETY: open handle; `buf` is valid for `len` bytes of writes.
        let status = unsafe { read(self.handle, offset, buf.as_mut_ptr().cast(), len) };
        self.check("RFM2gRead", status)
    }
}

fn check(
    api: &Api,
    device: &str,
    call: &'static str,
    status: RFM2G_STATUS,
) -> Result<(), Rfm2gError> {
    if status == 0 {
        return Ok(());
    }
    // SAFETY: RFM2gErrorMsg takes any status and returns a static string or NULL.
    let text = unsafe { (api.error_msg)(status) };
    let message = if text.is_null() {
        "(RFM2gErrorMsg gave no text)".to_owned()
    } else {
        // SAFETY: non-NULL, and documented as a NUL-terminated static string.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    };
    Err(Rfm2gError {
        call,
        device: device.to_owned(),
        code: status,
        name: status_name(status),
        message,
    })
}

impl Drop for Board {
    fn drop(&mut self) {
        // SAFETY: the handle came from RFM2gOpen and is closed once; every mapping
        // holds an Arc to the board, so none is left.
        let status = unsafe { (self.api.close)(&mut self.handle) };
        if let Err(e) = self.check("RFM2gClose", status) {
            // Nothing to return it to: Drop cannot fail. A `log` record reaches the
            // master's logger inside the FMU (never stderr), or the host's logger.
            log::warn!("{e}");
        }
    }
}

/// One `RFM2gUserMemory` mapping; unmapped on drop.
struct Mapping {
    board: Arc<Board>,
    page_base: NonNull<u8>,
    pages: u32,
}

// SAFETY: the mapping is memory shared with the board; Region only touches it with
// atomics, and unmapping happens once, on drop.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        let mut ptr = self.page_base.as_ptr().cast::<c_void>();
        // SAFETY: `ptr`/`pages` are what RFM2gUserMemory returned/was given; no
        // region over this mapping is left (each held an Arc to it).
        let status = unsafe { (self.board.api.unmap)(self.board.handle, &mut ptr, self.pages) };
        if let Err(e) = self.board.check("RFM2gUnMapUserMemory", status) {
            log::warn!("{e}");
        }
    }
}

/// Opens `device` (e.g. `/dev/rfm2g0`) through `library` (default [`DEFAULT_LIBRARY`]).
pub(crate) fn open(
    device: &str,
    library: Option<&Path>,
    dma_reads_from: Option<u32>,
) -> Result<Arc<Board>, BoardError> {
    let api = load(library)?;
    let path = CString::new(device).map_err(|_| BoardError::BadPath {
        device: device.escape_debug().to_string(),
        reason: "it contains a NUL byte".into(),
    })?;
    let mut handle: RFM2GHANDLE = std::ptr::null_mut();
    // SAFETY: `path` is a valid C string the library only reads (the vendor
    // prototype lacks const); `handle` is a valid out pointer, NULL as required.
    let status = unsafe { (api.open)(path.as_ptr().cast_mut(), &mut handle) };
    check(&api, device, "RFM2gOpen", status)?;
    // From here on the board closes the handle on every exit.
    let mut board = Board {
        api,
        handle,
        device: device.to_owned(),
        size: 0,
        node_id: 0,
        board_id: None,
        dma_reads: None,
    };
    let mut size: RFM2G_UINT32 = 0;
    // SAFETY: open handle, valid out pointer.
    board.check("RFM2gSize", unsafe {
        (board.api.size)(board.handle, &mut size)
    })?;
    let mut node: RFM2G_NODE = 0;
    // SAFETY: open handle, valid out pointer.
    board.check("RFM2gNodeID", unsafe {
        (board.api.node_id)(board.handle, &mut node)
    })?;
    board.size = u64::from(size);
    board.node_id = node;
    if let Some(board_id) = board.api.board_id {
        let mut id: ffi::RFM2G_UINT8 = 0;
        // SAFETY: open handle, valid out pointer.
        if unsafe { board_id(board.handle, &mut id) } == 0 {
            board.board_id = Some(id);
        }
    }
    board.dma_reads = board.dma_reads(dma_reads_from);
    Ok(Arc::new(board))
}
