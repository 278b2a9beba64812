//! The header's status codes: one table of what each means (its name from the
//! bindgen constants, the text `RFM2gErrorMsg` returns for it, and what a user
//! can do about it), and the error of a call that returned one.

use std::ffi::CStr;
use std::fmt;

use crate::ffi::{self, RFM2G_STATUS};

/// One `RFM2G_STATUS` of the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    pub code: RFM2G_STATUS,
    /// The header's name, e.g. `RFM2G_NO_RFM2G_BOARD`.
    pub name: &'static str,
    /// The text `RFM2gErrorMsg` returns (the emulator's; a card's driver words
    /// its own).
    pub message: &'static CStr,
    /// What a user can do about it, for the statuses met when setting up.
    pub hint: Option<&'static str>,
}

/// Met when a window's offset is not page-aligned.
const PAGE_HINT: &str = "the mapped offset must be a multiple of the 4096-byte page";

/// Lists each status once by name; its number is the header's (through bindgen).
macro_rules! statuses {
    ($($name:ident: $message:literal $(, hint $hint:expr)?;)*) => {
        /// Every `RFM2G_STATUS` of the header, in order.
        pub const STATUSES: &[Status] = &[$(Status {
            code: ffi::$name as RFM2G_STATUS,
            name: stringify!($name),
            message: $message,
            hint: statuses!(@hint $($hint)?),
        }),*];
    };
    (@hint) => { None };
    (@hint $hint:expr) => { Some($hint) };
}

statuses! {
    RFM2G_SUCCESS: c"Success";
    RFM2G_NOT_IMPLEMENTED: c"Function not implemented";
    RFM2G_DRIVER_ERROR: c"Driver error";
    RFM2G_TIMED_OUT: c"Timed out";
    RFM2G_LOW_MEMORY: c"Not enough memory";
    RFM2G_MEM_NOT_MAPPED:
        c"Memory not mapped (the offset must be a multiple of the 4096-byte page)",
        hint PAGE_HINT;
    RFM2G_OS_ERROR: c"Operating system error";
    RFM2G_EVENT_IN_USE:
        c"Event already in use (another thread is waiting for it on this handle)";
    RFM2G_NOT_SUPPORTED: c"Not supported";
    RFM2G_NOT_OPEN: c"Device not open",
        hint "the device exists but could not be opened: check the driver and the node's \
              permissions";
    RFM2G_NO_RFM2G_BOARD: c"No RFM2g board at that device path",
        hint "check the device path (e.g. /dev/rfm2g0 on Linux, \\\\.\\rfm2g1 on Windows) and \
              that the driver is loaded";
    RFM2G_BAD_PARAMETER_1: c"Bad parameter 1";
    RFM2G_BAD_PARAMETER_2: c"Bad parameter 2";
    RFM2G_BAD_PARAMETER_3: c"Bad parameter 3";
    RFM2G_BAD_PARAMETER_4: c"Bad parameter 4";
    RFM2G_BAD_PARAMETER_5: c"Bad parameter 5";
    RFM2G_BAD_PARAMETER_6: c"Bad parameter 6";
    RFM2G_BAD_PARAMETER_7: c"Bad parameter 7";
    RFM2G_BAD_PARAMETER_8: c"Bad parameter 8";
    RFM2G_BAD_PARAMETER_9: c"Bad parameter 9";
    RFM2G_OUT_OF_RANGE: c"Offset or length out of range of the board memory",
        hint "regionOffset plus the slots used must fit in the board memory";
    RFM2G_MAP_NOT_ALLOWED: c"Mapping not allowed";
    RFM2G_LINK_TEST_FAIL: c"Ring continuity test failed (the fibre ring is open)";
    RFM2G_MEM_READ_ONLY: c"Memory is read-only";
    RFM2G_UNALIGNED_OFFSET: c"Unaligned offset", hint PAGE_HINT;
    RFM2G_UNALIGNED_ADDRESS: c"Unaligned address";
    RFM2G_LSEEK_ERROR: c"lseek error";
    RFM2G_READ_ERROR: c"Read error";
    RFM2G_WRITE_ERROR: c"Write error";
    RFM2G_HANDLE_NOT_NULL:
        c"Handle is not NULL (initialise the handle to NULL before RFM2gOpen)";
    RFM2G_MODULE_NOT_LOADED: c"Driver module not loaded";
    RFM2G_NOT_ENABLED: c"Event not enabled";
    RFM2G_ALREADY_ENABLED: c"Event already enabled";
    RFM2G_EVENT_NOT_IN_USE: c"Event not in use";
    RFM2G_BAD_RFM2G_BOARD_ID: c"Bad RFM2g board id";
    RFM2G_NULL_DESCRIPTOR: c"NULL or invalid handle";
    RFM2G_WAIT_EVENT_CANCELED: c"Wait for event cancelled";
    RFM2G_DMA_FAILED: c"DMA failed";
    RFM2G_NOT_INITIALIZED: c"Not initialized";
    RFM2G_UNALIGNED_LENGTH: c"Unaligned length";
    RFM2G_SIGNALED: c"Signaled";
    RFM2G_NODE_ID_SELF: c"Cannot send an event to one's own node";
    RFM2G_MAX_ERROR_CODE: c"Unknown RFM2G_STATUS";
}

/// The row of a status code, if the header has one.
pub fn status(code: RFM2G_STATUS) -> Option<&'static Status> {
    STATUSES.iter().find(|s| s.code == code)
}

/// The header's name for a status code.
pub fn status_name(code: RFM2G_STATUS) -> &'static str {
    status(code).map_or("unknown RFM2G_STATUS", |s| s.name)
}

/// The text `RFM2gErrorMsg` returns for a status code.
pub fn status_message(code: RFM2G_STATUS) -> &'static CStr {
    status(code).map_or(c"Unknown RFM2G_STATUS", |s| s.message)
}

/// A failed RFM2g call: which call, on which device, and what the library said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rfm2gError {
    /// The vendor function that failed, e.g. `RFM2gOpen`.
    pub call: &'static str,
    pub device: String,
    /// The raw `RFM2G_STATUS`.
    pub code: i32,
    /// The status name from the vendor header, e.g. `RFM2G_NO_RFM2G_BOARD`.
    pub name: &'static str,
    /// `RFM2gErrorMsg(code)` as the loaded library words it.
    pub message: String,
}

impl fmt::Display for Rfm2gError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on `{}` failed with {} ({}): {}",
            self.call, self.device, self.name, self.code, self.message
        )?;
        if let Some(hint) = status(self.code).and_then(|s| s.hint) {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Rfm2gError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_code_has_one_row_in_order() {
        for (i, s) in STATUSES.iter().enumerate() {
            assert_eq!(s.code, i as RFM2G_STATUS, "{}", s.name);
            assert!(s.name.starts_with("RFM2G_"), "code {i}");
        }
        assert_eq!(STATUSES.len(), 43);
        assert_eq!(status_name(10), "RFM2G_NO_RFM2G_BOARD");
        assert_eq!(status_name(41), "RFM2G_NODE_ID_SELF");
        assert_eq!(status_name(43), "unknown RFM2G_STATUS");
        assert_eq!(status_name(-1), "unknown RFM2G_STATUS");
        assert_eq!(
            status_message(22),
            c"Ring continuity test failed (the fibre ring is open)"
        );
        assert_eq!(status_message(-1), c"Unknown RFM2G_STATUS");
    }

    #[test]
    fn displays_call_device_code_name_message_and_hint() {
        let e = Rfm2gError {
            call: "RFM2gOpen",
            device: "/dev/rfm2g7".into(),
            code: 10,
            name: status_name(10),
            message: "No board".into(),
        };
        let text = e.to_string();
        assert!(text.starts_with("RFM2gOpen on `/dev/rfm2g7` failed with RFM2G_NO_RFM2G_BOARD (10): No board; check the device path"), "{text}");
        let page = Rfm2gError {
            code: 24,
            name: status_name(24),
            ..e
        };
        assert!(page.to_string().ends_with(PAGE_HINT), "{page}");
    }
}
