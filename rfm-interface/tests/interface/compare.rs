//! What peers must agree on: the fingerprint covers it and the first difference
//! is named, from two files or from a file and a descriptor in memory.

use super::*;
use rfm_frames::session::Token;

#[test]
fn the_fingerprint_covers_what_peers_must_agree_on_and_the_difference_is_named() {
    let a = Interface::parse("a.toml", EXAMPLE, &Reserved::NONE).unwrap();
    let same = Interface::parse(
        "b.toml",
        &EXAMPLE
            .replace("start = 0.0", "start = 1.5")
            .replace("bank angle", "roll angle"),
        &Reserved::NONE,
    )
    .unwrap();
    assert_eq!(
        a.fingerprint(),
        same.fingerprint(),
        "start and description are local"
    );
    assert_eq!(a.first_difference(&same), None);
    for (edit, difference) in [
        (
            EXAMPLE.replace("size = 16", "size = 32"),
            "signal `cockpit.callsign` is a String of 16 bytes here and a String of 32 bytes there",
        ),
        (
            EXAMPLE.replace(
                "\"flap_detent\", type = \"Integer\"",
                "\"flap_detent\", type = \"Real\"",
            ),
            "signal `cockpit.flap_detent` is an Integer here and a Real there",
        ),
        (
            EXAMPLE.replace("{ name = \"gear_down\", type = \"Boolean\" },", ""),
            "signal 2 of node `cockpit` is `gear_down` here and `flap_detent` there",
        ),
        (
            EXAMPLE.replace("unit = \"rad\", ", ""),
            "signal `cockpit.roll` has unit Some(\"rad\") here and None there",
        ),
        (
            EXAMPLE.replace("slot = 1", "slot = 2"),
            "node `visual` writes slot 1 here and slot 2 there",
        ),
        (
            EXAMPLE.replace("slot = 1", "slot = 1\noffset = 65536"),
            "node `visual` has no offset here and offset 65536 there",
        ),
        (
            EXAMPLE.replace(
                "[[node]]\nname = \"cockpit\"",
                "period = \"1/60\"\n[[node]]\nname = \"cockpit\"",
            ),
            "node `cockpit` has period none here and 1/60 s there",
        ),
        (
            EXAMPLE
                .replace("slot = 1\n", "slot = 1\nfree = [\"cockpit\"]\n")
                .replace("slot = 0 ", "free = [\"visual\"]\nslot = 0 "),
            "node `cockpit` is free of [] here and of [\"visual\"] there",
        ),
    ] {
        assert_ne!(edit, EXAMPLE, "the edit for `{difference}` applies");
        let b = Interface::parse("b.toml", &edit, &Reserved::NONE).unwrap();
        assert_ne!(a.fingerprint(), b.fingerprint(), "{difference}");
        assert_eq!(a.first_difference(&b).as_deref(), Some(difference));
    }
    let fewer = Interface::parse(
        "c.toml",
        "name = \"cockpit_link\"\n[[node]]\nname = \"cockpit\"\nslot = 0\nsignals = [\n  { name = \"roll\", type = \"Real\", unit = \"rad\" },\n]\n",
        &Reserved::NONE,
    )
    .unwrap();
    assert_eq!(
        a.first_difference(&fewer).as_deref(),
        Some("signal `cockpit.gear_down` is missing there")
    );
    assert_eq!(
        fewer.first_difference(&a).as_deref(),
        Some("signal `cockpit.gear_down` is missing here")
    );
}

#[test]
fn a_descriptor_round_trips_and_names_the_first_difference_from_a_file() {
    use rfm_interface::descriptor::{self, DescriptorError};
    let i = Interface::parse("lab.toml", EXAMPLE, &Reserved::NONE).unwrap();
    let map = i.map().unwrap();
    let cockpit = &i.nodes[0];
    let area = map.area(0);
    let bytes = descriptor::encode(
        &i.name,
        i.fingerprint(),
        (cockpit, &[]),
        &area.payload,
        Some(Token::of(0x2b)),
    );
    assert!(bytes.len() <= area.descriptor_len);
    let mut padded = bytes.clone();
    padded.resize(area.descriptor_len, 0);
    let d = descriptor::decode(&padded).unwrap();
    assert_eq!(
        (
            d.fingerprint,
            d.interface.as_str(),
            d.node.as_str(),
            d.slot,
            d.session
        ),
        (
            i.fingerprint(),
            "cockpit_link",
            "cockpit",
            0,
            Some(Token::of(0x2b))
        )
    );
    let names: Vec<_> = d
        .signals
        .iter()
        .map(|s| (s.name.as_str(), s.kind, s.offset))
        .collect();
    assert_eq!(
        names,
        [
            ("roll", SignalType::Real, 0),
            ("gear_down", SignalType::Boolean, 8),
            ("flap_detent", SignalType::Integer, 12),
            ("callsign", SignalType::String { size: 16 }, 16),
        ]
    );
    assert_eq!(d.signals[0].unit, "rad");
    assert_eq!(d.first_difference(cockpit, &area.payload), None);

    // The file of another node says flap_detent is a Real.
    let edited = Interface::parse(
        "other.toml",
        &EXAMPLE.replace(
            r#""flap_detent", type = "Integer""#,
            r#""flap_detent", type = "Real""#,
        ),
        &Reserved::NONE,
    )
    .unwrap();
    let theirs = edited.map().unwrap();
    assert_eq!(
        d.first_difference(&edited.nodes[0], &theirs.area(0).payload)
            .unwrap(),
        "signal `cockpit.flap_detent` is an Integer there and a Real here"
    );

    // Damage is found, never decoded.
    let mut bad = padded.clone();
    bad[40] ^= 1;
    assert!(matches!(
        descriptor::decode(&bad),
        Err(DescriptorError::Damaged(_))
    ));
    assert_eq!(descriptor::decode(&[0; 64]), Err(DescriptorError::Missing));
    assert!(descriptor::decode(&padded[..30]).is_err());
}

/// A foreign node's declaration is part of what peers agree on: moved, of
/// the other byte order, a field of another type, another handshake or
/// writer, or gone, the fingerprint changes and the difference names the
/// struct, from a file or from a node's descriptor in memory.
#[test]
fn a_foreign_struct_declared_otherwise_changes_the_fingerprint_and_is_named() {
    use super::foreign::FLIGHT_DATA;
    use rfm_interface::{declared, descriptor};
    let parse = |text: &str| Interface::parse("lab.toml", text, &Reserved::NONE).unwrap();
    let ours = parse(FLIGHT_DATA);
    let local = parse(&FLIGHT_DATA.replace("the article's sender", "the sender"));
    assert_eq!(
        ours.fingerprint(),
        local.fingerprint(),
        "descriptions are local"
    );
    let without = FLIGHT_DATA
        .split("[[node]]\nname = \"flight\"")
        .next()
        .unwrap();
    for (edit, difference) in [
        (
            FLIGHT_DATA.replace("offset = 0\n", "offset = 0x200\n"),
            "foreign node `flight` lies at offset 0x0 here and 0x200 there",
        ),
        (
            FLIGHT_DATA.replace(
                "align = \"packed\"",
                "align = \"packed\"\nbyte_order = \"big\"",
            ),
            "foreign node `flight` is little-endian here and big-endian there",
        ),
        (
            FLIGHT_DATA.replace(
                "\"status\", type = \"uint8\"",
                "\"status\", type = \"int8\"",
            ),
            "foreign node `flight` has as field 5 `status` (uint8) at byte 32 here and \
             `status` (int8) at byte 32 there",
        ),
        (
            FLIGHT_DATA.replace("value = 0x55AA55AA", "value = 1"),
            "foreign node `flight` has handshake flag `header` = 0x55aa55aa here and flag \
             `header` = 0x1 there",
        ),
        (
            FLIGHT_DATA.replace("description = \"the article's sender\"", "writer = \"sim\""),
            "foreign node `flight` is written by a lab's program here and the FMU node of slot 0 \
             there",
        ),
        (without.to_owned(), "foreign node `flight` is missing there"),
    ] {
        let theirs = parse(&edit);
        assert_ne!(ours.fingerprint(), theirs.fingerprint(), "{difference}");
        assert_eq!(ours.first_difference(&theirs).as_deref(), Some(difference));
        // A declaration that differs in its words, not in its names, takes
        // as many bytes of a descriptor: the areas it does not move lie alike.
        let map = theirs.map().unwrap();
        if !difference.ends_with("missing there") {
            let len = |m: &rfm_interface::MemoryMap| m.areas[0].descriptor_len;
            assert_eq!(len(&map), len(&ours.map().unwrap()), "{difference}");
        }
        // The same from the descriptor their node writes.
        let bytes = descriptor::encode(
            &theirs.name,
            theirs.fingerprint(),
            (&theirs.nodes[0], &theirs.declared()),
            &map.area(0).payload,
            Some(Token::of(1)),
        );
        assert!(bytes.len() <= map.area(0).descriptor_len);
        let d = descriptor::decode(&bytes).unwrap();
        assert_eq!(d.foreign, theirs.declared());
        assert_eq!(
            declared::first_difference(&ours.declared(), &d.foreign).as_deref(),
            Some(difference)
        );
    }
}
