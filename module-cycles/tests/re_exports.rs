//! The re-export check on small crates written for it: a `pub use` of another
//! workspace crate's item is found wherever it sits, a private or crate-wide
//! import of it and a re-export of the crate's own modules are not.

use module_cycles::Crate;

/// The re-exports of `others` in a crate whose root file is `lib`: (module, path).
fn re_exports(lib: &str, others: &[&str]) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), lib).unwrap();
    let krate = Crate::read(&dir.path().join("lib.rs")).unwrap();
    let others: Vec<String> = others.iter().map(|s| s.to_string()).collect();
    krate
        .re_exports_of(&others)
        .into_iter()
        .map(|(m, path, _)| (krate.name(m), path))
        .collect()
}

#[test]
fn a_lower_crates_item_made_public_is_a_re_export() {
    let found = re_exports(
        "pub use rfm_memory::{Region, backend::rfm2g::Interrupt as Irq};\n\
         pub mod link { pub use rfm_interface as interface; }\n",
        &["rfm_memory", "rfm_interface"],
    );
    assert_eq!(
        found,
        [
            ("crate".to_owned(), "rfm_memory::Region".to_owned()),
            (
                "crate".to_owned(),
                "rfm_memory::backend::rfm2g::Interrupt".to_owned()
            ),
            ("crate::link".to_owned(), "rfm_interface".to_owned()),
        ]
    );
}

#[test]
fn imports_kept_inside_the_crate_and_its_own_modules_are_not() {
    let found = re_exports(
        "use rfm_memory::Region;\npub(crate) use rfm_memory::Device;\n\
         mod inner { pub struct X; }\npub use inner::X;\npub use std::time::Duration;\n",
        &["rfm_memory"],
    );
    assert!(found.is_empty(), "{found:?}");
}
