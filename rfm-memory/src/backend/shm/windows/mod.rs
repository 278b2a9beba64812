//! `shm:NAME` on Windows: the named file mapping `Local\rfm-NAME`, backed by the
//! paging file, in this logon session's namespace.
//!
//! Its security descriptor names this user as owner and holds one access rule,
//! granting this user; an existing mapping is refused unless it is owned by this
//! user and grants no one else. All its pages are committed when it is created
//! (`SEC_COMMIT`), so a full paging file is an error at open, never a fault in a
//! step. A mapping lives while a handle to it is open (each view keeps one):
//! there is nothing to remove afterwards ([`unlink`]).

use std::ffi::c_void;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::ptr::NonNull;
use std::sync::Arc;

use windows_sys::Win32::Foundation::{
    GetLastError, LocalFree, ERROR_ALREADY_EXISTS, ERROR_COMMITMENT_LIMIT, ERROR_FILE_NOT_FOUND,
    ERROR_NOT_ENOUGH_MEMORY, HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, GetSecurityInfo,
    SDDL_REVISION_1, SE_KERNEL_OBJECT,
};
use windows_sys::Win32::Security::{
    EqualSid, GetAce, GetTokenInformation, TokenUser, ACCESS_ALLOWED_ACE, ACE_HEADER, ACL,
    DACL_SECURITY_INFORMATION, OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID,
    SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::System::Memory::{
    CreateFileMappingW, MapViewOfFile, OpenFileMappingW, UnmapViewOfFile, FILE_MAP_ALL_ACCESS,
    FILE_MAP_READ, FILE_MAP_WRITE, MEMORY_MAPPED_VIEW_ADDRESS, PAGE_READWRITE, SEC_COMMIT,
};
use windows_sys::Win32::System::SystemInformation::{GetSystemInfo, SYSTEM_INFO};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

mod security;

use super::{agreed_size, object_name, os_error, validate_name, ShmError};
use security::{check_private, private_descriptor, User};

/// `NtQuerySection`'s answer for `SectionBasicInformation` (class 0): the exact
/// size the mapping was created with. `VirtualQuery` only knows whole pages.
#[repr(C)]
struct SectionBasicInformation {
    base_address: *mut c_void,
    allocation_attributes: u32,
    maximum_size: i64,
}

// Not in windows-sys (a native API, in ntdll since NT 3.1, and in Wine).
#[link(name = "ntdll")]
extern "system" {
    fn NtQuerySection(
        section: HANDLE,
        class: i32,
        information: *mut c_void,
        length: usize,
        returned: *mut usize,
    ) -> i32;
}

/// The OS side of a [`super::ShmMapping`]: a view, unmapped on drop.
#[derive(Debug)]
pub(super) struct View {
    /// What `MapViewOfFile` returned: a view starts on the allocation
    /// granularity (64 KiB), so the mapping's first byte may lie inside it.
    view: NonNull<u8>,
    /// The mapping's handle. Its name, which other processes open it by, goes
    /// when the last handle closes, even while views remain.
    _object: Arc<OwnedHandle>,
}

impl Drop for View {
    fn drop(&mut self) {
        let view = MEMORY_MAPPED_VIEW_ADDRESS {
            Value: self.view.as_ptr().cast(),
        };
        // SAFETY: `view` is what MapViewOfFile returned; no region outlives the
        // mapping that owns this view (each holds an Arc to it).
        if unsafe { UnmapViewOfFile(view) } == 0 {
            log::warn!("unmapping shared memory: {}", io::Error::last_os_error());
        }
    }
}

/// `s` as a NUL-terminated UTF-16 string.
fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// The size the mapping was created with.
fn section_size(device: &str, handle: HANDLE) -> Result<u64, ShmError> {
    let mut info = SectionBasicInformation {
        base_address: std::ptr::null_mut(),
        allocation_attributes: 0,
        maximum_size: 0,
    };
    // SAFETY: an open section handle with SECTION_QUERY; `info` is the buffer
    // of class 0 (SectionBasicInformation) with its exact size.
    let status = unsafe {
        NtQuerySection(
            handle,
            0,
            std::ptr::addr_of_mut!(info).cast(),
            std::mem::size_of::<SectionBasicInformation>(),
            std::ptr::null_mut(),
        )
    };
    if status < 0 {
        return Err(ShmError::Os {
            device: device.to_owned(),
            op: "NtQuerySection",
            source: io::Error::other(format!("NTSTATUS {:#010x}", status as u32)),
        });
    }
    Ok(info.maximum_size as u64)
}

/// The OS side of a [`super::ShmObject`]: the open mapping.
#[derive(Debug)]
pub(super) struct Object {
    handle: Arc<OwnedHandle>,
}

/// Opens or creates `Local\rfm-NAME` (a valid name) with `size` bytes (`None`:
/// only an existing mapping, with its own size), owned by this user and closed
/// to others; returns it with its size and whether this call created it.
pub(super) fn open(
    device: &str,
    name: &str,
    size: Option<usize>,
) -> Result<(Object, usize, bool), ShmError> {
    let user = User::current().map_err(|source| ShmError::Os {
        device: device.to_owned(),
        op: "reading this process's user",
        source,
    })?;
    let object = wide(&object_name(name));
    let (raw, created) = match size {
        Some(size) => create_mapping(device, &user, &object, size as u64)?,
        None => (open_mapping(device, name, &object)?, false),
    };
    // SAFETY: a handle the call above opened, owned from here on.
    let handle = Arc::new(unsafe { OwnedHandle::from_raw_handle(raw) });
    check_private(device, handle.as_raw_handle(), &user)?;
    let size = agreed_size(device, size, section_size(device, handle.as_raw_handle())?)?;
    Ok((Object { handle }, size, created))
}

/// Creates the mapping `object` of `bytes` bytes, closed to other users, or
/// opens it where another opener created it first; returns its raw handle
/// and whether this call created it.
fn create_mapping(
    device: &str,
    user: &User,
    object: &[u16],
    bytes: u64,
) -> Result<(HANDLE, bool), ShmError> {
    let sd = private_descriptor(user).map_err(|source| ShmError::Os {
        device: device.to_owned(),
        op: "building the security descriptor",
        source,
    })?;
    let attributes = SECURITY_ATTRIBUTES {
        nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: sd.0,
        bInheritHandle: 0,
    };
    // SAFETY: a paging-file mapping (INVALID_HANDLE_VALUE) of `bytes`
    // bytes; the attributes and name outlive the call.
    let raw = unsafe {
        CreateFileMappingW(
            INVALID_HANDLE_VALUE,
            &attributes,
            PAGE_READWRITE | SEC_COMMIT,
            (bytes >> 32) as u32,
            bytes as u32,
            object.as_ptr(),
        )
    };
    // SAFETY: no call in between has reset the thread's last error.
    let last = unsafe { GetLastError() };
    if !raw.is_null() {
        return Ok((raw, last != ERROR_ALREADY_EXISTS));
    }
    if matches!(last, ERROR_COMMITMENT_LIMIT | ERROR_NOT_ENOUGH_MEMORY) {
        return Err(ShmError::NoSpace {
            device: device.to_owned(),
            size: bytes,
            source: io::Error::from_raw_os_error(last as i32),
        });
    }
    Err(ShmError::Os {
        device: device.to_owned(),
        op: "CreateFileMappingW",
        source: io::Error::from_raw_os_error(last as i32),
    })
}

/// Opens the existing mapping `object`; its absence is `NoSuchMemory`.
fn open_mapping(device: &str, name: &str, object: &[u16]) -> Result<HANDLE, ShmError> {
    // SAFETY: a NUL-terminated name; full access, not inherited.
    let raw = unsafe { OpenFileMappingW(FILE_MAP_ALL_ACCESS, 0, object.as_ptr()) };
    if !raw.is_null() {
        return Ok(raw);
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(ERROR_FILE_NOT_FOUND as i32) {
        return Err(ShmError::NoSuchMemory {
            device: device.to_owned(),
            name: name.to_owned(),
        });
    }
    Err(ShmError::Os {
        device: device.to_owned(),
        op: "OpenFileMappingW",
        source: error,
    })
}

/// Maps `len` bytes of `object` from `offset` (page-aligned, inside the object).
pub(super) fn map(
    object: &Object,
    device: &str,
    offset: usize,
    len: usize,
) -> Result<(NonNull<u8>, View), ShmError> {
    // A view must start on the allocation granularity: map from there.
    let granularity = allocation_granularity();
    let start = offset - offset % granularity;
    let skip = offset - start;
    let bytes = start as u64;
    // SAFETY: `skip + len` bytes from `start`, inside the mapping's size.
    let view = unsafe {
        MapViewOfFile(
            object.handle.as_raw_handle(),
            FILE_MAP_READ | FILE_MAP_WRITE,
            (bytes >> 32) as u32,
            bytes as u32,
            skip + len,
        )
    };
    let view =
        NonNull::new(view.Value.cast::<u8>()).ok_or_else(|| os_error(device, "MapViewOfFile"))?;
    // SAFETY: `skip` bytes into a view of `skip + len` bytes.
    let base = unsafe { view.add(skip) };
    let object = Arc::clone(&object.handle);
    Ok((
        base,
        View {
            view,
            _object: object,
        },
    ))
}

/// A view cannot be replaced in place on Windows (unmapping and mapping again
/// at the address leaves a moment with nothing there): refused.
pub(super) fn remap(
    _base: NonNull<u8>,
    _len: usize,
    _object: &Object,
    device: &str,
    _offset: usize,
) -> Result<(), ShmError> {
    Err(ShmError::Os {
        device: device.to_owned(),
        op: "replacing a view in place",
        source: io::Error::from(io::ErrorKind::Unsupported),
    })
}

/// Where views may start: 64 KiB on every Windows so far.
fn allocation_granularity() -> usize {
    // SAFETY: SYSTEM_INFO is plain data; GetSystemInfo fills it.
    let mut info: SYSTEM_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out pointer.
    unsafe { GetSystemInfo(&mut info) };
    info.dwAllocationGranularity as usize
}

/// Nothing to remove on Windows: a mapping goes when its last handle closes.
/// Checks the name, as on Linux.
pub fn unlink(name: &str) -> io::Result<()> {
    validate_name(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}
