//! Any bytes as the article's FlightData, decoded directly and through the seed
//! reader: no panic, and only packets with the magic are accepted.
#![no_main]

#[path = "slot.rs"]
mod slot;

use libfuzzer_sys::fuzz_target;
use rfm_frames::frame::seed::{self, MAGIC, PACKET_WORDS_SIZE};
use rfm_frames::slot::SeedReader;

fuzz_target!(|data: &[u8]| {
    let mut bytes = [0u8; PACKET_WORDS_SIZE];
    let n = data.len().min(PACKET_WORDS_SIZE);
    bytes[..n].copy_from_slice(&data[..n]);
    let magic = u32::from_le_bytes(bytes[0..4].try_into().unwrap());
    match seed::decode(&bytes) {
        Ok(packet) => {
            assert_eq!(magic, MAGIC, "accepted without the magic");
            let again = seed::encode(&packet);
            let decoded = seed::decode(&again).expect("an encoded packet decodes");
            assert_eq!(seed::encode(&decoded), again);
        }
        Err(_) => assert_ne!(magic, MAGIC, "refused although the magic is right"),
    }

    let region = slot::slot("fuzz-seed");
    region.write(0, &bytes).unwrap();
    let reader = SeedReader::new(region.clone()).unwrap().with_attempts(2);
    if let Ok(packet) = reader.read() {
        assert_eq!(magic, MAGIC);
        assert_eq!(seed::encode(&packet), seed::encode(&seed::decode(&bytes).unwrap()));
    }
});
