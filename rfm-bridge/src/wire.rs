//! What bridges say to each other: one tagged little-endian message per
//! Zenoh sample. Each bridge publishes everything on one key of its own
//! ([`data_key`]), so that Zenoh's in-order delivery per publisher keeps each
//! writer's words and frames in the order the writer stored them.
//!
//! | tag | message | body |
//! |---|---|---|
//! | 1 | [`Message::Hello`] | memory size (u64), device (the rest, UTF-8) |
//! | 2 | [`Message::Session`] | area offset (u64), owner, beat, closed (u32 each), claim stamp (u64 time, 16-byte id), descriptor (the rest) |
//! | 3 | [`Message::Frame`] | area offset (u64), entry offset in the area (u32), head (u32; [`NO_HEAD`]: none), entry bytes (the rest) |
//! | 4 | [`Message::Beat`] | area offset (u64), owner, beat, closed (u32 each) |
//! | 5 | [`Message::Ping`] | id (u64) |
//! | 6 | [`Message::Pong`] | id (u64), the pinging bridge (u32) |
//! | 7 | [`Message::Stats`] | area offset (u64), the node's statistics block, whole (its sequence first) |

use rfm_core::link::ownership::block::Words;
use rfm_frames::session::Token;

/// The prefix of every key the bridges use.
pub const PREFIX: &str = "rfm/bridge";

/// The key a bridge publishes on, named by its Zenoh id.
pub fn data_key(zid: &str) -> String {
    format!("{PREFIX}/{zid}")
}

/// The keys of every bridge.
pub fn all_keys() -> String {
    format!("{PREFIX}/*")
}

/// A frame message's head field when it carries no head word.
pub const NO_HEAD: u32 = u32::MAX;

/// When a bridge first announced a session of its host: orders two claims of
/// one slot on two hosts (Zenoh's hybrid logical clock, so that both bridges
/// order them alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp {
    pub time: u64,
    pub id: [u8; 16],
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    Hello {
        memory_size: u64,
        device: &'a str,
    },
    Session {
        offset: u64,
        words: Words,
        stamp: Stamp,
        descriptor: &'a [u8],
    },
    Frame {
        offset: u64,
        entry: u32,
        head: Option<u32>,
        bytes: &'a [u8],
    },
    Beat {
        offset: u64,
        words: Words,
    },
    /// A node's statistics block, whole (a reader of the host's memory on
    /// the other side sees the node's own timing too).
    Stats {
        offset: u64,
        block: &'a [u8],
    },
    Ping {
        id: u64,
    },
    Pong {
        id: u64,
        to: u32,
    },
}

/// Why bytes are not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("a message of {0} bytes is shorter than its kind's")]
    Short(usize),
    #[error("unknown message kind {0} (a bridge of another version?)")]
    Kind(u8),
    #[error("a hello whose device name is not UTF-8")]
    Device,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self.at + n;
        let s = self
            .bytes
            .get(self.at..end)
            .ok_or(WireError::Short(self.bytes.len()))?;
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }

    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }

    fn words(&mut self) -> Result<Words, WireError> {
        Ok(Words {
            owner: Token::from_word(self.u32()?),
            beat: self.u32()?,
            closed: Token::from_word(self.u32()?),
        })
    }

    fn rest(&mut self) -> &'a [u8] {
        let s = &self.bytes[self.at..];
        self.at = self.bytes.len();
        s
    }
}

fn put_words(out: &mut Vec<u8>, w: &Words) {
    for v in [Token::word(w.owner), w.beat, Token::word(w.closed)] {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

impl Message<'_> {
    /// Appends the message's bytes to `out` (cleared first).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        match self {
            Message::Hello {
                memory_size,
                device,
            } => {
                out.push(1);
                out.extend_from_slice(&memory_size.to_le_bytes());
                out.extend_from_slice(device.as_bytes());
            }
            Message::Session {
                offset,
                words,
                stamp,
                descriptor,
            } => {
                out.push(2);
                out.extend_from_slice(&offset.to_le_bytes());
                put_words(out, words);
                out.extend_from_slice(&stamp.time.to_le_bytes());
                out.extend_from_slice(&stamp.id);
                out.extend_from_slice(descriptor);
            }
            Message::Frame {
                offset,
                entry,
                head,
                bytes,
            } => {
                out.push(3);
                out.extend_from_slice(&offset.to_le_bytes());
                out.extend_from_slice(&entry.to_le_bytes());
                out.extend_from_slice(&head.unwrap_or(NO_HEAD).to_le_bytes());
                out.extend_from_slice(bytes);
            }
            Message::Beat { offset, words } => {
                out.push(4);
                out.extend_from_slice(&offset.to_le_bytes());
                put_words(out, words);
            }
            Message::Stats { offset, block } => {
                out.push(7);
                out.extend_from_slice(&offset.to_le_bytes());
                out.extend_from_slice(block);
            }
            Message::Ping { id } => {
                out.push(5);
                out.extend_from_slice(&id.to_le_bytes());
            }
            Message::Pong { id, to } => {
                out.push(6);
                out.extend_from_slice(&id.to_le_bytes());
                out.extend_from_slice(&to.to_le_bytes());
            }
        }
    }

    pub fn decode(bytes: &[u8]) -> Result<Message<'_>, WireError> {
        let mut r = Reader { bytes, at: 1 };
        let kind = *bytes.first().ok_or(WireError::Short(0))?;
        Ok(match kind {
            1 => Message::Hello {
                memory_size: r.u64()?,
                device: std::str::from_utf8(r.rest()).map_err(|_| WireError::Device)?,
            },
            2 => Message::Session {
                offset: r.u64()?,
                words: r.words()?,
                stamp: Stamp {
                    time: r.u64()?,
                    id: r.take(16)?.try_into().expect("16"),
                },
                descriptor: r.rest(),
            },
            3 => Message::Frame {
                offset: r.u64()?,
                entry: r.u32()?,
                head: Some(r.u32()?).filter(|&h| h != NO_HEAD),
                bytes: r.rest(),
            },
            4 => Message::Beat {
                offset: r.u64()?,
                words: r.words()?,
            },
            5 => Message::Ping { id: r.u64()? },
            7 => Message::Stats {
                offset: r.u64()?,
                block: r.take(rfm_frames::area::STATS_LEN)?,
            },
            6 => Message::Pong {
                id: r.u64()?,
                to: r.u32()?,
            },
            other => return Err(WireError::Kind(other)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_round_trips_and_a_short_one_is_refused() {
        let words = Words {
            owner: Token::from_word(3),
            beat: 9,
            closed: None,
        };
        let messages = [
            Message::Hello {
                memory_size: 1 << 20,
                device: "shm:lab",
            },
            Message::Session {
                offset: 4096,
                words,
                stamp: Stamp {
                    time: 77,
                    id: [5; 16],
                },
                descriptor: &[1, 2, 3, 4],
            },
            Message::Frame {
                offset: 64,
                entry: 320,
                head: Some(12),
                bytes: &[9; 128],
            },
            Message::Frame {
                offset: 64,
                entry: 320,
                head: None,
                bytes: &[],
            },
            Message::Beat { offset: 0, words },
            Message::Stats {
                offset: 4096,
                block: &[3; rfm_frames::area::STATS_LEN],
            },
            Message::Ping { id: 1 },
            Message::Pong { id: 1, to: 0xabcd },
        ];
        let mut out = Vec::new();
        for m in messages {
            m.encode(&mut out);
            assert_eq!(Message::decode(&out).unwrap(), m);
        }
        assert_eq!(Message::decode(&[4, 0, 0]), Err(WireError::Short(3)));
        assert_eq!(Message::decode(&[99]), Err(WireError::Kind(99)));
    }
}
