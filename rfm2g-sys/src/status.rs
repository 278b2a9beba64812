//! The header's status codes by name: one table, from the bindgen constants.

use crate::ffi::{self, RFM2G_STATUS};

/// Lists each status once by name; its number is the header's (through bindgen).
macro_rules! statuses {
    ($($name:ident),* $(,)?) => {
        /// Every `RFM2G_STATUS` of the header, in order: (code, name).
        pub const STATUSES: &[(RFM2G_STATUS, &str)] =
            &[$((ffi::$name as RFM2G_STATUS, stringify!($name))),*];
    };
}

statuses!(
    RFM2G_SUCCESS,
    RFM2G_NOT_IMPLEMENTED,
    RFM2G_DRIVER_ERROR,
    RFM2G_TIMED_OUT,
    RFM2G_LOW_MEMORY,
    RFM2G_MEM_NOT_MAPPED,
    RFM2G_OS_ERROR,
    RFM2G_EVENT_IN_USE,
    RFM2G_NOT_SUPPORTED,
    RFM2G_NOT_OPEN,
    RFM2G_NO_RFM2G_BOARD,
    RFM2G_BAD_PARAMETER_1,
    RFM2G_BAD_PARAMETER_2,
    RFM2G_BAD_PARAMETER_3,
    RFM2G_BAD_PARAMETER_4,
    RFM2G_BAD_PARAMETER_5,
    RFM2G_BAD_PARAMETER_6,
    RFM2G_BAD_PARAMETER_7,
    RFM2G_BAD_PARAMETER_8,
    RFM2G_BAD_PARAMETER_9,
    RFM2G_OUT_OF_RANGE,
    RFM2G_MAP_NOT_ALLOWED,
    RFM2G_LINK_TEST_FAIL,
    RFM2G_MEM_READ_ONLY,
    RFM2G_UNALIGNED_OFFSET,
    RFM2G_UNALIGNED_ADDRESS,
    RFM2G_LSEEK_ERROR,
    RFM2G_READ_ERROR,
    RFM2G_WRITE_ERROR,
    RFM2G_HANDLE_NOT_NULL,
    RFM2G_MODULE_NOT_LOADED,
    RFM2G_NOT_ENABLED,
    RFM2G_ALREADY_ENABLED,
    RFM2G_EVENT_NOT_IN_USE,
    RFM2G_BAD_RFM2G_BOARD_ID,
    RFM2G_NULL_DESCRIPTOR,
    RFM2G_WAIT_EVENT_CANCELED,
    RFM2G_DMA_FAILED,
    RFM2G_NOT_INITIALIZED,
    RFM2G_UNALIGNED_LENGTH,
    RFM2G_SIGNALED,
    RFM2G_NODE_ID_SELF,
    RFM2G_MAX_ERROR_CODE,
);

/// The header's name for a status code.
pub fn status_name(code: RFM2G_STATUS) -> &'static str {
    STATUSES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("unknown RFM2G_STATUS", |(_, name)| name)
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
}
