//! The codec against each C type's edges.

use super::*;
use crate::packed::{FieldDecl, Packing, StructLayout};

fn layout(types: &[&str], order: ByteOrder) -> StructLayout {
    let fields: Vec<FieldDecl> = types
        .iter()
        .enumerate()
        .map(|(i, t)| FieldDecl {
            name: format!("f{i}"),
            ctype: CType::parse(t).expect("a C type"),
            count: Some(2),
            offset: None,
        })
        .collect();
    StructLayout::new(&fields, Packing::Natural, order).unwrap()
}

const EVERY: [&str; 12] = [
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float", "double",
    "bool", "char[5]",
];

fn sample(ctype: CType, i: usize) -> Value {
    let sign = if i == 0 { -1.0 } else { 1.0 };
    match ctype {
        CType::Bool => Value::Boolean(i == 1),
        CType::Char(_) => Value::String(["", "hello"][i].to_owned()),
        CType::Float => Value::Real(sign * 1.5e30),
        CType::Double => Value::Real(sign * 1e300),
        t if t.fmi_type() == FmiType::Integer => {
            let (min, max) = range(t);
            Value::Integer([min, max][i] as i32)
        }
        t => {
            let (min, max) = range(t);
            let limit = EXACT_LIMIT as f64;
            Value::Real([min.max(-limit), max.min(limit)][i])
        }
    }
}

#[test]
fn every_type_round_trips_its_extremes_in_both_byte_orders() {
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let l = layout(&EVERY, order);
        let mut bytes = vec![0u8; l.size];
        for f in &l.fields {
            for i in 0..2 {
                encode(f, i, &sample(f.ctype, i), &mut bytes, order).unwrap();
            }
        }
        for f in &l.fields {
            for i in 0..2 {
                let d = decode(f, i, &bytes, order).unwrap();
                let expected = match (f.ctype, sample(f.ctype, i)) {
                    (CType::Float, Value::Real(x)) => Value::Real(f64::from(x as f32)),
                    (_, v) => v,
                };
                assert_eq!(d.value, expected, "{} {order:?}", f.element_name(i));
                assert!(d.exact);
            }
        }
    }
}

#[test]
fn big_endian_fields_are_stored_most_significant_byte_first() {
    let l = layout(&["uint16", "float"], ByteOrder::Big);
    let mut bytes = vec![0u8; l.size];
    encode(
        &l.fields[0],
        0,
        &Value::Integer(0x1234),
        &mut bytes,
        ByteOrder::Big,
    )
    .unwrap();
    encode(
        &l.fields[1],
        1,
        &Value::Real(1.0),
        &mut bytes,
        ByteOrder::Big,
    )
    .unwrap();
    assert_eq!(bytes[..2], [0x12, 0x34]);
    assert_eq!(bytes[8..12], [0x3f, 0x80, 0, 0]);
}

#[test]
fn a_64_bit_value_past_2_pow_53_reads_as_inexact() {
    let l = layout(&["uint64", "int64"], ByteOrder::Little);
    let mut bytes = vec![0u8; l.size];
    bytes[..8].copy_from_slice(&(EXACT_LIMIT + 1).to_le_bytes());
    bytes[8..16].copy_from_slice(&EXACT_LIMIT.to_le_bytes());
    bytes[16..24].copy_from_slice(&(-(EXACT_LIMIT as i64) - 1).to_le_bytes());
    assert!(
        !decode(&l.fields[0], 0, &bytes, ByteOrder::Little)
            .unwrap()
            .exact
    );
    assert!(
        decode(&l.fields[0], 1, &bytes, ByteOrder::Little)
            .unwrap()
            .exact
    );
    assert!(
        !decode(&l.fields[1], 0, &bytes, ByteOrder::Little)
            .unwrap()
            .exact
    );
}

#[test]
fn values_a_field_cannot_hold_are_refused_and_write_nothing() {
    let l = layout(&EVERY, ByteOrder::Little);
    let field = |t: &str| {
        l.fields
            .iter()
            .find(|f| f.ctype == CType::parse(t).unwrap())
            .unwrap()
    };
    let cases: [(&str, Value, &str); 9] = [
        ("int8", Value::Integer(128), "outside the range"),
        ("uint16", Value::Integer(-1), "outside the range"),
        ("float", Value::Real(1e39), "outside the range"),
        ("uint64", Value::Real(-1.0), "outside the range"),
        ("int64", Value::Real(9.3e18), "outside the range"),
        ("uint32", Value::Real(0.5), "not a whole number"),
        (
            "char[5]",
            Value::String("toolong".into()),
            "at most 5 bytes",
        ),
        ("bool", Value::Integer(1), "an Integer cannot"),
        ("double", Value::String("x".into()), "a String cannot"),
    ];
    for (t, v, says) in cases {
        let mut bytes = vec![0xAAu8; l.size];
        let err = encode(field(t), 0, &v, &mut bytes, ByteOrder::Little).unwrap_err();
        assert!(err.to_string().contains(says), "{t} {v:?}: {err}");
        assert!(bytes.iter().all(|&b| b == 0xAA), "{t}: bytes written");
    }
    // The numbers of the refusal as people write them.
    let mut bytes = vec![0u8; l.size];
    let err = encode(
        field("float"),
        0,
        &Value::Real(1e40),
        &mut bytes,
        ByteOrder::Little,
    );
    let text = err.unwrap_err().to_string();
    assert!(
        text.starts_with("1e40 is outside the range of")
            && text.ends_with("a float holds -3.4028235e38 to 3.4028235e38"),
        "{text}"
    );
    let err = encode(
        field("uint16"),
        0,
        &Value::Integer(70000),
        &mut bytes,
        ByteOrder::Little,
    );
    assert!(
        err.unwrap_err()
            .to_string()
            .ends_with("a uint16 holds 0 to 65535"),
        "whole numbers in full"
    );
    // A float rounds to nearest; infinities pass as they are.
    let mut bytes = vec![0u8; l.size];
    encode(
        field("float"),
        0,
        &Value::Real(0.1),
        &mut bytes,
        ByteOrder::Little,
    )
    .unwrap();
    let d = decode(field("float"), 0, &bytes, ByteOrder::Little).unwrap();
    assert_eq!(d.value, Value::Real(f64::from(0.1f32)));
}
