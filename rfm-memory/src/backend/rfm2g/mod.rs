//! A path such as `/dev/rfm2g0`: an RFM2g board through the vendor library,
//! loaded at run time so that nothing here needs the SDK to build.

// Exactly what bindgen wrote (tests/bindings.rs compares byte for byte).
#[rustfmt::skip]
/// The vendor API's declarations (rfm2g-sys).
pub use rfm2g_sys::ffi;
pub mod emulated;
mod lcsr;

pub use lcsr::Lcsr;

pub use rfm2g_sys::{status_name, Rfm2gError};

mod error;
pub use error::BoardError;

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

use ffi::{RFM2GHANDLE, RFM2G_NODE, RFM2G_STATUS, RFM2G_UINT32, RFM2G_UINT64};

use crate::counts;
use crate::region::OutsideMemory;
use crate::region::{BlockRead, Region};

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

type OpenFn = unsafe extern "C" fn(*mut c_char, *mut RFM2GHANDLE) -> RFM2G_STATUS;
type CloseFn = unsafe extern "C" fn(*mut RFM2GHANDLE) -> RFM2G_STATUS;
type SizeFn = unsafe extern "C" fn(RFM2GHANDLE, *mut RFM2G_UINT32) -> RFM2G_STATUS;
type NodeIdFn = unsafe extern "C" fn(RFM2GHANDLE, *mut RFM2G_NODE) -> RFM2G_STATUS;
type UserMemoryFn =
    unsafe extern "C" fn(RFM2GHANDLE, *mut *mut c_void, RFM2G_UINT64, RFM2G_UINT32) -> RFM2G_STATUS;
type UnMapFn = unsafe extern "C" fn(RFM2GHANDLE, *mut *mut c_void, RFM2G_UINT32) -> RFM2G_STATUS;
type ErrorMsgFn = unsafe extern "C" fn(RFM2G_STATUS) -> *mut c_char;
type EventFn = unsafe extern "C" fn(RFM2GHANDLE, ffi::RFM2GEVENTTYPE) -> RFM2G_STATUS;
type SendEventFn = unsafe extern "C" fn(
    RFM2GHANDLE,
    RFM2G_NODE,
    ffi::RFM2GEVENTTYPE,
    RFM2G_UINT32,
) -> RFM2G_STATUS;
type WaitEventFn = unsafe extern "C" fn(RFM2GHANDLE, *mut ffi::RFM2GEVENTINFO) -> RFM2G_STATUS;
type BoardIdFn = unsafe extern "C" fn(RFM2GHANDLE, *mut ffi::RFM2G_UINT8) -> RFM2G_STATUS;
type CheckRingFn = unsafe extern "C" fn(RFM2GHANDLE) -> RFM2G_STATUS;
type ReadFn =
    unsafe extern "C" fn(RFM2GHANDLE, RFM2G_UINT32, *mut c_void, RFM2G_UINT32) -> RFM2G_STATUS;
type GetThresholdFn = unsafe extern "C" fn(RFM2GHANDLE, *mut RFM2G_UINT32) -> RFM2G_STATUS;
type SetThresholdFn = unsafe extern "C" fn(RFM2GHANDLE, RFM2G_UINT32) -> RFM2G_STATUS;
type GetConfigFn = unsafe extern "C" fn(RFM2GHANDLE, *mut ffi::RFM2GCONFIG) -> RFM2G_STATUS;
type ClearOwnDataFn = unsafe extern "C" fn(RFM2GHANDLE, *mut ffi::RFM2G_BOOL) -> RFM2G_STATUS;
type WriteFn =
    unsafe extern "C" fn(RFM2GHANDLE, RFM2G_UINT32, *mut c_void, RFM2G_UINT32) -> RFM2G_STATUS;

/// The network-interrupt functions, present in every vendor release but optional
/// here: only `waitStrategy = event` needs them.
#[derive(Clone, Copy)]
struct EventApi {
    enable: EventFn,
    send: SendEventFn,
    wait: WaitEventFn,
}

/// The functions this backend needs, resolved once at load.
struct Api {
    /// Owns the library: the function pointers below live as long as it does.
    _raw: ffi::Rfm2gApi,
    library: String,
    open: OpenFn,
    close: CloseFn,
    size: SizeFn,
    node_id: NodeIdFn,
    user_memory: UserMemoryFn,
    unmap: UnMapFn,
    error_msg: ErrorMsgFn,
    events: Option<EventApi>,
    /// Block reads (`RFM2gRead`) and the driver's DMA threshold: optional, as
    /// frames are read word by word without them.
    read: Option<ReadFn>,
    get_dma_threshold: Option<GetThresholdFn>,
    set_dma_threshold: Option<SetThresholdFn>,
    /// Diagnostics, optional: only `rfmctl` uses them.
    board_id: Option<BoardIdFn>,
    check_ring: Option<CheckRingFn>,
    /// The board's state (its LCSR) and the own-data test: optional, for the
    /// health watch and `rfmctl` only.
    get_config: Option<GetConfigFn>,
    clear_own_data: Option<ClearOwnDataFn>,
    /// A store through the driver (`RFM2gWrite`), which a card sends round
    /// its ring like any other: the own-data test's probe. Optional.
    write: Option<WriteFn>,
}

/// Loads the vendor library so that it stays loaded for the rest of the process.
///
/// A vendor library may keep threads, handlers or memory of its own, which
/// unloading it (when the last device closes) would leave pointing at unmapped
/// code or data; the emulator's own tables, for one, would be lost as leaks.
/// Loading happens once per device open, so keeping it costs nothing.
fn open_resident(path: &std::ffi::OsStr) -> Result<libloading::Library, libloading::Error> {
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading runs the library's initialisers; that is what loading
        // the vendor library means, and the user chose (or defaulted) which one.
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL | libc::RTLD_NODELETE) }
            .map(Into::into)
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above.
        let lib = unsafe { libloading::Library::new(path) }?;
        // Windows has no RTLD_NODELETE: an extra reference that is never
        // released keeps the DLL loaded.
        // SAFETY: as above; the library is loaded already.
        std::mem::forget(unsafe { libloading::Library::new(path) }?);
        Ok(lib)
    }
}

/// The library `library` names (the platform's by default), loaded for
/// good, and its name for messages.
fn load_library(library: Option<&Path>) -> Result<(String, libloading::Library), BoardError> {
    let name = library.map_or_else(|| DEFAULT_LIBRARY.to_owned(), |p| p.display().to_string());
    let path = library.map_or(DEFAULT_LIBRARY.as_ref(), Path::as_os_str);
    match open_resident(path) {
        Ok(loaded) => Ok((name, loaded)),
        Err(e) => Err(BoardError::LibraryNotLoaded {
            library: name,
            reason: e.to_string(),
        }),
    }
}

fn load(library: Option<&Path>) -> Result<Api, BoardError> {
    let (name, loaded) = load_library(library)?;
    // SAFETY: resolving symbols runs nothing; their types are the header's.
    let raw = unsafe { ffi::Rfm2gApi::from_library(loaded) }.map_err(|e| {
        BoardError::LibraryNotLoaded {
            library: name.clone(),
            reason: e.to_string(),
        }
    })?;
    macro_rules! required {
        ($field:ident) => {
            *raw.$field.as_ref().map_err(|_| BoardError::SymbolMissing {
                library: name.clone(),
                symbol: stringify!($field),
            })?
        };
    }
    Ok(Api {
        open: required!(RFM2gOpen),
        close: required!(RFM2gClose),
        size: required!(RFM2gSize),
        node_id: required!(RFM2gNodeID),
        user_memory: required!(RFM2gUserMemory),
        unmap: required!(RFM2gUnMapUserMemory),
        error_msg: required!(RFM2gErrorMsg),
        events: match (
            &raw.RFM2gEnableEvent,
            &raw.RFM2gSendEvent,
            &raw.RFM2gWaitForEvent,
        ) {
            (Ok(enable), Ok(send), Ok(wait)) => Some(EventApi {
                enable: *enable,
                send: *send,
                wait: *wait,
            }),
            _ => None,
        },
        read: raw.RFM2gRead.as_ref().ok().copied(),
        get_dma_threshold: raw.RFM2gGetDMAThreshold.as_ref().ok().copied(),
        set_dma_threshold: raw.RFM2gSetDMAThreshold.as_ref().ok().copied(),
        board_id: raw.RFM2gBoardID.as_ref().ok().copied(),
        check_ring: raw.RFM2gCheckRingCont.as_ref().ok().copied(),
        get_config: raw.RFM2gGetConfig.as_ref().ok().copied(),
        clear_own_data: raw.RFM2gClearOwnData.as_ref().ok().copied(),
        write: raw.RFM2gWrite.as_ref().ok().copied(),
        library: name,
        _raw: raw,
    })
}

/// An open board; closed on drop (after every mapping, which holds an Arc to it).
pub(crate) struct Board {
    api: Api,
    handle: RFM2GHANDLE,
    device: String,
    size: u64,
    node_id: u16,
    board_id: Option<u8>,
    /// Blocks of at least this many bytes are read with one `RFM2gRead`
    /// ([`Board::block_reads`], decided at open).
    block_reads: Option<usize>,
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
    fn block_reads(&self, asked: Option<u32>) -> Option<usize> {
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
        Ok(match self.block_reads {
            Some(from) => region.with_block_reads(Arc::clone(self) as _, offset, from),
            None => region,
        })
    }
}

impl BlockRead for Board {
    fn read_block(&self, offset: u64, buf: &mut [u8]) -> Result<(), Rfm2gError> {
        let read = self
            .api
            .read
            .expect("block reads are set up only with RFM2gRead");
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

/// The error events a card raises about its ring. The driver switches each
/// off once it fired: a watcher enables it again to hear of the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingEvent {
    BadData,
    RxFifoFull,
    RoguePacket,
    SyncLoss,
}

impl RingEvent {
    pub const ALL: [RingEvent; 4] = [
        RingEvent::BadData,
        RingEvent::RxFifoFull,
        RingEvent::RoguePacket,
        RingEvent::SyncLoss,
    ];

    fn raw(self) -> ffi::RFM2GEVENTTYPE {
        (match self {
            RingEvent::BadData => ffi::RFM2GEVENT_BAD_DATA,
            RingEvent::RxFifoFull => ffi::RFM2GEVENT_RXFIFO_FULL,
            RingEvent::RoguePacket => ffi::RFM2GEVENT_ROGUE_PKT,
            RingEvent::SyncLoss => ffi::RFM2GEVENT_SYNC_LOSS,
        }) as ffi::RFM2GEVENTTYPE
    }

    /// The vendor's name, and what it means.
    pub fn describe(self) -> &'static str {
        match self {
            RingEvent::BadData => "RFM2GEVENT_BAD_DATA (a packet with bad data arrived)",
            RingEvent::RxFifoFull => "RFM2GEVENT_RXFIFO_FULL (its receive buffer overflowed)",
            RingEvent::RoguePacket => {
                "RFM2GEVENT_ROGUE_PKT (a packet went round the ring with no node taking it)"
            }
            RingEvent::SyncLoss => "RFM2GEVENT_SYNC_LOSS (its fibre in lost sync)",
        }
    }
}

impl Board {
    /// Enables `event` (again, after it fired); `Ok(false)` when the
    /// library has no event functions.
    pub(crate) fn enable_ring_event(&self, event: RingEvent) -> Result<bool, BoardError> {
        let Some(api) = self.api.events else {
            return Ok(false);
        };
        // SAFETY: open handle; a plain event number.
        let status = unsafe { (api.enable)(self.handle, event.raw()) };
        if status != ffi::RFM2G_ALREADY_ENABLED as RFM2G_STATUS {
            self.check("RFM2gEnableEvent", status)?;
        }
        Ok(true)
    }

    /// Whether `event` fired since it was enabled: a wait of no time.
    pub(crate) fn ring_event_fired(&self, event: RingEvent) -> Result<bool, BoardError> {
        let api = self
            .api
            .events
            .ok_or_else(|| self.missing("RFM2gWaitForEvent"))?;
        let mut info = ffi::RFM2GEVENTINFO {
            ExtendedInfo: 0,
            Event: event.raw(),
            Timeout: 0,
            NodeId: 0,
            pDrvSpec: std::ptr::null_mut(),
        };
        // SAFETY: open handle; `info` is a valid, initialised in/out struct.
        let status = unsafe { (api.wait)(self.handle, &mut info) };
        if status == ffi::RFM2G_TIMED_OUT as RFM2G_STATUS {
            return Ok(false);
        }
        self.check("RFM2gWaitForEvent", status)?;
        Ok(true)
    }
}

/// The network interrupts a program can send (`RFM2gSendEvent` accepts only these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    Reset,
    Intr1,
    Intr2,
    Intr3,
    Intr4,
}

impl Interrupt {
    /// The accepted names, quoted in errors.
    pub const NAMES: &'static str = "reset, intr1, intr2, intr3, intr4";

    fn raw(self) -> ffi::RFM2GEVENTTYPE {
        (match self {
            Interrupt::Reset => ffi::RFM2GEVENT_RESET,
            Interrupt::Intr1 => ffi::RFM2GEVENT_INTR1,
            Interrupt::Intr2 => ffi::RFM2GEVENT_INTR2,
            Interrupt::Intr3 => ffi::RFM2GEVENT_INTR3,
            Interrupt::Intr4 => ffi::RFM2GEVENT_INTR4,
        }) as ffi::RFM2GEVENTTYPE
    }
}

impl std::fmt::Display for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Interrupt::Reset => "RESET",
            Interrupt::Intr1 => "INTR1",
            Interrupt::Intr2 => "INTR2",
            Interrupt::Intr3 => "INTR3",
            Interrupt::Intr4 => "INTR4",
        })
    }
}

impl std::str::FromStr for Interrupt {
    type Err = String;

    fn from_str(s: &str) -> Result<Interrupt, String> {
        match s.to_ascii_lowercase().as_str() {
            "reset" => Ok(Interrupt::Reset),
            "intr1" => Ok(Interrupt::Intr1),
            "intr2" => Ok(Interrupt::Intr2),
            "intr3" => Ok(Interrupt::Intr3),
            "intr4" => Ok(Interrupt::Intr4),
            _ => Err(format!(
                "`{s}` is not a network interrupt; use {}",
                Interrupt::NAMES
            )),
        }
    }
}

/// The network interrupt the link uses to wake a waiting peer.
pub const LINK_EVENT: Interrupt = Interrupt::Intr1;

/// One network interrupt of one board, enabled from here on.
///
/// The enable state belongs to the board node, not to a handle: another coupling
/// on the same node, a simulator while `rfmctl` listens, or a process that died
/// all share it. So it is never switched off again (no handle can know that it is
/// the last user); an enabled interrupt that nobody waits for costs one latched
/// event per type.
pub struct Events {
    board: Arc<Board>,
    api: EventApi,
    kind: Interrupt,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("board", &self.board)
            .field("kind", &self.kind)
            .finish()
    }
}

impl Board {
    /// Enables interrupt `kind`; `Ok(None)` when the library lacks the event functions.
    pub(crate) fn events(self: &Arc<Self>, kind: Interrupt) -> Result<Option<Events>, Rfm2gError> {
        let Some(api) = self.api.events else {
            return Ok(None);
        };
        // SAFETY: open handle; a plain event number.
        let status = unsafe { (api.enable)(self.handle, kind.raw()) };
        // Already enabled: by another user of this board node. The interrupt is on,
        // as wanted.
        if status != ffi::RFM2G_ALREADY_ENABLED as RFM2G_STATUS {
            self.check("RFM2gEnableEvent", status)?;
        }
        Ok(Some(Events {
            board: Arc::clone(self),
            api,
            kind,
        }))
    }
}

impl Events {
    /// Sends this interrupt with `data` to every other node on the ring.
    pub fn broadcast(&self, data: u32) -> Result<(), Rfm2gError> {
        self.board.send(self.api, None, self.kind, data)
    }

    /// Waits up to `timeout_ms` for this interrupt: `Some((node, data))`, or `None`
    /// when the time ran out.
    pub fn wait(&self, timeout_ms: u32) -> Result<Option<(u16, u32)>, Rfm2gError> {
        let mut info = ffi::RFM2GEVENTINFO {
            ExtendedInfo: 0,
            Event: self.kind.raw(),
            Timeout: timeout_ms,
            NodeId: 0,
            pDrvSpec: std::ptr::null_mut(),
        };
        // SAFETY: open handle; `info` is a valid, initialised in/out struct.
        let status = unsafe { (self.api.wait)(self.board.handle, &mut info) };
        counts::vendor_call(0, false);
        if status == ffi::RFM2G_TIMED_OUT as RFM2G_STATUS {
            return Ok(None);
        }
        self.board.check("RFM2gWaitForEvent", status)?;
        Ok(Some((info.NodeId, info.ExtendedInfo)))
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
    block_reads_from: Option<u32>,
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
        block_reads: None,
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
    board.block_reads = board.block_reads(block_reads_from);
    Ok(Arc::new(board))
}
