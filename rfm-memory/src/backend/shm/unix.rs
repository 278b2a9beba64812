//! `shm:NAME` on Linux and other Unix: the POSIX shared-memory object `/NAME`,
//! created with mode 600.

use std::ffi::CString;
use std::io;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use super::{agreed_size, object_name, os_error, validate_name, ShmError};

/// How long an opener waits for a creator that has not sized the object yet.
const SIZING_GRACE: Duration = Duration::from_secs(1);

/// The OS side of a [`super::ShmMapping`]: `len` bytes mapped at `base`,
/// unmapped on drop.
#[derive(Debug)]
pub(super) struct View {
    base: NonNull<u8>,
    len: usize,
}

impl Drop for View {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are exactly what mmap returned; no region outlives
        // the mapping that owns this view (each holds an Arc to it).
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// A file descriptor closed on drop.
#[derive(Debug)]
struct Fd(libc::c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor and close it once.
        unsafe { libc::close(self.0) };
    }
}

fn fstat(device: &str, fd: &Fd) -> Result<libc::stat, ShmError> {
    // SAFETY: `stat` is plain old data; an all-zero value is valid and fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; `st` is a valid out pointer.
    if unsafe { libc::fstat(fd.0, &mut st) } != 0 {
        return Err(os_error(device, "fstat"));
    }
    Ok(st)
}

/// Allocates every page of the object now. `ftruncate` makes a sparse object: on
/// a full /dev/shm the first store into a page that has none kills the process
/// with SIGBUS, which no caller can handle. Allocating up front turns that into
/// an error at open, for the creator and for every later opener (an object made
/// sparse by another program is filled in too).
fn back_every_page(fd: &Fd, size: usize) -> io::Result<()> {
    let len =
        libc::off_t::try_from(size).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    loop {
        // SAFETY: fd is open for writing; offset and length are within the object.
        match unsafe { libc::posix_fallocate(fd.0, 0, len) } {
            0 => return Ok(()),
            libc::EINTR => continue,
            err => return Err(io::Error::from_raw_os_error(err)),
        }
    }
}

/// The OS side of a [`super::ShmObject`]: the open object `/NAME`.
#[derive(Debug)]
pub(super) struct Object {
    fd: Fd,
}

/// Opens or creates `/NAME` (a valid name) with `size` bytes (`None`: only an
/// existing object, with its own size), owned by this user and closed to others;
/// returns it with its size and whether this call created it.
pub(super) fn open(
    device: &str,
    name: &str,
    size: Option<usize>,
) -> Result<(Object, usize, bool), ShmError> {
    let path = CString::new(object_name(name)).expect("validated names hold no NUL");
    let (fd, created) = shm_open(device, name, &path, size.is_some())?;
    let st = fstat(device, &fd)?;
    refuse_others(device, &st)?;
    let found = match (created, size) {
        (true, Some(size)) => {
            let len = libc::off_t::try_from(size).map_err(|_| ShmError::BadSize {
                device: device.to_owned(),
                size: size as u64,
            })?;
            // SAFETY: fd is open for writing.
            if unsafe { libc::ftruncate(fd.0, len) } != 0 {
                return Err(os_error(device, "ftruncate"));
            }
            len
        }
        _ => sized_by_creator(device, &fd, st)?.st_size,
    };
    let size = agreed_size(device, size, found as u64)?;
    if let Err(source) = back_every_page(&fd, size) {
        if created {
            // Leave no object that would kill the next opener instead.
            // SAFETY: `path` is a valid C string.
            unsafe { libc::shm_unlink(path.as_ptr()) };
        }
        return Err(ShmError::NoSpace {
            device: device.to_owned(),
            size: size as u64,
            source,
        });
    }
    Ok((Object { fd }, size, created))
}

/// Opens `path`, creating it when `create` and no other opener has; returns
/// it and whether this call created it.
fn shm_open(
    device: &str,
    name: &str,
    path: &CString,
    create: bool,
) -> Result<(Fd, bool), ShmError> {
    let flags = if create {
        libc::O_CREAT | libc::O_EXCL
    } else {
        0
    };
    // SAFETY: `path` is a valid C string; flags and mode are plain integers.
    let fd = unsafe { libc::shm_open(path.as_ptr(), libc::O_RDWR | flags, 0o600) };
    if fd >= 0 {
        return Ok((Fd(fd), create));
    }
    match io::Error::last_os_error().raw_os_error() {
        Some(libc::ENOENT) if !create => Err(ShmError::NoSuchMemory {
            device: device.to_owned(),
            name: name.to_owned(),
        }),
        Some(libc::EEXIST) => {
            // SAFETY: as above.
            let fd = unsafe { libc::shm_open(path.as_ptr(), libc::O_RDWR, 0) };
            if fd < 0 {
                return Err(os_error(device, "shm_open"));
            }
            Ok((Fd(fd), false))
        }
        _ => Err(os_error(device, "shm_open")),
    }
}

/// An object is this user's and closed to every other, or not used.
fn refuse_others(device: &str, st: &libc::stat) -> Result<(), ShmError> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if st.st_uid != me {
        return Err(ShmError::NotOwner {
            device: device.to_owned(),
            owner: format!("uid {}", st.st_uid),
            me: format!("uid {me}"),
        });
    }
    if st.st_mode & 0o077 != 0 {
        return Err(ShmError::OpenToOthers {
            device: device.to_owned(),
            mode: st.st_mode & 0o777,
        });
    }
    Ok(())
}

/// Another opener created the object a moment ago and may not have sized
/// it yet: its status once it has, or after `SIZING_GRACE`.
fn sized_by_creator(device: &str, fd: &Fd, mut st: libc::stat) -> Result<libc::stat, ShmError> {
    let deadline = Instant::now() + SIZING_GRACE;
    while st.st_size == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
        st = fstat(device, fd)?;
    }
    Ok(st)
}

/// An object this process made itself and sized (a `loopback:` memfd): every
/// page is allocated now, as for `/NAME`, so a full memory is an error here
/// rather than a SIGBUS in a step.
#[cfg(target_os = "linux")]
pub(super) fn adopt(
    device: &str,
    fd: std::os::fd::OwnedFd,
    size: usize,
) -> Result<Object, ShmError> {
    use std::os::fd::IntoRawFd;
    let fd = Fd(fd.into_raw_fd());
    back_every_page(&fd, size).map_err(|source| ShmError::NoSpace {
        device: device.to_owned(),
        size: size as u64,
        source,
    })?;
    Ok(Object { fd })
}

/// Maps `len` bytes of `object` from `offset` (page-aligned, inside the object).
pub(super) fn map(
    object: &Object,
    device: &str,
    offset: usize,
    len: usize,
) -> Result<(NonNull<u8>, View), ShmError> {
    let base = mmap_shared(None, len, object, device, offset)?;
    Ok((base, View { base, len }))
}

/// Maps `len` bytes of `object` from `offset` over the pages at `base` in one
/// call: MAP_FIXED replaces them atomically, so a thread storing through a
/// pointer into them never finds the address unmapped.
pub(super) fn remap(
    base: NonNull<u8>,
    len: usize,
    object: &Object,
    device: &str,
    offset: usize,
) -> Result<(), ShmError> {
    mmap_shared(Some(base), len, object, device, offset).map(|_| ())
}

/// One shared read-write `mmap` of `len` bytes of `object` from `offset`:
/// anywhere, or (`at`) over pages of a mapping the caller owns.
fn mmap_shared(
    at: Option<NonNull<u8>>,
    len: usize,
    object: &Object,
    device: &str,
    offset: usize,
) -> Result<NonNull<u8>, ShmError> {
    let file_offset = libc::off_t::try_from(offset).map_err(|_| ShmError::BadSize {
        device: device.to_owned(),
        size: offset as u64,
    })?;
    let (addr, flags, op) = match at {
        Some(base) => (
            base.as_ptr().cast(),
            libc::MAP_SHARED | libc::MAP_FIXED,
            "mmap (MAP_FIXED)",
        ),
        None => (std::ptr::null_mut(), libc::MAP_SHARED, "mmap"),
    };
    // SAFETY: `len` bytes inside the object, shared, read-write; with `at`,
    // `[base, base + len)` is a shared mapping the caller owns (its `View`),
    // whose pages MAP_FIXED replaces in one call, keeping every address
    // valid; the result is checked against MAP_FAILED below.
    let ptr = unsafe {
        libc::mmap(
            addr,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            object.fd.0,
            file_offset,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(os_error(device, op));
    }
    Ok(NonNull::new(ptr.cast::<u8>()).expect("mmap never returns NULL on success"))
}

/// An existing object's size and ownership, as `fstat` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectStat {
    pub size: u64,
    pub uid: u32,
    /// Permission bits (`0o600` when this library created it).
    pub mode: u32,
}

/// Looks at `/NAME` without creating it (`NotFound` when no program has).
pub fn stat(name: &str) -> io::Result<ObjectStat> {
    validate_name(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let path = CString::new(object_name(name)).expect("validated names hold no NUL");
    // SAFETY: `path` is a valid C string; read-only, never creating.
    let fd = unsafe { libc::shm_open(path.as_ptr(), libc::O_RDONLY, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = Fd(fd);
    let st = fstat("", &fd).map_err(|_| io::Error::last_os_error())?;
    Ok(ObjectStat {
        size: st.st_size as u64,
        uid: st.st_uid,
        mode: st.st_mode & 0o7777,
    })
}

/// Removes the object `/NAME` (mappings that exist stay valid until dropped).
pub fn unlink(name: &str) -> io::Result<()> {
    validate_name(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let path = CString::new(object_name(name)).expect("validated names hold no NUL");
    // SAFETY: `path` is a valid C string.
    if unsafe { libc::shm_unlink(path.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
