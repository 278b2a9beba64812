//! Case 1, the physical limit on this machine: two processes exchanging a 64-byte
//! frame per step through a shared-memory seqlock, busy-spinning. No rfm-core code:
//! plain `shm_open` + `mmap` and atomics. Case 1b is the same with 128-byte frames,
//! the size of the attitude FMU's (a 64-byte header and a 64-byte payload): two
//! cache lines cross per frame instead of one. Case 1c carries 1,000 Reals, the
//! payload of case 7b.
//!
//! An exact exchange, as the FMU's must be: each node writes frame k into entry
//! k mod 2 of its two-entry ring and reads exactly the peer's frame k, every one.
//! (With one entry per node, a reader that found the peer already past k skipped
//! the copy: the "limit" then delivered fewer frames than the FMU must, and its
//! histogram was bimodal.) Two entries suffice in lockstep: a node writes frame
//! k + 2 only after reading the peer's k + 1, which the peer writes only after
//! reading frame k.

use std::ffi::CString;
use std::hint::spin_loop;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{bail, Result};

use crate::patience::Patience;

/// One frame of `8 * (W + 1)` bytes, starting a cache line: sequence + W payload words.
#[repr(C, align(64))]
struct Entry<const W: usize> {
    seq: AtomicU64,
    payload: [AtomicU64; W],
}

/// One node's ring of two frames (each node's on its own lines).
#[repr(C, align(128))]
struct Slot<const W: usize> {
    entries: [Entry<W>; 2],
}

fn map<const W: usize>(name: &str) -> Result<&'static [Slot<W>; 2]> {
    let size = 2 * std::mem::size_of::<Slot<W>>();
    let path = CString::new(format!("/{name}"))?;
    // SAFETY: valid C string; flags/mode are plain integers; result checked.
    let fd = unsafe { libc::shm_open(path.as_ptr(), libc::O_RDWR | libc::O_CREAT, 0o600) };
    if fd < 0 {
        bail!("shm_open {name}: {}", std::io::Error::last_os_error());
    }
    // SAFETY: fd is open; both creators size it identically (zero-filled).
    let ok = unsafe { libc::ftruncate(fd, size as libc::off_t) } == 0;
    // SAFETY: mapping `size` bytes of an object that is `size` bytes long.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
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
    // SAFETY: page-aligned, `size` bytes, zero-initialised (valid atomics), never
    // unmapped (the process exits after the run), shared only through atomics.
    Ok(unsafe { &*(ptr as *const [Slot<W>; 2]) })
}

/// One node of the exchange of `bytes`-byte frames (64, 128 or 8008: a sequence
/// word and 1,000 Reals); returns its per-step times in ns.
pub fn node(name: &str, me: usize, steps: u64, bytes: usize) -> Result<Vec<u64>> {
    match bytes {
        64 => exchange::<7>(name, me, steps),
        128 => exchange::<15>(name, me, steps),
        8008 => exchange::<1000>(name, me, steps),
        other => bail!("raw frames are 64, 128 or 8008 bytes, not {other}"),
    }
}

fn exchange<const W: usize>(name: &str, me: usize, steps: u64) -> Result<Vec<u64>> {
    let slots = map::<W>(name)?;
    let (own, peer) = (&slots[me], &slots[1 - me]);
    let mut times = Vec::with_capacity(steps as usize);
    let mut got = [0u64; W];
    for k in 0..steps {
        let start = Instant::now();
        let (mine, theirs) = (
            &own.entries[(k % 2) as usize],
            &peer.entries[(k % 2) as usize],
        );
        mine.seq.store(2 * k + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        for (i, w) in mine.payload.iter().enumerate() {
            w.store(k ^ i as u64, Ordering::Relaxed);
        }
        mine.seq.store(2 * k + 2, Ordering::Release);
        // Wait for the peer's frame k in its entry: sequence 2k+2, copied whole.
        let mut patience = Patience::default();
        loop {
            let seq = theirs.seq.load(Ordering::Acquire);
            if seq == 2 * k + 2 {
                for (g, w) in got.iter_mut().zip(&theirs.payload) {
                    *g = w.load(Ordering::Relaxed);
                }
                fence(Ordering::Acquire);
                if theirs.seq.load(Ordering::Relaxed) == seq {
                    break;
                }
            } else if seq > 2 * k + 2 {
                bail!("node {me}: the peer overwrote frame {k} before it was read");
            }
            patience.poll(|| format!("frame {k} from node {}", 1 - me))?;
            spin_loop();
        }
        if got[0] != k {
            bail!("node {me}: frame {k} carried {}", got[0]);
        }
        std::hint::black_box(&got);
        times.push(start.elapsed().as_nanos() as u64);
    }
    Ok(times)
}
