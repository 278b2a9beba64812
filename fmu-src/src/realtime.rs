//! The FMU's real-time step: `cpuAffinity`, `realtimePriority` and
//! `lockMemory` applied to the master's stepping thread at
//! `fmi2ExitInitializationMode`, told to the master's log, checked at every
//! step (`cpu.offCore`) and undone at `fmi2Terminate` or `fmi2FreeInstance`.

use rfm_core::realtime::{self, CpuList, Pinned, RealTime};

/// The stepping thread's settings while the instance runs.
#[derive(Debug, Default)]
pub struct StepThread {
    pinned: Option<Pinned>,
    /// The cores asked for: a step elsewhere is counted.
    cpus: Option<CpuList>,
    off_core: u64,
}

impl StepThread {
    /// Applies `asked` to the calling thread (the master's stepping thread);
    /// returns what was granted, for the link's own threads. Nothing asked,
    /// nothing touched or logged.
    pub fn start(&mut self, asked: &RealTime) -> RealTime {
        self.end();
        self.off_core = 0;
        self.cpus = asked.cpus.clone();
        if asked.is_none() {
            return RealTime::default();
        }
        let (pinned, applied) = asked.apply_here();
        self.pinned = Some(pinned);
        log::info!("real-time step: asked {asked}; granted {}", applied.granted);
        for refusal in &applied.refused {
            log::warn!("real-time step: {refusal}");
        }
        applied.granted
    }

    /// Called at every node step: counts a step on a core outside the asked set.
    #[inline]
    pub fn check(&mut self) {
        if let Some(cpus) = &self.cpus {
            if realtime::current_cpu().is_some_and(|cpu| !cpus.contains(cpu)) {
                if self.off_core == 0 {
                    log::warn!(
                        "a step ran on core {} outside cpuAffinity \"{cpus}\" (cpu.offCore counts \
                         them): the affinity was refused or changed by another program",
                        realtime::current_cpu().unwrap_or_default()
                    );
                }
                self.off_core += 1;
            }
        }
    }

    /// Steps that ran on a core outside `cpuAffinity`.
    pub fn off_core(&self) -> u64 {
        self.off_core
    }

    /// Puts the stepping thread back as it was (and unlocks memory this locked).
    pub fn end(&mut self) {
        if let Some(mut pinned) = self.pinned.take() {
            pinned.restore();
        }
    }
}
