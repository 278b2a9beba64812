//! The C types and numbers of the vendor API. The types and status codes are
//! rfm2g-sys's (its bindgen output of `rfm2g-sys/include/rfm2g_api.h`), and
//! `tests/abi.rs` checks that every export has exactly the header's signature:
//! the emulator cannot drift from the declarations our backend (and a user's C
//! program) calls through.

pub(crate) use rfm2g_sys::ffi::{
    RFM2GCONFIG, RFM2GEVENTINFO, RFM2GEVENTTYPE, RFM2GHANDLE, RFM2GPCICONFIG, RFM2G_BOOL,
    RFM2G_CHAR, RFM2G_LCSR_OWNDATA, RFM2G_LCSR_SIGDET, RFM2G_LCSR_SNCLOST, RFM2G_NODE,
    RFM2G_STATUS, RFM2G_UINT16, RFM2G_UINT32, RFM2G_UINT64, RFM2G_UINT8,
};

use rfm2g_sys::ffi;

/// A failed call's `RFM2G_STATUS` (never `RFM2G_SUCCESS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code(pub RFM2G_STATUS);

impl Code {
    pub const NOT_IMPLEMENTED: Code = Code(ffi::RFM2G_NOT_IMPLEMENTED as RFM2G_STATUS);
    pub const DRIVER_ERROR: Code = Code(ffi::RFM2G_DRIVER_ERROR as RFM2G_STATUS);
    pub const TIMED_OUT: Code = Code(ffi::RFM2G_TIMED_OUT as RFM2G_STATUS);
    pub const MEM_NOT_MAPPED: Code = Code(ffi::RFM2G_MEM_NOT_MAPPED as RFM2G_STATUS);
    pub const OS_ERROR: Code = Code(ffi::RFM2G_OS_ERROR as RFM2G_STATUS);
    pub const EVENT_IN_USE: Code = Code(ffi::RFM2G_EVENT_IN_USE as RFM2G_STATUS);
    pub const NOT_OPEN: Code = Code(ffi::RFM2G_NOT_OPEN as RFM2G_STATUS);
    pub const NO_RFM2G_BOARD: Code = Code(ffi::RFM2G_NO_RFM2G_BOARD as RFM2G_STATUS);
    pub const BAD_PARAMETER_1: Code = Code(ffi::RFM2G_BAD_PARAMETER_1 as RFM2G_STATUS);
    pub const BAD_PARAMETER_2: Code = Code(ffi::RFM2G_BAD_PARAMETER_2 as RFM2G_STATUS);
    pub const BAD_PARAMETER_3: Code = Code(ffi::RFM2G_BAD_PARAMETER_3 as RFM2G_STATUS);
    pub const BAD_PARAMETER_4: Code = Code(ffi::RFM2G_BAD_PARAMETER_4 as RFM2G_STATUS);
    pub const OUT_OF_RANGE: Code = Code(ffi::RFM2G_OUT_OF_RANGE as RFM2G_STATUS);
    pub const LINK_TEST_FAIL: Code = Code(ffi::RFM2G_LINK_TEST_FAIL as RFM2G_STATUS);
    pub const UNALIGNED_OFFSET: Code = Code(ffi::RFM2G_UNALIGNED_OFFSET as RFM2G_STATUS);
    pub const HANDLE_NOT_NULL: Code = Code(ffi::RFM2G_HANDLE_NOT_NULL as RFM2G_STATUS);
    pub const NOT_ENABLED: Code = Code(ffi::RFM2G_NOT_ENABLED as RFM2G_STATUS);
    pub const ALREADY_ENABLED: Code = Code(ffi::RFM2G_ALREADY_ENABLED as RFM2G_STATUS);
    pub const NULL_DESCRIPTOR: Code = Code(ffi::RFM2G_NULL_DESCRIPTOR as RFM2G_STATUS);
    pub const WAIT_EVENT_CANCELED: Code = Code(ffi::RFM2G_WAIT_EVENT_CANCELED as RFM2G_STATUS);
    pub const NODE_ID_SELF: Code = Code(ffi::RFM2G_NODE_ID_SELF as RFM2G_STATUS);
}

pub const RFM2G_SUCCESS: RFM2G_STATUS = ffi::RFM2G_SUCCESS as RFM2G_STATUS;

pub const RFM2GEVENT_RESET: RFM2GEVENTTYPE = ffi::RFM2GEVENT_RESET as RFM2GEVENTTYPE;
pub const RFM2GEVENT_INTR4: RFM2GEVENTTYPE = ffi::RFM2GEVENT_INTR4 as RFM2GEVENTTYPE;
/// The first of the card's error events (the rest follow it).
pub const RFM2GEVENT_BAD_DATA: RFM2GEVENTTYPE = ffi::RFM2GEVENT_BAD_DATA as RFM2GEVENTTYPE;
pub const RFM2GEVENT_SYNC_LOSS: RFM2GEVENTTYPE = ffi::RFM2GEVENT_SYNC_LOSS as RFM2GEVENTTYPE;
pub const RFM2GEVENT_LAST: RFM2GEVENTTYPE = ffi::RFM2GEVENT_LAST as RFM2GEVENTTYPE;

pub const RFM2G_NODE_ALL: RFM2G_NODE = ffi::RFM2G_NODE_ALL as RFM2G_NODE;
pub const RFM2G_INFINITE_TIMEOUT: RFM2G_UINT32 = ffi::RFM2G_INFINITE_TIMEOUT;

/// Linux page size, the unit of `RFM2gUserMemory`.
pub const PAGE: u64 = 4096;
