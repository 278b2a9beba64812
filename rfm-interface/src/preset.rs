//! The attitude preset: today's `rfm_attitude` coupling (two nodes trading roll,
//! pitch, yaw, a status byte and a message), expressed as an interface.
//!
//! Its nodes are not in a file: the FMU's `nodeSlot` and `peerSlot` parameters
//! name them (`slot<N>`), so that two FMUs of one build couple over any pair of
//! slots. Each node's area sits at `slot ×` [`ATTITUDE_STRIDE`], whichever slots
//! the pair uses, so that several pairs share one memory as they did when slots
//! were a fixed grid, and the article's packet of slot 0 is at `regionOffset`.

use super::{Interface, NodeSpec, Signal, SignalType, Value};

/// The preset's interface (and model) name.
pub const ATTITUDE_NAME: &str = "rfm_attitude";

/// Bytes between the areas of consecutive slots: 256 slots fill 1 MiB.
pub const ATTITUDE_STRIDE: u64 = 4096;

/// Bytes of the `message` signal: the article's `char msg[32]` with its NUL.
pub const MESSAGE_SIZE: u16 = 31;

fn signal(name: &str, kind: SignalType, unit: Option<&str>, description: &str) -> Signal {
    Signal {
        name: name.into(),
        kind,
        unit: unit.map(Into::into),
        start: Value::zero(kind),
        min: None,
        max: None,
        description: Some(description.into()),
    }
}

/// What every node of the preset publishes, in order.
pub fn attitude_signals() -> Vec<Signal> {
    vec![
        signal("roll", SignalType::Real, Some("rad"), "Roll angle"),
        signal("pitch", SignalType::Real, Some("rad"), "Pitch angle"),
        signal("yaw", SignalType::Real, Some("rad"), "Yaw angle"),
        Signal {
            min: Some(0.0),
            max: Some(255.0),
            ..signal("status", SignalType::Integer, None, "Status byte, 0..255")
        },
        signal(
            "message",
            SignalType::String { size: MESSAGE_SIZE },
            None,
            "Text, at most 31 bytes of UTF-8",
        ),
    ]
}

/// The preset for a node in `node_slot` coupled to `peer_slot` (equal: a
/// self-loop, one node). Both nodes of a pair build the same interface.
pub fn attitude(node_slot: u8, peer_slot: u8) -> Interface {
    let mut slots = vec![node_slot.min(peer_slot), node_slot.max(peer_slot)];
    slots.dedup();
    Interface {
        name: ATTITUDE_NAME.into(),
        memory_size: rfm_memory::DEFAULT_MEMORY_SIZE as u64,
        max_lag: super::DEFAULT_MAX_LAG,
        settings: super::Settings::default(),
        nodes: slots
            .into_iter()
            .map(|slot| {
                NodeSpec::new(
                    format!("slot{slot}"),
                    slot,
                    Some(u64::from(slot) * ATTITUDE_STRIDE),
                    attitude_signals(),
                )
            })
            .collect(),
        foreign: Vec::new(),
    }
}

/// The area of `slot` in every attitude preset coupling (for tools and tests that
/// read a slot without a link).
pub fn attitude_area(slot: u8) -> rfm_frames::area::Area {
    let map = attitude(slot, slot)
        .map()
        .expect("the preset fits its memory");
    map.areas[0].clone()
}

/// Bytes of region the attitude preset needs for slots `0..=highest`.
pub fn attitude_region_len(highest: u8) -> usize {
    attitude_area(highest).end() as usize
}

const _: () = assert!((ATTITUDE_STRIDE as usize).is_multiple_of(rfm_frames::area::ALIGN));

#[cfg(test)]
mod tests {
    use super::*;

    /// The preset's payload is the seed layout's: an article program and a
    /// framed node read the same signals at the same places.
    #[test]
    fn the_payload_offsets_are_the_seed_layouts() {
        use rfm_frames::frame::seed::payload;
        let map = attitude(0, 1).map().unwrap();
        let p = &map.area(0).payload;
        let offsets: Vec<usize> = p.fields.iter().map(|f| f.offset).collect();
        assert_eq!(
            offsets,
            [
                payload::ROLL,
                payload::PITCH,
                payload::YAW,
                payload::STATUS,
                payload::MESSAGE
            ]
        );
        assert_eq!(p.len, payload::LEN);
    }

    #[test]
    fn every_slot_pair_fits_the_default_memory_and_areas_fit_their_stride() {
        for (a, b) in [(0, 1), (254, 255), (7, 7), (255, 0)] {
            let map = attitude(a, b).map().unwrap();
            for area in &map.areas {
                assert_eq!(area.offset, u64::from(area.slot) * ATTITUDE_STRIDE);
                assert!(area.len as u64 <= ATTITUDE_STRIDE, "{area:?}");
            }
        }
        assert_eq!(attitude(3, 3).nodes.len(), 1);
        assert_eq!(attitude(1, 0), attitude(0, 1));
    }
}
