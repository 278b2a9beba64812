//! The exported vendor functions. Each checks its arguments in the order the
//! vendor numbers them (`BAD_PARAMETER_n` is the n-th argument), never lets a
//! panic cross into C (it becomes `RFM2G_DRIVER_ERROR`), and touches ring memory
//! only inside the board's bounds.
//!
//! Safety contract (the vendor's): pointer arguments are NULL or valid for the
//! access the manual describes; a handle is whatever `RFM2gOpen` gave (anything
//! else is detected and refused).
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::abi::*;
use crate::config::{self, ConfigError};
use crate::cut;
use crate::handle::{self, Board};
use crate::ring::{Ring, EVENT_TYPES};

mod events;
mod memory;

pub use events::*;
pub use memory::*;

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

/// Succeeds unless the ring is open: this board configured `link=down` or
/// cut, or any other board of its ring cut (the packet goes round the whole
/// ring); takes the configured delay, as the test packet travels the ring.
#[no_mangle]
pub unsafe extern "C" fn RFM2gCheckRingCont(rh: RFM2GHANDLE) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if !b.ring_closed() {
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
        let ring = Ring::open_existing(&path, &board).map_err(|why| cut::refused(&path, &why))?;
        cut::set_link(&ring, board.node, Up != 0).map_err(|why| cut::refused(&path, &why))
    })
}

/// Not a vendor function: which emulated board a device path opens, as
/// `node N of ring `R``, into `Text` (`Len` bytes, NUL-terminated, cut to
/// fit), so that `rfmctl cut` says what it cut.
#[no_mangle]
pub unsafe extern "C" fn rfm2gsim_board(
    DevicePath: *const c_char,
    Text: *mut c_char,
    Len: usize,
) -> RFM2G_STATUS {
    call(|| {
        if DevicePath.is_null() {
            return Err(Code::BAD_PARAMETER_1);
        }
        if Text.is_null() || Len == 0 {
            return Err(Code::BAD_PARAMETER_2);
        }
        // SAFETY: non-NULL, NUL-terminated by the caller's contract.
        let path = unsafe { CStr::from_ptr(DevicePath) }
            .to_string_lossy()
            .into_owned();
        let board = config::resolve(&path).map_err(|_| Code::NO_RFM2G_BOARD)?;
        let text = format!("node {} of ring `{}`", board.node, board.ring);
        let n = text.len().min(Len - 1);
        // SAFETY: the caller's buffer holds Len bytes; n + 1 <= Len.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), Text.cast::<u8>(), n);
            *Text.add(n) = 0;
        }
        Ok(())
    })
}
