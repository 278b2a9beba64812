//! Any text as an interface file: no panic; an accepted interface keeps every rule
//! the parser promises, and an error always names a line and column inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rfm_core::interface::{is_identifier, Interface, SignalType, MAX_STRING_SIZE, RESERVED_NAMES};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Interface::parse("fuzz.toml", text) {
        Ok(i) => {
            assert!(is_identifier(&i.name));
            assert!(!i.nodes.is_empty());
            let mut slots = std::collections::HashSet::new();
            for n in &i.nodes {
                assert!(is_identifier(&n.name) && slots.insert(n.slot));
                assert!(!n.signals.is_empty());
                for s in &n.signals {
                    assert!(is_identifier(&s.name) && !RESERVED_NAMES.contains(&s.name.as_str()));
                    if let SignalType::String { size } = s.kind {
                        assert!((1..=MAX_STRING_SIZE).contains(&size));
                    }
                }
            }
            assert_eq!(i.first_difference(&i), None);
        }
        Err(e) => {
            assert!(e.line >= 1 && e.line <= text.lines().count().max(1) + 1, "{e}");
            assert!(e.column >= 1, "{e}");
        }
    }
});
