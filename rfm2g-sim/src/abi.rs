//! The C types and numbers of the vendor API. The types are rfm-core's bindgen
//! output of `rfm-core/include/rfm2g_api.h`, and `tests/abi.rs` checks that every
//! export has exactly the header's signature: the emulator cannot drift from the
//! declarations our backend (and a user's C program) calls through.

pub use rfm_core::backend::rfm2g::ffi::{
    RFM2GCONFIG, RFM2GEVENTINFO, RFM2GEVENTTYPE, RFM2GHANDLE, RFM2G_BOOL, RFM2G_CHAR, RFM2G_NODE,
    RFM2G_STATUS, RFM2G_UINT16, RFM2G_UINT32, RFM2G_UINT64, RFM2G_UINT8,
};

/// A failed call's `RFM2G_STATUS` (never `RFM2G_SUCCESS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code(pub RFM2G_STATUS);

impl Code {
    pub const NOT_IMPLEMENTED: Code = Code(1);
    pub const DRIVER_ERROR: Code = Code(2);
    pub const TIMED_OUT: Code = Code(3);
    pub const MEM_NOT_MAPPED: Code = Code(5);
    pub const OS_ERROR: Code = Code(6);
    pub const EVENT_IN_USE: Code = Code(7);
    pub const NOT_OPEN: Code = Code(9);
    pub const NO_RFM2G_BOARD: Code = Code(10);
    pub const BAD_PARAMETER_1: Code = Code(11);
    pub const BAD_PARAMETER_2: Code = Code(12);
    pub const BAD_PARAMETER_3: Code = Code(13);
    pub const BAD_PARAMETER_4: Code = Code(14);
    pub const OUT_OF_RANGE: Code = Code(20);
    pub const LINK_TEST_FAIL: Code = Code(22);
    pub const UNALIGNED_OFFSET: Code = Code(24);
    pub const HANDLE_NOT_NULL: Code = Code(29);
    pub const NOT_ENABLED: Code = Code(31);
    pub const ALREADY_ENABLED: Code = Code(32);
    pub const NULL_DESCRIPTOR: Code = Code(35);
    pub const WAIT_EVENT_CANCELED: Code = Code(36);
    pub const NODE_ID_SELF: Code = Code(41);
}

pub const RFM2G_SUCCESS: RFM2G_STATUS = 0;

pub const RFM2GEVENT_RESET: RFM2GEVENTTYPE = 0;
pub const RFM2GEVENT_INTR4: RFM2GEVENTTYPE = 4;
pub const RFM2GEVENT_LAST: RFM2GEVENTTYPE = 12;

pub const RFM2G_NODE_ALL: RFM2G_NODE = 0xFFFF;
pub const RFM2G_INFINITE_TIMEOUT: RFM2G_UINT32 = 0xFFFF_FFFF;

/// Linux page size, the unit of `RFM2gUserMemory`.
pub const PAGE: u64 = 4096;
