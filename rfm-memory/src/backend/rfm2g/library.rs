//! The vendor library, loaded at run time and kept loaded: the functions
//! this backend calls, resolved once, the optional ones as `Option`s.

use std::ffi::{c_char, c_void};
use std::path::Path;

use super::ffi::{self, RFM2GHANDLE, RFM2G_NODE, RFM2G_STATUS, RFM2G_UINT32, RFM2G_UINT64};
use super::{BoardError, DEFAULT_LIBRARY};

pub(super) type OpenFn = unsafe extern "C" fn(*mut c_char, *mut RFM2GHANDLE) -> RFM2G_STATUS;
pub(super) type CloseFn = unsafe extern "C" fn(*mut RFM2GHANDLE) -> RFM2G_STATUS;
pub(super) type SizeFn = unsafe extern "C" fn(RFM2GHANDLE, *mut RFM2G_UINT32) -> RFM2G_STATUS;
pub(super) type NodeIdFn = unsafe extern "C" fn(RFM2GHANDLE, *mut RFM2G_NODE) -> RFM2G_STATUS;
pub(super) type UserMemoryFn =
    unsafe extern "C" fn(RFM2GHANDLE, *mut *mut c_void, RFM2G_UINT64, RFM2G_UINT32) -> RFM2G_STATUS;
pub(super) type UnMapFn =
    unsafe extern "C" fn(RFM2GHANDLE, *mut *mut c_void, RFM2G_UINT32) -> RFM2G_STATUS;
pub(super) type ErrorMsgFn = unsafe extern "C" fn(RFM2G_STATUS) -> *mut c_char;
pub(super) type EventFn = unsafe extern "C" fn(RFM2GHANDLE, ffi::RFM2GEVENTTYPE) -> RFM2G_STATUS;
pub(super) type SendEventFn = unsafe extern "C" fn(
    RFM2GHANDLE,
    RFM2G_NODE,
    ffi::RFM2GEVENTTYPE,
    RFM2G_UINT32,
) -> RFM2G_STATUS;
pub(super) type WaitEventFn =
    unsafe extern "C" fn(RFM2GHANDLE, *mut ffi::RFM2GEVENTINFO) -> RFM2G_STATUS;
pub(super) type BoardIdFn =
    unsafe extern "C" fn(RFM2GHANDLE, *mut ffi::RFM2G_UINT8) -> RFM2G_STATUS;
pub(super) type CheckRingFn = unsafe extern "C" fn(RFM2GHANDLE) -> RFM2G_STATUS;
pub(super) type ReadFn =
    unsafe extern "C" fn(RFM2GHANDLE, RFM2G_UINT32, *mut c_void, RFM2G_UINT32) -> RFM2G_STATUS;
pub(super) type GetThresholdFn =
    unsafe extern "C" fn(RFM2GHANDLE, *mut RFM2G_UINT32) -> RFM2G_STATUS;
pub(super) type SetThresholdFn = unsafe extern "C" fn(RFM2GHANDLE, RFM2G_UINT32) -> RFM2G_STATUS;
pub(super) type GetConfigFn =
    unsafe extern "C" fn(RFM2GHANDLE, *mut ffi::RFM2GCONFIG) -> RFM2G_STATUS;
pub(super) type ClearOwnDataFn =
    unsafe extern "C" fn(RFM2GHANDLE, *mut ffi::RFM2G_BOOL) -> RFM2G_STATUS;
pub(super) type WriteFn =
    unsafe extern "C" fn(RFM2GHANDLE, RFM2G_UINT32, *mut c_void, RFM2G_UINT32) -> RFM2G_STATUS;

/// The network-interrupt functions, present in every vendor release but optional
/// here: only `waitStrategy = event` needs them.
#[derive(Clone, Copy)]
pub(super) struct EventApi {
    pub(super) enable: EventFn,
    pub(super) send: SendEventFn,
    pub(super) wait: WaitEventFn,
}

/// The functions this backend needs, resolved once at load.
pub(super) struct Api {
    /// Owns the library: the function pointers below live as long as it does.
    pub(super) _raw: ffi::Rfm2gApi,
    pub(super) library: String,
    pub(super) open: OpenFn,
    pub(super) close: CloseFn,
    pub(super) size: SizeFn,
    pub(super) node_id: NodeIdFn,
    pub(super) user_memory: UserMemoryFn,
    pub(super) unmap: UnMapFn,
    pub(super) error_msg: ErrorMsgFn,
    pub(super) events: Option<EventApi>,
    /// Block reads (`RFM2gRead`) and the driver's DMA threshold: optional, as
    /// frames are read word by word without them.
    pub(super) read: Option<ReadFn>,
    pub(super) get_dma_threshold: Option<GetThresholdFn>,
    pub(super) set_dma_threshold: Option<SetThresholdFn>,
    /// Diagnostics, optional: only `rfmctl` uses them.
    pub(super) board_id: Option<BoardIdFn>,
    pub(super) check_ring: Option<CheckRingFn>,
    /// The board's state (its LCSR) and the own-data test: optional, for the
    /// health watch and `rfmctl` only.
    pub(super) get_config: Option<GetConfigFn>,
    pub(super) clear_own_data: Option<ClearOwnDataFn>,
    /// A store through the driver (`RFM2gWrite`), which a card sends round
    /// its ring like any other: the own-data test's probe. Optional.
    pub(super) write: Option<WriteFn>,
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
pub(super) fn load_library(
    library: Option<&Path>,
) -> Result<(String, libloading::Library), BoardError> {
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

pub(super) fn load(library: Option<&Path>) -> Result<Api, BoardError> {
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
