//! The checker on small crates written for it: a circle between siblings is
//! found (through a re-export and through a child module too), a child naming
//! its parent is not one.

use module_cycles::{circles, Crate};

/// A crate of `files` (path, text) in a fresh folder; its circles, as module names.
fn circles_of(files: &[(&str, &str)]) -> Vec<Vec<(String, String)>> {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let krate = Crate::read(&dir.path().join("lib.rs")).unwrap();
    circles(&krate)
        .into_iter()
        .map(|c| {
            c.into_iter()
                .map(|(a, b, _)| (krate.name(a), krate.name(b)))
                .collect()
        })
        .collect()
}

fn edge(a: &str, b: &str) -> (String, String) {
    (a.to_owned(), b.to_owned())
}

#[test]
fn two_siblings_that_import_each_other_are_a_circle() {
    let found = circles_of(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        ("b.rs", "pub struct B;\npub fn f(_: &super::a::A) {}\n"),
    ]);
    assert_eq!(
        found,
        [vec![
            edge("crate::a", "crate::b"),
            edge("crate::b", "crate::a")
        ]]
    );
}

#[test]
fn a_type_reached_through_a_re_export_counts_for_the_module_that_defines_it() {
    let found = circles_of(&[
        ("lib.rs", "mod m;\n"),
        (
            "m/mod.rs",
            "mod config;\nmod node;\npub use config::Config;\n",
        ),
        (
            "m/config.rs",
            "pub struct Config;\npub fn f(_: &super::node::Node) {}\n",
        ),
        (
            "m/node.rs",
            "use super::Config;\npub struct Node(Config);\n",
        ),
    ]);
    assert_eq!(
        found,
        [vec![
            edge("crate::m::config", "crate::m::node"),
            edge("crate::m::node", "crate::m::config")
        ]]
    );
}

#[test]
fn a_child_that_names_its_parent_and_test_modules_make_no_circle() {
    let found = circles_of(&[
        ("lib.rs", "mod a;\npub struct Top;\nfn f(_: a::A) {}\n"),
        (
            "a.rs",
            "pub struct A(super::Top);\n#[cfg(test)]\nmod tests { use crate::b::B; }\n",
        ),
    ]);
    assert!(found.is_empty(), "{found:?}");
}

/// The shape of rfm-core's circle of stop 42: `region` names the error type of
/// `backend::rfm2g::error`, and `backend::rfm2g` names `region`. No two
/// modules name each other, but `backend::rfm2g` holds the child `region` names.
#[test]
fn a_circle_through_a_child_module_is_a_circle_of_the_modules_that_hold_it() {
    let found = circles_of(&[
        ("lib.rs", "mod backend;\nmod region;\n"),
        ("backend/mod.rs", "pub mod rfm2g;\n"),
        (
            "backend/rfm2g/mod.rs",
            "pub mod error;\nuse crate::region::Region;\npub fn open() -> Region { Region }\n",
        ),
        ("backend/rfm2g/error.rs", "pub struct Rfm2gError;\n"),
        (
            "region.rs",
            "use crate::backend::rfm2g::error::Rfm2gError;\npub struct Region;\npub fn fail() -> Rfm2gError { Rfm2gError }\n",
        ),
    ]);
    assert_eq!(
        found,
        [vec![
            edge("crate::backend", "crate::region"),
            edge("crate::backend::rfm2g", "crate::region"),
            edge("crate::region", "crate::backend"),
            edge("crate::region", "crate::backend::rfm2g"),
        ]]
    );
}
