//! `shm:NAME`: POSIX shared memory, for simulators on one host.
//!
//! The object `/NAME` is created on first open with owner-only permissions and the
//! size asked for; later opens must ask for the same size (a different one is an
//! error, never a silent remap). An object owned by another user, or open to
//! others, is refused: a stranger could otherwise feed us frames.

use std::ffi::CString;
use std::io;
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::region::Region;
use crate::DeviceError;

/// Longest NAME accepted (Linux allows 255 bytes for the whole `/NAME`).
pub const MAX_NAME_LEN: usize = 200;

/// How long an opener waits for a creator that has not sized the object yet.
const SIZING_GRACE: Duration = Duration::from_secs(1);

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

/// A mapping of a whole shared-memory object; unmapped on drop.
#[derive(Debug)]
pub(crate) struct ShmMemory {
    base: NonNull<u8>,
    size: usize,
}

// SAFETY: the mapping is plain shared memory, valid until drop; all access goes
// through `Region`'s atomics.
unsafe impl Send for ShmMemory {}
// SAFETY: as above.
unsafe impl Sync for ShmMemory {}

impl Drop for ShmMemory {
    fn drop(&mut self) {
        // SAFETY: `base`/`size` are exactly what mmap returned; no region outlives
        // this owner (each holds an Arc to it).
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.size) };
    }
}

fn os_error(device: &str, op: &'static str) -> DeviceError {
    DeviceError::Os {
        device: device.to_owned(),
        op,
        source: io::Error::last_os_error(),
    }
}

/// A file descriptor closed on drop.
struct Fd(libc::c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor and close it once.
        unsafe { libc::close(self.0) };
    }
}

fn fstat(device: &str, fd: &Fd) -> Result<libc::stat, DeviceError> {
    // SAFETY: `stat` is plain old data; an all-zero value is valid and fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; `st` is a valid out pointer.
    if unsafe { libc::fstat(fd.0, &mut st) } != 0 {
        return Err(os_error(device, "fstat"));
    }
    Ok(st)
}

/// Opens or creates `/NAME` with `size` bytes and maps all of it.
pub(crate) fn open(device: &str, name: &str, size: usize) -> Result<Arc<ShmMemory>, DeviceError> {
    let path = CString::new(format!("/{name}")).expect("validated names hold no NUL");
    // SAFETY: `path` is a valid C string; flags and mode are plain integers.
    let fd = unsafe {
        libc::shm_open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
            0o600,
        )
    };
    let (fd, created) = if fd >= 0 {
        (Fd(fd), true)
    } else if io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST) {
        // SAFETY: as above.
        let fd = unsafe { libc::shm_open(path.as_ptr(), libc::O_RDWR, 0) };
        if fd < 0 {
            return Err(os_error(device, "shm_open"));
        }
        (Fd(fd), false)
    } else {
        return Err(os_error(device, "shm_open"));
    };

    let mut st = fstat(device, &fd)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if st.st_uid != me {
        return Err(DeviceError::NotOwner {
            device: device.to_owned(),
            owner: st.st_uid,
            me,
        });
    }
    if st.st_mode & 0o077 != 0 {
        return Err(DeviceError::OpenToOthers {
            device: device.to_owned(),
            mode: st.st_mode & 0o777,
        });
    }
    if created {
        let len = libc::off_t::try_from(size).map_err(|_| DeviceError::BadSize {
            device: device.to_owned(),
            size: size as u64,
        })?;
        // SAFETY: fd is open for writing.
        if unsafe { libc::ftruncate(fd.0, len) } != 0 {
            return Err(os_error(device, "ftruncate"));
        }
        st.st_size = len;
    } else {
        // Another opener created it a moment ago and may not have sized it yet.
        let deadline = Instant::now() + SIZING_GRACE;
        while st.st_size == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
            st = fstat(device, &fd)?;
        }
    }
    if st.st_size as u64 != size as u64 {
        return Err(DeviceError::SizeMismatch {
            device: device.to_owned(),
            expected: size as u64,
            found: st.st_size as u64,
        });
    }
    // SAFETY: mapping `size` bytes of an object that is `size` bytes long, shared,
    // read-write; the result is checked against MAP_FAILED below.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.0,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(os_error(device, "mmap"));
    }
    let base = NonNull::new(ptr.cast::<u8>()).expect("mmap never returns NULL on success");
    Ok(Arc::new(ShmMemory { base, size }))
}

impl ShmMemory {
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    pub(crate) fn region(self: &Arc<Self>) -> Region {
        // SAFETY: the mapping is page-aligned, `size` bytes, kept alive by the owner
        // Arc, and shared with other processes that access it only as aligned words.
        unsafe { Region::from_raw_parts(self.base, self.size, Arc::clone(self) as _) }
    }
}

/// Removes the object `/NAME` (mappings that exist stay valid until dropped).
pub fn unlink(name: &str) -> io::Result<()> {
    validate_name(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let path = CString::new(format!("/{name}")).expect("validated names hold no NUL");
    // SAFETY: `path` is a valid C string.
    if unsafe { libc::shm_unlink(path.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
