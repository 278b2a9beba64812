//! Interface files: the issue's example parses to what it says, and every bad
//! file gets an error naming the file, line and column and what is allowed.

use rfm_frames::{fmi::Value, payload::SignalType};
use rfm_interface::{Interface, InterfaceError, Reserved, MAX_SIGNALS, MAX_STRING_SIZE};

mod compare;
mod foreign;
mod settings;
mod typed;

const EXAMPLE: &str = r#"name = "cockpit_link"            # FMUs are named <name>_<node>
[[node]]
name = "cockpit"                 # [A-Za-z][A-Za-z0-9_]*
slot = 0                         # 0..255
signals = [
  { name = "roll", type = "Real", unit = "rad", start = 0.0, description = "bank angle" },
  { name = "gear_down", type = "Boolean" },
  { name = "flap_detent", type = "Integer", start = 0 },
  { name = "callsign", type = "String", size = 16 },   # bytes, UTF-8
]
[[node]]
name = "visual"
slot = 1
signals = [ { name = "frame_count", type = "Integer" } ]
"#;

#[test]
fn the_issues_example_parses_to_what_it_says() {
    let i = Interface::parse("lab.toml", EXAMPLE, &Reserved::NONE).unwrap();
    assert_eq!(i.name, "cockpit_link");
    assert_eq!(i.nodes.len(), 2);
    let cockpit = i.node("cockpit").unwrap();
    assert_eq!(cockpit.slot, 0);
    let kinds: Vec<_> = cockpit
        .signals
        .iter()
        .map(|s| (s.name.as_str(), s.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("roll", SignalType::Real),
            ("gear_down", SignalType::Boolean),
            ("flap_detent", SignalType::Integer),
            ("callsign", SignalType::String { size: 16 }),
        ]
    );
    let roll = &cockpit.signals[0];
    assert_eq!(
        (
            roll.unit.as_deref(),
            &roll.start,
            roll.description.as_deref()
        ),
        (Some("rad"), &Value::Real(0.0), Some("bank angle"))
    );
    assert_eq!(cockpit.signals[3].start, Value::String(String::new()));
    assert_eq!(i.node("visual").unwrap().slot, 1);
}

#[test]
fn a_thousand_reals_per_node_parse() {
    let signals: Vec<String> = (0..1000)
        .map(|i| format!("{{ name = \"x{i}\", type = \"Real\", start = {i}.5 }}"))
        .collect();
    let text = format!(
        "name = \"big\"\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{}]\n",
        signals.join(",\n")
    );
    let i = Interface::parse("big.toml", &text, &Reserved::NONE).unwrap();
    assert_eq!(i.nodes[0].signals.len(), 1000);
    assert_eq!(i.nodes[0].signals[999].start, Value::Real(999.5));
}

/// `text` with the example's cockpit node replaced by `node` (a TOML table body).
/// A node of 65,537 Booleans used to build, and its descriptor then said "1
/// signals" (its count is 16 bits): rfmctl showed one, and `export --csv`
/// dropped the rest. The largest count the descriptor holds parses and is
/// described whole; one more is refused naming the limit.
#[test]
fn a_node_of_more_signals_than_the_descriptor_counts_is_refused_naming_the_limit() {
    let node = |n: usize| {
        let signals: String = (0..n)
            .map(|i| format!("{{ name = \"b{i}\", type = \"Boolean\" }},"))
            .collect();
        format!("name = \"wide\"\nmemory_size = 67108864\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{signals}]\n")
    };
    let most = Interface::parse("wide.toml", &node(MAX_SIGNALS), &Reserved::NONE).unwrap();
    let map = most.map().unwrap();
    let bytes = rfm_interface::descriptor::encode(
        &most.name,
        most.fingerprint(),
        (&most.nodes[0], &most.declared()),
        &map.area(0).payload,
        Some(rfm_frames::session::Token::of(1)),
    );
    let described = rfm_interface::descriptor::decode(&bytes).unwrap();
    assert_eq!(described.signals.len(), MAX_SIGNALS);
    let err = Interface::parse("wide.toml", &node(MAX_SIGNALS + 2), &Reserved::NONE)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("node `a` publishes 65537 signals: at most 65535"),
        "{err}"
    );
}

fn with_node(node: &str) -> String {
    format!("name = \"lab\"\n[[node]]\n{node}\n")
}

pub(crate) fn error(text: &str) -> InterfaceError {
    Interface::parse("lab.toml", text, &Reserved::NONE).unwrap_err()
}

/// Each `(text, (line, column), part)`: parsing `text` fails at that line
/// and column of `lab.toml`, with a message that contains `part`.
fn check_errors(cases: Vec<(String, (usize, usize), &str)>) {
    assert!(!cases.is_empty());
    for (text, (line, column), part) in cases {
        let err = error(&text);
        assert_eq!(
            (err.file.as_str(), err.line, err.column),
            ("lab.toml", line, column),
            "`{err}` for\n{text}"
        );
        assert!(err.to_string().contains(part), "`{err}` lacks `{part}`");
        assert!(
            err.to_string()
                .starts_with(&format!("lab.toml:{line}:{column}: ")),
            "{err}"
        );
    }
}

/// The file's structure, names, nodes and slots.
#[test]
fn every_bad_file_structure_node_and_slot_names_where_and_what_is_allowed() {
    let cases: Vec<(String, (usize, usize), &str)> = vec![
        (
            "name = \"lab\"\n[[node]\nname = \"a\"".into(),
            (2, 8),
            "unclosed array table, expected `]`",
        ),
        ("name = \"9lab\"\n[[node]]\nname=\"a\"\nslot=0\nsignals=[{name=\"x\",type=\"Real\"}]".into(),
            (1, 8),
            "interface name `9lab`: a name starts with a letter, holds only letters, digits and `_`",
        ),
        ("name = \"lab\"\n".into(), (1, 1), "no [[node]]"),
        (
            with_node("name = \"cock pit\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (3, 8),
            "node name `cock pit`: a name starts with a letter",
        ),
        (
            format!(
                "{}[[node]]\nname = \"a\"\nslot = 1\nsignals = [{{ name = \"y\", type = \"Real\" }}]\n",
                with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]")
            ),
            (7, 8),
            "node `a` is declared twice (first at line 3)",
        ),
        (
            format!(
                "{}[[node]]\nname = \"b\"\nslot = 0\nsignals = [{{ name = \"y\", type = \"Real\" }}]\n",
                with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]")
            ),
            (8, 8),
            "slot 0 of node `b` is taken by another node (line 4): each node writes its own slot",
        ),
        (
            with_node("name = \"a\"\nslot = 300\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (4, 8),
            "slot 300 of node `a`: expected 0..255",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = []"),
            (2, 1),
            "node `a` publishes no signal: give it at least one in `signals`",
        ),
        (
            with_node("name = \"a\"\nslot = 0"),
            (2, 1),
            "node `a` publishes no signal",
        ),
    ];
    check_errors(cases);
}

/// Signals: names, types, bounds, starts, sizes and units.
#[test]
fn every_bad_signal_names_where_and_what_is_allowed() {
    let cases: Vec<(String, (usize, usize), &str)> = vec![
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }, { name = \"x\", type = \"Integer\" }]"),
            (5, 52),
            "node `a` publishes `x` twice (first at line 5)",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"2x\", type = \"Real\" }]"),
            (5, 21),
            "signal name `2x`: a name starts with a letter",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Boolean\", min = 0 }]"),
            (5, 50),
            "`a.x` is a Boolean: only Real and Integer signals have a min",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Integer\", min = 4, max = 2 }]"),
            (5, 59),
            "max 2 of `a.x` is below its min 4",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Integer\", min = 1 }]"),
            (5, 21),
            "start 0 of `a.x` is outside its min..max (1..): the FMU would refuse its own start value",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Integer\", max = 1.5 }]"),
            (5, 50),
            "max of `a.x`: expected a 32-bit integer",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Float\" }]"),
            (5, 33),
            "unknown type `Float` of `a.x`: expected Real, Integer, Boolean, String or a C type",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"cs\", type = \"String\" }]"),
            (5, 34),
            "String `a.cs` needs its size in bytes (UTF-8), 1 to 1024: e.g. size = 16",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"cs\", type = \"String\", size = 5000 }]"),
            (5, 51),
            "size 5000 of String `a.cs`: expected 1 to 1024 bytes",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\", size = 8 }]"),
            (5, 48),
            "`a.x` is a Real: only String signals have a size",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Integer\", start = 1.5 }]"),
            (5, 52),
            "start 1.5 of `a.x` is not an Integer value",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Integer\", start = 3000000000 }]"),
            (5, 52),
            "start 3000000000 of Integer `a.x`: an Integer is 32 bits",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"cs\", type = \"String\", size = 2, start = \"abc\" }]"),
            (5, 62),
            "start of String `a.cs` is 3 bytes or holds a NUL; it has room for 2 bytes",
        ),
        (
            with_node("name = \"a\"\nslot = 0\ncolour = \"red\"\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (5, 1),
            "unknown field `colour`",
        ),
        (
            with_node("name = \"a\"\nslto = 0\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (4, 1),
            "unknown field `slto`, expected one of `name`, `slot`",
        ),
        (
            with_node("name = \"a\"\nslto = 0\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (4, 1),
            "`rfm2gLibrary`, `signals`, `fields`, `byte_order`, `align`, `handshake`, `writer`, `size`, `description`: did you mean `slot`?",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", typ = \"Real\" }]"),
            (5, 26),
            "unknown field `typ`, expected one of `name`, `type`, `unit`, `start`, `description`, `size`, `count`, `min`, `max`: did you mean `type`?",
        ),
        (
            with_node("name = \"a\"\nslot = \"0\"\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (4, 8),
            "`slot`: invalid type: string \"0\", expected an integer",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\", unit = 3 }]"),
            (5, 48),
            "`unit`: invalid type: integer `3`, expected a string",
        ),
        (
            with_node(&format!("name = \"{}\"\nslot = 0\nsignals = [{{ name = \"x\", type = \"Real\" }}]", "n".repeat(65))),
            (3, 8),
            "and has at most 64 characters",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\", unit = \"mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm\" }]"),
            (5, 48),
            "unit of `a.x` is 76 bytes: at most 64",
        ),
    ];
    check_errors(cases);
    assert_eq!(MAX_STRING_SIZE, 1024, "the messages above quote it");
}

/// The memory: areas, offsets and its size; periods, lags and `free`.
#[test]
fn every_bad_layout_period_and_free_names_where_and_what_is_allowed() {
    let cases: Vec<(String, (usize, usize), &str)> = vec![
        (
            format!(
                "name = \"lab\"\nmemory_size = 8192\n[[node]]\nname = \"big\"\nslot = 0\nsignals = [{}]\n",
                (0..100).map(|i| format!("{{ name = \"x{i}\", type = \"Real\" }}")).collect::<Vec<_>>().join(", ")
            ),
            (4, 8),
            "node `big` needs bytes 0..16064 of the coupling region (a ring of 16 frames), past the end of the 8192-byte memory",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nperiod = 0\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (5, 10),
            "period `0`: expected a positive number of seconds, a decimal such as 0.001 or an exact fraction such as \"1/60\"",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nperiod = \"1/0\"\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (5, 10),
            "period `1/0`: expected a positive number",
        ),
        (
            format!(
                "period = -0.5\n{}",
                with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]")
            ),
            (1, 10),
            "period `-0.5`: expected a positive number",
        ),
        (
            format!(
                "{}[[node]]\nname = \"b\"\nslot = 1\nsignals = [{{ name = \"y\", type = \"Real\" }}]\n",
                with_node("name = \"a\"\nslot = 0\nperiod = 0.01\nsignals = [{ name = \"x\", type = \"Real\" }]")
            ),
            (8, 8),
            "node `b` has no period while `a` has one: give every node a period, or a top-level `period` for the nodes that state none",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nfree = [\"ghost\"]\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (5, 9),
            "node `a` is free of `ghost`, which is no node of this file (nodes: a)",
        ),
        (
            with_node("name = \"a\"\nslot = 0\nfree = [\"a\"]\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (5, 9),
            "node `a` lists itself in its free",
        ),
        (
            format!(
                "{}[[node]]\nname = \"b\"\nslot = 1\nfree = [\"a\"]\nsignals = [{{ name = \"y\", type = \"Real\" }}]\n",
                with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]")
            ),
            (3, 8),
            "node `a` waits for `b` in lockstep, but `b` never waits for `a`, neither directly nor through nodes that wait for it: it could run any number of steps ahead and overwrite the frames `a` needs; list `b` in `a`'s free, or let `b` wait for `a`",
        ),
        (
            format!(
                "max_lag = 200\n{}",
                with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]")
            ),
            (1, 11),
            "max_lag 200: expected the largest lag (steps) a node may run, 0..127",
        ),
        (
            format!(
                "{}[[node]]\nname = \"b\"\nslot = 1\noffset = 256\nsignals = [{{ name = \"y\", type = \"Real\" }}]\n",
                with_node("name = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]")
            ),
            (9, 10),
            "node `b` (bytes 256..2816) overlaps node `a` (bytes 0..2560): give it an offset of at least 0xa00 (2560), or none",
        ),
        (
            with_node("name = \"a\"\nslot = 0\noffset = 100\nsignals = [{ name = \"x\", type = \"Real\" }]"),
            (5, 10),
            "offset 100 of node `a` is not a multiple of 64 bytes",
        ),
        (
            "name = \"lab\"\nmemory_size = -5\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]\n".into(),
            (2, 15),
            "memory_size -5: expected the bytes of memory the coupling may use",
        ),
        (
            "name = \"lab\"\nmemory_size = 1099511627776\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]\n".into(),
            (2, 15),
            "memory_size 1099511627776: expected the bytes of memory the coupling may use from regionOffset, a positive multiple of 4, at most 268435456 (256 MiB, the largest RFM2g board)",
        ),
    ];
    check_errors(cases);
}
