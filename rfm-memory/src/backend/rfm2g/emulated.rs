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
