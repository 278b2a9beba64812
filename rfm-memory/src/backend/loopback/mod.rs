//! `loopback:NAME`: memory shared by every open of one name inside this process.
//!
//! Two FMU instances in one master (and the regression tests) couple through it as
//! two PCs couple through a ring. The memory lives while any device or region of
//! that name does; the registry holds only weak references.
//!
//! "This process" includes every copy of the library it has loaded: a master
//! that unpacks each instance into its own folder (libcosim's
//! `CosimLocalSlave`) maps the FMU binary twice, and each copy has its own
//! registry. So the memory itself is a process-wide object both copies can find
//! by name, on Linux a memfd (`linux.rs`), on Windows the file mapping
//! `Local\rfm-loopback.PID.HASH` of the `shm:` backend: both go with their last
//! user, and with the process when it crashes, leaving nothing behind.
//! Elsewhere (and under Miri) it is heap memory of this copy.

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::{Arc, LazyLock, Mutex, Weak};

use crate::region::Region;
#[cfg(any(miri, not(any(target_os = "linux", windows))))]
use crate::region::WORD;

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
    /// The process-wide object could not be found or made.
    #[error("device `{device}`: {op} failed for the process's loopback memory: {source}")]
    Process {
        device: String,
        op: &'static str,
        source: std::io::Error,
    },
    /// The process-wide object is mapped as a `shm:` object is, and failed so.
    #[error(transparent)]
    Shared(#[from] crate::backend::shm::ShmError),
}

#[cfg(all(target_os = "linux", not(miri)))]
mod linux;

/// Whether other copies of the library in this process reach the same memory
/// (then a lock of this copy does not make claims atomic).
pub const SHARED_ACROSS_COPIES: bool = cfg!(all(any(target_os = "linux", windows), not(miri)));

/// The storage behind one loopback name.
#[derive(Debug)]
pub(crate) struct LoopbackMemory {
    storage: Storage,
}

#[derive(Debug)]
enum Storage {
    /// Memory of this copy of the library alone.
    #[cfg(any(miri, not(any(target_os = "linux", windows))))]
    Heap(Box<[std::sync::atomic::AtomicU32]>),
    /// The process-wide object, which other copies map too.
    #[cfg(all(target_os = "linux", not(miri)))]
    Shared(linux::Shared),
    #[cfg(all(windows, not(miri)))]
    Shared(Arc<crate::backend::shm::ShmMapping>),
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
        let found = memory.size();
        if found != size {
            return Err(LoopbackError::SizeMismatch {
                device: device.to_owned(),
                expected: size as u64,
                found: found as u64,
            });
        }
        return Ok(memory);
    }
    // Checked here too, not only by Device::open: a memfd of 2^40 bytes is
    // sparse, and allocating its pages would take the host's memory first.
    if size as u64 > crate::region::MAX_MEMORY_SIZE {
        return Err(LoopbackError::OutOfMemory {
            device: device.to_owned(),
            size: size as u64,
        });
    }
    let memory = Arc::new(LoopbackMemory {
        storage: storage(device, name, size)?,
    });
    registry.insert(name.to_owned(), Arc::downgrade(&memory));
    Ok(memory)
}

/// The process-wide memory `name`, found or made.
#[cfg(all(target_os = "linux", not(miri)))]
fn storage(device: &str, name: &str, size: usize) -> Result<Storage, LoopbackError> {
    linux::open(device, name, size).map(Storage::Shared)
}

/// The process-wide memory `name`, found or made: a `shm:` object whose name
/// holds this process's id (and goes with its last handle).
#[cfg(all(windows, not(miri)))]
fn storage(device: &str, name: &str, size: usize) -> Result<Storage, LoopbackError> {
    let object = process_label(name);
    crate::backend::shm::open(device, &object, Some(size))
        .map(Storage::Shared)
        .map_err(Into::into)
}

#[cfg(any(miri, not(any(target_os = "linux", windows))))]
fn storage(device: &str, _name: &str, size: usize) -> Result<Storage, LoopbackError> {
    zeroed_words(size / WORD)
        .map(Storage::Heap)
        .ok_or_else(|| LoopbackError::OutOfMemory {
            device: device.to_owned(),
            size: size as u64,
        })
}

/// The process-wide name of the memory `name`: the same in every copy of the
/// library in this process, different in every other process.
#[cfg(all(any(target_os = "linux", windows), not(miri)))]
fn process_label(name: &str) -> String {
    // FNV-1a, 64 bits: NAME may hold any character and 255 bytes, the OS names
    // fewer; two names of one process collide with odds of 2^-64.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("rfm-loopback.{}.{hash:016x}", std::process::id())
}

#[cfg(any(miri, not(any(target_os = "linux", windows))))]
/// `n` zeroed words, or `None` when the allocator has not got them: the
/// infallible `Box::new_zeroed_slice` aborts the process, and the process is a
/// master's. One zeroed allocation rather than a loop of constructors: a
/// megabyte is then cheap, even under Miri.
fn zeroed_words(n: usize) -> Option<Box<[std::sync::atomic::AtomicU32]>> {
    use std::sync::atomic::AtomicU32;
    let layout = std::alloc::Layout::array::<AtomicU32>(n).ok()?;
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
        match &self.storage {
            #[cfg(any(miri, not(any(target_os = "linux", windows))))]
            Storage::Heap(words) => words.len() * WORD,
            #[cfg(all(target_os = "linux", not(miri)))]
            Storage::Shared(shared) => shared.mapping.len(),
            #[cfg(all(windows, not(miri)))]
            Storage::Shared(mapping) => mapping.len(),
        }
    }

    /// The whole memory as a region that keeps it alive.
    pub(crate) fn region(self: &Arc<Self>) -> Region {
        let base = match &self.storage {
            #[cfg(any(miri, not(any(target_os = "linux", windows))))]
            Storage::Heap(words) => words.as_ptr().cast_mut().cast::<u8>(),
            #[cfg(all(target_os = "linux", not(miri)))]
            Storage::Shared(shared) => shared.mapping.as_ptr(),
            #[cfg(all(windows, not(miri)))]
            Storage::Shared(mapping) => mapping.as_ptr(),
        };
        let base = NonNull::new(base).expect("memory is non-null");
        // SAFETY: the boxed slice or the page-aligned mapping is aligned for
        // AtomicU32 (≥ WORD), `size()` bytes long, never moved, and kept alive by
        // the Arc passed as owner; it is only accessed through atomics (interior
        // mutability, so writing through a pointer derived from a shared
        // reference is allowed; other copies of the library map the same pages
        // and access them as aligned words too).
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

    /// Each copy of the library has its own registry; two copies meet in the
    /// process-wide object, as two calls of `storage` past this copy's
    /// registry do. It goes with its last user.
    #[test]
    #[cfg(all(any(target_os = "linux", windows), not(miri)))]
    fn two_copies_of_the_library_share_one_memory_that_goes_with_its_last_user() {
        use std::sync::atomic::Ordering;
        let name = format!("copies {} ∑/\\:*", std::process::id());
        let copy = || {
            storage("loopback:copies", &name, 4096)
                .map(|storage| Arc::new(LoopbackMemory { storage }))
        };
        let (a, b) = (copy().unwrap(), copy().unwrap());
        a.region()
            .store_u32(8, 0xdead_beef, Ordering::Release)
            .unwrap();
        assert_eq!(
            b.region().load_u32(8, Ordering::Acquire).unwrap(),
            0xdead_beef
        );
        let other_size = storage("loopback:copies", &name, 8192).unwrap_err();
        assert!(other_size.to_string().contains("4096"), "{other_size}");
        drop((a, b));
        #[cfg(target_os = "linux")]
        {
            let label = process_label(&name);
            let left = std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| std::fs::read_link(e.unwrap().path()).ok())
                .filter(|target| target.to_string_lossy().contains(&label))
                .count();
            assert_eq!(left, 0, "a descriptor of the memory outlived its users");
        }
        let fresh = storage("loopback:copies", &name, 8192).unwrap();
        let fresh = Arc::new(LoopbackMemory { storage: fresh });
        assert_eq!(fresh.size(), 8192);
        assert_eq!(fresh.region().load_u32(8, Ordering::Acquire).unwrap(), 0);
    }
}
