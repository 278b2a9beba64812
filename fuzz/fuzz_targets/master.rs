//! What the FMI fuzz targets share: a master's callbacks with a silent logger.

use std::ffi::c_void;

use fmu_model::fmi2::*;

unsafe extern "C" fn logger(
    _env: *mut c_void,
    _name: fmi2String,
    _status: fmi2Status,
    _category: fmi2String,
    _format: fmi2String,
) {
}

/// Callbacks whose logger drops every message.
pub fn callbacks() -> fmi2CallbackFunctions {
    fmi2CallbackFunctions {
        // SAFETY: the FMU calls its logger with no variadic argument (its message
        // is the format), so the five fixed parameters are all it passes.
        logger: Some(unsafe {
            std::mem::transmute::<
                unsafe extern "C" fn(*mut c_void, fmi2String, fmi2Status, fmi2String, fmi2String),
                fmi2CallbackLogger,
            >(logger)
        }),
        allocateMemory: None,
        freeMemory: None,
        stepFinished: None,
        componentEnvironment: std::ptr::null_mut(),
    }
}
