//! The foreign structs of a recording (the structs a lab's own programs
//! write, which a node read): what its header says of each, enough to decode
//! its records without the interface file.
//!
//! One struct in the header, little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 2 + n | its name: length, UTF-8 |
//! | 8 | its offset in the memory, from regionOffset |
//! | 4 | its size |
//! | 1 | byte order: 0 little, 1 big |
//! | 4 | fields, then for each: |
//! | 2 + n | the field's name (`pos.x`, up to 256 bytes): length, UTF-8 |
//! | 1 | its C type: the row of `C_TYPES` |
//! | 2 | N of a `char[N]`, else 0 |
//! | 4 | elements of an array, 0 for a scalar |
//! | 4 | its offset in the struct |
//! | 2 + n | its unit: length (0: none), UTF-8 |

use rfm_frames::fmi::Value;
use rfm_frames::packed::{self, ByteOrder, CType, FieldDecl, Packing, StructLayout, C_TYPES};
use rfm_interface::ForeignNode;

/// A foreign struct a recording holds records of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedStruct {
    pub name: String,
    /// Where its program writes it, from regionOffset.
    pub offset: u64,
    pub layout: StructLayout,
    /// Each field's unit, in the layout's order.
    pub units: Vec<Option<String>>,
}

impl RecordedStruct {
    pub fn of(node: &ForeignNode) -> RecordedStruct {
        RecordedStruct {
            name: node.name.clone(),
            offset: node.offset,
            layout: node.layout.clone(),
            units: node.info.iter().map(|i| i.unit.clone()).collect(),
        }
    }

    /// Each element's name (`pos[0]`…) and unit, in the layout's order: a
    /// column each.
    pub fn elements(&self) -> Vec<(String, Option<&str>)> {
        let mut out = Vec::with_capacity(self.layout.elements());
        for (f, unit) in self.layout.fields.iter().zip(&self.units) {
            out.extend((0..f.elements()).map(|e| (f.element_name(e), unit.as_deref())));
        }
        out
    }

    /// The FMI type of element `i` (of [`RecordedStruct::elements`]'s
    /// order); `None` past its last.
    pub fn element_type(&self, i: usize) -> Option<rfm_frames::fmi::FmiType> {
        let mut at = i;
        for f in &self.layout.fields {
            if at < f.elements() {
                return Some(f.ctype.fmi_type());
            }
            at -= f.elements();
        }
        None
    }

    /// Each element's value in `bytes` (one record of this struct), in the
    /// order of [`RecordedStruct::elements`]; `None` past the end of `bytes`
    /// (the reader refuses a record of another size).
    pub fn values(&self, bytes: &[u8]) -> Vec<Option<Value>> {
        let order = self.layout.order;
        let mut out = Vec::with_capacity(self.layout.elements());
        for f in &self.layout.fields {
            out.extend(
                (0..f.elements()).map(|e| packed::decode(f, e, bytes, order).map(|d| d.value)),
            );
        }
        out
    }

    pub(crate) fn encode(&self, b: &mut Vec<u8>) {
        let text = |b: &mut Vec<u8>, s: &str| {
            // The interface bounds names and units far below 64 KiB.
            let len = (0..=s.len().min(usize::from(u16::MAX)))
                .rev()
                .find(|&i| s.is_char_boundary(i))
                .unwrap_or(0);
            b.extend_from_slice(&(len as u16).to_le_bytes());
            b.extend_from_slice(&s.as_bytes()[..len]);
        };
        text(b, &self.name);
        b.extend_from_slice(&self.offset.to_le_bytes());
        b.extend_from_slice(&(self.layout.size as u32).to_le_bytes());
        b.push(u8::from(self.layout.order == ByteOrder::Big));
        b.extend_from_slice(&(self.layout.fields.len() as u32).to_le_bytes());
        for (f, unit) in self.layout.fields.iter().zip(&self.units) {
            text(b, &f.name);
            let (row, n) = match f.ctype {
                CType::Char(n) => (row_of(CType::Char(0)), n),
                t => (row_of(t), 0),
            };
            b.push(row);
            b.extend_from_slice(&n.to_le_bytes());
            b.extend_from_slice(&f.count.unwrap_or(0).to_le_bytes());
            b.extend_from_slice(&(f.offset as u32).to_le_bytes());
            text(b, unit.as_deref().unwrap_or(""));
        }
    }

    /// The struct of `bytes` (one header entry, whole); the error says
    /// which part does not parse.
    pub(crate) fn decode(bytes: &[u8]) -> Result<RecordedStruct, String> {
        let mut c = Cursor { bytes, at: 0 };
        let name = c.text("its name")?;
        let offset = u64::from_le_bytes(c.array("its offset")?);
        let size = u32::from_le_bytes(c.array("its size")?) as usize;
        let order = match c.take(1, "its byte order")?[0] {
            0 => ByteOrder::Little,
            1 => ByteOrder::Big,
            b => return Err(format!("a byte order of {b}")),
        };
        let count = u32::from_le_bytes(c.array("its field count")?);
        let (mut decls, mut units) = (Vec::new(), Vec::new());
        for i in 0..count {
            let what = format!("field {i}");
            let name = c.text(&what)?;
            let row = usize::from(c.take(1, &what)?[0]);
            let n = u16::from_le_bytes(c.array(&what)?);
            let elements = u32::from_le_bytes(c.array(&what)?);
            let offset = u32::from_le_bytes(c.array(&what)?);
            let unit = c.text(&what)?;
            let ctype = match C_TYPES.get(row).map(|r| r.0) {
                Some(CType::Char(_)) => CType::Char(n),
                Some(t) => t,
                None => return Err(format!("{what}: a C type of row {row}")),
            };
            decls.push(FieldDecl {
                name,
                ctype,
                count: (elements > 0).then_some(elements),
                offset: Some(offset as usize),
            });
            units.push((!unit.is_empty()).then_some(unit));
        }
        if c.at != bytes.len() {
            return Err(format!(
                "{} bytes follow its last field",
                bytes.len() - c.at
            ));
        }
        let layout = StructLayout::new(&decls, Packing::Packed, order)
            .and_then(|l| l.with_size(size))
            .map_err(|e| format!("struct `{name}`: {e}"))?;
        Ok(RecordedStruct {
            name,
            offset,
            layout,
            units,
        })
    }
}

/// A header entry's bytes, read in order.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = (self.at.checked_add(n))
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| format!("{what} runs past its end"))?;
        let part = &self.bytes[self.at..end];
        self.at = end;
        Ok(part)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        Ok(self.take(N, what)?.try_into().expect("take gives N bytes"))
    }

    fn text(&mut self, what: &str) -> Result<String, String> {
        let len = u16::from_le_bytes(self.array(what)?);
        String::from_utf8(self.take(usize::from(len), what)?.to_vec())
            .map_err(|_| format!("{what} is not UTF-8"))
    }
}

/// The row of `C_TYPES` a C type is.
fn row_of(ctype: CType) -> u8 {
    C_TYPES
        .iter()
        .position(|(t, _)| *t == ctype)
        .expect("every C type has a row") as u8
}
