//! The Windows PC's checks (the article's platform): the power plan, whose
//! balanced default parks cores and lowers their clock between steps, and the
//! system timer's resolution, which bounds every sleep (`waitStrategy` sleep,
//! a master's pacing).

use std::process::Command;

use super::{check, Check, Verdict};

/// The plans that keep every core at full clock: High performance and
/// Ultimate Performance.
const FAST_PLANS: [&str; 2] = [
    "8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c",
    "e9a42b02-d5df-448d-aa00-03f14749eb61",
];

pub fn power_plan() -> Check {
    let Ok(out) = Command::new("powercfg").arg("/getactivescheme").output() else {
        return check("power-plan", Verdict::Skip, "powercfg did not run");
    };
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || text.is_empty() {
        return check("power-plan", Verdict::Skip, "powercfg gave no active plan");
    }
    let lower = text.to_lowercase();
    if FAST_PLANS.iter().any(|g| lower.contains(g)) {
        check("power-plan", Verdict::Pass, text)
    } else {
        check("power-plan", Verdict::Warn, text)
            .fix("powercfg /setactive SCHEME_MIN (High performance)")
    }
}

#[link(name = "ntdll")]
extern "system" {
    /// Resolutions in 100 ns units: the coarsest, the finest, and now.
    fn NtQueryTimerResolution(coarsest: *mut u32, finest: *mut u32, current: *mut u32) -> i32;
}

pub fn timer_resolution() -> Check {
    let (mut coarsest, mut finest, mut current) = (0u32, 0u32, 0u32);
    // SAFETY: three valid out pointers; the call only writes them.
    let status = unsafe { NtQueryTimerResolution(&mut coarsest, &mut finest, &mut current) };
    if status != 0 || current == 0 {
        return check(
            "timer-resolution",
            Verdict::Skip,
            format!("the system gave no timer resolution (status {status:#x})"),
        );
    }
    let ms = |units: u32| f64::from(units) / 10_000.0;
    let detail = format!(
        "{:.3} ms now (finest {:.3} ms, coarsest {:.3} ms)",
        ms(current),
        ms(finest),
        ms(coarsest)
    );
    if current <= 10_000 {
        check("timer-resolution", Verdict::Pass, detail)
    } else {
        check("timer-resolution", Verdict::Warn, detail).fix(
            "a sleeping or paced step wakes only on the timer: have the master call \
             timeBeginPeriod(1), or use waitStrategy spin on an isolated core",
        )
    }
}
