//! `rfmctl header`: the article's FlightData from its header, as a node an
//! interface file takes; a header it cannot import ends with exit 2 and the line.

use super::run;
use rfm_interface::{Interface, Reserved};

#[test]
fn header_prints_the_articles_flight_data_as_a_foreign_node() {
    let header = concat!(env!("CARGO_MANIFEST_DIR"), "/../rfm2g-sim/c/flightdata.h");
    let (code, out, err) = run(&["header", header, "FlightData", "--node", "flight"]);
    assert_eq!(code, 0, "{err}");
    let text = format!(
        "name = \"lab\"\n[[node]]\nname = \"sim\"\nslot = 0\nsignals = [ {{ name = \"x\", type = \
         \"Real\" }} ]\n{out}"
    );
    let i = Interface::parse("lab.toml", &text, &Reserved::NONE).unwrap_or_else(|e| panic!("{e}"));
    let flight = i.foreign_node("flight").unwrap();
    let offsets: Vec<usize> = flight.layout.fields.iter().map(|f| f.offset).collect();
    assert_eq!(offsets, [0, 4, 12, 20, 32, 33]);
    assert_eq!(flight.layout.size, 65);
}

#[test]
fn header_refuses_a_union_with_its_line_and_exit_2() {
    let header = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../rfm-header/tests/headers/union.h"
    );
    let (code, out, err) = run(&["header", header, "Packet"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("union.h:4: `value` is a union"), "{err}");
}

/// A header that is not there is named, with the OS's reason (libclang said
/// only "an unknown error occurred").
#[test]
fn header_names_a_missing_file() {
    let (code, out, err) = run(&["header", "nosuch.h", "S"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("reading the header nosuch.h") && err.contains("No such file"),
        "{err}"
    );
}
