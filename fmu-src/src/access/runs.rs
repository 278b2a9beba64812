//! Runs: value references side by side in a payload ([`fmu_model::Model::runs`])
//! that a master passes in order, served by one copy.

use fmu_model::fmi2::fmi2ValueReference;

/// References compared at once: one at a time, the scan cost more than the
/// copy it saves (about 0.3 ns a reference). Also the shortest run worth
/// finding, and the fewest references a call needs to look for runs at all.
pub const CHUNK: usize = 8;

/// Whether a long run starts at value reference `vr` (valid).
#[inline]
pub fn long_run(runs: &[u32], vr: fmi2ValueReference) -> bool {
    runs[vr as usize] as usize >= CHUNK
}

/// How many of `vrs` (at least 1) continue the run that starts at `vrs[0]`,
/// a valid value reference: a master asks for a run in order.
pub fn run_length(runs: &[u32], vrs: &[fmi2ValueReference]) -> usize {
    let first = vrs[0];
    let most = (runs[first as usize] as usize).min(vrs.len());
    let mut n = 0;
    for chunk in vrs[..most].chunks_exact(CHUNK) {
        let next = first.wrapping_add(n as u32);
        // Not `all`: its early exit keeps the comparison from being vectorised.
        let follows =
            (chunk.iter().zip(next..)).fold(true, |ok, (&vr, expected)| ok & (vr == expected));
        if !follows {
            break;
        }
        n += CHUNK;
    }
    n + (vrs[n..most].iter())
        .zip(first.wrapping_add(n as u32)..)
        .take_while(|(&vr, expected)| vr == *expected)
        .count()
}
