//! The exported vendor functions. Each checks its arguments in the order the
//! vendor numbers them (`BAD_PARAMETER_n` is the n-th argument), never lets a
//! panic cross into C (it becomes `RFM2G_DRIVER_ERROR`), and touches ring memory
//! only inside the board's bounds.
//!
//! Safety contract (the vendor's): pointer arguments are NULL or valid for the
//! access the manual describes; a handle is whatever `RFM2gOpen` gave (anything
//! else is detected and refused).
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::abi::*;
use crate::config::{self, ConfigError};
use crate::cut;
use crate::handle::{self, Board, Waiter};
use crate::ring::{access, now_ns, Ring, EVENT_TYPES};

/// PCIE-5565 family board id.
const BOARD_ID: RFM2G_UINT8 = 0x65;

fn call(f: impl FnOnce() -> Result<(), Code>) -> RFM2G_STATUS {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => RFM2G_SUCCESS,
        Ok(Err(Code(code))) => code,
        Err(_) => Code::DRIVER_ERROR.0,
    }
}

/// Like [`call`] for functions that act on an open board.
fn with_board(rh: RFM2GHANDLE, f: impl FnOnce(&Arc<Board>) -> Result<(), Code>) -> RFM2G_STATUS {
    call(|| f(&handle::get(rh)?))
}

/// Writes through an out pointer, or fails with `param` if it is NULL.
unsafe fn put<T>(out: *mut T, value: T, param: Code) -> Result<(), Code> {
    if out.is_null() {
        return Err(param);
    }
    // SAFETY: non-NULL, and valid for a write by the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

fn event_type(ty: RFM2GEVENTTYPE, param: Code) -> Result<usize, Code> {
    usize::try_from(ty)
        .ok()
        .filter(|t| *t < EVENT_TYPES)
        .ok_or(param)
}

fn flag(value: RFM2G_BOOL) -> Result<u32, Code> {
    match value {
        0 | 1 => Ok(u32::from(value)),
        _ => Err(Code::BAD_PARAMETER_2),
    }
}

/// Why an open failed, for the user; the status alone cannot say.
fn explain(path: &str, why: &str) {
    eprintln!("rfm2g-sim: RFM2gOpen({path}): {why}");
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gOpen(DevicePath: *mut c_char, rh: *mut RFM2GHANDLE) -> RFM2G_STATUS {
    call(|| {
        if DevicePath.is_null() {
            return Err(Code::BAD_PARAMETER_1);
        }
        if rh.is_null() {
            return Err(Code::BAD_PARAMETER_2);
        }
        // SAFETY: non-NULL; the caller passes a handle variable to fill.
        if !unsafe { *rh }.is_null() {
            return Err(Code::HANDLE_NOT_NULL);
        }
        // SAFETY: non-NULL, NUL-terminated by the caller's contract.
        let raw = unsafe { CStr::from_ptr(DevicePath) };
        let path = raw.to_string_lossy().into_owned();
        let board = config::resolve(&path).map_err(|e| {
            explain(&path, &e.to_string());
            match e {
                ConfigError::Unconfigured { .. } | ConfigError::Bad { .. } => Code::NO_RFM2G_BOARD,
                ConfigError::Unreadable { .. } => Code::NOT_OPEN,
            }
        })?;
        let ring = Ring::open(&path, &board).map_err(|why| {
            explain(&path, &why);
            Code::NOT_OPEN
        })?;
        let (node, link_up) = (board.node, board.link_up);
        if !link_up && cfg!(target_os = "linux") {
            // The entry key `link=down`: the board opens cut from its ring.
            if let Err(why) = cut::set_link(&ring, node, false) {
                explain(&path, &why);
            }
        }
        let handle = handle::insert(Board::new(path, board, ring));
        cut::sync_here();
        cut::watch();
        // SAFETY: checked non-NULL above.
        unsafe { *rh = handle };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gClose(rh: *mut RFM2GHANDLE) -> RFM2G_STATUS {
    call(|| {
        if rh.is_null() {
            return Err(Code::BAD_PARAMETER_1);
        }
        // SAFETY: non-NULL handle variable.
        handle::remove(unsafe { *rh })?;
        // SAFETY: as above.
        unsafe { *rh = std::ptr::null_mut() };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gSize(rh: RFM2GHANDLE, Size: *mut RFM2G_UINT32) -> RFM2G_STATUS {
    // SAFETY: out pointer per the contract.
    with_board(rh, |b| unsafe {
        put(Size, b.ring.size() as u32, Code::BAD_PARAMETER_2)
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gNodeID(rh: RFM2GHANDLE, NodeIdPtr: *mut RFM2G_NODE) -> RFM2G_STATUS {
    // SAFETY: out pointer per the contract.
    with_board(rh, |b| unsafe {
        put(NodeIdPtr, b.config.node, Code::BAD_PARAMETER_2)
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gBoardID(
    rh: RFM2GHANDLE,
    BoardIdPtr: *mut RFM2G_UINT8,
) -> RFM2G_STATUS {
    // SAFETY: out pointer per the contract.
    with_board(rh, |_| unsafe {
        put(BoardIdPtr, BOARD_ID, Code::BAD_PARAMETER_2)
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gFirst(rh: RFM2GHANDLE, FirstPtr: *mut RFM2G_UINT32) -> RFM2G_STATUS {
    // SAFETY: out pointer per the contract.
    with_board(rh, |_| unsafe { put(FirstPtr, 0, Code::BAD_PARAMETER_2) })
}

fn c_text<const N: usize>(text: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    for (o, b) in out.iter_mut().zip(text.bytes().take(N - 1)) {
        *o = b as c_char;
    }
    out
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gGetConfig(rh: RFM2GHANDLE, Config: *mut RFM2GCONFIG) -> RFM2G_STATUS {
    with_board(rh, |b| {
        let config = RFM2GCONFIG {
            NodeId: b.config.node,
            BoardId: BOARD_ID,
            Unit: 0,
            PlxRevision: 0,
            MemorySize: b.ring.size() as u32,
            Device: c_text(&b.device),
            Name: c_text(&format!("rfm2g-sim ring {}", b.config.ring)),
            DriverVersion: c_text(concat!("rfm2g-sim ", env!("CARGO_PKG_VERSION"))),
            BoardRevision: 0,
            RevisionId: 0,
            Lcsr1: b.lcsr(),
            // SAFETY: all-zero is a valid RFM2GPCICONFIG (integers only): there is no PCI side.
            PciConfig: unsafe { std::mem::zeroed::<RFM2GPCICONFIG>() },
            BuildId: 0,
        };
        // SAFETY: out pointer per the contract.
        unsafe { put(Config, config, Code::BAD_PARAMETER_2) }
    })
}

unsafe fn map(
    rh: RFM2GHANDLE,
    out: *mut *mut c_void,
    offset: RFM2G_UINT64,
    pages: Option<RFM2G_UINT32>,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if out.is_null() {
            return Err(Code::BAD_PARAMETER_2);
        }
        let pages = pages.ok_or(Code::BAD_PARAMETER_4)?;
        let memory = b.ring.map(offset, pages)?;
        let ptr = handle::add_mapping(rh, b, offset, pages, memory);
        cut::place_new(b.ring.name(), b.config.node);
        // SAFETY: checked non-NULL.
        unsafe { *out = ptr.cast() };
        Ok(())
    })
}

unsafe fn unmap(
    rh: RFM2GHANDLE,
    ptr: *mut *mut c_void,
    pages: Option<RFM2G_UINT32>,
) -> RFM2G_STATUS {
    with_board(rh, |_| {
        if ptr.is_null() {
            return Err(Code::BAD_PARAMETER_2);
        }
        let pages = pages.ok_or(Code::BAD_PARAMETER_3)?;
        // SAFETY: non-NULL pointer variable.
        let addr = unsafe { *ptr } as usize;
        handle::remove_mapping(rh, addr, pages)?;
        // SAFETY: as above.
        unsafe { *ptr = std::ptr::null_mut() };
        Ok(())
    })
}

fn pages_of(bytes: RFM2G_UINT32) -> Option<RFM2G_UINT32> {
    Some(bytes.div_ceil(PAGE as u32)).filter(|p| *p > 0)
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gUserMemory(
    rh: RFM2GHANDLE,
    UserMemoryPtr: *mut *mut c_void,
    Offset: RFM2G_UINT64,
    Pages: RFM2G_UINT32,
) -> RFM2G_STATUS {
    // SAFETY: forwarded under the same contract.
    unsafe { map(rh, UserMemoryPtr, Offset, Some(Pages).filter(|p| *p > 0)) }
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gUserMemoryBytes(
    rh: RFM2GHANDLE,
    UserMemoryPtr: *mut *mut c_void,
    Offset: RFM2G_UINT64,
    Bytes: RFM2G_UINT32,
) -> RFM2G_STATUS {
    // SAFETY: forwarded under the same contract.
    unsafe { map(rh, UserMemoryPtr, Offset, pages_of(Bytes)) }
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gUnMapUserMemory(
    rh: RFM2GHANDLE,
    UserMemoryPtr: *mut *mut c_void,
    Pages: RFM2G_UINT32,
) -> RFM2G_STATUS {
    // SAFETY: forwarded under the same contract.
    unsafe { unmap(rh, UserMemoryPtr, Some(Pages).filter(|p| *p > 0)) }
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gUnMapUserMemoryBytes(
    rh: RFM2GHANDLE,
    UserMemoryPtr: *mut *mut c_void,
    Bytes: RFM2G_UINT32,
) -> RFM2G_STATUS {
    // SAFETY: forwarded under the same contract.
    unsafe { unmap(rh, UserMemoryPtr, pages_of(Bytes)) }
}

/// The caller's `Length`-byte buffer; `None` for a zero length (nothing to copy).
unsafe fn buffer<'a>(
    buffer: *mut c_void,
    length: RFM2G_UINT32,
) -> Result<Option<&'a mut [u8]>, Code> {
    if length == 0 {
        return Ok(None);
    }
    if buffer.is_null() {
        return Err(Code::BAD_PARAMETER_3);
    }
    // SAFETY: non-NULL, and Length bytes long by the caller's contract.
    Ok(Some(unsafe {
        std::slice::from_raw_parts_mut(buffer.cast::<u8>(), length as usize)
    }))
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gRead(
    rh: RFM2GHANDLE,
    Offset: RFM2G_UINT32,
    Buffer: *mut c_void,
    Length: RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        // SAFETY: the caller's buffer; the ring memory is page-aligned, size() long.
        unsafe {
            buffer(Buffer, Length)?.map_or(Ok(()), |buf| {
                access::read(b.ring.memory(), b.ring.size(), Offset, buf)
            })
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gWrite(
    rh: RFM2GHANDLE,
    Offset: RFM2G_UINT32,
    Buffer: *mut c_void,
    Length: RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        // SAFETY: as in RFM2gRead.
        unsafe {
            buffer(Buffer, Length)?.map_or(Ok(()), |buf| {
                access::write(b.ring.memory(), b.ring.size(), Offset, buf)
            })
        }?;
        b.stored();
        Ok(())
    })
}

macro_rules! peek_poke {
    ($peek:ident, $poke:ident, $t:ty, $get:ident, $set:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $peek(
            rh: RFM2GHANDLE,
            Offset: RFM2G_UINT32,
            Value: *mut $t,
        ) -> RFM2G_STATUS {
            with_board(rh, |b| {
                if Value.is_null() {
                    return Err(Code::BAD_PARAMETER_3);
                }
                // SAFETY: the ring memory is page-aligned and ring.size() bytes.
                let v = unsafe { access::$get(b.ring.memory(), b.ring.size(), Offset) }?;
                // SAFETY: non-NULL out pointer.
                unsafe { Value.write(v) };
                Ok(())
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $poke(
            rh: RFM2GHANDLE,
            Offset: RFM2G_UINT32,
            Value: $t,
        ) -> RFM2G_STATUS {
            with_board(rh, |b| {
                // SAFETY: the ring memory is page-aligned and ring.size() bytes.
                unsafe { access::$set(b.ring.memory(), b.ring.size(), Offset, Value) }?;
                b.stored();
                Ok(())
            })
        }
    };
}

peek_poke!(RFM2gPeek8, RFM2gPoke8, RFM2G_UINT8, peek8, poke8);
peek_poke!(RFM2gPeek16, RFM2gPoke16, RFM2G_UINT16, peek16, poke16);
peek_poke!(RFM2gPeek32, RFM2gPoke32, RFM2G_UINT32, peek32, poke32);

/// As the Linux R09.00 library: 64-bit single accesses are not implemented.
#[no_mangle]
pub unsafe extern "C" fn RFM2gPeek64(
    rh: RFM2GHANDLE,
    _Offset: RFM2G_UINT32,
    _Value: *mut RFM2G_UINT64,
) -> RFM2G_STATUS {
    with_board(rh, |_| Err(Code::NOT_IMPLEMENTED))
}

/// As [`RFM2gPeek64`].
#[no_mangle]
pub unsafe extern "C" fn RFM2gPoke64(
    rh: RFM2GHANDLE,
    _Offset: RFM2G_UINT32,
    _Value: RFM2G_UINT64,
) -> RFM2G_STATUS {
    with_board(rh, |_| Err(Code::NOT_IMPLEMENTED))
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gEnableEvent(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        b.node()
            .enable(event_type(EventType, Code::BAD_PARAMETER_2)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gDisableEvent(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        b.node()
            .disable(event_type(EventType, Code::BAD_PARAMETER_2)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gSendEvent(
    rh: RFM2GHANDLE,
    ToNode: RFM2G_NODE,
    EventType: RFM2GEVENTTYPE,
    ExtendedData: RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if ToNode > 255 && ToNode != RFM2G_NODE_ALL {
            return Err(Code::BAD_PARAMETER_2);
        }
        if !(RFM2GEVENT_RESET..=RFM2GEVENT_INTR4).contains(&EventType) {
            return Err(Code::BAD_PARAMETER_3);
        }
        let me = b.config.node;
        if ToNode == me {
            return Err(Code::NODE_ID_SELF);
        }
        if !b.link_up() {
            // Nothing leaves a node whose fibre is open.
            return Ok(());
        }
        let due = now_ns() + b.config.delay.as_nanos() as u64;
        let ty = EventType as usize;
        for (node, state) in b.ring.nodes() {
            // Nothing reaches a board cut from the ring.
            if node != me && (ToNode == RFM2G_NODE_ALL || node == ToNode) && !state.cut().0 {
                state.deliver(ty, me, ExtendedData, due);
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gWaitForEvent(
    rh: RFM2GHANDLE,
    EventInfo: *mut RFM2GEVENTINFO,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if EventInfo.is_null() {
            return Err(Code::BAD_PARAMETER_2);
        }
        // SAFETY: non-NULL in/out struct.
        let info = unsafe { &mut *EventInfo };
        let ty = event_type(info.Event, Code::BAD_PARAMETER_2)?;
        if !b.node().is_enabled(ty) {
            return Err(Code::NOT_ENABLED);
        }
        let bit = 1 << ty;
        if b.waiting.fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            return Err(Code::EVENT_IN_USE);
        }
        b.canceled.fetch_and(!bit, Ordering::AcqRel);
        let deadline = match info.Timeout {
            RFM2G_INFINITE_TIMEOUT => None,
            ms => Some(now_ns() + u64::from(ms) * 1_000_000),
        };
        let got = b.node().wait(ty, deadline, &Waiter { board: b, bit });
        b.waiting.fetch_and(!bit, Ordering::AcqRel);
        let (from, data) = got?;
        if ty >= RFM2GEVENT_BAD_DATA as usize {
            // The driver switches an error event off once it fired: a program
            // enables it again to hear of the next.
            let _ = b.node().disable(ty);
        }
        info.NodeId = from;
        info.ExtendedInfo = data;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gCancelWaitForEvent(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        let bit = 1 << event_type(EventType, Code::BAD_PARAMETER_2)?;
        if b.waiting.load(Ordering::Acquire) & bit != 0 {
            b.canceled.fetch_or(bit, Ordering::AcqRel);
            b.node().notify();
        }
        Ok(())
    })
}

/// `RFM2GEVENT_LAST` clears every type.
#[no_mangle]
pub unsafe extern "C" fn RFM2gClearEvent(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if EventType == RFM2GEVENT_LAST {
            (0..EVENT_TYPES).for_each(|t| b.node().clear(t));
        } else {
            b.node()
                .clear(event_type(EventType, Code::BAD_PARAMETER_2)?);
        }
        Ok(())
    })
}

/// Events of the type that reached this node since the ring was created.
#[no_mangle]
pub unsafe extern "C" fn RFM2gGetEventCount(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
    Count: *mut RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        let ty = event_type(EventType, Code::BAD_PARAMETER_2)?;
        // SAFETY: out pointer per the contract.
        unsafe { put(Count, b.node().count(ty), Code::BAD_PARAMETER_3) }
    })
}

/// Succeeds unless the board is configured `link=down` or cut (an open fibre); takes
/// the configured delay, as the test packet travels the ring.
#[no_mangle]
pub unsafe extern "C" fn RFM2gCheckRingCont(rh: RFM2GHANDLE) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if !b.link_up() {
            return Err(Code::LINK_TEST_FAIL);
        }
        std::thread::sleep(b.config.delay);
        Ok(())
    })
}

/// The own-data bit of the LCSR, returned and cleared.
#[no_mangle]
pub unsafe extern "C" fn RFM2gClearOwnData(
    rh: RFM2GHANDLE,
    State: *mut RFM2G_BOOL,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if State.is_null() {
            return Err(Code::BAD_PARAMETER_2);
        }
        let was = b.node().own_data.swap(0, Ordering::AcqRel);
        // SAFETY: non-NULL, valid for a write by the caller's contract.
        unsafe { State.write(u8::from(was != 0)) };
        Ok(())
    })
}

macro_rules! setting {
    ($set:ident, $get:ident, $field:ident) => {
        /// Stored board-wide and reported back; the emulator does not swap bytes
        /// or light anything (memory is little-endian, as on x86 boards).
        #[no_mangle]
        pub unsafe extern "C" fn $set(rh: RFM2GHANDLE, Value: RFM2G_BOOL) -> RFM2G_STATUS {
            with_board(rh, |b| {
                b.node().$field.store(flag(Value)?, Ordering::Relaxed);
                Ok(())
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $get(rh: RFM2GHANDLE, Value: *mut RFM2G_BOOL) -> RFM2G_STATUS {
            with_board(rh, |b| {
                let v = b.node().$field.load(Ordering::Relaxed) as RFM2G_BOOL;
                // SAFETY: out pointer per the contract.
                unsafe { put(Value, v, Code::BAD_PARAMETER_2) }
            })
        }
    };
}

/// Board-wide, as the driver keeps it; the emulator copies either way, so the
/// threshold changes what a caller may count as DMA, not what it reads.
#[no_mangle]
pub unsafe extern "C" fn RFM2gSetDMAThreshold(
    rh: RFM2GHANDLE,
    Threshold: RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        b.node().set_dma_threshold(Threshold);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gGetDMAThreshold(
    rh: RFM2GHANDLE,
    Threshold: *mut RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        let v = b.node().dma_threshold();
        // SAFETY: out pointer per the contract.
        unsafe { put(Threshold, v, Code::BAD_PARAMETER_2) }
    })
}

setting!(RFM2gSetDMAByteSwap, RFM2gGetDMAByteSwap, dma_swap);
setting!(RFM2gSetPIOByteSwap, RFM2gGetPIOByteSwap, pio_swap);
setting!(RFM2gSetLed, RFM2gGetLed, led);

#[no_mangle]
pub unsafe extern "C" fn RFM2gErrorMsg(ErrorCode: RFM2G_STATUS) -> *mut RFM2G_CHAR {
    rfm2g_sys::status_message(ErrorCode).as_ptr().cast_mut()
}

/// Handles open in this process (not a vendor function: for leak checks).
#[no_mangle]
pub extern "C" fn rfm2gsim_live_handles() -> i32 {
    catch_unwind(|| handle::live().0 as i32).unwrap_or(-1)
}

/// `RFM2gUserMemory` mappings not yet unmapped in this process.
#[no_mangle]
pub extern "C" fn rfm2gsim_live_maps() -> i32 {
    catch_unwind(|| handle::live().1 as i32).unwrap_or(-1)
}

/// Not a vendor function: the emulator's ring fault. Cuts the board a device
/// path opens from its ring (`Up` false) or mends it (`Up` true); see
/// [`crate::cut`]. The process that calls it moves its own views of the board
/// before it returns, others within [`crate::cut::WATCH_INTERVAL`].
#[no_mangle]
pub unsafe extern "C" fn rfm2gsim_set_link(
    DevicePath: *const c_char,
    Up: RFM2G_BOOL,
) -> RFM2G_STATUS {
    call(|| {
        if DevicePath.is_null() {
            return Err(Code::BAD_PARAMETER_1);
        }
        // SAFETY: non-NULL, NUL-terminated by the caller's contract.
        let path = unsafe { CStr::from_ptr(DevicePath) }
            .to_string_lossy()
            .into_owned();
        let board = config::resolve(&path).map_err(|e| cut::refused(&path, &e.to_string()))?;
        let ring = Ring::open(&path, &board).map_err(|why| cut::refused(&path, &why))?;
        cut::set_link(&ring, board.node, Up != 0).map_err(|why| cut::refused(&path, &why))
    })
}
