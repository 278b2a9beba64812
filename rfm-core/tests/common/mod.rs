//! Helpers shared by rfm-core's integration tests.
#![allow(dead_code)]

// The memory floor's helpers (unique names, the emulator, ShmGuard), shared
// with its own tests rather than written twice.
#[path = "../../../rfm-memory/tests/common/mod.rs"]
mod memory;
#[allow(unused_imports)]
pub use memory::*;

use rfm_core::link::Sample;
use rfm_frames::frame::framed::{FrameBuf, Header, SyncMode};
use rfm_frames::slot::Ring;
use rfm_interface as interface;
use rfm_memory::Region;

/// The area of attitude preset `slot` within a coupling region mapped at 0.
pub fn attitude_area(region: &Region, slot: u8) -> Region {
    rfm_frames::area::window(region, &interface::attitude_area(slot)).unwrap()
}

/// The ring of every attitude preset area.
pub fn attitude_ring() -> Ring {
    Ring::of(&interface::attitude_area(0))
}

/// A lockstep frame of the attitude preset between slots `writer` and `peer`,
/// holding `sample` as step `step` of session `epoch`.
pub fn attitude_frame(
    writer: u8,
    peer: u8,
    step: u64,
    epoch: u64,
    sample: &Sample,
) -> (FrameBuf, Header) {
    let mut frame = FrameBuf::new(attitude_ring().payload_len);
    sample.write(frame.payload_mut());
    let header = Header {
        writer_slot: writer,
        mode: SyncMode::Lockstep,
        epoch,
        fingerprint: interface::attitude(writer, peer).fingerprint(),
        step,
        sim_time: sample.sim_time,
        ..Header::default()
    };
    (frame, header)
}

/// What node `node` feeds in at step `k` (k = u64::MAX: its initial values):
/// the attitude links' tests' inputs.
pub fn input(node: u8, k: u64) -> rfm_core::link::Sample {
    let x = if k == u64::MAX { -1.0 } else { k as f64 };
    rfm_core::link::Sample {
        sim_time: x * 1e-3,
        attitude: [x + f64::from(node) / 8.0, -x, x * 1e-9 + f64::from(node)],
        status: (k % 256) as u8,
        message: rfm_frames::frame::Message::new(&format!("n{node} k{k}")).unwrap(),
    }
}
