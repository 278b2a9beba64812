//! Windows: SetThreadAffinityMask and THREAD_PRIORITY_TIME_CRITICAL.

use super::CpuList;
use std::io;
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcessorNumber, GetCurrentThread, GetCurrentThreadId, GetThreadPriority, OpenThread,
    SetThreadAffinityMask, SetThreadPriority, THREAD_PRIORITY_TIME_CRITICAL,
    THREAD_QUERY_INFORMATION, THREAD_SET_INFORMATION,
};

/// `GetThreadPriority`'s failure (winbase.h's `THREAD_PRIORITY_ERROR_RETURN`).
const PRIORITY_ERROR: i32 = i32::MAX;

fn mask(cpus: &CpuList) -> usize {
    cpus.cpus().iter().fold(0usize, |m, &c| m | 1 << c)
}

/// A thread by a handle of its own (the pseudo handle of the current
/// thread means the caller's, so a real one is opened to restore from
/// another thread).
#[derive(Debug)]
pub struct Saved {
    thread: HANDLE,
    affinity: Option<usize>,
    priority: Option<i32>,
}

// SAFETY: a thread handle may be used from any thread.
unsafe impl Send for Saved {}

impl Saved {
    pub fn of_current() -> Saved {
        // SAFETY: opening the calling thread by its id; a null handle
        // (refused) makes every later call fail, which is reported.
        let thread = unsafe {
            OpenThread(
                THREAD_SET_INFORMATION | THREAD_QUERY_INFORMATION,
                0,
                GetCurrentThreadId(),
            )
        };
        Saved {
            thread,
            affinity: None,
            priority: None,
        }
    }

    pub fn set_affinity(&mut self, cpus: &CpuList) -> io::Result<()> {
        // SAFETY: a thread handle with THREAD_SET_INFORMATION (or null: fails).
        let before = unsafe { SetThreadAffinityMask(self.thread, mask(cpus)) };
        if before == 0 {
            return Err(io::Error::last_os_error());
        }
        self.affinity.get_or_insert(before);
        Ok(())
    }

    pub fn set_priority(&mut self, _priority: u8) -> io::Result<()> {
        // SAFETY: as above, with THREAD_QUERY_INFORMATION.
        let before = unsafe { GetThreadPriority(self.thread) };
        if before == PRIORITY_ERROR {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above.
        if unsafe { SetThreadPriority(self.thread, THREAD_PRIORITY_TIME_CRITICAL) } == 0 {
            return Err(io::Error::last_os_error());
        }
        self.priority.get_or_insert(before);
        Ok(())
    }

    pub fn restore(&mut self) {
        if let Some(p) = self.priority.take() {
            // SAFETY: as above; the priority the thread had.
            unsafe { SetThreadPriority(self.thread, p) };
        }
        if let Some(m) = self.affinity.take() {
            // SAFETY: as above; the mask the thread had.
            unsafe { SetThreadAffinityMask(self.thread, m) };
        }
    }
}

impl Drop for Saved {
    fn drop(&mut self) {
        if !self.thread.is_null() {
            // SAFETY: the handle OpenThread gave, closed once.
            unsafe { CloseHandle(self.thread) };
        }
    }
}

pub fn memory_locked() -> bool {
    false
}

pub fn lock_memory() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "Windows has no mlockall (a master can raise its working set)",
    ))
}

pub fn unlock_memory() {}

pub fn current_cpu() -> Option<usize> {
    // SAFETY: no preconditions.
    Some(unsafe { GetCurrentProcessorNumber() } as usize)
}

pub fn current_thread() -> io::Result<(CpuList, u8)> {
    // SAFETY: the pseudo handle of the calling thread; setting a mask
    // returns the previous one, which is put straight back.
    let m = unsafe { SetThreadAffinityMask(GetCurrentThread(), usize::MAX) };
    if m == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    unsafe { SetThreadAffinityMask(GetCurrentThread(), m) };
    // SAFETY: as above.
    let p = unsafe { GetThreadPriority(GetCurrentThread()) };
    let cpus = (0..usize::BITS as usize)
        .filter(|c| m & 1 << c != 0)
        .collect();
    Ok((CpuList(cpus), u8::from(p == THREAD_PRIORITY_TIME_CRITICAL)))
}
