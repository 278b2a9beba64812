//! Linux: sched_setaffinity, SCHED_FIFO and mlockall.

use super::{CpuList, MAX_CPU};
use std::io;

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn tid() -> libc::pid_t {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

fn affinity(tid: libc::pid_t) -> io::Result<libc::cpu_set_t> {
    // SAFETY: all-zero is an empty cpu_set_t.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    check(unsafe { libc::sched_getaffinity(tid, std::mem::size_of_val(&set), &mut set) })?;
    Ok(set)
}

fn scheduling(tid: libc::pid_t) -> io::Result<(libc::c_int, libc::sched_param)> {
    // SAFETY: querying a thread's policy has no preconditions.
    let policy = unsafe { libc::sched_getscheduler(tid) };
    if policy < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid out pointer.
    check(unsafe { libc::sched_getparam(tid, &mut param) })?;
    Ok((policy, param))
}

/// A thread by its id (Linux's scheduler calls take a thread id, so a
/// thread can be put back from another one).
#[derive(Debug)]
pub struct Saved {
    tid: libc::pid_t,
    affinity: Option<libc::cpu_set_t>,
    scheduling: Option<(libc::c_int, libc::sched_param)>,
}

impl Saved {
    pub fn of_current() -> Saved {
        Saved {
            tid: tid(),
            affinity: None,
            scheduling: None,
        }
    }

    pub fn set_affinity(&mut self, cpus: &CpuList) -> io::Result<()> {
        let before = affinity(self.tid)?;
        // SAFETY: all-zero is an empty cpu_set_t.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in cpus.cpus() {
            debug_assert!(cpu <= MAX_CPU);
            // SAFETY: a CpuList holds cores up to MAX_CPU, inside cpu_set_t's 1024.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        // SAFETY: a valid cpu_set_t of the size passed.
        check(unsafe { libc::sched_setaffinity(self.tid, std::mem::size_of_val(&set), &set) })?;
        self.affinity.get_or_insert(before);
        Ok(())
    }

    pub fn set_priority(&mut self, priority: u8) -> io::Result<()> {
        let before = scheduling(self.tid)?;
        let param = libc::sched_param {
            sched_priority: priority.into(),
        };
        // SAFETY: a valid sched_param; SCHED_FIFO takes priorities 1..=99.
        check(unsafe { libc::sched_setscheduler(self.tid, libc::SCHED_FIFO, &param) })?;
        self.scheduling.get_or_insert(before);
        Ok(())
    }

    pub fn restore(&mut self) {
        if let Some((policy, param)) = self.scheduling.take() {
            // SAFETY: the policy and parameters the thread had. A thread
            // that ended fails with ESRCH, which leaves nothing to restore.
            unsafe { libc::sched_setscheduler(self.tid, policy, &param) };
        }
        if let Some(set) = self.affinity.take() {
            // SAFETY: the set the thread had, of the size passed.
            unsafe { libc::sched_setaffinity(self.tid, std::mem::size_of_val(&set), &set) };
        }
    }
}

pub fn memory_locked() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmLck:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .is_some_and(|kb| kb > 0)
}

pub fn lock_memory() -> io::Result<()> {
    // SAFETY: mlockall has no memory-safety preconditions.
    check(unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) })
}

pub fn unlock_memory() {
    // SAFETY: munlockall has no preconditions.
    unsafe { libc::munlockall() };
}

pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    usize::try_from(unsafe { libc::sched_getcpu() }).ok()
}

pub fn current_thread() -> io::Result<(CpuList, u8)> {
    let set = affinity(0)?;
    let cpus = (0..=MAX_CPU)
        // SAFETY: `set` is an initialised cpu_set_t; CPU_ISSET reads it.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    let (policy, param) = scheduling(0)?;
    let priority = match policy {
        libc::SCHED_FIFO | libc::SCHED_RR => param.sched_priority as u8,
        _ => 0,
    };
    Ok((CpuList(cpus), priority))
}
