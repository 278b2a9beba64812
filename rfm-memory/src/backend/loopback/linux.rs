//! `loopback:NAME` on Linux: an anonymous memory file (`memfd_create`) named
//! `rfm-loopback.PID.HASH`, found by every copy of the library in this process
//! among the process's own descriptors (`/proc/self/fd`).
//!
//! A memfd has no name in any file system: it lives while a descriptor or a
//! mapping of it does, and the kernel frees it when the process ends, however
//! it ends. Each copy of the library keeps one descriptor while it has users;
//! the last copy to close takes the memory with it. The PID in the name keeps a
//! child forked from this process (which inherits the descriptors) from taking
//! its parent's memory for its own.
//!
//! Finding and creating are made atomic by a process-wide lock every copy can
//! find: binding the abstract Unix socket `@rfm-loopback-lock.PID`, which no two
//! sockets can hold at once and which goes with its descriptor (nothing is left
//! in any file system either).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::LoopbackError;
use crate::backend::shm::{self, ShmMapping};

/// How long a copy waits for another that holds the lock (for microseconds,
/// while it finds or creates a memory).
const LOCK_PATIENCE: Duration = Duration::from_secs(10);

/// This copy's hold on one process-wide memory: the mapping, and the
/// descriptor by which other copies find it.
#[derive(Debug)]
pub(super) struct Shared {
    /// Dropped first: the pages stay while `fd` (or another copy) holds them.
    pub mapping: Arc<ShmMapping>,
    fd: Option<OwnedFd>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Under the lock: a copy scanning the descriptors must not find this one's
        // number after it is closed and reused for another file.
        let _lock = ProcessLock::acquire().ok();
        drop(self.fd.take());
    }
}

/// Opens the memory `name` of `size` bytes another copy made, or makes it.
pub(super) fn open(device: &str, name: &str, size: usize) -> Result<Shared, LoopbackError> {
    let failed = |op: &'static str| {
        move |source: io::Error| LoopbackError::Process {
            device: device.to_owned(),
            op,
            source,
        }
    };
    let out_of_memory = || LoopbackError::OutOfMemory {
        device: device.to_owned(),
        size: size as u64,
    };
    let label = super::process_label(name);
    let _lock = ProcessLock::acquire().map_err(failed("bind (the process's loopback lock)"))?;
    if let Some(found) = find(&label).map_err(failed("read /proc/self/fd"))? {
        let found_size = file_size(&found).map_err(failed("fstat"))?;
        if found_size != size as u64 {
            return Err(LoopbackError::SizeMismatch {
                device: device.to_owned(),
                expected: size as u64,
                found: found_size,
            });
        }
        let mapping = shm::map_adopted(device, found.try_clone().map_err(failed("dup"))?, size)?;
        return Ok(Shared {
            mapping,
            fd: Some(found),
        });
    }
    let c_label = CString::new(label).expect("the label holds no NUL");
    // SAFETY: `c_label` is a valid C string; the result is checked.
    let raw = unsafe { libc::memfd_create(c_label.as_ptr(), libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(failed("memfd_create")(io::Error::last_os_error()));
    }
    // SAFETY: memfd_create returned a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let len = libc::off_t::try_from(size).map_err(|_| out_of_memory())?;
    // SAFETY: `fd` is open for writing.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } != 0 {
        return Err(out_of_memory());
    }
    let mapping = match shm::map_adopted(device, fd.try_clone().map_err(failed("dup"))?, size) {
        Ok(mapping) => mapping,
        Err(shm::ShmError::NoSpace { .. }) => return Err(out_of_memory()),
        Err(e) => return Err(e.into()),
    };
    Ok(Shared {
        mapping,
        fd: Some(fd),
    })
}

fn file_size(fd: &OwnedFd) -> io::Result<u64> {
    // SAFETY: `stat` is plain old data; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open; `st` is a valid out pointer.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_size as u64)
}

/// A duplicate of the descriptor of this process whose memfd is `label`.
fn find(label: &str) -> io::Result<Option<OwnedFd>> {
    let wanted = format!("/memfd:{label} (deleted)");
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let entry = entry?;
        // A descriptor closed since the listing is simply gone.
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        if target.as_os_str() != wanted.as_str() {
            continue;
        }
        let Some(raw) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        // SAFETY: `raw` is an open descriptor of this process (the lock keeps
        // every copy's loopback descriptors open while it is held); dup makes a
        // new one this call owns.
        let dup = unsafe { libc::fcntl(raw, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor that nothing else owns.
        return Ok(Some(unsafe { OwnedFd::from_raw_fd(dup) }));
    }
    Ok(None)
}

/// The process-wide lock: a bound abstract socket, released when closed.
struct ProcessLock(#[allow(dead_code)] OwnedFd);

impl ProcessLock {
    fn acquire() -> io::Result<ProcessLock> {
        // SAFETY: plain integer arguments; the result is checked.
        let raw = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_un is plain old data; all zeros is valid.
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let name = format!("rfm-loopback-lock.{}", std::process::id());
        // sun_path[0] stays 0: the abstract namespace.
        for (dst, src) in addr.sun_path[1..].iter_mut().zip(name.bytes()) {
            *dst = src as libc::c_char;
        }
        let len = std::mem::offset_of!(libc::sockaddr_un, sun_path) + 1 + name.len();
        let deadline = Instant::now() + LOCK_PATIENCE;
        loop {
            // SAFETY: `addr` is a valid sockaddr_un of `len` bytes.
            let rc = unsafe {
                libc::bind(
                    fd.as_raw_fd(),
                    (&raw const addr).cast::<libc::sockaddr>(),
                    len as libc::socklen_t,
                )
            };
            if rc == 0 {
                return Ok(ProcessLock(fd));
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EADDRINUSE) || Instant::now() > deadline {
                return Err(err);
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}
