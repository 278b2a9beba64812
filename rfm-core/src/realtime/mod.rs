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

mod cpus;
// The operating system's calls, one module per system, as `imp`.
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(not(any(target_os = "linux", windows)))]
mod other;
#[cfg(not(any(target_os = "linux", windows)))]
use other as imp;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

pub use cpus::{CpuList, CpuListError, MAX_CPU};

/// The highest real-time priority asked for (Linux's `SCHED_FIFO` range is 1-99).
pub const MAX_PRIORITY: u8 = 99;

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
