//! The board's memory: mapping it into the caller, block reads and writes
//! (the DMA path), single accesses and the DMA threshold.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::c_void;

use super::with_board;
use crate::abi::*;
use crate::cut;
use crate::handle;
use crate::ring::access;

unsafe fn map(
    rh: RFM2GHANDLE,
    out: *mut *mut c_void,
    offset: RFM2G_UINT64,
    pages: Option<RFM2G_UINT32>,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if out.is_null() {
            return Err(Code::BAD_PARAMETER_2);
        }
        let pages = pages.ok_or(Code::BAD_PARAMETER_4)?;
        let memory = b.ring.map(offset, pages)?;
        let ptr = handle::add_mapping(rh, b, offset, pages, memory);
        cut::place_new(b.ring.name(), b.config.node);
        // SAFETY: checked non-NULL.
        unsafe { *out = ptr.cast() };
        Ok(())
    })
}

unsafe fn unmap(
    rh: RFM2GHANDLE,
    ptr: *mut *mut c_void,
    pages: Option<RFM2G_UINT32>,
) -> RFM2G_STATUS {
    with_board(rh, |_| {
        if ptr.is_null() {
            return Err(Code::BAD_PARAMETER_2);
        }
        let pages = pages.ok_or(Code::BAD_PARAMETER_3)?;
        // SAFETY: non-NULL pointer variable.
        let addr = unsafe { *ptr } as usize;
        handle::remove_mapping(rh, addr, pages)?;
        // SAFETY: as above.
        unsafe { *ptr = std::ptr::null_mut() };
        Ok(())
    })
}

fn pages_of(bytes: RFM2G_UINT32) -> Option<RFM2G_UINT32> {
    Some(bytes.div_ceil(PAGE as u32)).filter(|p| *p > 0)
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gUserMemory(
    rh: RFM2GHANDLE,
    UserMemoryPtr: *mut *mut c_void,
    Offset: RFM2G_UINT64,
    Pages: RFM2G_UINT32,
) -> RFM2G_STATUS {
    // SAFETY: forwarded under the same contract.
    unsafe { map(rh, UserMemoryPtr, Offset, Some(Pages).filter(|p| *p > 0)) }
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gUserMemoryBytes(
    rh: RFM2GHANDLE,
    UserMemoryPtr: *mut *mut c_void,
    Offset: RFM2G_UINT64,
    Bytes: RFM2G_UINT32,
) -> RFM2G_STATUS {
    // SAFETY: forwarded under the same contract.
    unsafe { map(rh, UserMemoryPtr, Offset, pages_of(Bytes)) }
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gUnMapUserMemory(
    rh: RFM2GHANDLE,
    UserMemoryPtr: *mut *mut c_void,
    Pages: RFM2G_UINT32,
) -> RFM2G_STATUS {
    // SAFETY: forwarded under the same contract.
    unsafe { unmap(rh, UserMemoryPtr, Some(Pages).filter(|p| *p > 0)) }
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gUnMapUserMemoryBytes(
    rh: RFM2GHANDLE,
    UserMemoryPtr: *mut *mut c_void,
    Bytes: RFM2G_UINT32,
) -> RFM2G_STATUS {
    // SAFETY: forwarded under the same contract.
    unsafe { unmap(rh, UserMemoryPtr, pages_of(Bytes)) }
}

/// The caller's `Length`-byte buffer; `None` for a zero length (nothing to copy).
unsafe fn buffer<'a>(
    buffer: *mut c_void,
    length: RFM2G_UINT32,
) -> Result<Option<&'a mut [u8]>, Code> {
    if length == 0 {
        return Ok(None);
    }
    if buffer.is_null() {
        return Err(Code::BAD_PARAMETER_3);
    }
    // SAFETY: non-NULL, and Length bytes long by the caller's contract.
    Ok(Some(unsafe {
        std::slice::from_raw_parts_mut(buffer.cast::<u8>(), length as usize)
    }))
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gRead(
    rh: RFM2GHANDLE,
    Offset: RFM2G_UINT32,
    Buffer: *mut c_void,
    Length: RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        // SAFETY: the caller's buffer; the ring memory is page-aligned, size() long.
        unsafe {
            buffer(Buffer, Length)?.map_or(Ok(()), |buf| {
                access::read(b.ring.memory(), b.ring.size(), Offset, buf)
            })
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gWrite(
    rh: RFM2GHANDLE,
    Offset: RFM2G_UINT32,
    Buffer: *mut c_void,
    Length: RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        // SAFETY: as in RFM2gRead.
        unsafe {
            buffer(Buffer, Length)?.map_or(Ok(()), |buf| {
                access::write(b.ring.memory(), b.ring.size(), Offset, buf)
            })
        }?;
        b.stored();
        Ok(())
    })
}

macro_rules! peek_poke {
    ($peek:ident, $poke:ident, $t:ty, $get:ident, $set:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $peek(
            rh: RFM2GHANDLE,
            Offset: RFM2G_UINT32,
            Value: *mut $t,
        ) -> RFM2G_STATUS {
            with_board(rh, |b| {
                if Value.is_null() {
                    return Err(Code::BAD_PARAMETER_3);
                }
                // SAFETY: the ring memory is page-aligned and ring.size() bytes.
                let v = unsafe { access::$get(b.ring.memory(), b.ring.size(), Offset) }?;
                // SAFETY: non-NULL out pointer.
                unsafe { Value.write(v) };
                Ok(())
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $poke(
            rh: RFM2GHANDLE,
            Offset: RFM2G_UINT32,
            Value: $t,
        ) -> RFM2G_STATUS {
            with_board(rh, |b| {
                // SAFETY: the ring memory is page-aligned and ring.size() bytes.
                unsafe { access::$set(b.ring.memory(), b.ring.size(), Offset, Value) }?;
                b.stored();
                Ok(())
            })
        }
    };
}

peek_poke!(RFM2gPeek8, RFM2gPoke8, RFM2G_UINT8, peek8, poke8);
peek_poke!(RFM2gPeek16, RFM2gPoke16, RFM2G_UINT16, peek16, poke16);
peek_poke!(RFM2gPeek32, RFM2gPoke32, RFM2G_UINT32, peek32, poke32);

/// As the Linux R09.00 library: 64-bit single accesses are not implemented.
#[no_mangle]
pub unsafe extern "C" fn RFM2gPeek64(
    rh: RFM2GHANDLE,
    _Offset: RFM2G_UINT32,
    _Value: *mut RFM2G_UINT64,
) -> RFM2G_STATUS {
    with_board(rh, |_| Err(Code::NOT_IMPLEMENTED))
}

/// As [`RFM2gPeek64`].
#[no_mangle]
pub unsafe extern "C" fn RFM2gPoke64(
    rh: RFM2GHANDLE,
    _Offset: RFM2G_UINT32,
    _Value: RFM2G_UINT64,
) -> RFM2G_STATUS {
    with_board(rh, |_| Err(Code::NOT_IMPLEMENTED))
}
