//! `loopback:NAME`: memory shared by every open of one name inside this process.
//!
//! Two FMU instances in one master (and the regression tests) couple through it as
//! two PCs couple through a ring. The memory lives while any device or region of
//! that name does; the registry holds only weak references.

use std::alloc::Layout;
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
    /// The process could not allocate the memory (a master must not abort).
    #[error(
        "device `{device}`: cannot allocate {size} bytes of in-process memory (memory_size of the \
         interface): give a memory_size this process can hold, at most the coupling's needs"
    )]
    OutOfMemory { device: String, size: u64 },
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
    let words = zeroed_words(size / WORD).ok_or_else(|| LoopbackError::OutOfMemory {
        device: device.to_owned(),
        size: size as u64,
    })?;
    let memory = Arc::new(LoopbackMemory { words });
    registry.insert(name.to_owned(), Arc::downgrade(&memory));
    Ok(memory)
}

/// `n` zeroed words, or `None` when the allocator has not got them: the
/// infallible `Box::new_zeroed_slice` aborts the process, and the process is a
/// master's. One zeroed allocation rather than a loop of constructors: a
/// megabyte is then cheap, even under Miri.
fn zeroed_words(n: usize) -> Option<Box<[AtomicU32]>> {
    let layout = Layout::array::<AtomicU32>(n).ok()?;
    if layout.size() == 0 {
        return Some(Box::new([]));
    }
    // SAFETY: the layout's size is not zero.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<AtomicU32>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` is a fresh allocation of the global allocator with the
    // layout of `n` AtomicU32, all bytes zero (a valid AtomicU32); the box frees
    // it with that same layout.
    Some(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n)) })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory the process cannot hold is an error naming memory_size, not an
    /// abort of the master (`Box::new_zeroed_slice` aborted).
    #[test]
    #[cfg_attr(miri, ignore = "Miri refuses such an allocation outright")]
    fn a_memory_too_large_to_allocate_is_an_error() {
        let err = open("loopback:huge", "huge", 1 << 40).unwrap_err();
        assert!(matches!(err, LoopbackError::OutOfMemory { size, .. } if size == 1 << 40));
        assert!(err.to_string().contains("memory_size"), "{err}");
        assert_eq!(open("loopback:small", "small", 4096).unwrap().size(), 4096);
    }
}
