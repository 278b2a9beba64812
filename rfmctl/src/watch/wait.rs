//! What `watch --wait` waits for: the live lab, not the first descriptor. Each
//! slot asked for (`--slots`, else the FMU nodes of `--interface`, else every
//! node described) must be described and held by a session whose beat is
//! seen to move (the protocol's one verdict, `ownership::AreaWatch`): a node
//! an earlier run left on a reused memory, closed or dead, is waited past.

use std::time::{Duration, Instant};

use rfm_core::link::ownership::{AreaWatch, Holder, Verdict};
use rfm_frames::area::{window, HEARTBEAT_PERIOD};
use rfm_memory::Region;

use super::slot::{Reader, SlotView};

/// How long a holder is watched for its beat to move: three heartbeats, so
/// that one late beat does not make a live node look silent.
const LOOK: Duration = Duration::from_millis(3 * HEARTBEAT_PERIOD.as_millis() as u64);

/// Why each slot of `wanted` is not live yet in `views` (empty: all are),
/// watched for [`LOOK`].
pub(super) fn not_live(region: &Region, views: &[SlotView], wanted: &[u8]) -> Vec<String> {
    let start = Instant::now();
    let mut watched = Vec::new();
    let mut why = Vec::new();
    for &slot in wanted {
        let found = views.iter().find_map(|v| match &v.reader {
            Reader::Framed(f) if v.slot == slot => Some(f),
            _ => None,
        });
        let Some(found) = found else {
            why.push(format!("no node describes slot {slot} yet"));
            continue;
        };
        let name = format!("slot {slot} (`{}`)", found.descriptor.node);
        let session = found.descriptor.session;
        let started = window(region, &found.area)
            .and_then(|area| Ok((AreaWatch::start_for(&area, start, session)?.0, area)));
        match started {
            Ok((watch, area)) => watched.push((name, found.descriptor.session, watch, area)),
            Err(e) => why.push(format!("{name}: {e}")),
        }
    }
    if watched.is_empty() {
        return why;
    }
    std::thread::sleep(LOOK);
    let now = Instant::now();
    for (name, session, mut watch, area) in watched {
        match watch.judge_for(&area, now, session) {
            Ok(Verdict::Its(Holder::Live { .. })) => {}
            Ok(Verdict::Its(Holder::Closed { .. })) => {
                why.push(format!("{name} is closed (an earlier run's)"))
            }
            Ok(Verdict::Its(Holder::Dead { .. })) => {
                why.push(format!("{name} is dead (an earlier run's)"))
            }
            Ok(Verdict::Free | Verdict::Other(_)) => {
                why.push(format!("{name} is described but held by no session"))
            }
            Ok(_) => why.push(format!("{name} does not beat yet")),
            Err(e) => why.push(format!("{name}: {e}")),
        }
    }
    why
}
