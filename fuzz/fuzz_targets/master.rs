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
    callbacks_with(logger, std::ptr::null_mut())
}
