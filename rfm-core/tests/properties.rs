//! Property tests of the frame codecs: round trips for any field values, and every
//! single-bit corruption of a framed frame caught (or harmless).

mod common;

use proptest::prelude::*;
use rfm_core::frame::framed::{self, Frame, SyncMode, FRAME_SIZE};
use rfm_core::frame::seed::{self, FlightData};
use rfm_core::frame::{self as frames, FrameError, Message, MESSAGE_LEN};
use rfm_core::slot::{FramedReader, FramedWriter, ReadError};
use rfm_core::{Device, OpenOptions};

fn message() -> impl Strategy<Value = Message> {
    // Any bytes a foreign writer may leave, terminated or not.
    prop::array::uniform32(any::<u8>()).prop_map(Message::from_raw)
}

fn any_frame() -> impl Strategy<Value = Frame> {
    (
        (any::<u8>(), any::<u8>(), any::<u8>(), any::<bool>()),
        (
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            any::<f64>(),
            any::<u64>(),
        ),
        (any::<f64>(), any::<f64>(), any::<f64>()),
        message(),
    )
        .prop_map(
            |((slot, status, lag, lockstep), (epoch, ack, step, t, wall), (r, p, y), message)| {
                Frame {
                    writer_slot: slot,
                    status,
                    lag,
                    mode: if lockstep {
                        SyncMode::Lockstep
                    } else {
                        SyncMode::Free
                    },
                    epoch,
                    ack_epoch: ack,
                    step,
                    sim_time: t,
                    wall_clock_ns: wall,
                    attitude: [r, p, y],
                    message,
                }
            },
        )
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
    // Compared through their encodings: NaN payloads must survive bit for bit.
    #[test]
    fn framed_round_trips(f in any_frame()) {
        let bytes = framed::encode(&f);
        let back = framed::decode(&bytes).unwrap();
        prop_assert_eq!(framed::encode(&back), bytes);
        prop_assert_eq!(back.message, f.message);
    }

    #[test]
    fn seed_round_trips(p in any_packet()) {
        let bytes = seed::encode(&p);
        prop_assert_eq!(seed::encode(&seed::decode(&bytes).unwrap()), bytes);
    }

    #[test]
    fn every_single_bit_flip_is_caught_or_harmless(f in any_frame()) {
        let clean = framed::encode(&f);
        for bit in 0..FRAME_SIZE * 8 {
            let mut b = clean;
            b[bit / 8] ^= 1 << (bit % 8);
            match framed::decode(&b) {
                // The sequence word is outside the CRC: the contents are intact,
                // so delivering them is right (the seqlock judges that word).
                Ok(back) => prop_assert!(
                    bit / 8 < 4 && framed::encode(&back)[4..] == clean[4..],
                    "bit {} flipped and the frame still decoded", bit
                ),
                Err(FrameError::BadMagic { .. } | FrameError::BadCrc { .. } | FrameError::BadVersion { .. }) => {
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
    let region = d.map(0, frames::region_len(0)).unwrap();
    let slot = frames::slot(&region, 0).unwrap();
    let mut writer = FramedWriter::new(slot.clone()).unwrap();
    let reader = FramedReader::new(slot.clone()).unwrap().with_attempts(3);
    let f = Frame {
        step: 5,
        message: Message::new("ok").unwrap(),
        ..Frame::default()
    };
    let entry = framed::entry_offset(5);
    for (word, expect_crc) in [(12usize, true), (2, false), (1, true), (29, true)] {
        writer.publish(&f).unwrap();
        assert_eq!(reader.read_entry(5), Ok(f));
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
        let err = reader.read_entry(5).unwrap_err();
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
    writer.publish(&f).unwrap();
    slot.store_u32(entry, 7, std::sync::atomic::Ordering::Relaxed)
        .unwrap();
    let err = reader.read_entry(5).unwrap_err();
    assert!(err.to_string().contains("3 write in progress"), "{err}");
    // The next writer closes it.
    let mut next = FramedWriter::new(slot).unwrap();
    next.publish(&f).unwrap();
    assert_eq!(reader.read_entry(5), Ok(f));
    assert_eq!(MESSAGE_LEN, 32);
}
