//! A full /dev/shm. Any local user can fill it; `ftruncate` alone makes sparse
//! objects, and the first store into a page with no memory behind it killed the
//! master with SIGBUS. Opening a `shm:` device or an emulated ring must instead
//! fail with an error that says what to do, and a page first touched later must
//! already have its memory.
//!
//! The test runs itself again in a private mount namespace (`unshare -m`) with a
//! 256 KiB tmpfs on /dev/shm, so that filling it harms nobody. Where unshare is
//! refused (no CAP_SYS_ADMIN), it fails; a plain run leaves it ignored
//! (scripts/test.sh runs it, as root).
#![cfg(all(target_os = "linux", not(miri)))]

mod common;

use std::sync::atomic::Ordering;

use rfm_memory::backend::shm;
use rfm_memory::backend::shm::ShmError;
use rfm_memory::{Device, DeviceError, OpenOptions};

const CHILD: &str = "RFM_MEMORY_FULL_SHM_CHILD";
const TEST: &str = "a_full_dev_shm_is_an_error_at_open_never_a_sigbus";

// Needs a private mount namespace (root, as CI runs it; scripts/test.sh runs
// it with --run-ignored): a plain run reports it as skipped, never as passed.
#[test]
#[ignore = "needs a private mount namespace (unshare -m): run as root, as scripts/test.sh does"]
fn a_full_dev_shm_is_an_error_at_open_never_a_sigbus() {
    if std::env::var_os(CHILD).is_some() {
        return inside_a_small_dev_shm();
    }
    // Built outside the namespace: the nested cargo build needs the real /dev/shm.
    let library = common::sim_library();
    let stdout = common::in_private_mount(
        TEST,
        "mount -t tmpfs -o size=256k tmpfs /dev/shm",
        (CHILD, library.as_os_str()),
        &[],
    );
    for line in stdout.lines().filter(|l| l.contains("256 KiB /dev/shm")) {
        println!("{line}");
    }
}

fn inside_a_small_dev_shm() {
    let library = std::env::var_os(CHILD).unwrap();
    // 1. A shm: device of 1 MiB on a 256 KiB /dev/shm: an error naming the cause.
    let err = Device::open("shm:too-big", &OpenOptions::default()).unwrap_err();
    assert!(
        matches!(err, DeviceError::Shm(ShmError::NoSpace { .. })),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("device `shm:too-big`: the shared-memory file system (/dev/shm) has no room for its 1048576 bytes")
            && text.contains("df -h /dev/shm"),
        "{text}"
    );
    assert!(
        shm::stat("too-big").is_err(),
        "no sparse object left behind"
    );
    // A link opens its memory with this open (its error is this one,
    // `LinkError::Device`): the FMU's initialization says the same.

    // 2. An emulated ring of 1 MiB: RFM2gOpen fails, the process lives.
    let err = Device::open(
        "/dev/rfm2g-sim/full/1/1M",
        &OpenOptions {
            rfm2g_library: Some(library.into()),
            ..OpenOptions::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("RFM2gOpen"), "{err}");

    // 3. What fits is backed in full: fill the rest of /dev/shm, then touch every
    // page of the object opened before. Sparse, this store was a SIGBUS.
    let small = Device::open(
        "shm:fits",
        &OpenOptions {
            memory_size: 128 << 10,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let filler = std::fs::write("/dev/shm/filler", vec![1u8; 256 << 10]);
    assert!(filler.is_err(), "the small /dev/shm must fill up");
    let region = small.map(0, 128 << 10).unwrap();
    for page in 0..(128 << 10) / 4096 {
        region
            .store_u32(page * 4096, page as u32, Ordering::Relaxed)
            .unwrap();
    }
    println!("1 MiB refused with a message, 128 KiB backed in full on a 256 KiB /dev/shm");
}
