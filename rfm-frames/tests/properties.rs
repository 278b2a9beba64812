//! Property tests of the frame codecs: round trips for any field values, and every
//! single-bit corruption of a framed frame caught (or harmless).

mod common;

use proptest::prelude::*;
use rfm_frames::frame::framed::{self, FrameBuf, Header, SyncMode};
use rfm_frames::frame::seed::{self, FlightData};
use rfm_frames::frame::{FrameError, Message, MESSAGE_LEN};
use rfm_frames::slot::{FramedReader, FramedWriter, ReadError};
use rfm_memory::{Device, OpenOptions};

fn message() -> impl Strategy<Value = Message> {
    // Any bytes a foreign writer may leave, terminated or not.
    prop::array::uniform32(any::<u8>()).prop_map(Message::from_raw)
}

fn any_header() -> impl Strategy<Value = Header> {
    (
        (any::<u8>(), any::<u8>(), any::<bool>()),
        (
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            any::<f64>(),
            any::<u64>(),
        ),
    )
        .prop_map(
            |((writer_slot, lag, lockstep), (epoch, fingerprint, step, sim_time, wall))| Header {
                writer_slot,
                lag,
                mode: if lockstep {
                    SyncMode::Lockstep
                } else {
                    SyncMode::Free
                },
                epoch,
                fingerprint,
                step,
                sim_time,
                wall_clock_ns: wall,
            },
        )
}

/// A sealed frame: any header over any payload of 0 to 32 words.
fn any_frame() -> impl Strategy<Value = FrameBuf> {
    (any_header(), prop::collection::vec(any::<u64>(), 0..32)).prop_map(|(h, words)| {
        let mut f = FrameBuf::new(words.len() * 8);
        for (chunk, w) in f.payload_mut().chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        f.seal(&h);
        f
    })
}

fn any_packet() -> impl Strategy<Value = FlightData> {
    (
        any::<u64>(),
        any::<f64>(),
        any::<[f32; 3]>(),
        any::<u8>(),
        message(),
    )
        .prop_map(|(packet_id, timestamp, attitude, status, msg)| FlightData {
            packet_id,
            timestamp,
            attitude,
            status,
            msg,
        })
}

proptest! {
    // Compared through their bytes: NaN payloads must survive bit for bit.
    #[test]
    fn framed_round_trips(f in any_frame()) {
        let header = f.check().unwrap();
        let mut again = FrameBuf::new(f.payload().len());
        again.payload_mut().copy_from_slice(f.payload());
        again.seal(&header);
        prop_assert_eq!(again.bytes(), f.bytes());
    }

    #[test]
    fn seed_round_trips(p in any_packet()) {
        let bytes = seed::encode(&p);
        prop_assert_eq!(seed::encode(&seed::decode(&bytes).unwrap()), bytes);
    }

    #[test]
    fn every_single_bit_flip_is_caught_or_harmless(f in any_frame()) {
        let clean = f.bytes().to_vec();
        let payload_len = f.payload().len();
        for bit in 0..clean.len() * 8 {
            let mut b = clean.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            match framed::check(&b, payload_len) {
                // The sequence word is outside the CRC: the contents are intact,
                // so delivering them is right (the seqlock judges that word).
                Ok(_) => prop_assert!(
                    bit / 8 < 4,
                    "bit {} flipped and the frame still checked", bit
                ),
                Err(FrameError::BadMagic { .. } | FrameError::BadCrc { .. } | FrameError::BadVersion { .. } | FrameError::BadLength { .. }) => {
                    prop_assert!(bit / 8 >= 4, "bit {} of the sequence word was rejected", bit)
                }
                Err(FrameError::Empty) => prop_assert!(false, "bit {} made the frame look empty", bit),
            }
        }
    }
}

/// Corruption in memory (a flipped bit on the fibre, garbage from a stray writer):
/// the slot reader reports it instead of returning data, and says what it saw.
#[test]
fn slot_reader_reports_corrupted_frames() {
    let d = Device::open(
        &format!("loopback:{}", common::unique("props")),
        &OpenOptions::default(),
    )
    .unwrap();
    let region = d.map(0, common::region_len(0)).unwrap();
    let slot = common::window(&region, 0);
    let ring = common::ring();
    let mut writer = FramedWriter::new(slot.clone(), ring).unwrap();
    let reader = FramedReader::new(slot.clone(), ring)
        .unwrap()
        .with_attempts(3);
    let words = std::array::from_fn(|i| i as u64 * 0x0101_0101);
    let (mut f, h) = common::frame(0, 5, 1, words);
    let mut buf = reader.buffer();
    let entry = ring.entry_offset(5);
    // Words: sim time (CRC), magic, CRC, payload (CRC).
    for (word, expect_crc) in [(12usize, true), (2, false), (1, true), (29, true)] {
        writer.publish(&mut f, &h).unwrap();
        assert_eq!(reader.read_entry(5, &mut buf), Ok(h));
        let offset = entry + word * 4;
        let w = slot
            .load_u32(offset, std::sync::atomic::Ordering::Relaxed)
            .unwrap();
        slot.store_u32(
            offset,
            w ^ 0x0000_0100,
            std::sync::atomic::Ordering::Relaxed,
        )
        .unwrap();
        let err = reader.read_entry(5, &mut buf).unwrap_err();
        let ReadError::Unreadable {
            attempts,
            rejections,
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(*attempts, 3);
        assert!(rejections.saw_bad_frame(), "{err}");
        assert_eq!(rejections.bad_crc == 3, expect_crc, "{err}");
        assert_eq!(rejections.bad_magic == 3, !expect_crc, "{err}");
        let text = err.to_string();
        assert!(
            text.starts_with("no consistent frame after 3 attempts: 3 "),
            "{text}"
        );
        assert!(
            text.contains(if expect_crc { "bad CRC" } else { "wrong magic" }),
            "{text}"
        );
    }
    // A sequence word left odd (a writer that died mid-frame) is "write in progress".
    writer.publish(&mut f, &h).unwrap();
    slot.store_u32(entry, 7, std::sync::atomic::Ordering::Relaxed)
        .unwrap();
    let err = reader.read_entry(5, &mut buf).unwrap_err();
    assert!(err.to_string().contains("3 write in progress"), "{err}");
    // The next writer closes it.
    let mut next = FramedWriter::new(slot, ring).unwrap();
    next.publish(&mut f, &h).unwrap();
    assert_eq!(reader.read_entry(5, &mut buf), Ok(h));
    assert_eq!(common::words(&buf), words);
    assert_eq!(MESSAGE_LEN, 32);
}
