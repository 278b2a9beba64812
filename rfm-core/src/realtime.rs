//! The real-time step (the article's section 6.2): the thread that steps a
//! node, and the library's own threads, on chosen cores, at a real-time
//! priority, with the process's memory locked.
//!
//! Everything here is asked of the operating system and may be refused: a lab
//! PC's master often runs without `CAP_SYS_NICE`. A refusal is a [`Refusal`]
//! naming the setting and the fix, never an error: the coupling is exact on any
//! core at any priority, only its jitter differs. What a thread had before is
//! kept in [`Pinned`] and put back by [`Pinned::restore`], so a master that
//! runs other models on its thread after this one finds it as it was.

use std::fmt;
use std::io;
use std::str::FromStr;

/// The highest real-time priority asked for (Linux's `SCHED_FIFO` range is 1-99).
pub const MAX_PRIORITY: u8 = 99;

/// The largest core number a list may name (Windows masks a group's 64 cores;
/// Linux's `cpu_set_t` holds 1024).
pub const MAX_CPU: usize = if cfg!(windows) { 63 } else { 1023 };

/// Cores by number, as `taskset -c` and `isolcpus=` write them: `3`, `2-3`,
/// `0,2-3`. Sorted, without repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(Vec<usize>);

/// Why a core list does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("core list `{text}`: {reason}; expected core numbers 0..={MAX_CPU} and ranges, as `3`, `2-3` or `0,2-3`")]
pub struct CpuListError {
    pub text: String,
    pub reason: String,
}

impl FromStr for CpuList {
    type Err = CpuListError;

    fn from_str(text: &str) -> Result<CpuList, CpuListError> {
        let bad = |reason: String| CpuListError {
            text: text.to_owned(),
            reason,
        };
        let number = |s: &str| -> Result<usize, CpuListError> {
            let n: usize = s
                .trim()
                .parse()
                .map_err(|_| bad(format!("`{}` is not a core number", s.trim())))?;
            if n > MAX_CPU {
                return Err(bad(format!("core {n} is above {MAX_CPU}")));
            }
            Ok(n)
        };
        let mut cpus = Vec::new();
        for part in text.split(',') {
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (number(a)?, number(b)?);
                    if a > b {
                        return Err(bad(format!("range {a}-{b} runs backwards")));
                    }
                    cpus.extend(a..=b);
                }
                None => cpus.push(number(part)?),
            }
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(CpuList(cpus))
    }
}

impl fmt::Display for CpuList {
    /// Runs of consecutive cores as ranges: `0,2-3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end += 1;
            }
            if start != self.0[0] {
                f.write_str(",")?;
            }
            if end == start {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

impl CpuList {
    pub fn contains(&self, cpu: usize) -> bool {
        self.0.binary_search(&cpu).is_ok()
    }

    pub fn cpus(&self) -> &[usize] {
        &self.0
    }
}

/// What is asked: the FMU's `cpuAffinity`, `realtimePriority` and `lockMemory`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RealTime {
    /// `None`: the thread keeps the cores it has.
    pub cpus: Option<CpuList>,
    /// 0 leaves the thread's scheduling as it is; 1-99 is `SCHED_FIFO` at that
    /// priority on Linux, `THREAD_PRIORITY_TIME_CRITICAL` on Windows.
    pub priority: u8,
    /// `mlockall(MCL_CURRENT | MCL_FUTURE)`: no page fault in a step.
    pub lock_memory: bool,
}

/// One setting the operating system refused.
#[derive(Debug)]
pub struct Refusal {
    /// The FMU parameter's name.
    pub setting: &'static str,
    pub asked: String,
    pub error: io::Error,
}

/// The fix for each setting when the system refuses it for want of privilege
/// (and otherwise): one table, quoted by every refusal.
const FIXES: [(&str, &str, &str); 3] = [
    (
        "cpuAffinity",
        "run the master with these cores in its allowed set (taskset, cgroup cpuset)",
        "name cores this PC has and the master may use (rfmctl doctor lists them)",
    ),
    (
        "realtimePriority",
        "give the master CAP_SYS_NICE (setcap cap_sys_nice+ep MASTER) or a real-time limit \
         (ulimit -r 99, or rtprio in /etc/security/limits.conf); isolate its cores with \
         isolcpus= so nothing else runs there",
        "use 1..99",
    ),
    (
        "lockMemory",
        "give the master CAP_IPC_LOCK or a larger locked-memory limit (ulimit -l unlimited, \
         or memlock in /etc/security/limits.conf)",
        "leave lockMemory off on this system",
    ),
];

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (_, privilege, other) = FIXES
            .iter()
            .find(|(s, _, _)| *s == self.setting)
            .expect("every setting has a row of FIXES");
        let fix = match self.error.kind() {
            io::ErrorKind::PermissionDenied => privilege,
            _ => other,
        };
        write!(
            f,
            "{} = {} was refused ({}): the step runs without it; {fix}",
            self.setting, self.asked, self.error
        )
    }
}

/// What applying gave: the settings granted, and the ones refused.
#[derive(Debug)]
pub struct Applied {
    pub granted: RealTime,
    pub refused: Vec<Refusal>,
}

impl RealTime {
    pub fn is_none(&self) -> bool {
        self.cpus.is_none() && self.priority == 0 && !self.lock_memory
    }

    /// Applies the settings to the calling thread (memory: to the process).
    /// The returned [`Pinned`] puts the thread back as it was.
    pub fn apply_here(&self) -> (Pinned, Applied) {
        let mut pinned = Pinned {
            saved: imp::Saved::of_current(),
            unlock: false,
            restored: false,
        };
        let mut granted = RealTime::default();
        let mut refused = Vec::new();
        if let Some(cpus) = &self.cpus {
            match pinned.saved.set_affinity(cpus) {
                Ok(()) => granted.cpus = Some(cpus.clone()),
                Err(error) => refused.push(Refusal {
                    setting: "cpuAffinity",
                    asked: format!("\"{cpus}\""),
                    error,
                }),
            }
        }
        if self.priority > 0 {
            match pinned.saved.set_priority(self.priority) {
                Ok(()) => granted.priority = self.priority,
                Err(error) => refused.push(Refusal {
                    setting: "realtimePriority",
                    asked: self.priority.to_string(),
                    error,
                }),
            }
        }
        if self.lock_memory {
            let already = imp::memory_locked();
            match imp::lock_memory() {
                Ok(()) => {
                    granted.lock_memory = true;
                    // Unlocked at restore only if nobody had locked before us.
                    pinned.unlock = !already;
                }
                Err(error) => refused.push(Refusal {
                    setting: "lockMemory",
                    asked: "true".into(),
                    error,
                }),
            }
        }
        (pinned, Applied { granted, refused })
    }

    /// For the library's own threads (the heartbeat, the recorder's writer),
    /// applied from inside them with what the step was granted: the same
    /// cores, and one priority above the step's, so that a thread that sleeps
    /// between beats is never starved by a step spinning on its core.
    /// Refusals were told for the step already.
    pub fn apply_to_own_thread(&self) {
        if self.is_none() {
            return;
        }
        let mut saved = imp::Saved::of_current();
        if let Some(cpus) = &self.cpus {
            let _ = saved.set_affinity(cpus);
        }
        if self.priority > 0 {
            let _ = saved.set_priority((self.priority + 1).min(MAX_PRIORITY));
        }
    }
}

impl fmt::Display for RealTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cpus {
            Some(cpus) => write!(f, "cpuAffinity = \"{cpus}\"")?,
            None => f.write_str("cpuAffinity = \"\"")?,
        }
        write!(
            f,
            ", realtimePriority = {}, lockMemory = {}",
            self.priority, self.lock_memory
        )
    }
}

/// A thread as it was before [`RealTime::apply_here`]; [`Pinned::restore`]
/// (or dropping it) puts it back, from any thread.
#[derive(Debug)]
pub struct Pinned {
    saved: imp::Saved,
    /// Whether restoring unlocks the process's memory (this locked it).
    unlock: bool,
    restored: bool,
}

impl Pinned {
    /// Puts the thread's cores and scheduling back, and unlocks memory this
    /// locked. A thread that has ended is left alone.
    pub fn restore(&mut self) {
        if std::mem::replace(&mut self.restored, true) {
            return;
        }
        self.saved.restore();
        if self.unlock {
            imp::unlock_memory();
        }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        self.restore();
    }
}

/// The core the calling thread runs on now, where the system says.
pub fn current_cpu() -> Option<usize> {
    imp::current_cpu()
}

/// The calling thread's allowed cores and whether it runs at a real-time
/// priority: what a test, or `rfmctl doctor`, reads back.
pub fn current_thread() -> io::Result<(CpuList, u8)> {
    imp::current_thread()
}

#[cfg(target_os = "linux")]
mod imp {
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
}

#[cfg(windows)]
mod imp {
    use super::CpuList;
    use std::io;
    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
    use windows_sys::Win32::System::Threading::{
        GetCurrentProcessorNumber, GetCurrentThread, GetCurrentThreadId, GetThreadPriority,
        OpenThread, SetThreadAffinityMask, SetThreadPriority, THREAD_PRIORITY_TIME_CRITICAL,
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
}

#[cfg(not(any(target_os = "linux", windows)))]
mod imp {
    use super::CpuList;
    use std::io;

    fn unsupported() -> io::Error {
        io::Error::new(io::ErrorKind::Unsupported, "not on this operating system")
    }

    #[derive(Debug)]
    pub struct Saved;

    impl Saved {
        pub fn of_current() -> Saved {
            Saved
        }
        pub fn set_affinity(&mut self, _: &CpuList) -> io::Result<()> {
            Err(unsupported())
        }
        pub fn set_priority(&mut self, _: u8) -> io::Result<()> {
            Err(unsupported())
        }
        pub fn restore(&mut self) {}
    }

    pub fn memory_locked() -> bool {
        false
    }
    pub fn lock_memory() -> io::Result<()> {
        Err(unsupported())
    }
    pub fn unlock_memory() {}
    pub fn current_cpu() -> Option<usize> {
        None
    }
    pub fn current_thread() -> io::Result<(CpuList, u8)> {
        Err(unsupported())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_lists_read_as_taskset_writes_them() {
        let l: CpuList = "0, 2-3,3,7".parse().unwrap();
        assert_eq!(l.cpus(), [0, 2, 3, 7]);
        assert_eq!(l.to_string(), "0,2-3,7");
        assert_eq!("3".parse::<CpuList>().unwrap().to_string(), "3");
        for (text, reason) in [
            ("", "`` is not a core number"),
            ("3-2", "range 3-2 runs backwards"),
            ("x", "`x` is not a core number"),
            ("5000", "core 5000 is above"),
        ] {
            let e = text.parse::<CpuList>().unwrap_err();
            assert!(e.to_string().contains(reason), "{text}: {e}");
        }
    }

    #[test]
    fn a_refusal_for_want_of_privilege_names_the_privilege() {
        let r = Refusal {
            setting: "realtimePriority",
            asked: "50".into(),
            error: io::Error::from_raw_os_error(libc::EPERM),
        };
        let text = r.to_string();
        assert!(
            text.starts_with("realtimePriority = 50 was refused (")
                && text.contains("CAP_SYS_NICE")
                && text.contains("ulimit -r")
                && text.contains("isolcpus"),
            "{text}"
        );
    }

    /// The thread gets the cores it asked for, and its own back after.
    #[cfg(target_os = "linux")]
    #[test]
    // Miri has no sched_getscheduler: the scheduler calls run natively only.
    #[cfg_attr(miri, ignore)]
    fn a_thread_is_pinned_and_put_back() {
        std::thread::spawn(|| {
            let (before, _) = current_thread().unwrap();
            let last = *before.cpus().last().unwrap();
            let asked = RealTime {
                cpus: Some(last.to_string().parse().unwrap()),
                ..RealTime::default()
            };
            let (mut pinned, applied) = asked.apply_here();
            assert!(applied.refused.is_empty(), "{:?}", applied.refused);
            assert_eq!(current_thread().unwrap().0.cpus(), [last]);
            assert_eq!(current_cpu(), Some(last));
            pinned.restore();
            assert_eq!(current_thread().unwrap().0, before);
        })
        .join()
        .unwrap();
    }
}
