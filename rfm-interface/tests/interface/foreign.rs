//! Foreign nodes: the article's FlightData declared as a lab's own struct, the
//! map that keeps FMU areas off it, and every bad declaration named where it is.

use rfm_frames::packed::Counting;
use rfm_frames::packed::{ByteOrder, CType};
use rfm_interface::foreign::Handshake;
use rfm_interface::layout::MapTable;
use rfm_interface::{Interface, Reserved};

use super::error;

/// The article's packet, packed, at the start of the memory, and an FMU node
/// placed by the map.
pub const FLIGHT_DATA: &str = r#"name = "lab"
[[node]]
name = "sim"
slot = 0
signals = [ { name = "roll", type = "Real" } ]
[[node]]
name = "flight"
offset = 0
align = "packed"
handshake = { kind = "flag", field = "header", value = 0x55AA55AA }
description = "the article's sender"
fields = [
  { name = "header", type = "uint32" },
  { name = "packetId", type = "uint64" },
  { name = "timestamp", type = "double", unit = "s" },
  { name = "attitude", type = "float", count = 3, unit = "rad" },
  { name = "status", type = "uint8" },
  { name = "msg", type = "char[32]" },
]
"#;

#[test]
fn the_articles_flight_data_declared_as_a_foreign_node_lies_where_its_header_says() {
    let i = Interface::parse("lab.toml", FLIGHT_DATA, &Reserved::NONE).unwrap();
    assert_eq!(i.nodes.len(), 1);
    let f = i.foreign_node("flight").unwrap();
    let offsets: Vec<usize> = f.layout.fields.iter().map(|f| f.offset).collect();
    assert_eq!(offsets, [0, 4, 12, 20, 32, 33]);
    assert_eq!(f.layout.size, 65);
    assert_eq!(f.layout.order, ByteOrder::Little);
    assert_eq!(f.layout.fields[5].ctype, CType::Char(32));
    assert_eq!(
        f.handshake,
        Handshake::Flag {
            field: 0,
            value: 0x55AA_55AA
        }
    );
    assert_eq!(f.info[3].unit.as_deref(), Some("rad"));
    // The FMU node is placed past the struct, on the next aligned byte.
    let map = i.map().unwrap();
    assert_eq!(map.foreign, vec![(0, 0..65)]);
    assert!(map.areas[0].offset >= 65, "{:?}", map.areas[0]);
    let table = MapTable {
        interface: &i,
        map: &map,
    }
    .to_string();
    assert!(
        table.contains("flight") && table.contains("foreign: 6 fields, little-endian, flag header"),
        "{table}"
    );
}

#[test]
fn counters_none_and_big_endian_natural_structs_parse() {
    let text = format!(
        "{}{}",
        FLIGHT_DATA,
        r#"[[node]]
name = "motion"
offset = 4096
byte_order = "big"
handshake = { kind = "counter", field = "seq", counts = "after-data", period = "1/500" }
fields = [ { name = "seq", type = "uint32" }, { name = "cue", type = "double", count = 6 } ]
[[node]]
name = "ios"
offset = 8192
handshake = "none"
fields = [ { name = "freeze", type = "bool" }, { name = "wind", type = "double" } ]
"#
    );
    // A counter's period is waited for by the rule on time: the FMU nodes'
    // periods are needed.
    let err = Interface::parse("lab.toml", &text, &Reserved::NONE).unwrap_err();
    assert!(
        err.to_string().contains("needs the FMU nodes' periods"),
        "{err}"
    );
    let text = text.replacen("name = \"lab\"\n", "name = \"lab\"\nperiod = 0.001\n", 1);
    let i = Interface::parse("lab.toml", &text, &Reserved::NONE).unwrap();
    let m = i.foreign_node("motion").unwrap();
    assert_eq!(m.layout.order, ByteOrder::Big);
    assert_eq!(m.layout.fields[1].offset, 8, "natural alignment by default");
    assert!(matches!(
        m.handshake,
        Handshake::Counter {
            field: 0,
            counts: Counting::AfterData,
            period: Some(_)
        }
    ));
    let ios = i.foreign_node("ios").unwrap();
    assert_eq!(ios.handshake, Handshake::None);
    assert_eq!(ios.layout.padding, vec![1..8]);
}

/// Where `marker` starts in `text`: (line, column), 1-based.
fn at(text: &str, marker: &str) -> (usize, usize) {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("`{marker}` in\n{text}"));
    let before = &text[..start];
    (
        before.matches('\n').count() + 1,
        before.rsplit('\n').next().unwrap().chars().count() + 1,
    )
}

/// `FLIGHT_DATA` with `from` replaced by `to`: parsing fails at `marker` (the
/// first place it occurs after the change), saying `part`.
#[test]
fn every_bad_foreign_node_names_where_and_what_is_allowed() {
    let cases: [(&str, &str, &str, &str); 19] = [
        (
            "offset = 0\n",
            "offset = 2\n",
            "{ kind = \"flag\"",
            "not a multiple of its 4",
        ),
        (
            "offset = 0\n",
            "",
            "[[node]]\nname = \"flight\"",
            "has no `offset`",
        ),
        (
            "offset = 0\n",
            "offset = -4\n",
            "-4",
            "expected bytes from regionOffset",
        ),
        (
            "offset = 0\n",
            "offset = 1048572\n",
            "1048572",
            "passes the end of the",
        ),
        (
            "align = \"packed\"",
            "align = \"tight\"",
            "\"tight\"",
            "expected `natural` or `packed`",
        ),
        (
            "align = \"packed\"",
            "byte_order = \"middle\"",
            "\"middle\"",
            "`little` or `big`",
        ),
        (
            "\"uint8\" }",
            "\"uint9\" }",
            "\"uint9\"",
            "expected a C type of `int8`",
        ),
        (
            "\"double\", unit = \"s\"",
            "\"doubel\", unit = \"s\"",
            "\"doubel\"",
            "type `doubel` of field `flight.timestamp` (did you mean `double`?): expected a C type",
        ),
        (
            "\"char[32]\"",
            "\"char[0]\"",
            "\"char[0]\"",
            "expected a C type",
        ),
        (
            "count = 3",
            "count = 0",
            "0, unit",
            "expected 1 to 65536 elements",
        ),
        (
            "\"status\"",
            "\"msg\"",
            "\"msg\", type = \"char[32]\"",
            "declared twice",
        ),
        ("\"status\"", "\"2bad\"", "\"2bad\"", "field name `2bad`"),
        (
            "type = \"uint8\" }",
            "type = \"uint8\", offset = 30 }",
            "[\n  { name = \"header\"",
            "overlaps field `attitude`",
        ),
        (
            "field = \"header\"",
            "field = \"timestamp\"",
            "{ kind = \"flag\"",
            "a marker is one whole-number field",
        ),
        (
            "field = \"header\"",
            "field = \"nope\"",
            "{ kind = \"flag\"",
            "`nope` is no field",
        ),
        (
            "value = 0x55AA55AA",
            "value = 0",
            "{ kind = \"flag\"",
            "marker's nonzero value",
        ),
        (
            "kind = \"flag\"",
            "kind = \"semaphore\"",
            "{ kind = \"semaphore\"",
            "expected \"none\"",
        ),
        (
            "description = \"the article's sender\"",
            "slot = 3",
            "3\nfields",
            "takes no `slot`",
        ),
        (
            "offset = 0\nalign",
            "offset = 0\nlag = 1\nalign",
            "1\nalign",
            "takes no `lag`",
        ),
    ];
    for (from, to, marker, part) in cases {
        assert!(FLIGHT_DATA.contains(from), "{from}");
        let text = FLIGHT_DATA.replacen(from, to, 1);
        let err = error(&text);
        let (line, column) = at(&text, marker);
        assert_eq!((err.line, err.column), (line, column), "`{err}` for `{to}`");
        assert!(err.to_string().contains(part), "`{err}` lacks `{part}`");
    }
}

#[test]
fn a_foreign_node_overlapping_another_or_an_fmu_nodes_area_is_refused() {
    let other = "[[node]]\nname = \"motion\"\noffset = 64\nhandshake = \"none\"\n\
                 fields = [ { name = \"cue\", type = \"double\" } ]\n";
    let err = error(&format!("{FLIGHT_DATA}{other}"));
    assert!(
        err.to_string()
            .contains("node `motion` (bytes 64..72) overlaps node `flight` (bytes 0..65)"),
        "{err}"
    );
    let fixed = FLIGHT_DATA.replacen("slot = 0\n", "slot = 0\noffset = 0\n", 1);
    let err = error(&fixed);
    assert!(err.to_string().contains("overlaps node `flight`"), "{err}");
    // Without handshake, or with the FMU keys on a node without fields.
    let err = error(&FLIGHT_DATA.replacen(
        "handshake = { kind = \"flag\", field = \"header\", value = 0x55AA55AA }\n",
        "",
        1,
    ));
    assert!(err.to_string().contains("has no `handshake`"), "{err}");
    let err = error(&FLIGHT_DATA.replacen("slot = 0\n", "slot = 0\nhandshake = \"none\"\n", 1));
    assert!(err.to_string().contains("is a foreign node's key"), "{err}");
    let err = error(&FLIGHT_DATA.replacen("slot = 0\n", "slot = 0\ndescription = \"x\"\n", 1));
    assert!(
        err.to_string()
            .contains("`description` is a foreign node's key"),
        "{err}"
    );
}

#[test]
fn a_file_of_foreign_nodes_only_is_refused_saying_what_an_interface_needs() {
    let only_foreign = FLIGHT_DATA.replacen(
        "[[node]]\nname = \"sim\"\nslot = 0\nsignals = [ { name = \"roll\", type = \"Real\" } ]\n",
        "",
        1,
    );
    let err = error(&only_foreign).to_string();
    // One sentence, as a user reads it: no run of blanks inside it.
    assert!(
        err.contains(
            "every [[node]] of this file is foreign (has `fields`): an interface declares at \
             least one node an FMU is built for (with `slot` and `signals`)"
        ),
        "{err}"
    );
}

#[test]
fn a_field_named_as_a_foreign_nodes_own_outputs_is_refused_at_its_name() {
    let reserved = Reserved {
        foreign_outputs: &["age", "link"],
        ..Reserved::NONE
    };
    for name in ["age", "link", "link.ok", "age[1].x"] {
        let text = FLIGHT_DATA.replacen("\"status\"", &format!("\"{name}\""), 1);
        let err = Interface::parse("lab.toml", &text, &reserved).unwrap_err();
        let (line, column) = at(&text, &format!("\"{name}\""));
        assert_eq!((err.line, err.column), (line, column), "{err}");
        assert!(
            err.to_string()
                .contains("collides with the outputs `flight.age` and `flight.link`"),
            "{err}"
        );
    }
    // Nothing reserved: the same names are the file's own.
    let text = FLIGHT_DATA.replacen("\"status\"", "\"age\"", 1);
    assert!(Interface::parse("lab.toml", &text, &Reserved::NONE).is_ok());
}
