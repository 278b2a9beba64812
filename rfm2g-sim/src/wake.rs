//! Sleeping on a word of the shared ring until another process changes it: the
//! emulated board's interrupt line. Waiter and waker are different processes
//! mapping the same memory.
//!
//! - Linux: a futex on the word (not the private operations).
//! - Windows, which has no futex across processes (`WaitOnAddress` is private
//!   to a process): a named semaphore per word, `Local\rfm2g-sim.RING.wake.OFFSET`,
//!   released once for each process or thread counted in the word's `waiters`.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

#[cfg(target_os = "linux")]
pub use linux::*;
#[cfg(windows)]
pub use windows::*;

#[cfg(target_os = "linux")]
mod linux {
    use super::*;

    /// Sleeps while `*word == expected`, at most `timeout`; wakes early on
    /// [`wake_all`], on a change of the word, or spuriously (callers re-check).
    /// (`waiters` is for Windows; a futex counts its own.)
    pub fn wait(word: &AtomicU32, _waiters: &AtomicU32, expected: u32, timeout: Duration) {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `word` is a live, aligned u32 (AtomicU32 has u32's layout); FUTEX_WAIT
        // only reads it, and `ts` outlives the call.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT,
                expected,
                &ts as *const libc::timespec,
                std::ptr::null::<u32>(),
                0u32,
            )
        };
    }

    /// Wakes every process and thread sleeping in [`wait`] on `word`.
    pub fn wake_all(word: &AtomicU32, _waiters: &AtomicU32) {
        // SAFETY: as in `wait`; FUTEX_WAKE does not access the word's value.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAKE,
                i32::MAX,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                0u32,
            )
        };
    }

    /// Nothing to name on Linux: a futex is found by its address.
    pub fn register(_base: *const u8, _len: usize, _ring: &str) {}

    pub fn unregister(_base: *const u8) {}
}

#[cfg(windows)]
mod windows {
    use super::*;

    use std::collections::BTreeMap;
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
    use std::sync::atomic::Ordering;
    use std::sync::{Mutex, PoisonError};

    use windows_sys::Win32::Foundation::HANDLE;
    use windows_sys::Win32::System::Threading::{
        CreateSemaphoreW, ReleaseSemaphore, WaitForSingleObject,
    };

    /// The rings this process has mapped: where, and under which name, so that a
    /// word's semaphore has the same name in every process.
    struct Rings {
        mapped: Vec<(usize, usize, String)>,
        semaphores: BTreeMap<(String, usize), OwnedHandle>,
    }

    static RINGS: Mutex<Rings> = Mutex::new(Rings {
        mapped: Vec::new(),
        semaphores: BTreeMap::new(),
    });

    /// Records that `len` bytes from `base` are a mapping of ring `ring`.
    pub fn register(base: *const u8, len: usize, ring: &str) {
        let mut rings = RINGS.lock().unwrap_or_else(PoisonError::into_inner);
        rings.mapped.push((base as usize, len, ring.to_owned()));
    }

    /// Forgets the mapping at `base` (its semaphores stay open: other mappings of
    /// the ring in this process may use them).
    pub fn unregister(base: *const u8) {
        let mut rings = RINGS.lock().unwrap_or_else(PoisonError::into_inner);
        rings.mapped.retain(|&(b, _, _)| b != base as usize);
    }

    /// The semaphore of `word`, opened on first use and never closed (the
    /// handle stays valid for the process's life, outside the lock); `None` if
    /// the word is in no registered ring or the semaphore cannot be opened (then
    /// waits poll, slower but still correct).
    fn semaphore(word: &AtomicU32) -> Option<HANDLE> {
        let at = word.as_ptr() as usize;
        let mut rings = RINGS.lock().unwrap_or_else(PoisonError::into_inner);
        let (base, _, ring) = rings
            .mapped
            .iter()
            .find(|&&(base, len, _)| (base..base + len).contains(&at))?
            .clone();
        let key = (ring, at - base);
        if let Some(handle) = rings.semaphores.get(&key) {
            return Some(handle.as_raw_handle());
        }
        let name: Vec<u16> = format!("Local\\rfm2g-sim.{}.wake.{}", key.0, key.1)
            .encode_utf16()
            .chain(std::iter::once(0))
            .collect();
        // SAFETY: default security, initial count 0, a NUL-terminated name.
        let raw = unsafe { CreateSemaphoreW(std::ptr::null(), 0, i32::MAX, name.as_ptr()) };
        if raw.is_null() {
            return None;
        }
        // SAFETY: a handle we now own.
        let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
        rings.semaphores.insert(key, handle);
        Some(raw)
    }

    /// Sleeps while `*word == expected`, at most `timeout`; wakes early on
    /// [`wake_all`], or spuriously (callers re-check). `waiters` counts the
    /// sleepers for the waker; it is counted before the word is checked, so a
    /// wake-up between the check and the sleep is not lost (the semaphore keeps it).
    pub fn wait(word: &AtomicU32, waiters: &AtomicU32, expected: u32, timeout: Duration) {
        waiters.fetch_add(1, Ordering::SeqCst);
        if word.load(Ordering::SeqCst) == expected {
            let ms = u32::try_from(timeout.as_millis().max(1)).unwrap_or(u32::MAX - 1);
            match semaphore(word) {
                // SAFETY: an open semaphore handle, never closed.
                Some(handle) => unsafe {
                    WaitForSingleObject(handle, ms);
                },
                None => std::thread::sleep(timeout.min(Duration::from_millis(1))),
            }
        }
        waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Wakes every process and thread sleeping in [`wait`] on `word` (the word
    /// has changed before this is called).
    pub fn wake_all(word: &AtomicU32, waiters: &AtomicU32) {
        let n = waiters.load(Ordering::SeqCst);
        if n == 0 {
            return;
        }
        if let Some(handle) = semaphore(word) {
            // SAFETY: an open semaphore handle, never closed; a count beyond its
            // maximum is refused, which can only mean every waiter is released.
            unsafe { ReleaseSemaphore(handle, n as i32, std::ptr::null_mut()) };
        }
    }
}
