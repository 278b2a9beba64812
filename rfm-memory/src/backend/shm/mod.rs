//! `shm:NAME`: memory shared by the simulators of one host.
//!
//! The object is created on first open, closed to other users, with the size
//! asked for; later opens must ask for the same size (a different one is an
//! error, never a silent remap). An object owned by another user, or open to
//! others, is refused: a stranger could otherwise feed us frames.
//!
//! - Linux and other Unix (`unix.rs`): the POSIX object `/NAME`, mode 600.
//! - Windows (`windows.rs`): the named file mapping `Local\rfm-NAME` in the
//!   session's namespace, backed by the paging file, whose only access rule
//!   grants this user.

use std::io;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::region::OutsideMemory;
use crate::region::Region;

mod error;
pub use error::ShmError;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as sys;
#[cfg(unix)]
pub use unix::{stat, unlink, ObjectStat};
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as sys;
#[cfg(windows)]
pub use windows::unlink;

/// A shared mapping of part of an object; unmapped on drop.
///
/// Public so that the RFM2g emulator (`rfm2g-sim`) can hand out windows of its
/// rings with the same ownership and size checks as `shm:` devices.
#[derive(Debug)]
pub struct ShmMapping {
    base: NonNull<u8>,
    len: usize,
    _view: sys::View,
}

// SAFETY: the mapping is plain shared memory, valid until drop; all access goes
// through `Region`'s atomics or the emulator's own atomic accessors.
unsafe impl Send for ShmMapping {}
// SAFETY: as above.
unsafe impl Sync for ShmMapping {}

impl ShmMapping {
    /// The first byte; page-aligned, valid for `len()` bytes while `self` lives.
    pub fn as_ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Puts `object`'s pages from `offset` under this mapping, in place: every
    /// pointer into it stays valid and from then on reaches `object`. The
    /// emulator's ring cut moves a board's memory to an island of its own and
    /// back this way, under programs that hold pointers into it. Linux only:
    /// Windows cannot replace a view in place.
    pub fn remap_onto(&self, object: &ShmObject, offset: usize) -> Result<(), ShmError> {
        if offset
            .checked_add(self.len)
            .is_none_or(|end| end > object.size)
        {
            return Err(ShmError::WindowOutOfRange(OutsideMemory {
                device: object.device.clone(),
                offset: offset as u64,
                len: self.len as u64,
                size: object.size as u64,
            }));
        }
        sys::remap(self.base, self.len, &object.object, &object.device, offset)
    }

    pub(crate) fn region(self: &Arc<Self>) -> Region {
        // SAFETY: the mapping is page-aligned, `len` bytes, kept alive by the owner
        // Arc, and shared with other processes that access it only as aligned words.
        unsafe { Region::from_raw_parts(self.base, self.len, Arc::clone(self) as _) }
    }
}

/// The size of an object `found` this big: the size asked for, which must be
/// the one found, or the one found when none is asked for (opening an existing
/// object). One rule for both platforms' objects.
fn agreed_size(device: &str, wanted: Option<usize>, found: u64) -> Result<usize, ShmError> {
    let size = wanted.unwrap_or(found as usize);
    if found != size as u64 {
        return Err(ShmError::SizeMismatch {
            device: device.to_owned(),
            expected: size as u64,
            found,
        });
    }
    Ok(size)
}

fn os_error(device: &str, op: &'static str) -> ShmError {
    ShmError::Os {
        device: device.to_owned(),
        op,
        source: io::Error::last_os_error(),
    }
}

/// An open shared-memory object of a checked size, owned by this user and closed
/// to others.
#[derive(Debug)]
pub struct ShmObject {
    object: sys::Object,
    device: String,
    size: usize,
    created: bool,
}

impl ShmObject {
    /// Opens or creates the object of NAME with `size` bytes. `device` names it
    /// in errors.
    pub fn open(device: &str, name: &str, size: usize) -> Result<ShmObject, ShmError> {
        Self::open_with(device, name, Some(size))
    }

    /// Opens the object only if it exists, with the size it has: for tools that
    /// inspect memory and must never create it (no check-then-open race either).
    pub fn open_existing(device: &str, name: &str) -> Result<ShmObject, ShmError> {
        Self::open_with(device, name, None)
    }

    fn open_with(device: &str, name: &str, size: Option<usize>) -> Result<ShmObject, ShmError> {
        validate_name(name).map_err(|reason| ShmError::BadName {
            device: device.to_owned(),
            reason,
        })?;
        let (object, size, created) = sys::open(device, name, size)?;
        Ok(ShmObject {
            object,
            device: device.to_owned(),
            size,
            created,
        })
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether this open created the object (it is then all zeroes).
    pub fn created(&self) -> bool {
        self.created
    }

    /// Maps `[offset, offset + len)` shared and read-write. `offset` must be a
    /// multiple of the page size and the window inside the object.
    pub fn map(&self, offset: usize, len: usize) -> Result<ShmMapping, ShmError> {
        if len == 0 || offset.checked_add(len).is_none_or(|end| end > self.size) {
            return Err(ShmError::WindowOutOfRange(OutsideMemory {
                device: self.device.clone(),
                offset: offset as u64,
                len: len as u64,
                size: self.size as u64,
            }));
        }
        let (base, view) = sys::map(&self.object, &self.device, offset, len)?;
        Ok(ShmMapping {
            base,
            len,
            _view: view,
        })
    }
}

/// Opens or creates the object of NAME with `size` bytes (`None`: only an
/// existing object, with its own size) and maps all of it.
pub(crate) fn open(
    device: &str,
    name: &str,
    size: Option<usize>,
) -> Result<Arc<ShmMapping>, ShmError> {
    let object = ShmObject::open_with(device, name, size)?;
    let size = object.size();
    Ok(Arc::new(object.map(0, size)?))
}

/// Maps all of a memory this process created itself (`fd`, `size` bytes): the
/// `loopback:` memfd, mapped as a `shm:` object is.
#[cfg(target_os = "linux")]
pub(crate) fn map_adopted(
    device: &str,
    fd: std::os::fd::OwnedFd,
    size: usize,
) -> Result<Arc<ShmMapping>, ShmError> {
    let object = ShmObject {
        object: unix::adopt(device, fd, size)?,
        device: device.to_owned(),
        size,
        created: true,
    };
    Ok(Arc::new(object.map(0, size)?))
}

/// Longest NAME accepted (Linux allows 255 bytes for the whole `/NAME`; Windows
/// 260 characters for `Local\\rfm-NAME`).
pub const MAX_NAME_LEN: usize = 200;

/// Checks NAME: 1..=200 bytes of `[A-Za-z0-9._-]`, not `.` or `..`.
pub fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name after `shm:` is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "the name is {} bytes; at most {MAX_NAME_LEN} are allowed",
            name.len()
        ));
    }
    if name == "." || name == ".." {
        return Err(format!("`{name}` is not a usable name"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "character {c:?} is not allowed; use letters, digits, `.`, `_` and `-` (no `/`)"
        ));
    }
    Ok(())
}

/// The kernel object of NAME: the POSIX object `/NAME`, or on Windows the
/// mapping in this logon session's namespace (`Local\`, which needs no
/// privilege; `Global\` would need SeCreateGlobalPrivilege).
pub fn object_name(name: &str) -> String {
    if cfg!(windows) {
        format!("Local\\rfm-{name}")
    } else {
        format!("/{name}")
    }
}

/// Where the object of `shm:NAME` lives, for messages.
pub fn object_path(name: &str) -> String {
    if cfg!(windows) {
        format!(
            "the file mapping {} (it lives while a program has it open)",
            object_name(name)
        )
    } else {
        format!("/dev/shm/{name}")
    }
}

/// How a user gets rid of a stale object of NAME.
pub fn removal(name: &str) -> String {
    if cfg!(windows) {
        format!("close every program that has {} open", object_name(name))
    } else {
        format!("rm /dev/shm/{name}")
    }
}

/// What to do about an object of another size.
pub const STALE_HINT: &str = if cfg!(windows) {
    "or close the programs that still have the old one open: a mapping goes with its last handle"
} else {
    "or remove the stale object, e.g. `rm /dev/shm/NAME`"
};

/// What could not back the memory, and what to do about it.
pub const NO_ROOM: &str = if cfg!(windows) {
    "the paging file cannot commit"
} else {
    "the shared-memory file system (/dev/shm) has no room for"
};
pub const NO_ROOM_HINT: &str = if cfg!(windows) {
    "enlarge the paging file, close programs that use much memory,"
} else {
    "free space there (`df -h /dev/shm`, remove stale objects with `rm /dev/shm/NAME`)"
};
