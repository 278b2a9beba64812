//! `loopback:NAME`: memory shared by every open of one name inside this process.
//!
//! Two FMU instances in one master (and the regression tests) couple through it as
//! two PCs couple through a ring. The memory lives while any device or region of
//! that name does; the registry holds only weak references.

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, LazyLock, Mutex, Weak};

use crate::region::{Region, WORD};

/// Why a `loopback:` memory could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum LoopbackError {
    #[error(
        "device `{device}` holds {found} bytes but {expected} were asked for; every program \
         sharing it must use the same size ({})",
        crate::backend::shm::STALE_HINT
    )]
    SizeMismatch {
        device: String,
        expected: u64,
        found: u64,
    },
}

/// The storage behind one loopback name.
#[derive(Debug)]
pub(crate) struct LoopbackMemory {
    words: Box<[AtomicU32]>,
}

static REGISTRY: LazyLock<Mutex<HashMap<String, Weak<LoopbackMemory>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Opens (or creates, zeroed) the loopback memory `name` of `size` bytes.
pub(crate) fn open(
    device: &str,
    name: &str,
    size: usize,
) -> Result<Arc<LoopbackMemory>, LoopbackError> {
    let mut registry = REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    registry.retain(|_, weak| weak.strong_count() > 0);
    if let Some(memory) = registry.get(name).and_then(Weak::upgrade) {
        let found = memory.words.len() * WORD;
        if found != size {
            return Err(LoopbackError::SizeMismatch {
                device: device.to_owned(),
                expected: size as u64,
                found: found as u64,
            });
        }
        return Ok(memory);
    }
    let zeroed = Box::<[AtomicU32]>::new_zeroed_slice(size / WORD);
    // SAFETY: all-zero bytes are a valid AtomicU32 (zero). One zeroed allocation
    // rather than a loop of constructors: a megabyte is then cheap, even under Miri.
    let words = unsafe { zeroed.assume_init() };
    let memory = Arc::new(LoopbackMemory { words });
    registry.insert(name.to_owned(), Arc::downgrade(&memory));
    Ok(memory)
}

impl LoopbackMemory {
    pub(crate) fn size(&self) -> usize {
        self.words.len() * WORD
    }

    /// The whole memory as a region that keeps it alive.
    pub(crate) fn region(self: &Arc<Self>) -> Region {
        let base = NonNull::new(self.words.as_ptr().cast_mut().cast::<u8>())
            .expect("boxed slice is non-null");
        // SAFETY: the boxed slice is aligned for AtomicU32 (≥ WORD), `size()` bytes
        // long, never reallocated, and kept alive by the Arc passed as owner; it is
        // only accessed through atomics (interior mutability, so writing through a
        // pointer derived from a shared reference is allowed).
        unsafe { Region::from_raw_parts(base, self.size(), Arc::clone(self) as _) }
    }
}
