//! Open boards and user mappings of this process.
//!
//! A handle given to C is a key into a table, never a pointer we follow: a NULL,
//! made-up, or already closed handle is an error status instead of a wild read,
//! and a thread still inside a call on a handle another thread closes keeps its
//! board alive (an `Arc`) until it returns.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rfm_memory::backend::shm::ShmMapping;

use crate::abi::{Code, RFM2GHANDLE, RFM2G_LCSR_OWNDATA, RFM2G_LCSR_SIGDET, RFM2G_LCSR_SNCLOST};
use crate::config::BoardConfig;
use crate::ring::{NodeState, Ring, WaitControl};

/// Handles look like pointers to C programs that print them; none is dereferenced.
const FIRST_HANDLE: usize = 0x5fd0_0000;
const HANDLE_STEP: usize = 0x40;

/// One `RFM2gOpen`.
#[derive(Debug)]
pub struct Board {
    pub device: String,
    pub config: BoardConfig,
    pub ring: Ring,
    /// Event types a thread of this handle is waiting for (`EVENT_IN_USE` guard).
    pub waiting: AtomicU32,
    /// Event types whose wait `RFM2gCancelWaitForEvent` has cancelled.
    pub canceled: AtomicU32,
    closed: AtomicBool,
}

impl Board {
    pub fn new(device: String, config: BoardConfig, ring: Ring) -> Board {
        Board {
            device,
            config,
            ring,
            waiting: AtomicU32::new(0),
            canceled: AtomicU32::new(0),
            closed: AtomicBool::new(false),
        }
    }

    pub fn node(&self) -> &NodeState {
        self.ring.node(self.config.node)
    }

    /// Whether the board's fibre is closed: not configured `link=down`, and
    /// not cut ([`crate::cut`]).
    pub fn link_up(&self) -> bool {
        self.config.link_up && !self.node().cut().0
    }

    /// Whether a packet sent round the ring comes back: on a ring, one open
    /// fibre anywhere (a board cut) stops every board's packets, though only
    /// the board after the break loses its receiver's sync.
    pub fn ring_closed(&self) -> bool {
        self.link_up() && !self.ring.nodes().any(|(_, n)| n.cut().0)
    }

    /// After a store through the API (`RFM2gWrite`, `RFM2gPoke*`): on a closed
    /// ring it comes back to this board, as a card's own data does; on a ring
    /// open anywhere it does not, on any board. Stores through a mapping are
    /// not seen by the emulator and set nothing.
    pub fn stored(&self) {
        if self.ring_closed() {
            self.node().own_data.store(1, Ordering::Release);
        }
    }

    /// The local control and status register as a PCIE-5565 shows its ring.
    pub fn lcsr(&self) -> u32 {
        let mut lcsr = 0;
        if self.link_up() {
            lcsr |= RFM2G_LCSR_SIGDET;
            if self.node().own_data.load(Ordering::Acquire) != 0 {
                lcsr |= RFM2G_LCSR_OWNDATA;
            }
        } else {
            lcsr |= RFM2G_LCSR_SNCLOST;
        }
        lcsr
    }
}

/// A wait for one event type on one handle: cancelled by `RFM2gCancelWaitForEvent`
/// or `RFM2gClose`.
pub struct Waiter<'a> {
    pub board: &'a Board,
    pub bit: u32,
}

impl WaitControl for Waiter<'_> {
    fn interrupted(&self) -> Option<Code> {
        if self.board.closed.load(Ordering::Acquire) {
            return Some(Code::NOT_OPEN);
        }
        if self.board.canceled.fetch_and(!self.bit, Ordering::AcqRel) & self.bit != 0 {
            return Some(Code::WAIT_EVENT_CANCELED);
        }
        None
    }
}

struct Mapping {
    handle: usize,
    pages: u32,
    /// The board's ring and node, and where in its memory the mapping starts:
    /// what a cut moves, even after the handle was closed.
    ring: String,
    node: u16,
    offset: u64,
    memory: ShmMapping,
}

struct Table {
    boards: BTreeMap<usize, Arc<Board>>,
    next: usize,
    /// By address. A mapping stays valid after its handle is closed (a program
    /// may still touch the pointer), until the process exits: unmapping needs
    /// the open handle.
    maps: BTreeMap<usize, Mapping>,
}

fn table() -> MutexGuard<'static, Table> {
    static TABLE: Mutex<Table> = Mutex::new(Table {
        boards: BTreeMap::new(),
        next: FIRST_HANDLE,
        maps: BTreeMap::new(),
    });
    // A panic while holding the lock leaves the table consistent (every update is
    // one insert or remove), so a poisoned lock is still usable.
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn insert(board: Board) -> RFM2GHANDLE {
    let mut t = table();
    let id = t.next;
    t.next += HANDLE_STEP;
    t.boards.insert(id, Arc::new(board));
    id as RFM2GHANDLE
}

/// The board behind a handle: `NULL_DESCRIPTOR` for NULL or a value never issued,
/// `NOT_OPEN` for a closed one.
pub fn get(handle: RFM2GHANDLE) -> Result<Arc<Board>, Code> {
    let id = handle as usize;
    let t = table();
    match t.boards.get(&id) {
        Some(board) => Ok(Arc::clone(board)),
        None if issued(&t, id) => Err(Code::NOT_OPEN),
        None => Err(Code::NULL_DESCRIPTOR),
    }
}

fn issued(t: &Table, id: usize) -> bool {
    (FIRST_HANDLE..t.next).contains(&id) && (id - FIRST_HANDLE).is_multiple_of(HANDLE_STEP)
}

/// Closes a handle: later calls with it fail, and its waits end with `NOT_OPEN`.
pub fn remove(handle: RFM2GHANDLE) -> Result<(), Code> {
    let id = handle as usize;
    let mut t = table();
    let Some(board) = t.boards.remove(&id) else {
        return Err(if issued(&t, id) {
            Code::NOT_OPEN
        } else {
            Code::NULL_DESCRIPTOR
        });
    };
    drop(t);
    board.closed.store(true, Ordering::Release);
    board.node().notify();
    Ok(())
}

/// Records a mapping of `board`'s memory from `offset`; the pointer C gets.
pub fn add_mapping(
    handle: RFM2GHANDLE,
    board: &Board,
    offset: u64,
    pages: u32,
    memory: ShmMapping,
) -> *mut u8 {
    let ptr = memory.as_ptr();
    table().maps.insert(
        ptr as usize,
        Mapping {
            handle: handle as usize,
            pages,
            ring: board.ring.name().to_owned(),
            node: board.config.node,
            offset,
            memory,
        },
    );
    ptr
}

/// Every piece of this process's memory of board `node` of ring `ring` (each
/// open board's own view for `RFM2gRead` and the like, and every user
/// mapping), with its offset in the board's memory, under the table's lock:
/// what a cut or a mend moves.
pub fn each_view_of(ring: &str, node: u16, mut each: impl FnMut(&ShmMapping, u64)) {
    let t = table();
    for b in t.boards.values() {
        if b.ring.name() == ring && b.config.node == node {
            each(b.ring.memory_mapping(), 0);
        }
    }
    for m in t.maps.values() {
        if m.ring == ring && m.node == node {
            each(&m.memory, m.offset);
        }
    }
}

/// (ring, node) of every board open in this process.
pub fn open_boards() -> Vec<Arc<Board>> {
    table().boards.values().cloned().collect()
}

/// Unmaps what `RFM2gUserMemory` on this handle returned at `ptr`, `pages` long.
pub fn remove_mapping(handle: RFM2GHANDLE, ptr: usize, pages: u32) -> Result<(), Code> {
    let mut t = table();
    match t.maps.get(&ptr) {
        Some(m) if m.handle == handle as usize && m.pages == pages => {
            t.maps.remove(&ptr);
            Ok(())
        }
        Some(m) if m.handle == handle as usize => Err(Code::BAD_PARAMETER_3),
        _ => Err(Code::MEM_NOT_MAPPED),
    }
}

/// (open handles, live mappings) in this process, for leak checks.
pub fn live() -> (usize, usize) {
    let t = table();
    (t.boards.len(), t.maps.len())
}
