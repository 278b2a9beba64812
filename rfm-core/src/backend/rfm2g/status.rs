//! `RFM2G_STATUS` codes as typed errors carrying the vendor's code, name and text.

use std::fmt;

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
        if let Some(hint) = hint(self.code) {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Rfm2gError {}

/// The vendor header's name for a status code.
pub fn status_name(code: i32) -> &'static str {
    match code {
        0 => "RFM2G_SUCCESS",
        1 => "RFM2G_NOT_IMPLEMENTED",
        2 => "RFM2G_DRIVER_ERROR",
        3 => "RFM2G_TIMED_OUT",
        4 => "RFM2G_LOW_MEMORY",
        5 => "RFM2G_MEM_NOT_MAPPED",
        6 => "RFM2G_OS_ERROR",
        7 => "RFM2G_EVENT_IN_USE",
        8 => "RFM2G_NOT_SUPPORTED",
        9 => "RFM2G_NOT_OPEN",
        10 => "RFM2G_NO_RFM2G_BOARD",
        11 => "RFM2G_BAD_PARAMETER_1",
        12 => "RFM2G_BAD_PARAMETER_2",
        13 => "RFM2G_BAD_PARAMETER_3",
        14 => "RFM2G_BAD_PARAMETER_4",
        15 => "RFM2G_BAD_PARAMETER_5",
        16 => "RFM2G_BAD_PARAMETER_6",
        17 => "RFM2G_BAD_PARAMETER_7",
        18 => "RFM2G_BAD_PARAMETER_8",
        19 => "RFM2G_BAD_PARAMETER_9",
        20 => "RFM2G_OUT_OF_RANGE",
        21 => "RFM2G_MAP_NOT_ALLOWED",
        22 => "RFM2G_LINK_TEST_FAIL",
        23 => "RFM2G_MEM_READ_ONLY",
        24 => "RFM2G_UNALIGNED_OFFSET",
        25 => "RFM2G_UNALIGNED_ADDRESS",
        26 => "RFM2G_LSEEK_ERROR",
        27 => "RFM2G_READ_ERROR",
        28 => "RFM2G_WRITE_ERROR",
        29 => "RFM2G_HANDLE_NOT_NULL",
        30 => "RFM2G_MODULE_NOT_LOADED",
        31 => "RFM2G_NOT_ENABLED",
        32 => "RFM2G_ALREADY_ENABLED",
        33 => "RFM2G_EVENT_NOT_IN_USE",
        34 => "RFM2G_BAD_RFM2G_BOARD_ID",
        35 => "RFM2G_NULL_DESCRIPTOR",
        36 => "RFM2G_WAIT_EVENT_CANCELED",
        37 => "RFM2G_DMA_FAILED",
        38 => "RFM2G_NOT_INITIALIZED",
        39 => "RFM2G_UNALIGNED_LENGTH",
        40 => "RFM2G_SIGNALED",
        41 => "RFM2G_NODE_ID_SELF",
        42 => "RFM2G_MAX_ERROR_CODE",
        _ => "unknown RFM2G_STATUS",
    }
}

/// What a user can do about the statuses they meet when setting up.
fn hint(code: i32) -> Option<&'static str> {
    match code {
        10 => Some("check the device path (e.g. /dev/rfm2g0 on Linux, \\\\.\\rfm2g1 on Windows) and that the driver is loaded"),
        9 => Some("the device exists but could not be opened: check the driver and the node's permissions"),
        5 | 24 => Some("the mapped offset must be a multiple of the 4096-byte page"),
        20 => Some("regionOffset plus the slots used must fit in the board memory"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_code_has_its_header_name() {
        for code in 0..=42 {
            assert!(status_name(code).starts_with("RFM2G_"), "code {code}");
        }
        assert_eq!(status_name(10), "RFM2G_NO_RFM2G_BOARD");
        assert_eq!(status_name(41), "RFM2G_NODE_ID_SELF");
        assert_eq!(status_name(43), "unknown RFM2G_STATUS");
        assert_eq!(status_name(-1), "unknown RFM2G_STATUS");
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
    }
}
