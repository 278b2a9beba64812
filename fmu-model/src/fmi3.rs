//! The FMI 3.0 C types this FMU uses, written here as [`crate::fmi2`]'s are:
//! building the FMU needs no headers. Statuses have FMI 2.0's values.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::ffi::{c_char, c_void};

pub type fmi3Instance = *mut c_void;
pub type fmi3InstanceEnvironment = *mut c_void;
pub type fmi3FMUState = *mut c_void;
pub type fmi3ValueReference = u32;
pub type fmi3Float32 = f32;
pub type fmi3Float64 = f64;
pub type fmi3Int8 = i8;
pub type fmi3UInt8 = u8;
pub type fmi3Int16 = i16;
pub type fmi3UInt16 = u16;
pub type fmi3Int32 = i32;
pub type fmi3UInt32 = u32;
pub type fmi3Int64 = i64;
pub type fmi3UInt64 = u64;
/// C's `bool`.
pub type fmi3Boolean = bool;
pub type fmi3Char = c_char;
pub type fmi3String = *const fmi3Char;
pub type fmi3Byte = u8;
pub type fmi3Binary = *const fmi3Byte;
pub type fmi3Clock = bool;

/// The value reference of `time`, the independent variable FMI 3.0 asks
/// every model for: past every variable's.
pub const TIME_VALUE_REFERENCE: fmi3ValueReference = 0x7fff_ffff;

/// `fmi3Status`, a C enum, with FMI 2.0's values.
pub type fmi3Status = crate::fmi2::fmi2Status;

/// The master's logger: no format, the message as it is.
pub type fmi3LogMessageCallback =
    unsafe extern "C" fn(fmi3InstanceEnvironment, fmi3Status, fmi3String, fmi3String);

/// Called by an FMU that offers intermediate updates (this one does not).
pub type fmi3IntermediateUpdateCallback = unsafe extern "C" fn(
    fmi3InstanceEnvironment,
    fmi3Float64,
    fmi3Boolean,
    fmi3Boolean,
    fmi3Boolean,
    fmi3Boolean,
    *mut fmi3Boolean,
    *mut fmi3Float64,
);

/// Scheduled execution's lock callbacks (this FMU never takes them).
pub type fmi3LockPreemptionCallback = unsafe extern "C" fn();
pub type fmi3ClockUpdateCallback = unsafe extern "C" fn(fmi3InstanceEnvironment);
