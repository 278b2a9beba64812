//! A path such as `/dev/rfm2g0`: an RFM2g board through the vendor library,
//! loaded at run time so that nothing here needs the SDK to build.

// Exactly what bindgen wrote (tests/bindings.rs compares byte for byte).
#[rustfmt::skip]
pub mod ffi;
mod status;

pub use status::{status_name, Rfm2gError};

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

use ffi::{RFM2GHANDLE, RFM2G_NODE, RFM2G_STATUS, RFM2G_UINT32, RFM2G_UINT64};

use crate::region::Region;
use crate::DeviceError;

/// The library loaded when the caller names none.
pub const DEFAULT_LIBRARY: &str = if cfg!(windows) {
    "rfm2gdll_stdc_64.dll"
} else {
    "librfm2g.so"
};

/// `RFM2gUserMemory` maps whole pages from a page-aligned offset.
pub const PAGE_SIZE: u64 = 4096;

/// How a user gets the library, quoted in every load error.
pub const BUILD_HINT: &str = "the vendor ships only a static librfm2g.a on Linux; build a shared \
    one from the RFM2g SDK with `gcc -shared -fPIC -O2 api/*.c -lpthread -o librfm2g.so` and put \
    it on LD_LIBRARY_PATH, or give its full path (parameter rfm2gLibrary); on Windows install the \
    SDK so that rfm2gdll_stdc_64.dll is on PATH";

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

/// The network-interrupt functions, present in every vendor release but optional
/// here: only `waitStrategy = event` needs them.
#[derive(Clone, Copy)]
struct EventApi {
    enable: EventFn,
    disable: EventFn,
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
}

fn load(library: Option<&Path>) -> Result<Api, DeviceError> {
    let name = library.map_or_else(|| DEFAULT_LIBRARY.to_owned(), |p| p.display().to_string());
    // SAFETY: loading runs the library's initialisers; that is what loading the
    // vendor library means, and the user chose (or defaulted) which one.
    let raw = unsafe {
        match library {
            Some(path) => ffi::Rfm2gApi::new(path),
            None => ffi::Rfm2gApi::new(DEFAULT_LIBRARY),
        }
    }
    .map_err(|e| DeviceError::LibraryNotLoaded {
        library: name.clone(),
        reason: e.to_string(),
    })?;
    macro_rules! required {
        ($field:ident) => {
            *raw.$field
                .as_ref()
                .map_err(|_| DeviceError::SymbolMissing {
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
            &raw.RFM2gDisableEvent,
            &raw.RFM2gSendEvent,
            &raw.RFM2gWaitForEvent,
        ) {
            (Ok(enable), Ok(disable), Ok(send), Ok(wait)) => Some(EventApi {
                enable: *enable,
                disable: *disable,
                send: *send,
                wait: *wait,
            }),
            _ => None,
        },
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

    /// Maps `[offset, offset + len)` through `RFM2gUserMemory`, rounded out to pages.
    pub(crate) fn map(self: &Arc<Self>, offset: u64, len: usize) -> Result<Region, DeviceError> {
        let page_offset = offset - offset % PAGE_SIZE;
        let span = offset - page_offset + len as u64;
        let pages =
            u32::try_from(span.div_ceil(PAGE_SIZE)).map_err(|_| DeviceError::WindowOutOfRange {
                device: self.device.clone(),
                offset,
                len: len as u64,
                size: self.size,
            })?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: the handle is open; `ptr` is a valid out pointer.
        let status = unsafe { (self.api.user_memory)(self.handle, &mut ptr, page_offset, pages) };
        self.check("RFM2gUserMemory", status)?;
        let Some(page_base) = NonNull::new(ptr.cast::<u8>()) else {
            return Err(DeviceError::Rfm2g(Rfm2gError {
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
        Ok(unsafe { Region::from_raw_parts(base, len, mapping as _) })
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
            // Nothing to return it to: Drop cannot fail. Leave a trace for diagnostics.
            eprintln!("rfm-core: {e}");
        }
    }
}

/// The network interrupt the link uses to wake a waiting peer.
pub const LINK_EVENT: ffi::RFM2GEVENTTYPE = ffi::RFM2GEVENT_INTR1 as ffi::RFM2GEVENTTYPE;

/// RFM2g network interrupts of one board, enabled for [`LINK_EVENT`] while alive.
pub struct Events {
    board: Arc<Board>,
    api: EventApi,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("board", &self.board)
            .finish()
    }
}

impl Board {
    /// Enables [`LINK_EVENT`]; `Ok(None)` when the library lacks the event functions.
    pub(crate) fn events(self: &Arc<Self>) -> Result<Option<Events>, Rfm2gError> {
        let Some(api) = self.api.events else {
            return Ok(None);
        };
        // SAFETY: open handle; a plain event number.
        let status = unsafe { (api.enable)(self.handle, LINK_EVENT) };
        // Already enabled: by another handle on this board, or by a process that
        // died without disabling it. Either way the interrupt is on, as wanted.
        if status != ffi::RFM2G_ALREADY_ENABLED as RFM2G_STATUS {
            self.check("RFM2gEnableEvent", status)?;
        }
        Ok(Some(Events {
            board: Arc::clone(self),
            api,
        }))
    }
}

impl Events {
    /// Sends [`LINK_EVENT`] with `data` to every other node on the ring.
    pub fn broadcast(&self, data: u32) -> Result<(), Rfm2gError> {
        let all = ffi::RFM2G_NODE_ALL as RFM2G_NODE;
        // SAFETY: open handle; plain arguments.
        let status = unsafe { (self.api.send)(self.board.handle, all, LINK_EVENT, data) };
        self.board.check("RFM2gSendEvent", status)
    }

    /// Waits up to `timeout_ms` for [`LINK_EVENT`]: `Some((node, data))`, or `None`
    /// when the time ran out.
    pub fn wait(&self, timeout_ms: u32) -> Result<Option<(u16, u32)>, Rfm2gError> {
        let mut info = ffi::RFM2GEVENTINFO {
            ExtendedInfo: 0,
            Event: LINK_EVENT,
            Timeout: timeout_ms,
            NodeId: 0,
            pDrvSpec: std::ptr::null_mut(),
        };
        // SAFETY: open handle; `info` is a valid, initialised in/out struct.
        let status = unsafe { (self.api.wait)(self.board.handle, &mut info) };
        if status == ffi::RFM2G_TIMED_OUT as RFM2G_STATUS {
            return Ok(None);
        }
        self.board.check("RFM2gWaitForEvent", status)?;
        Ok(Some((info.NodeId, info.ExtendedInfo)))
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        // SAFETY: open handle (the Arc keeps the board open); a plain event number.
        let _ = unsafe { (self.api.disable)(self.board.handle, LINK_EVENT) };
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
            eprintln!("rfm-core: {e}");
        }
    }
}

/// Opens `device` (e.g. `/dev/rfm2g0`) through `library` (default [`DEFAULT_LIBRARY`]).
pub(crate) fn open(device: &str, library: Option<&Path>) -> Result<Arc<Board>, DeviceError> {
    let api = load(library)?;
    let path = CString::new(device).map_err(|_| DeviceError::BadDevice {
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
    Ok(Arc::new(board))
}
