//! Other hosts' nodes: writing what their bridges send into this host's
//! memory, as the card would. Only areas of sessions announced by another
//! bridge are written, each through its seqlock and in the order its bridge
//! sent it (Zenoh delivers one publisher's samples in order); an area this
//! host's session claimed first is refused.

use std::collections::HashMap;

use rfm_core::link::ownership::block::{self, Words};
use rfm_core::link::ownership::{self, Verdict};
use rfm_frames::area::{self, Area, STATS_OFFSET};
use rfm_frames::mirror;
use rfm_frames::session::Token;
use rfm_interface::descriptor::{self, Descriptor};
use rfm_memory::{Region, RegionError};

use crate::shared::{Announced, BridgeId, Shared, Traffic};
use crate::wire::{Message, Stamp};

/// A session of another host, as written here.
#[derive(Debug)]
struct Mirrored {
    area: Area,
    window: Region,
    token: Option<Token>,
    node: String,
    /// This host's session holds the area: nothing is written.
    refused: bool,
}

/// Why a message was not applied.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("a session at offset {offset} whose descriptor cannot be read ({why})")]
    Descriptor { offset: u64, why: String },
    #[error("a session at bytes {start}..{end}, past this memory's {len} bytes")]
    Outside { start: u64, end: u64, len: usize },
    #[error("memory: {0}")]
    Region(#[from] RegionError),
}

/// What writing another host's session decided, for the bridge's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Mirrored here from now on.
    Mirrored {
        node: String,
        slot: u8,
        from: String,
    },
    /// This host's node claimed the slot first: the other host's is refused there.
    Refused {
        node: String,
        slot: u8,
        from: String,
    },
    /// The other host claimed it first: this host's node is taken over (its
    /// heartbeat finds another owner and its link fails, naming it).
    TakenOver {
        node: String,
        slot: u8,
        from: String,
    },
}

#[derive(Debug)]
pub struct Writer {
    memory: Region,
    areas: HashMap<u64, Mirrored>,
}

/// Of two claims of one slot, the earlier wins; equal stamps (never from
/// two bridges: the id is each one's own) by token.
fn earlier(a: (Stamp, Option<Token>), b: (Stamp, Option<Token>)) -> bool {
    a < b
}

impl Writer {
    pub fn new(memory: Region) -> Writer {
        Writer {
            memory,
            areas: HashMap::new(),
        }
    }

    /// The other hosts' nodes written here, by name and slot.
    pub fn nodes(&self) -> Vec<(String, u8)> {
        self.areas
            .values()
            .filter(|m| !m.refused)
            .map(|m| (m.node.clone(), m.area.slot))
            .collect()
    }

    /// Writes one message of bridge `from`.
    pub fn apply(
        &mut self,
        from: &BridgeId,
        message: &Message,
        shared: &Shared,
    ) -> Result<Option<Decision>, ApplyError> {
        match *message {
            Message::Session {
                offset,
                words,
                stamp,
                descriptor,
            } => self.session(from, offset, (words, stamp), descriptor, shared),
            Message::Frame {
                offset,
                entry,
                head,
                bytes,
            } => {
                if let Some(m) = self.areas.get(&offset).filter(|m| !m.refused) {
                    mirror::write_entry(&m.window, entry as usize, bytes, head)?;
                    Traffic::add(&shared.traffic.frames_in, 1);
                }
                Ok(None)
            }
            Message::Beat { offset, words } => {
                let Some(m) = self.areas.get_mut(&offset).filter(|m| !m.refused) else {
                    return Ok(None);
                };
                // A node of this host took the slot since (the other host's
                // session had gone silent for the claim's bound): it is not
                // overwritten.
                if !ownership::owned_by(&Words::read(&m.window)?, m.token) {
                    m.refused = true;
                    return Ok(Some(Decision::Refused {
                        node: m.node.clone(),
                        slot: m.area.slot,
                        from: from.short().to_owned(),
                    }));
                }
                block::write_mirrored_beat(&m.window, words)?;
                Ok(None)
            }
            Message::Stats { offset, block } => {
                if let Some(m) = self.areas.get(&offset).filter(|m| !m.refused) {
                    // Through the block's seqlock, ending on the writer's own
                    // sequence: what a reader here copies is whole.
                    let mut seq = rfm_memory::seqlock::sequence_of(block).wrapping_sub(2);
                    rfm_memory::seqlock::write(&m.window, STATS_OFFSET, &mut seq, block)?;
                }
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// Bridge `from`'s session at `offset`: its claim (`words`, `stamp`) and
    /// descriptor (`bytes`), written here unless this host's claim is earlier.
    fn session(
        &mut self,
        from: &BridgeId,
        offset: u64,
        (words, stamp): (Words, Stamp),
        bytes: &[u8],
        shared: &Shared,
    ) -> Result<Option<Decision>, ApplyError> {
        let (d, area) = self.locate(offset, bytes)?;
        let window = area::window(&self.memory, &area)?;
        self.areas
            .retain(|&o, m| o == offset || !m.area.overlaps(&area));
        let (node, slot, short) = (d.node, d.slot, from.short().to_owned());
        let mirrored = |refused| Mirrored {
            area: area.clone(),
            window: window.clone(),
            token: words.owner,
            node: node.clone(),
            refused,
        };
        let taken_over = match first_claim(shared, &area, (stamp, words.owner)) {
            First::Here => {
                self.areas.insert(offset, mirrored(true));
                return Ok(Some(Decision::Refused {
                    node,
                    slot,
                    from: short,
                }));
            }
            First::There => true,
            First::Alone => false,
        };
        let known = self
            .areas
            .get(&offset)
            .is_some_and(|m| Verdict::of(words.owner, m.token).is_its() && !m.refused);
        block::write_mirrored(&window, words, from.word(), bytes)?;
        self.areas.insert(offset, mirrored(false));
        Ok(if taken_over {
            Some(Decision::TakenOver {
                node,
                slot,
                from: short,
            })
        } else if !known {
            Some(Decision::Mirrored {
                node,
                slot,
                from: short,
            })
        } else {
            None
        })
    }

    /// The descriptor in `bytes` of a session at `offset`, and its area,
    /// which must lie inside this memory.
    fn locate(&self, offset: u64, bytes: &[u8]) -> Result<(Descriptor, Area), ApplyError> {
        let d = descriptor::decode(bytes).map_err(|e| ApplyError::Descriptor {
            offset,
            why: e.to_string(),
        })?;
        let area = d.area(offset).ok_or_else(|| ApplyError::Descriptor {
            offset,
            why: "its signals are not laid out as this build lays them".into(),
        })?;
        if area.end() > self.memory.len() as u64 {
            return Err(ApplyError::Outside {
                start: area.offset,
                end: area.end(),
                len: self.memory.len(),
            });
        }
        Ok((d, area))
    }
}

/// Whose claim of an area came first.
enum First {
    /// No session of this host announced a claim over it.
    Alone,
    /// This host's session: the other host's is refused here.
    Here,
    /// The other host's: this host's session is taken over.
    There,
}

/// Weighs the other host's claim (`stamp`, `owner`) of `area` against the
/// claims this host's sessions announced over it; when the other host's came
/// first, this host's announce is forgotten.
fn first_claim(shared: &Shared, area: &Area, (stamp, owner): (Stamp, Option<Token>)) -> First {
    let rival: Option<Announced> = shared
        .announced()
        .iter()
        .find(|a| area.overlaps_bytes(a.start, a.end) && !Verdict::of(a.token, owner).is_its())
        .copied();
    let Some(local) = rival else {
        return First::Alone;
    };
    if earlier((local.stamp, local.token), (stamp, owner)) {
        return First::Here;
    }
    shared
        .announced()
        .retain(|a| !(a.start == local.start && Verdict::of(a.token, local.token).is_its()));
    First::There
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfm_frames::payload::Payload;
    use rfm_interface::{attitude, MemoryMap};
    use rfm_memory::{Device, OpenOptions};

    /// A memory, and slot 1's descriptor and area of the attitude interface.
    fn setup(name: &str) -> (Region, Vec<u8>, Area) {
        let device = Device::open(&format!("loopback:{name}"), &OpenOptions::default()).unwrap();
        let memory = device.map(0, device.size() as usize).unwrap();
        let interface = attitude(0, 1);
        let map = MemoryMap::new(&interface).unwrap();
        let area = map.areas[1].clone();
        let node = &interface.nodes[area.node];
        let payload = Payload::of(node.signals.iter().map(|s| s.kind));
        // Written by the other host's session, token 9.
        let mut bytes = descriptor::encode(
            &interface.name,
            interface.fingerprint(),
            (node, &[]),
            &payload,
            Some(Token::of(9)),
        );
        bytes.resize(area.descriptor_len, 0);
        (memory, bytes, area)
    }

    fn stamp(time: u64) -> Stamp {
        Stamp { time, id: [1; 16] }
    }

    fn words(owner: u32) -> Words {
        Words {
            owner: Token::from_word(owner),
            beat: 1,
            closed: None,
        }
    }

    /// Frame 1 of slot 1's writer, with the head.
    fn frame_1(area: &Area) -> Message<'static> {
        Message::Frame {
            offset: area.offset,
            entry: area.entry_offset(1) as u32,
            head: Some(1),
            bytes: &[2u8; 128],
        }
    }

    /// This host's session of slot 1 (token 7), announced at time 10.
    fn local(memory: &Region, area: &Area, shared: &Shared) -> Region {
        let window = area::window(memory, area).unwrap();
        window
            .store_u32(
                rfm_frames::area::LIVENESS_OFFSET,
                7,
                std::sync::atomic::Ordering::Release,
            )
            .unwrap();
        shared.announced().push(Announced {
            start: area.offset,
            end: area.end(),
            token: Token::from_word(7),
            stamp: stamp(10),
            slot: area.slot,
        });
        window
    }

    /// Another host's session of slot 1 (token 9) claimed at `time`,
    /// arriving where this host's (token 7, at time 10) holds the slot.
    fn rival(name: &str, time: u64) -> (Writer, Region, Area, Shared, Option<Decision>) {
        let (memory, descriptor, area) = setup(name);
        let shared = Shared::default();
        let window = local(&memory, &area, &shared);
        let mut w = Writer::new(memory);
        let session = Message::Session {
            offset: area.offset,
            words: words(9),
            stamp: stamp(time),
            descriptor: &descriptor,
        };
        let d = w
            .apply(&BridgeId::parse("b0000002").unwrap(), &session, &shared)
            .unwrap();
        (w, window, area, shared, d)
    }

    #[test]
    fn a_slot_claimed_later_on_another_host_is_refused_here() {
        let (mut w, window, area, shared, d) = rival("remote-refused", 11);
        assert!(
            matches!(d, Some(Decision::Refused { slot: 1, .. })),
            "{d:?}"
        );
        assert_eq!(Words::read(&window).unwrap().owner, Token::from_word(7));
        assert_eq!(block::remote_holder(&window).unwrap(), None);
        // Nor are its frames written.
        w.apply(
            &BridgeId::parse("b0000002").unwrap(),
            &frame_1(&area),
            &shared,
        )
        .unwrap();
        assert_eq!(mirror::head(&window).unwrap(), 0);
    }

    #[test]
    fn a_slot_claimed_earlier_on_another_host_takes_this_hosts_node_over() {
        let (mut w, window, area, shared, d) = rival("remote-taken", 9);
        assert!(
            matches!(d, Some(Decision::TakenOver { slot: 1, .. })),
            "{d:?}"
        );
        // The node here finds another owner at its next beat.
        assert_eq!(Words::read(&window).unwrap().owner, Token::from_word(9));
        assert_eq!(block::remote_holder(&window).unwrap(), Some(0xb000_0002));
        assert!(shared.announced().is_empty());
        w.apply(
            &BridgeId::parse("b0000002").unwrap(),
            &frame_1(&area),
            &shared,
        )
        .unwrap();
        assert_eq!(mirror::head(&window).unwrap(), 1);
    }
}
