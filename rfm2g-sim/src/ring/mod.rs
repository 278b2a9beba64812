//! One emulated fibre ring: a shared-memory object `/rfm2g-sim.RING` holding a
//! header (per-node event queues and board settings) and then the memory every
//! node of the ring sees.
//!
//! Everything in the header is an atomic word, so a process killed at any point
//! leaves it consistent: there is no lock to be left held.

pub mod access;
mod node;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rfm_memory::backend::shm::{ShmError, ShmMapping, ShmObject};

use crate::abi::{Code, PAGE};
use crate::config::BoardConfig;
use crate::wake;
pub use node::{NodeState, WaitControl};

const MAGIC: u32 = u32::from_le_bytes(*b"RFMS");
/// 2: a board's cut (`NodeState::cut`).
const VERSION: u32 = 2;
pub const NODES: usize = 256;
/// `RFM2GEVENT_LAST`: event types are 0..EVENT_TYPES.
pub const EVENT_TYPES: usize = 12;
/// How long an opener waits for the process creating the ring to initialise it.
const INIT_GRACE: Duration = Duration::from_secs(1);

#[repr(C)]
struct Header {
    magic: AtomicU32,
    version: AtomicU32,
    memory_size: AtomicU64,
    nodes: [NodeState; NODES],
}

/// Bytes before the memory: the header, rounded up to whole pages so that the
/// memory, and every window of it, maps page-aligned.
pub const HEADER_LEN: usize = std::mem::size_of::<Header>().next_multiple_of(PAGE as usize);

/// A monotonic clock in ns, one for every process on the host (Linux:
/// CLOCK_MONOTONIC; Windows: the performance counter), so a due time written by
/// the sender means the same to the receiver.
#[cfg(target_os = "linux")]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(windows)]
pub fn now_ns() -> u64 {
    use windows_sys::Win32::System::Performance::{
        QueryPerformanceCounter, QueryPerformanceFrequency,
    };
    let (mut count, mut frequency) = (0i64, 0i64);
    // SAFETY: valid out pointers; both calls always succeed on Windows XP and later.
    unsafe {
        QueryPerformanceCounter(&mut count);
        QueryPerformanceFrequency(&mut frequency);
    }
    (i128::from(count) * 1_000_000_000 / i128::from(frequency.max(1))) as u64
}

/// An open ring: the object (kept open to map windows from), its header, and
/// its memory (a mapping of its own, so that a cut can move it to an island).
#[derive(Debug)]
pub struct Ring {
    object: ShmObject,
    head: ShmMapping,
    memory: ShmMapping,
    size: u64,
    name: String,
}

/// The shm object name of a ring.
pub fn object_name(ring: &str) -> String {
    format!("rfm2g-sim.{ring}")
}

impl Drop for Ring {
    fn drop(&mut self) {
        wake::unregister(self.head.as_ptr());
    }
}

impl Ring {
    /// Opens (creating on first use) the ring a board belongs to. The error is a
    /// sentence for the user: the RFM2G_STATUS alone cannot say what was wrong.
    pub fn open(device: &str, board: &BoardConfig) -> Result<Ring, String> {
        Ring::open_as(device, board, true)
    }

    /// Opens the ring a board belongs to if a program made it: a tool that
    /// cuts or mends a board must not make a ring of its own (a typo's ring
    /// of 64 MiB that nothing uses), and says whose ring it looked for.
    pub fn open_existing(device: &str, board: &BoardConfig) -> Result<Ring, String> {
        Ring::open_as(device, board, false)
    }

    fn open_as(device: &str, board: &BoardConfig, create: bool) -> Result<Ring, String> {
        let object = Ring::open_object(device, board, create)?;
        let mapped = |offset, len| {
            object
                .map(offset, len)
                .map_err(|e| format!("{device}: ring `{}`: {e}", board.ring))
        };
        let (head, memory) = (
            mapped(0, HEADER_LEN)?,
            mapped(HEADER_LEN, board.size as usize)?,
        );
        wake::register(head.as_ptr(), HEADER_LEN, &board.ring);
        let ring = Ring {
            object,
            head,
            memory,
            size: board.size,
            name: board.ring.clone(),
        };
        ring.initialised(device)?;
        Ok(ring)
    }

    /// The ring's shm object, of the board's size; the errors say which ring
    /// and what to do (start the simulators, name the board as they do,
    /// remove a stale ring).
    fn open_object(device: &str, board: &BoardConfig, create: bool) -> Result<ShmObject, String> {
        let name = object_name(&board.ring);
        let total = HEADER_LEN + board.size as usize;
        let shm_device = format!("shm:{name}");
        let object = match create {
            true => ShmObject::open(&shm_device, &name, total),
            false => ShmObject::open_existing(&shm_device, &name),
        };
        let object = object.map_err(|e| match e {
            ShmError::NoSuchMemory { .. } => format!(
                "{device}: it is node {} of ring `{}`, which no program has opened a board \
                     of{}: start the simulators first, or name one of their boards (run with \
                     the ${} or ${} they use)",
                board.node,
                board.ring,
                match board.ring == crate::config::DEFAULT_RING {
                    true => " (the default ring of an entry without `ring=`)",
                    false => "",
                },
                crate::config::DEVICES_ENV,
                crate::config::CONFIG_ENV,
            ),
            ShmError::SizeMismatch { found, .. } => format!(
                "{device}: ring `{}` already has {} bytes of memory but this board is \
                 configured with {}; every board of a ring needs the same size (or remove \
                 the stale ring: {})",
                board.ring,
                found.saturating_sub(HEADER_LEN as u64),
                board.size,
                rfm_memory::backend::shm::removal(&name)
            ),
            other => format!("{device}: ring `{}`: {other}", board.ring),
        })?;
        if object.size() != total {
            return Err(format!(
                "{device}: ring `{}` has {} bytes of memory but this board is configured with \
                 {}; name the board as its simulators do",
                board.ring,
                object.size().saturating_sub(HEADER_LEN),
                board.size
            ));
        }
        Ok(object)
    }

    /// The creator writes the header; every other opener waits for it (up to
    /// `INIT_GRACE`) and refuses a header of another version.
    fn initialised(&self, device: &str) -> Result<(), String> {
        let header = self.header();
        if self.object.created() {
            header.version.store(VERSION, Ordering::Relaxed);
            header.memory_size.store(self.size, Ordering::Relaxed);
            header.magic.store(MAGIC, Ordering::Release);
            return Ok(());
        }
        let deadline = Instant::now() + INIT_GRACE;
        while header.magic.load(Ordering::Acquire) != MAGIC && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (magic, version) = (
            header.magic.load(Ordering::Acquire),
            header.version.load(Ordering::Relaxed),
        );
        if magic != MAGIC || version != VERSION {
            let name = object_name(&self.name);
            return Err(format!(
                "{device}: shared memory {name} is not an rfm2g-sim ring of version \
                 {VERSION} (magic {magic:#x}, version {version}); remove it: {}",
                rfm_memory::backend::shm::removal(&name)
            ));
        }
        Ok(())
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping is page-aligned and at least HEADER_LEN bytes, lives as
        // long as `self`, and holds only atomics (all-zero is a valid value for
        // each), so shared access from other processes is fine.
        unsafe { &*self.head.as_ptr().cast::<Header>() }
    }

    pub fn node(&self, node: u16) -> &NodeState {
        &self.header().nodes[usize::from(node)]
    }

    pub fn nodes(&self) -> impl Iterator<Item = (u16, &NodeState)> {
        self.header()
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (i as u16, n))
    }

    /// Bytes of ring memory.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The ring memory: `size()` bytes, page-aligned, valid while `self` lives
    /// (an island's while the board is cut).
    pub fn memory(&self) -> *mut u8 {
        self.memory.as_ptr()
    }

    /// The mapping [`Ring::memory`] points into, for a cut to move.
    pub(crate) fn memory_mapping(&self) -> &ShmMapping {
        &self.memory
    }

    /// The ring's shared-memory object (its memory starts at [`HEADER_LEN`]).
    pub(crate) fn object(&self) -> &ShmObject {
        &self.object
    }

    /// The ring's name (`ring=`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A new mapping of `pages` pages of ring memory from page-aligned `offset`.
    pub fn map(&self, offset: u64, pages: u32) -> Result<ShmMapping, Code> {
        if !offset.is_multiple_of(PAGE) {
            return Err(Code::MEM_NOT_MAPPED);
        }
        if pages == 0 {
            return Err(Code::BAD_PARAMETER_4);
        }
        let len = u64::from(pages) * PAGE;
        if offset.checked_add(len).is_none_or(|end| end > self.size) {
            return Err(Code::OUT_OF_RANGE);
        }
        self.object
            .map(HEADER_LEN + offset as usize, len as usize)
            .map_err(|_| Code::OS_ERROR)
    }
}
