//! The descriptor: what a node publishes, written by the node once at start into
//! its own area, so that tools and peers can name its signals without the file.
//!
//! Little-endian; strings are a length byte and that many UTF-8 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `"RFMd"` |
//! | 4 | 1 | descriptor version (3; 2 is read as of no session) |
//! | 5 | 1 | the node's slot |
//! | 6 | 2 | number of signals |
//! | 8 | 8 | interface fingerprint ([`super::Interface::fingerprint`]) |
//! | 16 | 4 | bytes of the whole descriptor |
//! | 20 | 4 | CRC-32C of the bytes from 24 to the end |
//! | 24 | 4 | frames in the node's ring (a power of two) |
//! | 28 | 4 | session: the token of the session that wrote it (`rfm_core::link::ownership`) |
//! | 32 | 8 | the node's period in seconds: numerator (0: none) |
//! | 40 | 8 | … and denominator |
//! | 48 | | interface name, node name |
//! | | | per signal: type (u8: 0 Real, 1 Integer, 2 Boolean, 3 String, 4 of a C type), size (u16: a String's; 0 for a C type), payload offset (u32); for a C type its row of `C_TYPES` (u8), a `char[N]`'s N (u16) and count (u32, 0 for a scalar); name, unit |
//! | | | the interface's foreign nodes (none where the descriptor ends here): their number (u16), then per node ([`crate::declared::Declared`]) its name, offset (u64), size (u32), byte order (u8: 0 little, 1 big), handshake (kind u8: 0 none, 1 counter, 2 flag; marker field u16; counting u8: 0 seqlock, 1 after-data; flag value u64; period numerator and denominator u64, 0 for none), writer (u16: its slot, 0xffff a lab's program), fields (u16), and per field its name, C type (u8: its row of `C_TYPES`; u16: a `char[N]`'s N), count (u32, 0 for a scalar) and offset (u32) |

use super::declared::Declared;
use super::{NodeSpec, Period, SignalType};
use declarations::{put_ctype, put_declared, CTYPE_LEN, DECLARED_LEN, FIELD_LEN};
use rfm_frames::payload::Payload;
use rfm_frames::session::Token;

mod declarations;
mod described;

/// `"RFMd"` in little-endian.
pub const MAGIC: u32 = u32::from_le_bytes(*b"RFMd");
/// Descriptor format version. Version 2: the ring's depth and the period;
/// version 3: the writer's session, without which a reader cannot tell the
/// holder's descriptor from one an earlier run left where the holder has not
/// written its own yet.
pub const VERSION: u8 = 3;
/// The version before [`VERSION`], still read (as written by no session).
const VERSION_NO_SESSION: u8 = 2;
/// Where the CRC's coverage starts.
const CRC_START: usize = 24;
const HEADER: usize = 48;

/// One signal as a descriptor names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    pub name: String,
    pub kind: SignalType,
    pub unit: String,
    /// Offset in the payload.
    pub offset: usize,
}

/// A decoded descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    pub fingerprint: u64,
    /// The token of the session that wrote it (`None`: a version-2
    /// descriptor): it describes its area only while that session holds it.
    pub session: Option<Token>,
    pub interface: String,
    pub node: String,
    pub slot: u8,
    /// Frames in the node's ring.
    pub ring_depth: usize,
    pub period: Option<Period>,
    pub signals: Vec<Described>,
    /// The foreign nodes of its interface file, as it declares them.
    pub foreign: Vec<Declared>,
}

/// Why bytes are not a descriptor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescriptorError {
    #[error("no descriptor (the node has not started, or wrote none)")]
    Missing,
    #[error("descriptor version {0}, this build reads version {VERSION}")]
    Version(u8),
    #[error("descriptor is damaged or being rewritten ({0})")]
    Damaged(&'static str),
}

/// Bytes the descriptor of `node` takes (before the area's alignment), with
/// the interface's foreign nodes `foreign`.
pub fn encoded_len(interface: &str, node: &NodeSpec, foreign: &[Declared]) -> usize {
    let text = |s: &str| 1 + s.len().min(255);
    let foreign_len = match foreign {
        [] => 0,
        _ => {
            2 + (foreign.iter())
                .map(|d| {
                    let fields = d.fields.iter().map(|f| text(&f.name) + FIELD_LEN);
                    text(&d.name) + DECLARED_LEN + fields.sum::<usize>()
                })
                .sum::<usize>()
        }
    };
    HEADER
        + 2
        + interface.len()
        + node.name.len()
        + node
            .signals
            .iter()
            .map(|s| {
                let typed = if s.kind.ctype().is_some() {
                    CTYPE_LEN
                } else {
                    0
                };
                9 + typed + s.name.len() + s.unit.as_deref().unwrap_or("").len()
            })
            .sum::<usize>()
        + foreign_len
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    // The parser bounds names and units to 255 bytes.
    let bytes = &s.as_bytes()[..s.len().min(255)];
    out.push(bytes.len() as u8);
    out.extend_from_slice(bytes);
}

/// The descriptor of `node`, whose payload is laid out as `payload`, as
/// session `session` writes it (`None`: a recording's, of no session); `foreign`: its interface's foreign
/// nodes ([`crate::Interface::declared`]).
pub fn encode(
    interface: &str,
    fingerprint: u64,
    (node, foreign): (&NodeSpec, &[Declared]),
    payload: &Payload,
    session: Option<Token>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_len(interface, node, foreign));
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.push(VERSION);
    out.push(node.slot);
    out.extend_from_slice(&(node.signals.len() as u16).to_le_bytes());
    out.extend_from_slice(&fingerprint.to_le_bytes());
    out.extend_from_slice(&[0; 8]); // length and CRC, below
    out.extend_from_slice(&(node.ring_depth as u32).to_le_bytes());
    out.extend_from_slice(&Token::word(session).to_le_bytes());
    let (num, den) = node.period.map_or((0, 0), |p| (p.num(), p.den()));
    out.extend_from_slice(&num.to_le_bytes());
    out.extend_from_slice(&den.to_le_bytes());
    put_str(&mut out, interface);
    put_str(&mut out, &node.name);
    for (s, field) in node.signals.iter().zip(&payload.fields) {
        let (code, size) = match s.kind {
            SignalType::Real => (0u8, 8u16),
            SignalType::Integer => (1, 4),
            SignalType::Boolean => (2, 1),
            SignalType::String { size } => (3, size),
            SignalType::Typed { .. } => (4, 0),
        };
        out.push(code);
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&(field.offset as u32).to_le_bytes());
        if let SignalType::Typed { ctype, count } = s.kind {
            put_ctype(&mut out, ctype, count);
        }
        put_str(&mut out, &s.name);
        put_str(&mut out, s.unit.as_deref().unwrap_or(""));
    }
    if !foreign.is_empty() {
        out.extend_from_slice(&(foreign.len() as u16).to_le_bytes());
        for d in foreign {
            put_declared(&mut out, d);
        }
    }
    let len = out.len() as u32;
    out[16..20].copy_from_slice(&len.to_le_bytes());
    let crc = crc32c::crc32c(&out[CRC_START..]);
    out[20..24].copy_from_slice(&crc.to_le_bytes());
    out
}

/// A cursor over descriptor bytes that never reads past them.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DescriptorError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(DescriptorError::Damaged("truncated"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, DescriptorError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, DescriptorError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2")))
    }

    fn u32(&mut self) -> Result<u32, DescriptorError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }

    /// One signal: its type code, size, offset, name and unit.
    fn signal(&mut self) -> Result<Described, DescriptorError> {
        let code = self.u8()?;
        let size = self.u16()?;
        let offset = self.u32()? as usize;
        let kind = match code {
            0 => SignalType::Real,
            1 => SignalType::Integer,
            2 => SignalType::Boolean,
            3 => SignalType::String { size },
            4 => {
                let (ctype, count) = self.ctype()?;
                SignalType::Typed { ctype, count }
            }
            _ => return Err(DescriptorError::Damaged("unknown signal type")),
        };
        Ok(Described {
            name: self.string()?,
            unit: self.string()?,
            kind,
            offset,
        })
    }

    fn u64(&mut self) -> Result<u64, DescriptorError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }

    fn string(&mut self) -> Result<String, DescriptorError> {
        let n = usize::from(self.u8()?);
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| DescriptorError::Damaged("not UTF-8"))
    }
}

/// Decodes the descriptor at the start of `bytes` (which may run past its end).
pub fn decode(bytes: &[u8]) -> Result<Descriptor, DescriptorError> {
    let bytes = checked(bytes)?;
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
    let count = u16::from_le_bytes([bytes[6], bytes[7]]);
    let fingerprint = u64::from_le_bytes(bytes[8..16].try_into().expect("8"));
    let ring_depth = word(24) as usize;
    let session = match bytes[4] {
        VERSION => Token::from_word(word(28)),
        _ => None,
    };
    if !ring_depth.is_power_of_two() || ring_depth > super::rates::MAX_DEPTH {
        return Err(DescriptorError::Damaged("ring depth not a power of two"));
    }
    let long = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
    let period = match (long(32), long(40)) {
        (0, _) => None,
        (num, den) => {
            Some(Period::new(num, den).ok_or(DescriptorError::Damaged("period of denominator 0"))?)
        }
    };
    let mut c = Cursor { bytes, at: HEADER };
    let interface = c.string()?;
    let node = c.string()?;
    let mut signals = Vec::with_capacity(usize::from(count).min(bytes.len() / 9));
    for _ in 0..count {
        signals.push(c.signal()?);
    }
    let foreign = c.foreign()?;
    Ok(Descriptor {
        fingerprint,
        session,
        interface,
        node,
        slot: bytes[5],
        ring_depth,
        period,
        signals,
        foreign,
    })
}

/// The descriptor's bytes, once its magic, version, length and CRC are
/// checked: its header whole, and no byte past its length.
fn checked(bytes: &[u8]) -> Result<&[u8], DescriptorError> {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4")))
    };
    match word(0) {
        None | Some(0) => return Err(DescriptorError::Missing),
        Some(MAGIC) => {}
        Some(_) => return Err(DescriptorError::Damaged("wrong magic")),
    }
    match bytes.get(4) {
        Some(&VERSION | &VERSION_NO_SESSION) => {}
        Some(&other) => return Err(DescriptorError::Version(other)),
        None => return Err(DescriptorError::Damaged("truncated")),
    }
    let len = word(16).ok_or(DescriptorError::Damaged("truncated"))? as usize;
    if len < HEADER || len > bytes.len() {
        return Err(DescriptorError::Damaged("length out of range"));
    }
    if word(20) != Some(crc32c::crc32c(&bytes[CRC_START..len])) {
        return Err(DescriptorError::Damaged("CRC mismatch"));
    }
    Ok(&bytes[..len])
}
