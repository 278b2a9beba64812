//! The one function of the emulator (`rfm2g-sim`) beyond the vendor API: a
//! board cut from its ring, or mended (`rfm2gsim_set_link`), for `rfmctl cut`
//! and `rfmctl mend` and for masters that test failover. A vendor library has
//! no such symbol: on cards, a fault is a fibre pulled.

use std::ffi::{c_char, CString};
use std::path::Path;

use super::library::load_library;
use super::{status_name, BoardError, Rfm2gError};

/// The symbol, as the emulator exports it.
pub const SET_LINK: &str = "rfm2gsim_set_link";

type SetLinkFn = unsafe extern "C" fn(*const c_char, i32) -> i32;
type BoardFn = unsafe extern "C" fn(*const c_char, *mut c_char, usize) -> i32;

/// Which board of which ring `device` is in the emulator `library`, as
/// `node N of ring `R``; `None` where the library cannot say (an older
/// emulator, a vendor library, a device it does not know).
pub fn board_of(library: Option<&Path>, device: &str) -> Option<String> {
    let (_, lib) = load_library(library).ok()?;
    // SAFETY: resolving a symbol runs nothing; the emulator declares it so.
    let board: libloading::Symbol<BoardFn> = unsafe { lib.get(b"rfm2gsim_board") }.ok()?;
    let c = CString::new(device).ok()?;
    let mut text = [0u8; 256];
    // SAFETY: a valid C string, and a buffer of the length passed.
    let code = unsafe { board(c.as_ptr(), text.as_mut_ptr().cast(), text.len()) };
    let end = text.iter().position(|&b| b == 0)?;
    (code == 0).then(|| String::from_utf8_lossy(&text[..end]).into_owned())
}

/// Cuts the board `device` opens from its ring (`up == false`) or mends it,
/// through the emulator `library` (default: the platform's RFM2g library).
pub fn set_link(library: Option<&Path>, device: &str, up: bool) -> Result<(), BoardError> {
    let (name, lib) = load_library(library)?;
    // SAFETY: resolving a symbol runs nothing; the emulator declares it so.
    let set: libloading::Symbol<SetLinkFn> = unsafe { lib.get(SET_LINK.as_bytes()) }
        .map_err(|_| BoardError::NotEmulator { library: name })?;
    let c = CString::new(device).map_err(|_| BoardError::BadPath {
        device: device.escape_debug().to_string(),
        reason: "it holds a NUL byte".into(),
    })?;
    // SAFETY: a valid C string for the call's duration.
    let code = unsafe { set(c.as_ptr(), i32::from(up)) };
    if code == 0 {
        return Ok(());
    }
    Err(BoardError::Call(Rfm2gError {
        call: SET_LINK,
        device: device.to_owned(),
        code,
        name: status_name(code),
        message: "the emulator printed why on stderr".into(),
    }))
}
