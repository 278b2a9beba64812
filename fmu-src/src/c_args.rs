//! The C arguments of the exports as Rust values: arrays as slices and strings
//! as `&str`, each NULL named as the argument it is.

use std::ffi::{c_char, CStr};

use crate::error::{error, FmiResult};

/// `n` elements at `p`, or an error naming the argument when `p` is NULL.
///
/// # Safety
/// `p` must be NULL or valid for `n` elements.
pub unsafe fn slice<'a, T>(what: &str, p: *const T, n: usize) -> FmiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(error(format!(
            "`{what}` is NULL but {n} values were announced"
        )));
    }
    // SAFETY: non-NULL and, per the caller's contract, valid for `n` elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// # Safety
/// As [`slice`], for writing.
pub unsafe fn slice_mut<'a, T>(what: &str, p: *mut T, n: usize) -> FmiResult<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(error(format!(
            "`{what}` is NULL but {n} values were announced"
        )));
    }
    // SAFETY: non-NULL and, per the caller's contract, valid for `n` elements.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// A C string as UTF-8; `None` for NULL or invalid UTF-8.
///
/// # Safety
/// `s` must be NULL or a NUL-terminated string.
pub unsafe fn text<'a>(s: *const c_char) -> Option<&'a str> {
    if s.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated per the contract.
    unsafe { CStr::from_ptr(s) }.to_str().ok()
}

/// Each of `strings` as [`text`].
///
/// # Safety
/// Each entry is NULL or a NUL-terminated string.
pub unsafe fn texts<'a>(strings: &[*const c_char]) -> Vec<Option<&'a str>> {
    // SAFETY: per this function's contract.
    strings.iter().map(|&s| unsafe { text(s) }).collect()
}
