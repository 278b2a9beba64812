//! Any 120 bytes, decoded as a framed-layout frame, and any slot contents read
//! through the slot reader: no panic, and nothing accepted that does not check out.
#![no_main]

#[path = "slot.rs"]
mod slot;

use libfuzzer_sys::fuzz_target;
use rfm_core::frame::framed::{self, FRAME_SIZE, RING_OFFSET};
use rfm_core::frame::SLOT_SIZE;
use rfm_core::slot::FramedReader;

fuzz_target!(|data: &[u8]| {
    let mut bytes = [0u8; FRAME_SIZE];
    let n = data.len().min(FRAME_SIZE);
    bytes[..n].copy_from_slice(&data[..n]);
    if let Ok(frame) = framed::decode(&bytes) {
        // Whatever is accepted encodes to a frame that decodes to the same bytes.
        let again = framed::encode(&frame);
        let decoded = framed::decode(&again).expect("an encoded frame decodes");
        assert_eq!(framed::encode(&decoded)[..], again[..]);
    }

    // The same bytes as slot memory: head word, closed word, then ring entries.
    let mut memory = vec![0u8; SLOT_SIZE];
    let m = data.len().min(SLOT_SIZE);
    memory[..m].copy_from_slice(&data[..m]);
    let region = slot::slot("fuzz-framed");
    region.write(0, &memory).unwrap();
    let reader = FramedReader::new(region.clone()).unwrap().with_attempts(2);
    if let Ok(frame) = reader.read_latest() {
        // Only a frame whose bytes decode by themselves is ever returned.
        let head = u32::from_ne_bytes(memory[0..4].try_into().unwrap());
        let at = framed::entry_offset(u64::from(head));
        assert!(at >= RING_OFFSET && at + FRAME_SIZE <= SLOT_SIZE);
        let entry: [u8; FRAME_SIZE] = memory[at..at + FRAME_SIZE].try_into().unwrap();
        let direct = framed::decode(&entry).expect("the reader returned a frame that does not decode");
        assert_eq!(framed::encode(&direct)[..], framed::encode(&frame)[..]);
    }
    for step in [0u64, 1, 15, 16, u64::from(u32::MAX), u64::MAX] {
        let _ = reader.poll_step(step);
    }
});
