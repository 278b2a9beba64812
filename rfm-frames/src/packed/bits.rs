//! A 64-bit integer element's bits: what FMI 3.0's Int64 and UInt64 carry,
//! every value of `int64` and `uint64` exact (FMI 2.0's Real holds them
//! exactly only to 2^53, see [`super::decode`]).

use super::{ByteOrder, CType, PlacedField};

/// Whether `ctype` is one [`load_bits`] and [`store_bits`] take.
fn wide(ctype: CType) -> bool {
    matches!(ctype, CType::Int64 | CType::Uint64)
}

/// Element `i` of a 64-bit integer `field` in `bytes` (the whole struct), in
/// host order (an `int64`'s two's complement); `None` for another type or an
/// element outside `bytes`.
pub fn load_bits(field: &PlacedField, i: usize, bytes: &[u8], order: ByteOrder) -> Option<u64> {
    load_bits_at(field.ctype, field.element_offset(i), bytes, order)
}

/// The `ctype` element at byte `at` of `bytes` as [`load_bits`] gives it.
pub fn load_bits_at(ctype: CType, at: usize, bytes: &[u8], order: ByteOrder) -> Option<u64> {
    if !wide(ctype) {
        return None;
    }
    let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(match order {
        ByteOrder::Little => u64::from_le_bytes(b),
        ByteOrder::Big => u64::from_be_bytes(b),
    })
}

/// Stores `bits` as element `i` of a 64-bit integer `field` in `bytes`;
/// `None`, and nothing stored, for another type or an element outside `bytes`.
pub fn store_bits(
    field: &PlacedField,
    i: usize,
    bits: u64,
    bytes: &mut [u8],
    order: ByteOrder,
) -> Option<()> {
    store_bits_at(field.ctype, field.element_offset(i), bits, bytes, order)
}

/// Stores `bits` as the `ctype` element at byte `at` of `bytes`, as
/// [`store_bits`] does.
pub fn store_bits_at(
    ctype: CType,
    at: usize,
    bits: u64,
    bytes: &mut [u8],
    order: ByteOrder,
) -> Option<()> {
    if !wide(ctype) {
        return None;
    }
    let out = bytes.get_mut(at..at.checked_add(8)?)?;
    out.copy_from_slice(&match order {
        ByteOrder::Little => bits.to_le_bytes(),
        ByteOrder::Big => bits.to_be_bytes(),
    });
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::{FieldDecl, Packing, StructLayout};

    fn field(ctype: &str) -> PlacedField {
        let decl = FieldDecl {
            name: "x".into(),
            ctype: CType::parse(ctype).unwrap(),
            count: Some(2),
            offset: None,
        };
        StructLayout::new(&[decl], Packing::Natural, ByteOrder::Big)
            .unwrap()
            .fields
            .remove(0)
    }

    #[test]
    fn every_64_bit_value_round_trips_in_both_byte_orders_and_other_types_are_refused() {
        let f = field("uint64");
        for order in [ByteOrder::Little, ByteOrder::Big] {
            for bits in [0, 1, (1 << 53) + 1, u64::MAX, 0x0102_0304_0506_0708] {
                let mut bytes = [0u8; 16];
                store_bits(&f, 1, bits, &mut bytes, order).unwrap();
                assert_eq!(load_bits(&f, 1, &bytes, order), Some(bits));
                assert_eq!(bytes[..8], [0; 8], "element 0 untouched");
                let stored = match order {
                    ByteOrder::Little => bits.to_le_bytes(),
                    ByteOrder::Big => bits.to_be_bytes(),
                };
                assert_eq!(bytes[8..], stored);
            }
        }
        let mut short = [0u8; 12];
        assert_eq!(store_bits(&f, 1, 7, &mut short, ByteOrder::Big), None);
        assert_eq!(short, [0; 12]);
        assert_eq!(
            load_bits(&field("double"), 0, &[0; 16], ByteOrder::Big),
            None
        );
    }
}
