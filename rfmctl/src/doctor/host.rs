//! What on this PC makes a step late: cores not isolated, a frequency
//! governor or deep C-states, real-time throttling and busy processes on
//! Linux; the power plan and the timer resolution on Windows.

use std::path::Path;
#[cfg(target_os = "linux")]
use std::time::Duration;

use super::{check, Check, Verdict};

/// A file's text, trimmed; `None` when it cannot be read.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

#[cfg(target_os = "linux")]
pub(super) fn host_checks() -> Vec<Check> {
    let mut checks = vec![
        isolated_cores(),
        governor(),
        cstates(),
        rt_throttling(),
        busy_processes(),
    ];
    checks.extend(
        HOST_CHECKS[checks.len()..]
            .iter()
            .map(|n| check(n, Verdict::Skip, "a Windows check")),
    );
    checks
}

/// A core kept for the stepping thread (`isolcpus`), which nothing else runs on.
#[cfg(target_os = "linux")]
fn isolated_cores() -> Check {
    match read("/sys/devices/system/cpu/isolated") {
        Some(list) if !list.is_empty() => check(
            "isolated-cores",
            Verdict::Pass,
            format!("cores {list} isolated"),
        ),
        Some(_) => check("isolated-cores", Verdict::Warn, "no core is isolated").fix(
            "boot with isolcpus=N nohz_full=N for the stepping core, and give it the coupling \
             (taskset -c N)",
        ),
        None => check(
            "isolated-cores",
            Verdict::Skip,
            "no /sys/devices/system/cpu/isolated",
        ),
    }
}

/// Every core's frequency governor is `performance`: another ramps the clock
/// up only after a step has been slow.
#[cfg(target_os = "linux")]
fn governor() -> Check {
    let governors: Vec<String> = (0..available_cpus())
        .filter_map(|c| {
            read(format!(
                "/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
            ))
        })
        .collect();
    if governors.is_empty() {
        check(
            "governor",
            Verdict::Skip,
            "no cpufreq (a virtual machine, or frequency fixed by the firmware)",
        )
    } else if governors.iter().all(|g| g == "performance") {
        check("governor", Verdict::Pass, "performance on every core")
    } else {
        let mut kinds = governors.clone();
        kinds.sort();
        kinds.dedup();
        check(
            "governor",
            Verdict::Warn,
            format!("governor {}", kinds.join(", ")),
        )
        .fix("cpupower frequency-set -g performance")
    }
}

/// No deep C-state is enabled: waking from one costs tens of microseconds.
#[cfg(target_os = "linux")]
fn cstates() -> Check {
    let deep: Vec<String> = (1..16)
        .map_while(|s| {
            let dir = format!("/sys/devices/system/cpu/cpu0/cpuidle/state{s}");
            read(format!("{dir}/name")).map(|name| (name, read(format!("{dir}/disable"))))
        })
        .filter(|(_, disabled)| disabled.as_deref() != Some("1"))
        .map(|(name, _)| name)
        .collect();
    match read("/sys/devices/system/cpu/cpu0/cpuidle/state0/name") {
        None => check("c-states", Verdict::Skip, "no cpuidle (a virtual machine)"),
        Some(_) if deep.is_empty() => check("c-states", Verdict::Pass, "no deep C-state enabled"),
        Some(_) => check(
            "c-states",
            Verdict::Warn,
            format!("enabled beyond polling: {}", deep.join(", ")),
        )
        .fix("cpupower idle-set -D 0, or boot with intel_idle.max_cstate=1 processor.max_cstate=1"),
    }
}

/// Real-time throttling is off: it stops a real-time stepping thread for the
/// rest of every second once it used its share.
#[cfg(target_os = "linux")]
fn rt_throttling() -> Check {
    match read("/proc/sys/kernel/sched_rt_runtime_us").as_deref() {
        Some("-1") => check(
            "rt-throttling",
            Verdict::Pass,
            "off: a real-time thread may run 100 %",
        ),
        Some(us) => check(
            "rt-throttling",
            Verdict::Warn,
            format!("real-time threads stop {us} µs of each second's run"),
        )
        .fix("sysctl kernel.sched_rt_runtime_us=-1 (with an isolated core for the coupling)"),
        None => check(
            "rt-throttling",
            Verdict::Skip,
            "no /proc/sys/kernel/sched_rt_runtime_us",
        ),
    }
}

#[cfg(target_os = "linux")]
fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Processes other than this one that used more than half a core over 0.5 s.
#[cfg(target_os = "linux")]
fn busy_processes() -> Check {
    let ticks = || -> Vec<(u32, String, u64)> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| pid != std::process::id())
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let used =
                    fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
                Some((pid, name.to_owned(), used))
            })
            .collect()
    };
    let before = ticks();
    let period = Duration::from_millis(500);
    std::thread::sleep(period);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut busy: Vec<(f64, String)> = ticks()
        .into_iter()
        .filter_map(|(pid, name, after)| {
            let (_, _, was) = before.iter().find(|(p, _, _)| *p == pid)?;
            let share = (after.saturating_sub(*was)) as f64 / hz / period.as_secs_f64();
            (share > 0.5).then(|| (share, format!("{name} (pid {pid}, {:.0} %)", share * 100.0)))
        })
        .collect();
    busy.sort_by(|a, b| b.0.total_cmp(&a.0));
    if busy.is_empty() {
        check(
            "busy-processes",
            Verdict::Pass,
            "no other process used half a core",
        )
    } else {
        let names: Vec<String> = busy.into_iter().map(|(_, n)| n).collect();
        check("busy-processes", Verdict::Warn, names.join(", "))
            .fix("stop them, or keep them off the coupling's cores (taskset, isolcpus)")
    }
}

/// On Windows the Linux checks do not apply; the power plan and the timer
/// resolution do ([`super::windows`]).
#[cfg(windows)]
pub(super) fn host_checks() -> Vec<Check> {
    let mut checks: Vec<Check> = HOST_CHECKS[..5]
        .iter()
        .map(|n| {
            check(
                n,
                Verdict::Skip,
                "a Linux check (Windows: power-plan, timer-resolution)",
            )
        })
        .collect();
    checks.extend([
        super::windows::power_plan(),
        super::windows::timer_resolution(),
    ]);
    checks
}

#[cfg(not(any(target_os = "linux", windows)))]
pub(super) fn host_checks() -> Vec<Check> {
    HOST_CHECKS
        .into_iter()
        .map(|n| check(n, Verdict::Skip, "not checked on this system"))
        .collect()
}

/// The checks of this PC, in the order they print: Linux's, then Windows'.
const HOST_CHECKS: [&str; 7] = [
    "isolated-cores",
    "governor",
    "c-states",
    "rt-throttling",
    "busy-processes",
    "power-plan",
    "timer-resolution",
];
