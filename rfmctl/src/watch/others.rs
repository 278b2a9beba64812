//! The areas a memory describes that no row of the watch shows, each judged
//! as every reader of the ownership protocol judges it.

use std::time::Instant;

use rfm_core::link::ownership::{AreaWatch, Holder, Verdict};
use rfm_interface::{self as interface, Found};
use rfm_memory::Region;

use super::slot::{Reader, SlotView};
use crate::failure::Failure;

/// An area the memory describes that no row shows (another interface's, or
/// one a later node wrote over), judged as every reader of the protocol does.
pub(super) struct Other {
    pub(super) found: Found,
    area: Region,
    watch: AreaWatch,
    holder: Holder,
}

impl Other {
    /// Judges the area again; a failed read keeps the last verdict.
    pub(super) fn poll(&mut self, now: Instant) {
        if let Ok(holder) = self.watch.judge(&self.area, now) {
            self.holder = holder;
        }
    }

    pub(super) fn judged(&self) -> &'static str {
        Verdict::of(self.holder, self.found.descriptor.session).text(None)
    }

    pub(super) fn text(&self) -> String {
        let d = &self.found.descriptor;
        format!(
            "  node `{}` (slot {}) of interface `{}`, bytes {}..{}: {}",
            d.node,
            d.slot,
            d.interface,
            self.found.area.offset,
            self.found.area.end(),
            self.judged()
        )
    }
}

/// The described areas of `region` that no view shows.
pub(super) fn others(region: &Region, views: &[SlotView]) -> Result<Vec<Other>, Failure> {
    let shown: Vec<u64> = views
        .iter()
        .filter_map(|v| match &v.reader {
            Reader::Framed(f) => Some(f.area.offset),
            _ => None,
        })
        .collect();
    let now = Instant::now();
    let mut others = Vec::new();
    for found in interface::discover(region).map_err(Failure::device)? {
        if shown.contains(&found.area.offset) {
            continue;
        }
        let area = rfm_frames::area::window(region, &found.area).map_err(Failure::device)?;
        let (watch, holder) = AreaWatch::start(&area, now).map_err(Failure::device)?;
        others.push(Other {
            found,
            area,
            watch,
            holder,
        });
    }
    Ok(others)
}
