//! Any bytes checked as a framed-layout frame, and any area contents read through
//! the framed reader: no panic, and nothing accepted that does not check out.
#![no_main]

#[path = "slot.rs"]
mod slot;

use libfuzzer_sys::fuzz_target;
use rfm_frames::frame::framed::{self, FrameBuf, HEADER_SIZE};
use rfm_frames::slot::{FramedReader, Ring};

fuzz_target!(|data: &[u8]| {
    // The bytes as a frame of their own length (whole words, at least a header).
    let n = data.len() / 8 * 8;
    if n >= HEADER_SIZE {
        let bytes = &data[..n];
        if let Ok(header) = framed::check(bytes, n - HEADER_SIZE) {
            // Whatever is accepted reseals to the same bytes past the sequence word.
            let mut again = FrameBuf::new(n - HEADER_SIZE);
            again.payload_mut().copy_from_slice(&bytes[HEADER_SIZE..]);
            again.seal(&header);
            assert_eq!(again.bytes()[4..], bytes[4..]);
        }
    }

    // The same bytes as an area: head word, liveness, descriptor, then ring entries.
    let area = slot::area();
    let mut memory = vec![0u8; area.len];
    let m = data.len().min(area.len);
    memory[..m].copy_from_slice(&data[..m]);
    let region = slot::slot("fuzz-framed");
    region.write(0, &memory).unwrap();
    let ring = Ring::of(&area);
    let reader = FramedReader::new(region.clone(), ring).unwrap().with_attempts(2);
    let mut buf = reader.buffer();
    if reader.read_latest(&mut buf).is_ok() {
        // Only a frame whose bytes check by themselves is ever returned.
        let head = u32::from_le_bytes(memory[0..4].try_into().unwrap());
        let at = ring.entry_offset(u64::from(head));
        assert!(at >= ring.offset && at + area.frame_len() <= area.len);
        let entry = &memory[at..at + area.frame_len()];
        framed::check(entry, ring.payload_len)
            .expect("the reader returned a frame that does not check");
        // Compared as bytes: a NaN simulation time is a value like any other.
        assert_eq!(buf.bytes()[4..], entry[4..]);
    }
    for step in [0u64, 1, 15, 16, u64::from(u32::MAX), u64::MAX] {
        let _ = reader.poll_step(step, &mut buf);
    }
});
