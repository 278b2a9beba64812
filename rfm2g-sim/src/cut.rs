//! A board cut from its ring and mended while programs run (`rfm2gsim_set_link`,
//! `rfmctl cut` and `rfmctl mend`, the entry key `link=down`).
//!
//! A cut board gets an *island*: the shared-memory object
//! `/rfm2g-sim.RING.island.NODE`, a copy of the ring's memory made at the cut.
//! Every process holding the board's memory (each open handle's view, and
//! every `RFM2gUserMemory` mapping, even of a closed handle) has its pages
//! replaced in place by the island's (`mmap` with `MAP_FIXED`: pointers stay
//! valid, no moment unmapped): from then on the board's stores reach no other
//! board, and the others' stores do not reach it, which is exactly what a
//! program on either side reads. A mend puts the ring's pages back: the board
//! sees the ring as it is, and what it stored while cut is gone, as on a ring
//! whose fibre was open.
//!
//! The process that cuts or mends moves its own views before it returns; any
//! other process does it within [`WATCH_INTERVAL`] (a thread of the emulator
//! looks at the cut words of the boards it has open). A cut outlives the
//! programs, as an open fibre does, until a mend or the ring's removal. A cut
//! raises `RFM2GEVENT_SYNC_LOSS` on the board, where enabled.
//! Linux only: Windows cannot replace a view in place.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use rfm_memory::backend::shm::{self, ShmObject};

use crate::abi::{Code, RFM2GEVENT_SYNC_LOSS};
use crate::handle;
use crate::ring::{now_ns, object_name, Ring, HEADER_LEN};

/// How often a process looks whether another process cut or mended one of
/// its boards.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(2);

/// The island of board `node` of ring `ring`.
pub fn island_name(ring: &str, node: u16) -> String {
    format!("{}.island.{node}", object_name(ring))
}

/// Where this process keeps a board's memory now.
struct Placed {
    /// The cut (`cut_seq`) whose island holds it; `None`: on the ring.
    island: Option<u32>,
}

fn placed() -> std::sync::MutexGuard<'static, BTreeMap<(String, u16), Placed>> {
    static PLACED: Mutex<BTreeMap<(String, u16), Placed>> = Mutex::new(BTreeMap::new());
    // Every update is one insert: a panic cannot leave it half done.
    PLACED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Cuts (`up == false`) or mends board `node` of `ring`, then moves this
/// process's views of it. Cutting a cut board or mending a whole one does
/// nothing.
pub fn set_link(ring: &Ring, node: u16, up: bool) -> Result<(), String> {
    if cfg!(not(target_os = "linux")) {
        return Err(
            "a ring cut is emulated on Linux only (Windows cannot replace a \
                    mapped view in place)"
                .into(),
        );
    }
    let state = ring.node(node);
    let (cut, _) = state.cut();
    let name = island_name(ring.name(), node);
    match (cut, up) {
        (false, false) => {
            let size = ring.size() as usize;
            let island = ShmObject::open(&format!("shm:{name}"), &name, size)
                .map_err(|e| format!("the island of a cut board: {e}"))?;
            let copy = island
                .map(0, size)
                .map_err(|e| format!("the island of a cut board: {e}"))?;
            let from = ring
                .object()
                .map(HEADER_LEN, size)
                .map_err(|e| format!("ring `{}`: {e}", ring.name()))?;
            copy_words(from.as_ptr(), copy.as_ptr(), size);
            state.set_cut(true);
            // A card whose fibre in goes dark loses sync and says so, where a
            // program enabled the event.
            state.deliver(RFM2GEVENT_SYNC_LOSS as usize, node, 0, now_ns());
        }
        (true, true) => {
            state.set_cut(false);
            // Processes that still map it keep their pages until they move.
            let _ = shm::unlink(&name);
        }
        _ => {}
    }
    sync_here();
    state.notify();
    Ok(())
}

/// Copies the ring memory at the time of the cut, a word at a time (other
/// boards store into it meanwhile; what they store after the copy is what the
/// cut keeps from the island).
fn copy_words(from: *mut u8, to: *mut u8, len: usize) {
    for i in 0..len / 4 {
        // SAFETY: both mappings are `len` bytes, page-aligned, alive for the
        // call, and shared memory is only ever accessed as atomic words here.
        let (src, dst) = unsafe {
            (
                AtomicU32::from_ptr(from.cast::<u32>().add(i)),
                AtomicU32::from_ptr(to.cast::<u32>().add(i)),
            )
        };
        dst.store(src.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// Moves this process's views of every open board whose cut changed since
/// it last looked.
pub fn sync_here() {
    let mut placed = placed();
    for board in handle::open_boards() {
        let (ring, node) = (board.ring.name().to_owned(), board.config.node);
        let (cut, seq) = board.ring.node(node).cut();
        let now = placed.get(&(ring.clone(), node)).and_then(|p| p.island);
        let want = cut.then_some(seq);
        if now == want {
            continue;
        }
        let moved = match want {
            Some(_) => {
                let name = island_name(&ring, node);
                // Gone: mended (and its island removed) since the look; the
                // next look sees the mend.
                let Ok(island) = ShmObject::open_existing(&format!("shm:{name}"), &name) else {
                    continue;
                };
                move_views(&ring, node, &island, 0)
            }
            None => move_views(&ring, node, board.ring.object(), HEADER_LEN),
        };
        if moved {
            placed.insert((ring, node), Placed { island: want });
        }
    }
}

/// Puts `object`'s pages from `base` under every view of the board; false
/// when one could not be moved (tried again at the next look).
fn move_views(ring: &str, node: u16, object: &ShmObject, base: usize) -> bool {
    let mut all = true;
    handle::each_view_of(ring, node, |view, offset| {
        all &= view.remap_onto(object, base + offset as usize).is_ok();
    });
    all
}

/// A mapping made while its board is cut starts on the ring: puts it on the
/// island this process uses.
pub fn place_new(ring: &str, node: u16) {
    let mut placed = placed();
    let key = (ring.to_owned(), node);
    if placed.get(&key).is_some_and(|p| p.island.is_some()) {
        // Forget, so that the next look moves every view (the new one too).
        placed.remove(&key);
        drop(placed);
        sync_here();
    }
}

/// Starts, once per process, the thread that moves this process's views when
/// another process cuts or mends one of its boards.
pub fn watch() {
    #[cfg(target_os = "linux")]
    {
        static WATCH: std::sync::Once = std::sync::Once::new();
        WATCH.call_once(|| {
            let _ = std::thread::Builder::new()
                .name("rfm2g-sim-cut".into())
                .spawn(|| loop {
                    std::thread::sleep(WATCH_INTERVAL);
                    sync_here();
                });
        });
    }
}

/// The code a failed cut or mend returns, its reason told as `RFM2gOpen`'s are.
pub fn refused(device: &str, why: &str) -> Code {
    eprintln!("rfm2g-sim: {device}: {why}");
    Code::OS_ERROR
}
