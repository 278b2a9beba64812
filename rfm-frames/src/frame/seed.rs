//! The `seed` layout: the article's packed `FlightData`, byte for byte.
//!
//! ```c
//! #pragma pack(push, 1)
//! struct FlightData {
//!     uint32_t header;      // 0x55AA55AA          offset 0
//!     uint64_t packetId;    // increasing           offset 4
//!     double   timestamp;   //                      offset 12
//!     float    attitude[3]; // roll, pitch, yaw     offset 20
//!     uint8_t  status;      //                      offset 32
//!     char     msg[32];     //                      offset 33
//! };                        // 65 bytes, little-endian, at the slot's offset
//! #pragma pack(pop)
//! ```
//!
//! The layout has no sequence word and no CRC, so tear-proofing is the reader's job
//! (see [`crate::slot::SeedReader`]); our writer adds what it can without changing a
//! byte of the format: it clears `header` before rewriting the packet and sets it
//! last, which the article's receivers already treat as "no packet" (they skip a
//! wrong header), and it keeps a sequence word after the packet
//! ([`SEQUENCE_OFFSET`]), which they never read.

use super::{FrameError, Message, MESSAGE_LEN};

/// The packet's size: 65 bytes, packed.
pub const PACKET_SIZE: usize = 65;
/// The packet rounded up to whole 32-bit words, as it is read and written. The
/// extra 3 bytes lie in the writer's own slot, which it alone writes.
pub const PACKET_WORDS_SIZE: usize = 68;
/// Where our writer keeps its sequence word: the head block's last word, after
/// the packet and before the article's acknowledgement word (offset 128).
pub const SEQUENCE_OFFSET: usize = crate::area::HEAD_BLOCK - rfm_memory::WORD;
const _: () = assert!(PACKET_WORDS_SIZE <= SEQUENCE_OFFSET);
/// `header` of a valid packet.
pub const MAGIC: u32 = 0x55AA_55AA;

/// The article's `FlightData`, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FlightData {
    pub packet_id: u64,
    pub timestamp: f64,
    /// roll, pitch, yaw: `float` on the wire, so an `f64` loses precision here.
    pub attitude: [f32; 3],
    pub status: u8,
    pub msg: Message,
}

/// Encodes a packet (followed by 3 zero padding bytes).
pub fn encode(p: &FlightData) -> [u8; PACKET_WORDS_SIZE] {
    let mut b = [0u8; PACKET_WORDS_SIZE];
    b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    b[4..12].copy_from_slice(&p.packet_id.to_le_bytes());
    b[12..20].copy_from_slice(&p.timestamp.to_le_bytes());
    for (i, a) in p.attitude.iter().enumerate() {
        b[20 + 4 * i..24 + 4 * i].copy_from_slice(&a.to_le_bytes());
    }
    b[32] = p.status;
    b[33..65].copy_from_slice(p.msg.as_raw());
    b
}

/// Decodes a packet; only the header can be checked.
pub fn decode(b: &[u8; PACKET_WORDS_SIZE]) -> Result<FlightData, FrameError> {
    let header = u32::from_le_bytes(b[0..4].try_into().expect("4 bytes"));
    if header == 0 {
        return Err(FrameError::Empty);
    }
    if header != MAGIC {
        return Err(FrameError::BadMagic {
            found: header,
            expected: MAGIC,
        });
    }
    let f32_at = |at: usize| f32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    let mut msg = [0u8; MESSAGE_LEN];
    msg.copy_from_slice(&b[33..65]);
    Ok(FlightData {
        packet_id: u64::from_le_bytes(b[4..12].try_into().expect("8 bytes")),
        timestamp: f64::from_le_bytes(b[12..20].try_into().expect("8 bytes")),
        attitude: [f32_at(20), f32_at(24), f32_at(28)],
        status: b[32],
        msg: Message::from_raw(msg),
    })
}

/// Offsets of the attitude preset's signals in its payload (roll, pitch, yaw,
/// status, message), which the seed layout carries.
pub mod payload {
    pub const ROLL: usize = 0;
    pub const PITCH: usize = 8;
    pub const YAW: usize = 16;
    pub const STATUS: usize = 24;
    pub const MESSAGE: usize = 28;
    pub const MESSAGE_SIZE: usize = 31;
    /// Bytes of the preset's payload.
    pub const LEN: usize = 64;
}

fn f64_at(b: &[u8], at: usize) -> f64 {
    f64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The packet `packet_id` of the attitude preset's `payload` at `timestamp`.
pub fn from_payload(b: &[u8], packet_id: u64, timestamp: f64) -> FlightData {
    let mut msg = [0u8; MESSAGE_LEN];
    msg[..payload::MESSAGE_SIZE]
        .copy_from_slice(&b[payload::MESSAGE..payload::MESSAGE + payload::MESSAGE_SIZE]);
    FlightData {
        packet_id,
        timestamp,
        attitude: [payload::ROLL, payload::PITCH, payload::YAW].map(|at| f64_at(b, at) as f32),
        status: b[payload::STATUS],
        msg: Message::from_raw(msg),
    }
}

/// Writes what `p` carries into an attitude preset `payload`.
pub fn to_payload(p: &FlightData, b: &mut [u8]) {
    for (at, a) in [payload::ROLL, payload::PITCH, payload::YAW]
        .into_iter()
        .zip(p.attitude)
    {
        b[at..at + 8].copy_from_slice(&f64::from(a).to_le_bytes());
    }
    b[payload::STATUS..payload::STATUS + 4].copy_from_slice(&i32::from(p.status).to_le_bytes());
    b[payload::MESSAGE..payload::MESSAGE + payload::MESSAGE_SIZE]
        .copy_from_slice(&p.msg.as_raw()[..payload::MESSAGE_SIZE]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_round_trips_through_a_payload() {
        let packet = FlightData {
            packet_id: 9,
            timestamp: 0.5,
            attitude: [0.25, -1.5, 3.0],
            status: 200,
            msg: Message::new("gear down").unwrap(),
        };
        let mut b = [0u8; payload::LEN];
        to_payload(&packet, &mut b);
        assert_eq!(from_payload(&b, 9, 0.5), packet);
    }

    #[test]
    fn is_byte_for_byte_the_articles_packed_struct() {
        let p = FlightData {
            packet_id: 0x0102_0304_0506_0708,
            timestamp: 1.5,
            attitude: [1.0, -2.0, 0.5],
            status: 7,
            msg: Message::new("Hello RFM").unwrap(),
        };
        let b = encode(&p);
        assert_eq!(&b[0..4], &[0xAA, 0x55, 0xAA, 0x55]);
        assert_eq!(&b[4..12], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(&b[12..20], &1.5f64.to_le_bytes());
        assert_eq!(&b[20..24], &1.0f32.to_le_bytes());
        assert_eq!(&b[28..32], &0.5f32.to_le_bytes());
        assert_eq!(b[32], 7);
        assert_eq!(&b[33..42], b"Hello RFM");
        assert_eq!(&b[65..], &[0, 0, 0]);
        assert_eq!(decode(&b), Ok(p));
    }

    #[test]
    fn reports_empty_and_wrong_header() {
        assert_eq!(decode(&[0u8; PACKET_WORDS_SIZE]), Err(FrameError::Empty));
        let mut b = encode(&FlightData::default());
        b[0] = 0xAB;
        let err = decode(&b).unwrap_err();
        assert!(
            matches!(
                err,
                FrameError::BadMagic {
                    found: 0x55AA55AB,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("0x55aa55ab"), "{err}");
    }
}
