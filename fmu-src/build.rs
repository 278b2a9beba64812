//! Generates the FMU's variable table from `modelDescription.xml` (the repository
//! root), the one source of truth: the Rust code names variables only through the
//! generated `vr::*` constants, so renaming or retyping a variable in the XML
//! breaks the build instead of drifting silently.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let xml_path = manifest.join("../modelDescription.xml");
    println!("cargo:rerun-if-changed={}", xml_path.display());
    let text = std::fs::read_to_string(&xml_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", xml_path.display()));
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{} is not XML: {e}", xml_path.display()));
    let root = doc.root_element();
    let guid = root.attribute("guid").expect("fmiModelDescription@guid");
    let cs = root
        .children()
        .find(|n| n.has_tag_name("CoSimulation"))
        .expect("CoSimulation element");
    let model_identifier = cs
        .attribute("modelIdentifier")
        .expect("CoSimulation@modelIdentifier");

    let mut out = String::new();
    writeln!(
        out,
        "/// `guid` of modelDescription.xml: `fmi2Instantiate` accepts only this."
    )
    .unwrap();
    writeln!(out, "pub const GUID: &str = {guid:?};").unwrap();
    writeln!(
        out,
        "pub const MODEL_IDENTIFIER: &str = {model_identifier:?};"
    )
    .unwrap();

    let categories: Vec<&str> = root
        .descendants()
        .filter(|n| n.has_tag_name("Category"))
        .map(|n| n.attribute("name").expect("Category@name"))
        .collect();
    writeln!(out, "pub const LOG_CATEGORIES: &[&str] = &{categories:?};").unwrap();

    let mut consts = String::new();
    let mut table = String::new();
    let vars = root
        .descendants()
        .filter(|n| n.has_tag_name("ScalarVariable"));
    for (index, var) in vars.enumerate() {
        let name = var.attribute("name").expect("ScalarVariable@name");
        let vr: u32 = var
            .attribute("valueReference")
            .expect("valueReference")
            .parse()
            .expect("numeric valueReference");
        assert_eq!(
            vr as usize, index,
            "{name}: value references must be 0, 1, 2, … in document order"
        );
        let causality = var.attribute("causality").unwrap_or("local");
        let ty = var
            .children()
            .find(|n| n.is_element())
            .expect("a type element");
        let kind = match ty.tag_name().name() {
            k @ ("Real" | "Integer" | "Boolean" | "String") => k,
            other => panic!("{name}: type {other} is not supported"),
        };
        let start = ty.attribute("start").unwrap_or("");
        let ident: String = name
            .chars()
            .flat_map(|c| {
                if c == '.' {
                    vec!['_']
                } else if c.is_ascii_uppercase() {
                    vec!['_', c]
                } else {
                    vec![c.to_ascii_uppercase()]
                }
            })
            .collect();
        writeln!(consts, "    /// `{name}` ({kind}, {causality})").unwrap();
        writeln!(consts, "    pub const {ident}: u32 = {vr};").unwrap();
        let causality = match causality {
            "parameter" => "Parameter",
            "input" => "Input",
            "output" => "Output",
            other => panic!("{name}: causality {other} is not supported"),
        };
        writeln!(
            table,
            "    Var {{ name: {name:?}, vr: {vr}, kind: Kind::{kind}, causality: Causality::{causality}, start: {start:?} }},"
        )
        .unwrap();
    }
    writeln!(
        out,
        "/// Value references, by variable name.\npub mod vr {{\n{consts}}}"
    )
    .unwrap();
    writeln!(out, "/// Every variable, indexed by value reference.\npub const VARIABLES: &[Var] = &[\n{table}];").unwrap();

    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("model.rs");
    std::fs::write(dest, out).unwrap();
}
