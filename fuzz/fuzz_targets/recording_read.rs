//! Any bytes as a recording: the reader never panics or allocates beyond its
//! limits, its records and cut stay within the format's bounds, and every
//! refusal says why; a foreign struct's record is one of a struct its header
//! describes, of that struct's size, and decodes. (The seeds in
//! fuzz/corpus/recording_read are recordings of three attitude steps and of
//! two foreign structs, so mutations get past the magic and the CRCs.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use rfm_record::{Kind, Reader, MAX_STRUCTS};

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = Reader::new("fuzz.rec", data) else {
        return;
    };
    let header = reader.header().clone();
    assert!(header.descriptors.len() <= usize::from(u16::MAX));
    let _ = header.nodes();
    assert!(header.structs.len() <= MAX_STRUCTS);
    // The bound the reader holds every record to: the header's largest frame.
    let largest = header.largest_body() as u64;
    loop {
        match reader.next_record() {
            Ok(Some(record)) => {
                assert!(record.body.len() as u64 + 12 <= largest);
                if let Some(missed) = record.missed() {
                    let _ = missed;
                }
                if record.kind == Kind::Struct {
                    let s = &header.structs[usize::from(record.slot)];
                    assert_eq!(record.body.len(), s.layout.size);
                    assert!(s.values(&record.body).iter().all(Option::is_some));
                    assert_eq!(s.elements().len(), s.layout.elements());
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
