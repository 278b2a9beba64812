//! Helpers shared by rfm-frames' integration tests: the memory floor's (unique
//! names, the emulator, the backends' fixtures), and areas of this floor's own
//! making, whose payloads are words written as bytes (the link's samples and
//! the interface's presets are floors up).
#![allow(dead_code)]

#[path = "../../../rfm-memory/tests/common/mod.rs"]
#[macro_use]
mod memory;
#[allow(unused_imports)]
pub use memory::*;

use rfm_frames::area::{Area, RING_DEPTH};
use rfm_frames::frame::framed::{FrameBuf, Header, SyncMode};
use rfm_frames::payload::{Payload, SignalType};
use rfm_frames::slot::Ring;
use rfm_memory::Region;

/// Bytes from one slot's area to the next (the attitude preset's stride).
pub const STRIDE: u64 = 4096;
/// Words of every test area's payload: 64 bytes, as the attitude preset's.
pub const WORDS: usize = 8;

/// The area of `slot`: a payload of [`WORDS`] Reals, no descriptor, at
/// `slot ×` [`STRIDE`], a ring of [`RING_DEPTH`].
pub fn area(slot: u8) -> Area {
    let payload = Payload::of([SignalType::Real; WORDS]);
    Area::new(
        usize::from(slot),
        slot,
        payload,
        0,
        u64::from(slot) * STRIDE,
        RING_DEPTH,
    )
}

/// Bytes of region the areas of slots `0..=highest` need.
pub fn region_len(highest: u8) -> usize {
    area(highest).end() as usize
}

/// The area of `slot` within a region mapped at 0.
pub fn window(region: &Region, slot: u8) -> Region {
    rfm_frames::area::window(region, &area(slot)).unwrap()
}

/// The ring of every test area.
pub fn ring() -> Ring {
    Ring::of(&area(0))
}

/// A lockstep frame of `writer` holding `words` as step `step` of session
/// `epoch`, at simulated time `step` ms.
pub fn frame(writer: u8, step: u64, epoch: u64, words: [u64; WORDS]) -> (FrameBuf, Header) {
    let mut frame = FrameBuf::new(ring().payload_len);
    write_words(&mut frame, words);
    let header = Header {
        writer_slot: writer,
        mode: SyncMode::Lockstep,
        epoch,
        fingerprint: 0xf1f1,
        step,
        sim_time: step as f64 * 1e-3,
        ..Header::default()
    };
    (frame, header)
}

/// Writes `words` as the payload of `frame`, little-endian.
pub fn write_words(frame: &mut FrameBuf, words: [u64; WORDS]) {
    for (chunk, w) in frame.payload_mut().chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
}

/// The payload of `frame` as words.
pub fn words(frame: &FrameBuf) -> [u64; WORDS] {
    let mut out = [0; WORDS];
    for (w, chunk) in out.iter_mut().zip(frame.payload().chunks_exact(8)) {
        *w = u64::from_le_bytes(chunk.try_into().unwrap());
    }
    out
}
