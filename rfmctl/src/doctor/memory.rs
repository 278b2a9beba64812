//! What the memory holds: the nodes that describe their areas now, of which
//! interfaces, and what earlier runs left. Each descriptor is judged by the
//! protocol's one verdict (`ownership`): a descriptor whose area's owner word
//! is another session's was overwritten since, and a closed holder is a
//! leftover, so neither is counted as a node of the lab.

use std::time::Instant;

use rfm_core::link::ownership::{self, AreaWatch, Holder};
use rfm_frames::area::window;
use rfm_interface::{self as interface, Found};
use rfm_memory::Region;

use super::{check, Check, Verdict};
use crate::open::coupling_region;

/// Where a described area stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Held by the session it describes, not closed (live, or not yet seen
    /// to stop).
    Held,
    /// Its holder closed it: an earlier run's.
    Closed,
    /// Another session's owner word is there (or none): the descriptor is an
    /// earlier run's, written over since.
    Overwritten,
}

/// Where `found`'s area stands, by one read of its words: the first verdict
/// names the holder's session, which the descriptor's must be.
fn standing(region: &Region, found: &Found) -> Standing {
    let session = found.descriptor.session;
    let first = window(region, &found.area)
        .and_then(|area| AreaWatch::start_for(&area, Instant::now(), session))
        .map(|(_, verdict)| verdict);
    match first {
        Ok(ownership::Verdict::Its(Holder::Closed { .. })) => Standing::Closed,
        Ok(ownership::Verdict::Its(_)) => Standing::Held,
        Ok(ownership::Verdict::Free | ownership::Verdict::Other(_)) | Err(_) => {
            Standing::Overwritten
        }
    }
}

/// What the memory describes: each coupling's interface and its nodes (those
/// held); what earlier runs left, named apart; two interfaces whose held areas
/// overlap (two live couplings on one memory).
pub(super) fn memory_check(dev: &rfm_memory::Device, device: &str) -> Check {
    let region = match coupling_region(dev, device, 0) {
        Ok(r) => r,
        Err(f) => return check("memory", Verdict::Fail, format!("{:#}", f.error)),
    };
    let found = match interface::discover(&region) {
        Ok(found) => found,
        Err(e) => return check("memory", Verdict::Fail, e.to_string()),
    };
    let (held, left): (Vec<_>, Vec<_>) = found
        .into_iter()
        .map(|f| (standing(&region, &f), f))
        .partition(|(s, _)| *s == Standing::Held);
    let held: Vec<Found> = held.into_iter().map(|(_, f)| f).collect();
    let mut detail = match held.is_empty() {
        true => "no node describes itself (no coupling runs here, or it runs at another \
                 regionOffset)"
            .to_owned(),
        false => format!("{} nodes described, of {}", held.len(), interfaces(&held)),
    };
    if !left.is_empty() {
        let named: Vec<String> = (left.iter())
            .map(|(s, f)| {
                let how = match s {
                    Standing::Closed => "closed",
                    _ => "written over since",
                };
                format!(
                    "`{}` of `{}`, {how}",
                    f.descriptor.node, f.descriptor.interface
                )
            })
            .collect();
        detail += &format!(
            "; {} more left by earlier runs, not counted ({})",
            left.len(),
            named.join("; ")
        );
    }
    let overlaps = overlapping(&held);
    if overlaps.is_empty() {
        check("memory", Verdict::Pass, detail)
    } else {
        check(
            "memory",
            Verdict::Warn,
            format!("{detail}; overlapping: {}", overlaps.join("; ")),
        )
        .fix("two live couplings need their own devices or regionOffsets (rfmctl watch judges each area)")
    }
}

/// The interfaces of `found`, each once, as a list.
fn interfaces(found: &[Found]) -> String {
    let mut names: Vec<&str> = found
        .iter()
        .map(|f| f.descriptor.interface.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    (names.iter())
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The pairs of described areas of different interfaces that overlap.
fn overlapping(found: &[Found]) -> Vec<String> {
    found
        .iter()
        .enumerate()
        .flat_map(|(i, a)| found[i + 1..].iter().map(move |b| (a, b)))
        .filter(|(a, b)| {
            a.descriptor.interface != b.descriptor.interface
                && a.area.offset < b.area.end()
                && b.area.offset < a.area.end()
        })
        .map(|(a, b)| {
            format!(
                "`{}` of `{}` and `{}` of `{}`",
                a.descriptor.node,
                a.descriptor.interface,
                b.descriptor.node,
                b.descriptor.interface
            )
        })
        .collect()
}
