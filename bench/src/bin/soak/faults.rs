//! The faults of a soak on two emulated redundant rings: a board of one ring
//! cut at every multiple of EVERY steps and mended EVERY/2 later, drawn
//! from a seed.

use std::path::PathBuf;

use anyhow::{Context, Result};
use rfm_memory::backend::rfm2g::emulated;

/// The faults of a run on redundant rings: a board cut at every multiple of
/// `every` steps and mended half of it later, drawn from `seed`.
#[derive(Debug, Clone)]
pub struct Faults {
    pub every: u64,
    pub seed: u64,
    /// The emulator, which cuts and mends.
    pub library: PathBuf,
    /// The rings' names (A, B).
    pub rings: [String; 2],
}

/// The board of node `me` on `ring`, as the emulator names it.
pub fn board(ring: &str, me: u64) -> String {
    format!("/dev/rfm2g-sim/{ring}/{}/1M", me + 1)
}

/// The cuts node 0 makes: which board is cut now, and the next draw.
pub struct Cutter {
    faults: Faults,
    state: u64,
    cut: Option<String>,
    /// Cuts made so far.
    pub made: u64,
}

impl Cutter {
    pub fn new(faults: Faults) -> Cutter {
        Cutter {
            state: faults.seed | 1,
            faults,
            cut: None,
            made: 0,
        }
    }

    /// Mends the board still cut at the end, if one is.
    pub fn finish(&mut self) -> Result<()> {
        if let Some(device) = self.cut.take() {
            emulated::set_link(Some(&self.faults.library), &device, true)
                .context("the last mend")?;
        }
        Ok(())
    }

    /// At step `k`: a cut at each multiple of `every`, its mend half of it
    /// later (a fault that fails is the soak's failure).
    pub fn at(&mut self, k: u64) -> Result<()> {
        let every = self.faults.every;
        if k.is_multiple_of(every) && k > 0 {
            // xorshift: the same seed, the same boards.
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            let ring = &self.faults.rings[(self.state % 2) as usize];
            let device = board(ring, (self.state >> 1) % 2);
            emulated::set_link(Some(&self.faults.library), &device, false)
                .with_context(|| format!("cutting {device} at step {k}"))?;
            self.cut = Some(device);
            self.made += 1;
        } else if k % every == every / 2 {
            if let Some(device) = self.cut.take() {
                emulated::set_link(Some(&self.faults.library), &device, true)
                    .with_context(|| format!("mending {device} at step {k}"))?;
            }
        }
        Ok(())
    }
}
