//! Helpers shared by rfm-memory's integration tests.
#![allow(dead_code)]

// Where the emulator is not built (Miri), names come alone.
#[cfg(miri)]
#[path = "../../../rfm2g-sim/tests/support/names.rs"]
mod names;
#[cfg(miri)]
pub use names::unique;

#[cfg(not(miri))]
#[path = "../../../rfm2g-sim/tests/support/library.rs"]
mod sim;

/// The RFM2g emulator (`rfm2g-sim`): the vendor's ABI over shared memory.
#[cfg(not(miri))]
#[allow(unused_imports)]
pub use sim::{sim_library, unique, RingGuard};

/// Unlinks a `shm:` object when the test ends, pass or fail.
#[cfg(not(miri))]
pub struct ShmGuard(pub String);

#[cfg(not(miri))]
impl Drop for ShmGuard {
    fn drop(&mut self) {
        let _ = rfm_memory::backend::shm::unlink(&self.0);
    }
}

/// Two emulated boards (nodes 1 and 2) on a fresh ring, and the emulator
/// library: the network interrupts' tests, of the memory and of the link.
#[cfg(not(miri))]
pub fn two_boards() -> (RingGuard, [String; 2], Option<std::path::PathBuf>) {
    let ring = unique("evt");
    let dev = |node| format!("/dev/rfm2g-sim/{ring}/{node}/1M");
    (
        RingGuard(ring.clone()),
        [dev(1), dev(2)],
        Some(sim_library()),
    )
}

// The run in a private mount namespace, also fmu-src's (which has the
// emulator's helpers of its own, so it takes this file alone).
#[cfg(all(not(miri), target_os = "linux"))]
mod namespace;
#[cfg(all(not(miri), target_os = "linux"))]
#[allow(unused_imports)]
pub use namespace::in_private_mount;

/// Bytes of every conformance fixture's memory.
pub const FIXTURE_SIZE: usize = 1 << 20;

/// A device string and options naming one memory no other test uses: the
/// backends' conformance suites (this crate's, and rfm-frames' of frames
/// over each backend) run against each.
pub struct Fixture {
    pub device: String,
    pub options: rfm_memory::OpenOptions,
    #[cfg(not(miri))]
    _guard: Option<Box<dyn std::any::Any>>,
}

impl Fixture {
    pub fn open(&self) -> rfm_memory::Device {
        rfm_memory::Device::open(&self.device, &self.options)
            .unwrap_or_else(|e| panic!("open {}: {e}", self.device))
    }
}

fn sized() -> rfm_memory::OpenOptions {
    rfm_memory::OpenOptions {
        memory_size: FIXTURE_SIZE,
        ..rfm_memory::OpenOptions::default()
    }
}

pub fn loopback() -> Fixture {
    Fixture {
        device: format!("loopback:{}", unique("conf")),
        options: sized(),
        #[cfg(not(miri))]
        _guard: None,
    }
}

#[cfg(not(miri))]
pub fn shm() -> Fixture {
    let name = unique("rfm-conf");
    Fixture {
        device: format!("shm:{name}"),
        options: sized(),
        _guard: Some(Box::new(ShmGuard(name))),
    }
}

/// Node 0 of a ring of its own; every open is the same board, as when two
/// programs on one PC open `/dev/rfm2g0`.
#[cfg(all(not(miri), target_os = "linux"))]
pub fn rfm2g_sim() -> Fixture {
    let ring = unique("conf");
    Fixture {
        device: format!("/dev/rfm2g-sim/{ring}/0/1M"),
        options: rfm_memory::OpenOptions {
            // Ignored for RFM2g: the board has its own size (1M in the path).
            rfm2g_library: Some(sim_library()),
            ..sized()
        },
        _guard: Some(Box::new(RingGuard(ring))),
    }
}

/// As [`rfm2g_sim`], with the driver's DMA threshold set and every block of
/// 4 bytes or more read with one `RFM2gRead`: the card's read path.
#[cfg(all(not(miri), target_os = "linux"))]
pub fn rfm2g_sim_dma() -> Fixture {
    let mut fixture = rfm2g_sim();
    fixture.options.dma_reads_from = Some(4);
    fixture.open().set_dma_threshold(0).unwrap();
    fixture
}

/// A module per backend (under Miri, loopback alone; the emulator on Linux
/// alone), holding a test per function named, each given that backend's
/// fixture: the conformance suites' one list of backends.
#[allow(unused_macros)]
macro_rules! on_every_backend {
    ($($test:ident),* $(,)?) => {
        on_every_backend!(@one loopback, [], $($test),*);
        on_every_backend!(@one shm, [#[cfg(not(miri))]], $($test),*);
        on_every_backend!(@one rfm2g_sim, [#[cfg(all(not(miri), target_os = "linux"))]], $($test),*);
        on_every_backend!(@one rfm2g_sim_dma, [#[cfg(all(not(miri), target_os = "linux"))]], $($test),*);
    };
    (@one $backend:ident, [$(#[$attr:meta])*], $($test:ident),*) => {
        $(#[$attr])*
        mod $backend {
            $(
                #[test]
                fn $test() {
                    super::$test(super::common::$backend())
                }
            )*
        }
    };
}
