//! Signals declared of C types and as arrays: what they parse to, what
//! their descriptor says, and each bad declaration refused at its place.

use rfm_frames::fmi::Value;
use rfm_frames::packed::CType;
use rfm_frames::payload::SignalType;
use rfm_interface::{Interface, Reserved};

fn file(signals: &str) -> String {
    format!("name = \"typed\"\n[[node]]\nname = \"fcc\"\nslot = 0\nsignals = [\n{signals}\n]\n")
}

fn parse(signals: &str) -> Result<Interface, String> {
    Interface::parse("typed.toml", &file(signals), &Reserved::NONE).map_err(|e| e.to_string())
}

#[test]
fn signals_of_c_types_and_arrays_parse_and_their_descriptor_says_them() {
    let i = parse(
        r#"{ name = "frame", type = "uint64", start = 9007199254740992 },
           { name = "flags", type = "uint8", count = 5, start = 7 },
           { name = "g", type = "float", min = -20, max = 20.5 },
           { name = "pos", type = "Real", count = 3 },
           { name = "tag", type = "char[8]", start = "fcc" }"#,
    )
    .unwrap();
    let kinds: Vec<SignalType> = i.nodes[0].signals.iter().map(|s| s.kind).collect();
    let typed = |ctype, count| SignalType::Typed { ctype, count };
    assert_eq!(
        kinds,
        [
            typed(CType::Uint64, None),
            typed(CType::Uint8, Some(5)),
            typed(CType::Float, None),
            typed(CType::Double, Some(3)),
            typed(CType::Char(8), None),
        ]
    );
    let s = &i.nodes[0].signals;
    assert_eq!(s[0].start, Value::Real(9007199254740992.0));
    assert_eq!(s[1].start, Value::Integer(7));
    assert_eq!((s[2].min, s[2].max), (Some(-20.0), Some(20.5)));
    assert_eq!(s[4].start, Value::String("fcc".into()));
    // struct { uint64_t frame; uint8_t flags[5]; float g; double pos[3]; char tag[8]; }
    let map = i.map().unwrap();
    let offsets: Vec<usize> = map
        .area(0)
        .payload
        .fields
        .iter()
        .map(|f| f.offset)
        .collect();
    assert_eq!(offsets, [0, 8, 16, 24, 48]);
    let bytes = rfm_interface::descriptor::encode(
        &i.name,
        i.fingerprint(),
        (&i.nodes[0], &i.declared()),
        &map.area(0).payload,
        None,
    );
    let described = rfm_interface::descriptor::decode(&bytes).unwrap();
    let back: Vec<(SignalType, usize)> = described
        .signals
        .iter()
        .map(|d| (d.kind, d.offset))
        .collect();
    assert_eq!(back, kinds.iter().copied().zip(offsets).collect::<Vec<_>>());
}

#[test]
fn a_c_type_declared_is_another_fingerprint_than_fmi2s_name_of_its_values() {
    let real = parse(r#"{ name = "x", type = "Real" }"#).unwrap();
    let double = parse(r#"{ name = "x", type = "double" }"#).unwrap();
    let array = parse(r#"{ name = "x", type = "double", count = 1 }"#).unwrap();
    assert_ne!(real.fingerprint(), double.fingerprint());
    assert_ne!(double.fingerprint(), array.fingerprint());
}

#[test]
fn a_bad_c_type_signal_is_refused_at_its_line_saying_what_is_allowed() {
    for (signal, says) in [
        (
            r#"{ name = "x", type = "long" }"#,
            "unknown type `long` of `fcc.x`: expected Real, Integer, Boolean, String or a C type (`int8`",
        ),
        (
            r#"{ name = "x", type = "uint8", count = 0 }"#,
            "count 0 of `fcc.x`: an array has 1 to 65536 elements",
        ),
        (
            r#"{ name = "x", type = "String", size = 4, count = 2 }"#,
            "a string signal cannot be an array",
        ),
        (
            r#"{ name = "x", type = "char[4]", count = 2 }"#,
            "a string signal cannot be an array",
        ),
        (
            r#"{ name = "x", type = "uint8", size = 2 }"#,
            "`fcc.x` is a `uint8`: only String signals have a size",
        ),
        (
            r#"{ name = "x", type = "uint8", start = 256 }"#,
            "start of `fcc.x`: 256 is outside the range",
        ),
        (
            r#"{ name = "x", type = "int16", start = 1.5 }"#,
            "start of `fcc.x`: 1.5 is not a whole number, as a `int16` is",
        ),
        (
            r#"{ name = "x", type = "uint64", start = 9007199254740994 }"#,
            "start of `fcc.x`: 9007199254740994 is beyond 2^53",
        ),
        (
            r#"{ name = "x", type = "float", max = 1e39 }"#,
            "max of `fcc.x`: 1e39 is outside the range of `fcc.x`: a float holds",
        ),
        (
            r#"{ name = "x", type = "bool", min = 0 }"#,
            "a `bool` signal has no min",
        ),
        (
            r#"{ name = "x", type = "char[2]", start = "abc" }"#,
            "a `char[2]` has room for 2 bytes",
        ),
    ] {
        let err = parse(signal).unwrap_err();
        assert!(err.contains(says), "{signal}: {err}");
        assert!(err.contains("typed.toml:6:"), "{signal}: {err}");
    }
}
