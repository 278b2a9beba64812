//! The FMI 2.0 C types this FMU uses: a few lines of our own, so that building the
//! FMU needs no headers, no bindgen and no libclang.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub type fmi2Component = *mut c_void;
pub type fmi2ComponentEnvironment = *mut c_void;
pub type fmi2FMUstate = *mut c_void;
pub type fmi2ValueReference = c_uint;
pub type fmi2Real = f64;
pub type fmi2Integer = c_int;
pub type fmi2Boolean = c_int;
pub type fmi2String = *const c_char;
pub type fmi2Byte = c_char;

pub const fmi2True: fmi2Boolean = 1;
pub const fmi2False: fmi2Boolean = 0;

/// `fmi2Status`, a C enum: passed as its integer value, never as a Rust enum.
pub type fmi2Status = c_int;
pub const fmi2OK: fmi2Status = 0;
pub const fmi2Warning: fmi2Status = 1;
pub const fmi2Discard: fmi2Status = 2;
pub const fmi2Error: fmi2Status = 3;
pub const fmi2Fatal: fmi2Status = 4;

pub type fmi2Type = c_int;
pub const fmi2CoSimulation: fmi2Type = 1;

pub type fmi2StatusKind = c_int;
pub const fmi2LastSuccessfulTime: fmi2StatusKind = 2;
pub const fmi2Terminated: fmi2StatusKind = 3;

/// The master's logger: printf-style, so each message is passed as a format that
/// prints as itself (`%` doubled) and no arguments.
pub type fmi2CallbackLogger = unsafe extern "C" fn(
    fmi2ComponentEnvironment,
    fmi2String,
    fmi2Status,
    fmi2String,
    fmi2String,
    ...
);

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct fmi2CallbackFunctions {
    pub logger: Option<fmi2CallbackLogger>,
    pub allocateMemory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    pub freeMemory: Option<unsafe extern "C" fn(*mut c_void)>,
    pub stepFinished: Option<unsafe extern "C" fn(fmi2ComponentEnvironment, fmi2Status)>,
    pub componentEnvironment: fmi2ComponentEnvironment,
}

/// A master's logger as Rust can write it: FMI's five fixed parameters. FMI
/// declares the logger variadic, which stable Rust cannot define; the FMU
/// passes no variadic argument (each message is the format, printing as
/// itself), so the fixed parameters are all a call carries.
pub type FixedLogger =
    unsafe extern "C" fn(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String);

/// The callbacks of a master written in Rust (the tests, the benchmark, the
/// fuzz targets): `logger`, `env` as the component environment, and no memory
/// or step-finished callbacks.
pub fn callbacks_with(logger: FixedLogger, env: fmi2ComponentEnvironment) -> fmi2CallbackFunctions {
    fmi2CallbackFunctions {
        // SAFETY: a variadic call with no variadic argument passes the fixed
        // parameters as a call of this five-parameter function does (see
        // `FixedLogger`).
        logger: Some(unsafe { std::mem::transmute::<FixedLogger, fmi2CallbackLogger>(logger) }),
        allocateMemory: None,
        freeMemory: None,
        stepFinished: None,
        componentEnvironment: env,
    }
}
