//! A descriptor's foreign nodes: each one's declaration in fixed-width words
//! (see the descriptor's table), so that declarations that differ only in
//! their words take as many bytes.

use super::{put_str, Cursor, DescriptorError};
use crate::declared::Declared;
use crate::foreign::Handshake;
use crate::Period;
use rfm_frames::packed::{ByteOrder, CType, Counting, PlacedField, C_TYPES};

/// Bytes of a foreign node's declaration besides its name and fields:
/// offset, size, order, handshake (28), writer, field count.
pub(super) const DECLARED_LEN: usize = 8 + 4 + 1 + 28 + 2 + 2;
/// Bytes of a field besides its name: C type (3), count, offset.
pub(super) const FIELD_LEN: usize = 3 + 4 + 4;
/// The writer word of a struct a lab's program writes.
const NO_WRITER: u16 = 0xffff;

/// A foreign node's declaration, in the descriptor's fixed-width words (see
/// the module's table).
pub(super) fn put_declared(out: &mut Vec<u8>, d: &Declared) {
    put_str(out, &d.name);
    out.extend_from_slice(&d.offset.to_le_bytes());
    out.extend_from_slice(&(d.size as u32).to_le_bytes());
    out.push(u8::from(d.order == ByteOrder::Big));
    let (kind, field, counting, value, period) = match &d.handshake {
        Handshake::None => (0u8, 0usize, 0u8, 0u64, None),
        Handshake::Counter {
            field,
            counts,
            period,
        } => (
            1,
            *field,
            u8::from(*counts == Counting::AfterData),
            0,
            *period,
        ),
        Handshake::Flag { field, value } => (2, *field, 0, *value, None),
    };
    out.push(kind);
    out.extend_from_slice(&(field as u16).to_le_bytes());
    out.push(counting);
    out.extend_from_slice(&value.to_le_bytes());
    let (num, den) = period.map_or((0, 0), |p| (p.num(), p.den()));
    out.extend_from_slice(&num.to_le_bytes());
    out.extend_from_slice(&den.to_le_bytes());
    let writer = d.writer.map_or(NO_WRITER, u16::from);
    out.extend_from_slice(&writer.to_le_bytes());
    out.extend_from_slice(&(d.fields.len() as u16).to_le_bytes());
    for f in &d.fields {
        put_str(out, &f.name);
        put_ctype(out, f.ctype, f.count);
        out.extend_from_slice(&(f.offset as u32).to_le_bytes());
    }
}

/// A C type and count as a field's or a signal's: its row of `C_TYPES`
/// (u8), a `char[N]`'s N (u16), the count (u32, 0 for a scalar).
pub(super) fn put_ctype(out: &mut Vec<u8>, ctype: CType, count: Option<u32>) {
    let (code, chars) = match ctype {
        CType::Char(n) => (CType::Char(0), n),
        t => (t, 0),
    };
    let row = C_TYPES.iter().position(|(t, _)| *t == code);
    out.push(row.expect("every C type has its row") as u8);
    out.extend_from_slice(&chars.to_le_bytes());
    out.extend_from_slice(&count.unwrap_or(0).to_le_bytes());
}

/// Bytes [`put_ctype`] writes.
pub(super) const CTYPE_LEN: usize = 7;

impl Cursor<'_> {
    /// What [`put_ctype`] wrote.
    pub(super) fn ctype(&mut self) -> Result<(CType, Option<u32>), DescriptorError> {
        let (row, chars) = (usize::from(self.u8()?), self.u16()?);
        let ctype = match C_TYPES.get(row) {
            Some((CType::Char(_), _)) => CType::Char(chars),
            Some((t, _)) => *t,
            None => return Err(DescriptorError::Damaged("unknown C type")),
        };
        Ok((ctype, Some(self.u32()?).filter(|&n| n != 0)))
    }

    /// The foreign nodes after the signals; none where the bytes end.
    pub(super) fn foreign(&mut self) -> Result<Vec<Declared>, DescriptorError> {
        if self.at == self.bytes.len() {
            return Ok(Vec::new());
        }
        let nodes = self.u16()?;
        (0..nodes).map(|_| self.declared()).collect()
    }

    /// One foreign node's declaration ([`put_declared`]).
    fn declared(&mut self) -> Result<Declared, DescriptorError> {
        let name = self.string()?;
        let offset = self.u64()?;
        let size = self.u32()? as usize;
        let order = match self.u8()? {
            0 => ByteOrder::Little,
            _ => ByteOrder::Big,
        };
        let (kind, field, counting, value) = (self.u8()?, self.u16()?, self.u8()?, self.u64()?);
        let (num, den) = (self.u64()?, self.u64()?);
        let field = usize::from(field);
        let handshake = match kind {
            0 => Handshake::None,
            1 => Handshake::Counter {
                field,
                counts: match counting {
                    0 => Counting::Seqlock,
                    _ => Counting::AfterData,
                },
                period: Period::new(num, den).filter(|_| num != 0),
            },
            2 => Handshake::Flag { field, value },
            _ => return Err(DescriptorError::Damaged("unknown handshake")),
        };
        let writer = match self.u16()? {
            NO_WRITER => None,
            slot => Some(u8::try_from(slot).map_err(|_| DescriptorError::Damaged("writer slot"))?),
        };
        let count = self.u16()?;
        let mut fields = Vec::new();
        for _ in 0..count {
            let name = self.string()?;
            let (ctype, count) = self.ctype()?;
            let offset = self.u32()? as usize;
            fields.push(PlacedField {
                name,
                ctype,
                count,
                offset,
            });
        }
        Ok(Declared {
            name,
            offset,
            size,
            order,
            handshake,
            writer,
            fields,
        })
    }
}
