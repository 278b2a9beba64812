//! The real-time step (issue 38): `cpuAffinity`, `realtimePriority` and
//! `lockMemory` hold the master's stepping thread while it steps, and it is
//! put back as it was at `fmi2Terminate`; without the privilege each refused
//! setting is a warning naming the fix, and the node couples as before.
#![cfg(target_os = "linux")]

mod common;

use std::process::Command;

use common::{unique, Fmu};
use fmu_model::fmi2::*;
use rfm_attitude::*;
use rfm_core::realtime::{current_cpu, current_thread};

/// Set in the child that runs without the privilege.
const UNPRIVILEGED: &str = "RFM_TEST_UNPRIVILEGED";

/// An attitude instance on a self-loop with every log category on, asking
/// for core `core`, SCHED_FIFO 10 and locked memory.
fn pinned_instance(core: usize) -> Fmu {
    let fmu = Fmu::new("pinned");
    // SAFETY: a live instance; no categories: all of them.
    let logging = unsafe { fmi2_set_debug_logging(fmu.c, 1, 0, std::ptr::null()) };
    assert_eq!(logging, fmi2OK);
    fmu.set_all(&[
        ("device", &format!("loopback:{}", unique("pinned"))),
        ("peerSlot", "0"),
        ("cpuAffinity", &core.to_string()),
        ("realtimePriority", "10"),
        ("lockMemory", "true"),
    ]);
    fmu
}

fn logged(fmu: &Fmu, status: fmi2Status, part: &str) -> bool {
    fmu.log()
        .iter()
        .any(|(s, _, m)| *s == status && m.contains(part))
}

/// Steps on a self-loop, checking each value comes back and the thread's
/// cores and priority while it steps.
fn step_checking(fmu: &Fmu, core: usize, priority: u8) {
    let (roll, _) = fmu.vr("roll");
    for k in 0..50 {
        let x = k as f64 * 0.25;
        // SAFETY: a live instance, one value.
        assert_eq!(unsafe { fmi2_set_real(fmu.c, &roll, 1, &x) }, fmi2OK);
        assert_eq!(fmu.step(k as f64 * 0.01, 0.01), fmi2OK, "{:?}", fmu.log());
        assert_eq!(
            fmu.real("peer.roll"),
            x,
            "the self-loop's value at step {k}"
        );
        let (cores, now) = current_thread().unwrap();
        assert_eq!((cores.cpus(), now), ([core].as_slice(), priority));
        assert_eq!(current_cpu(), Some(core));
    }
    assert_eq!(fmu.integer("cpu.offCore"), 0);
}

/// The cores and real-time priority of this process's heartbeat thread.
fn heartbeat_thread() -> (Vec<usize>, i32) {
    let tid: libc::pid_t = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            std::fs::read_to_string(p.join("comm")).is_ok_and(|c| c.trim() == "rfm-heartbeat")
        })
        .expect("a heartbeat thread")
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    // SAFETY: all-zero is an empty cpu_set_t; valid out pointers of the sizes passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(tid, std::mem::size_of_val(&set), &mut set),
            0
        );
        let mut param = libc::sched_param { sched_priority: 0 };
        assert_eq!(libc::sched_getparam(tid, &mut param), 0);
        let cores = (0..1024).filter(|&c| libc::CPU_ISSET(c, &set)).collect();
        (cores, param.sched_priority)
    }
}

/// The stepping thread runs on the asked core at the asked priority while it
/// steps (the priority only where this run may raise it: a root CI runner
/// may, a user may not, and then the warning is checked instead), and has its
/// own cores and scheduling back after fmi2Terminate. The heartbeat thread
/// runs on the same core, one priority above.
#[test]
fn the_stepping_thread_is_pinned_while_it_steps_and_put_back_after_terminate() {
    std::thread::spawn(|| {
        let before = current_thread().unwrap();
        let core = *before.0.cpus().last().unwrap();
        let fmu = pinned_instance(core);
        assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
        let granted = logged(
            &fmu,
            fmi2OK,
            &format!("granted cpuAffinity = \"{core}\", realtimePriority = 10"),
        );
        if !granted {
            assert!(
                logged(&fmu, fmi2Warning, "realtimePriority = 10 was refused"),
                "neither granted nor refused: {:?}",
                fmu.log()
            );
        }
        step_checking(&fmu, core, if granted { 10 } else { 0 });
        assert_eq!(
            heartbeat_thread(),
            (vec![core], if granted { 11 } else { 0 })
        );
        assert_eq!(fmu.terminate(), fmi2OK);
        assert_eq!(
            current_thread().unwrap(),
            before,
            "put back at fmi2Terminate"
        );
    })
    .join()
    .unwrap();
}

/// The same test in a child process without CAP_SYS_NICE and CAP_IPC_LOCK
/// (their bounding set dropped with `setpriv` when this runs as root) and with
/// no real-time limit: the priority is refused with a warning naming
/// CAP_SYS_NICE, the cores are still granted, and every value is exact.
#[test]
fn without_the_privilege_a_refused_priority_is_a_warning_and_the_node_couples() {
    if std::env::var_os(UNPRIVILEGED).is_some() {
        return unprivileged_child();
    }
    let me = std::env::current_exe().unwrap();
    let test = "without_the_privilege_a_refused_priority_is_a_warning_and_the_node_couples";
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    let mut child = if root {
        let mut c = Command::new("setpriv");
        c.args(["--bounding-set=-all", "--inh-caps=-all"]).arg(&me);
        c
    } else {
        Command::new(&me)
    };
    let out = child
        .args(["--exact", test, "--nocapture"])
        .env(UNPRIVILEGED, "1")
        .output()
        .expect("run the test without the privilege (setpriv, from util-linux)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "the unprivileged child: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn unprivileged_child() {
    let none = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: lowering a limit of this process; always allowed.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_RTPRIO, &none) }, 0);
    let before = current_thread().unwrap();
    let core = *before.0.cpus().first().unwrap();
    let fmu = pinned_instance(core);
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    assert!(
        logged(
            &fmu,
            fmi2Warning,
            "realtimePriority = 10 was refused (Operation not permitted"
        ) && logged(&fmu, fmi2Warning, "CAP_SYS_NICE"),
        "{:?}",
        fmu.log()
    );
    step_checking(&fmu, core, 0);
    assert_eq!(fmu.terminate(), fmi2OK);
    assert_eq!(current_thread().unwrap(), before);
}
