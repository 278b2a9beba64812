//! Where a packed struct's fields lie, against the C compiler: gcc compiles the
//! same structs and prints `offsetof` and `sizeof`, which must be ours.

use std::fmt::Write as _;
use std::process::Command;

use rfm_frames::packed::{ByteOrder, CType, FieldDecl, Packing, StructLayout, C_TYPES};

/// Every C type, as scalars and arrays of odd lengths, in an order that makes
/// natural alignment pad.
fn fields() -> Vec<FieldDecl> {
    let mut out = Vec::new();
    for (round, count) in [None, Some(3), Some(1), Some(5)].into_iter().enumerate() {
        for (i, (t, _)) in C_TYPES.iter().enumerate() {
            let ctype = match t {
                CType::Char(_) => CType::Char(7),
                other => *other,
            };
            out.push(FieldDecl {
                name: format!("f{round}_{i}"),
                ctype,
                count,
                offset: None,
            });
            // A byte between fields, so that each is placed after an odd end.
            out.push(FieldDecl {
                name: format!("b{round}_{i}"),
                ctype: CType::Uint8,
                count: None,
                offset: None,
            });
        }
    }
    out
}

fn c_struct(name: &str, fields: &[FieldDecl], packing: Packing) -> String {
    let mut c = String::new();
    if packing == Packing::Packed {
        c.push_str("#pragma pack(push, 1)\n");
    }
    writeln!(c, "struct {name} {{").unwrap();
    for f in fields {
        let (ty, extra) = match f.ctype {
            CType::Char(n) => ("char".to_owned(), format!("[{n}]")),
            other => (other.row().c_name.to_owned(), String::new()),
        };
        let count = f.count.map_or(String::new(), |n| format!("[{n}]"));
        writeln!(c, "    {ty} {}{count}{extra};", f.name).unwrap();
    }
    c.push_str("};\n");
    if packing == Packing::Packed {
        c.push_str("#pragma pack(pop)\n");
    }
    c
}

#[test]
fn every_field_lies_where_gcc_puts_it_natural_and_packed() {
    let fields = fields();
    let dir = std::env::temp_dir().join(format!("rfm-packed-gcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = String::from("#include <stdint.h>\n#include <stddef.h>\n#include <stdio.h>\n");
    let cases = [("natural", Packing::Natural), ("packed", Packing::Packed)];
    for (name, packing) in cases {
        c.push_str(&c_struct(name, &fields, packing));
    }
    c.push_str("int main(void) {\n");
    for (name, _) in cases {
        writeln!(c, "    printf(\"%zu\\n\", sizeof(struct {name}));").unwrap();
        for f in &fields {
            writeln!(
                c,
                "    printf(\"%zu\\n\", offsetof(struct {name}, {}));",
                f.name
            )
            .unwrap();
        }
    }
    c.push_str("    return 0;\n}\n");
    let src = dir.join("offsets.c");
    let exe = dir.join("offsets");
    std::fs::write(&src, &c).unwrap();
    let built = Command::new("gcc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("gcc builds the offsets program (apt install gcc)");
    assert!(built.success(), "gcc failed on\n{c}");
    let out = Command::new(&exe).output().unwrap();
    let printed: Vec<usize> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let mut ours = Vec::new();
    for (_, packing) in cases {
        let l = StructLayout::new(&fields, packing, ByteOrder::Little).unwrap();
        ours.push(l.size);
        ours.extend(l.fields.iter().map(|f| f.offset));
    }
    assert_eq!(ours, printed, "ours (left) against gcc's (right)");
    std::fs::remove_dir_all(&dir).ok();
}
