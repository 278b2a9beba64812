//! Any bytes as a recording: the reader never panics or allocates beyond its
//! limits, its records and cut stay within the format's bounds, and every
//! refusal says why. (The seed in fuzz/corpus/recording_read is a recording of
//! three attitude steps, so mutations get past the magic and the CRCs.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use rfm_core::record::Reader;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = Reader::new("fuzz.rec", data) else {
        return;
    };
    let header = reader.header().clone();
    assert!(header.descriptors.len() <= usize::from(u16::MAX));
    let _ = header.nodes();
    // The bound the reader holds every record to: the header's largest frame.
    let largest = header.largest_body() as u64;
    loop {
        match reader.next_record() {
            Ok(Some(record)) => {
                assert!(record.body.len() as u64 + 12 <= largest);
                if let Some(missed) = record.missed() {
                    let _ = missed;
                }
            }
            Ok(None) => {
                assert!(reader.cut() < largest + 8);
                break;
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                break;
            }
        }
    }
});
