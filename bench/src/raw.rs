//! Case 1, the physical limit on this machine: two processes exchanging a 64-byte
//! frame per step through a shared-memory seqlock, busy-spinning. No rfm-core code:
//! plain `shm_open` + `mmap` and atomics.

use std::ffi::CString;
use std::hint::spin_loop;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{bail, Result};

/// One node's 64-byte frame, on its own cache lines: sequence + 7 payload words.
#[repr(C, align(128))]
struct Slot {
    seq: AtomicU64,
    payload: [AtomicU64; 7],
}

const SIZE: usize = 2 * std::mem::size_of::<Slot>();

fn map(name: &str) -> Result<&'static [Slot; 2]> {
    let path = CString::new(format!("/{name}"))?;
    // SAFETY: valid C string; flags/mode are plain integers; result checked.
    let fd = unsafe { libc::shm_open(path.as_ptr(), libc::O_RDWR | libc::O_CREAT, 0o600) };
    if fd < 0 {
        bail!("shm_open {name}: {}", std::io::Error::last_os_error());
    }
    // SAFETY: fd is open; both creators size it identically (zero-filled).
    let ok = unsafe { libc::ftruncate(fd, SIZE as libc::off_t) } == 0;
    // SAFETY: mapping SIZE bytes of an object that is SIZE bytes long.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    // SAFETY: closing our descriptor; the mapping stays.
    unsafe { libc::close(fd) };
    if !ok || ptr == libc::MAP_FAILED {
        bail!(
            "sizing or mapping {name}: {}",
            std::io::Error::last_os_error()
        );
    }
    // SAFETY: page-aligned, SIZE bytes, zero-initialised (valid atomics), never
    // unmapped (the process exits after the run), shared only through atomics.
    Ok(unsafe { &*(ptr as *const [Slot; 2]) })
}

/// One node of the exchange; returns its per-step times in ns.
pub fn node(name: &str, me: usize, steps: u64) -> Result<Vec<u64>> {
    let slots = map(name)?;
    let (own, peer) = (&slots[me], &slots[1 - me]);
    let mut times = Vec::with_capacity(steps as usize);
    let mut got = [0u64; 7];
    for k in 0..steps {
        let start = Instant::now();
        own.seq.store(2 * k + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        for (i, w) in own.payload.iter().enumerate() {
            w.store(k ^ i as u64, Ordering::Relaxed);
        }
        own.seq.store(2 * k + 2, Ordering::Release);
        // Wait for the peer's frame k: sequence 2k+2, copied whole. A sequence past
        // it means the peer already finished k and moved on (one slot, no ring).
        loop {
            let seq = peer.seq.load(Ordering::Acquire);
            if seq > 2 * k + 2 {
                break;
            }
            if seq == 2 * k + 2 {
                for (g, w) in got.iter_mut().zip(&peer.payload) {
                    *g = w.load(Ordering::Relaxed);
                }
                fence(Ordering::Acquire);
                if peer.seq.load(Ordering::Relaxed) == seq {
                    break;
                }
            }
            spin_loop();
        }
        std::hint::black_box(&got);
        times.push(start.elapsed().as_nanos() as u64);
    }
    Ok(times)
}
