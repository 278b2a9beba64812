//! Any text as an interface file: no panic; an accepted interface keeps every rule
//! the parser promises (foreign nodes' structs too), and an error always names a
//! line and column inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use fmu_model::RESERVED;
use rfm_interface::{descriptor, is_identifier, Interface, MAX_STRING_SIZE};
use rfm_frames::payload::SignalType;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Interface::parse("fuzz.toml", text, &RESERVED) {
        Ok(i) => {
            assert!(is_identifier(&i.name));
            assert!(!i.nodes.is_empty());
            let mut slots = std::collections::HashSet::new();
            for n in &i.nodes {
                assert!(is_identifier(&n.name) && slots.insert(n.slot));
                assert!(!n.signals.is_empty());
                for s in &n.signals {
                    assert!(is_identifier(&s.name) && !RESERVED.outputs.contains(&s.name.as_str()));
                    assert!(!RESERVED.parameters.contains(&s.name.as_str()));
                    if let SignalType::String { size } = s.kind {
                        assert!((1..=MAX_STRING_SIZE).contains(&size));
                    }
                }
            }
            assert_eq!(i.first_difference(&i), None);
            // An accepted interface is laid out, inside its memory, without
            // overlaps, and every node's descriptor decodes to what it describes.
            let map = i.map().expect("parse checked the map");
            assert!(map.len() <= i.memory_size);
            for (n, node) in i.nodes.iter().enumerate() {
                let area = map.area(n);
                for other in map.areas.iter().filter(|a| a.node != n) {
                    assert!(area.end() <= other.offset || other.end() <= area.offset);
                }
                let bytes = descriptor::encode(&i.name, i.fingerprint(), (node, &i.declared()), &area.payload, Some(rfm_frames::session::Token::of(1)));
                assert!(bytes.len() <= area.descriptor_len);
                let d = descriptor::decode(&bytes).expect("own descriptor decodes");
                assert_eq!(d.first_difference(node, &area.payload), None);
            }
            // Foreign structs: inside the memory, off every area and each
            // other, their fields inside them, their marker a field.
            for (f, r) in &map.foreign {
                let node = &i.foreign[*f];
                assert!(r.end <= i.memory_size && r.end - r.start == node.layout.size as u64);
                for a in &map.areas {
                    assert!(a.end() <= r.start || r.end <= a.offset);
                }
                for (g, o) in map.foreign.iter().filter(|(g, _)| g != f) {
                    assert!(o.end <= r.start || r.end <= o.start, "{f} {g}");
                }
                for field in &node.layout.fields {
                    assert!(field.bytes().end <= node.layout.size);
                }
                if let Some(m) = node.marker() {
                    assert!(m < node.layout.fields.len());
                }
            }
        }
        Err(e) => {
            assert!(e.line >= 1 && e.line <= text.lines().count().max(1) + 1, "{e}");
            assert!(e.column >= 1, "{e}");
        }
    }
});
