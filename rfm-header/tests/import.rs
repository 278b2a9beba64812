//! A lab's header imported: every field's offset and every struct's size are
//! gcc's (a C program built from the same header prints `offsetof` and
//! `sizeof`), the node it gives parses as an interface file, and what
//! reflective memory cannot share (bitfields, unions, pointers) or a header
//! that does not parse is refused with its line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use rfm_header::{import, HeaderError, HeaderStruct};
use rfm_interface::{Interface, Reserved};

fn header(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/headers")
        .join(name)
}

/// gcc's sizeof and offsetof of each imported field, for `structs` of lab.h.
fn gcc_layout(structs: &[(&str, &HeaderStruct)]) -> Vec<usize> {
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"lab.h\"\nint main(void) {\n",
    );
    for (spelling, s) in structs {
        writeln!(c, "    printf(\"%zu\\n\", sizeof({spelling}));").unwrap();
        for f in &s.fields {
            writeln!(
                c,
                "    printf(\"%zu\\n\", offsetof({spelling}, {}));",
                f.name
            )
            .unwrap();
        }
    }
    c.push_str("    return 0;\n}\n");
    let dir = tempfile::tempdir().unwrap();
    let (src, exe) = (dir.path().join("layout.c"), dir.path().join("layout"));
    std::fs::write(&src, &c).unwrap();
    let built = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Werror", "-I"])
        .arg(header(""))
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("gcc builds the layout program");
    assert!(built.success(), "gcc failed on\n{c}");
    let out = Command::new(&exe).output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn every_field_of_the_labs_header_lies_where_gcc_puts_it() {
    let lab = header("lab.h");
    let flight = import(&lab, "FlightState", &[]).unwrap();
    let eye = import(&lab, "EyePoint", &[]).unwrap();
    let cue = import(&lab, "Cue", &[]).unwrap();
    let structs = [
        ("FlightState", &flight),
        ("struct EyePoint", &eye),
        ("struct Cue", &cue),
    ];
    let mut ours = Vec::new();
    for (_, s) in &structs {
        ours.push(s.size);
        ours.extend(s.fields.iter().map(|f| f.offset));
    }
    assert_eq!(
        ours,
        gcc_layout(&structs),
        "ours (left) against gcc's (right)"
    );
    // What the walk made of the nested, enum and array fields.
    let names: Vec<&str> = flight.fields.iter().map(|f| f.name.as_str()).collect();
    assert!(
        names.contains(&"position.y") && names.contains(&"wheels[2].brake"),
        "{names:?}"
    );
    let field = |n: &str| flight.fields.iter().find(|f| f.name == n).unwrap();
    assert_eq!(
        field("mode").ctype.to_string(),
        "uint32",
        "an enum of small values is unsigned"
    );
    assert_eq!(field("dcm").count, Some(9));
    assert_eq!(field("callsign").ctype.to_string(), "char[12]");
    assert_eq!(field("onGround").ctype.to_string(), "bool");
    assert_eq!(field("ticks").ctype.to_string(), "int64");
    assert_eq!(field("mode").line, 27);
}

#[test]
fn the_imported_node_is_an_interface_files_foreign_node_of_the_same_layout() {
    for name in ["FlightState", "EyePoint", "Cue"] {
        let s = import(&header("lab.h"), name, &[]).unwrap();
        let text = format!(
            "name = \"lab\"\n[[node]]\nname = \"sim\"\nslot = 0\noffset = 65536\n\
             signals = [ {{ name = \"x\", type = \"Real\" }} ]\n{}",
            s.node_toml("imported", 0x100, "lab.h")
        );
        let i = Interface::parse("lab.toml", &text, &Reserved::NONE)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let node = i.foreign_node("imported").unwrap();
        assert_eq!(node.layout.size, s.size, "{name}");
        let offsets: Vec<usize> = node.layout.fields.iter().map(|f| f.offset).collect();
        let expected: Vec<usize> = s.fields.iter().map(|f| f.offset).collect();
        assert_eq!(offsets, expected, "{name}");
    }
}

#[test]
fn what_memory_cannot_share_and_broken_headers_are_refused_with_their_line() {
    let cases = [
        ("bitfield.h", "Status", 4, "is a bitfield"),
        ("union.h", "Packet", 4, "is a union"),
        ("pointer.h", "Node", 4, "is a pointer"),
    ];
    for (file, name, line, says) in cases {
        match import(&header(file), name, &[]) {
            Err(e @ HeaderError::Refused { line: l, .. }) => {
                assert_eq!(l, line, "{e}");
                assert!(e.to_string().contains(says), "{e}");
                assert!(
                    e.to_string()
                        .starts_with(&header(file).display().to_string()),
                    "{e}"
                );
            }
            other => panic!("{file}: {other:?}"),
        }
    }
    match import(&header("broken.h"), "Broken", &[]) {
        Err(e @ HeaderError::Parse { line: 3, .. }) => {
            assert!(e.to_string().contains("does not parse"), "{e}")
        }
        other => panic!("broken.h: {other:?}"),
    }
    match import(&header("lab.h"), "Nope", &[]) {
        Err(e @ HeaderError::NoStruct { .. }) => {
            assert!(e.to_string().contains("`FlightState`"), "{e}")
        }
        other => panic!("Nope: {other:?}"),
    }
}
