//! A foreign node's struct from any bytes: a layout of fields the input picks
//! (C types, counts, explicit offsets, natural or packed, either byte order),
//! then any memory decoded field by field: no panic, and every value decoded
//! writes back to the same bytes' value (a Real read exactly reads back the
//! same); the reader over that memory never panics and takes it (nothing
//! writes it) whatever its handshake.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rfm_frames::packed::{
    decode, encode, ByteOrder, CType, Counting, FieldDecl, Mark, Outcome, Packing, StructLayout,
    StructReader, C_TYPES,
};
use rfm_memory::{Device, OpenOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let packing = if head & 1 == 0 { Packing::Natural } else { Packing::Packed };
    let order = if head & 2 == 0 { ByteOrder::Little } else { ByteOrder::Big };
    // Four bytes a field: type, count, explicit offset (or none), char length.
    let mut fields = Vec::new();
    let mut chunks = rest.chunks_exact(4);
    for (i, c) in chunks.by_ref().take(16).enumerate() {
        let ctype = match C_TYPES[usize::from(c[0]) % C_TYPES.len()].0 {
            CType::Char(_) => CType::Char(u16::from(c[3] % 40).max(1)),
            t => t,
        };
        fields.push(FieldDecl {
            name: format!("f{i}"),
            ctype,
            count: (c[1] & 0x80 != 0).then_some(u32::from(c[1] & 0x7f)),
            offset: (c[2] & 0x80 != 0).then_some(usize::from(c[2] & 0x7f) * 3),
        });
    }
    let memory: Vec<u8> = chunks.remainder().iter().chain(data).copied().cycle().take(4096).collect();
    let Ok(layout) = StructLayout::new(&fields, packing, order) else {
        return;
    };
    if layout.size > 2048 {
        return;
    }
    for f in &layout.fields {
        assert!(f.bytes().end <= layout.size);
        for i in 0..f.elements() {
            let d = decode(f, i, &memory, order).expect("inside the struct");
            let mut back = memory.clone();
            if encode(f, i, &d.value, &mut back, order).is_ok() && d.exact {
                let again = decode(f, i, &back, order).unwrap().value;
                let same = match (&again, &d.value) {
                    (rfm_frames::fmi::Value::Real(a), rfm_frames::fmi::Value::Real(b)) => {
                        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
                    }
                    (a, b) => a == b,
                };
                assert!(same, "{} {i}: {:?} then {:?}", f.name, d.value, again);
            }
        }
    }
    // The reader over the same memory, at an odd offset, for each handshake.
    let device = Device::open("loopback:fuzz-packed", &OpenOptions::default()).unwrap();
    let region = device.map(0, 8192).unwrap();
    region.write(0, &memory).unwrap();
    let marker = layout.fields.iter().find(|f| {
        f.count.is_none() && matches!(f.ctype.size(), 1 | 2 | 4 | 8) && !matches!(f.ctype, CType::Char(_))
    });
    let base = 4 + usize::from(head >> 4);
    let mut marks = vec![Mark::None];
    if let Some(m) = marker {
        let (at, width) = (m.offset, m.ctype.size());
        marks.push(Mark::Counter { at, width, counting: Counting::AfterData });
        marks.push(Mark::Flag { at, width, value: 1 });
    }
    let mut out = vec![0u8; layout.size];
    for mark in marks {
        if let Ok(mut reader) = StructReader::new(&region, base, layout.size, mark, order) {
            let read = reader.read(&mut out).unwrap();
            if mark == Mark::None {
                assert_eq!(read.outcome, Outcome::Taken);
                assert_eq!(out, memory[base..base + layout.size]);
            }
        }
    }
});
