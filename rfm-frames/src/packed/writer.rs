//! Writing a packed struct for a lab's own programs to read, marking it whole
//! as its handshake says: the counterpart of [`super::StructReader`].
//!
//! | handshake | a write stores |
//! |---|---|
//! | `counter`, seqlock | marker odd, struct, marker even (the next) |
//! | `counter`, after-data | struct, marker + 1 |
//! | `flag` | marker 0, struct, marker = value |
//! | `none` | struct |
//!
//! Stores are 32-bit words. A struct that does not start and end on a word
//! shares its first and last words with its neighbours, which a write reads
//! and stores back as they were: declare such structs' neighbours as written
//! by no other program at the same time, or pad the struct to whole words.

use std::sync::atomic::{fence, Ordering};

use rfm_memory::{Region, RegionError};

use super::reader::marker_bytes;
use super::{ByteOrder, Counting, Mark, ReaderError};

/// `value`'s low `width` bytes in `order`, first in the array.
fn to_order(value: u64, width: usize, order: ByteOrder) -> [u8; 8] {
    match order {
        ByteOrder::Little => value.to_le_bytes(),
        ByteOrder::Big => (value << (64 - 8 * width)).to_be_bytes(),
    }
}

/// Writes one struct of `size` bytes at `offset` of a region.
#[derive(Debug)]
pub struct StructWriter {
    window: Region,
    skip: usize,
    size: usize,
    mark: Mark,
    order: ByteOrder,
    /// Whole structs written: a counter's value.
    written: u64,
    words: Vec<u8>,
}

impl StructWriter {
    pub fn new(
        region: &Region,
        offset: usize,
        size: usize,
        mark: Mark,
        order: ByteOrder,
    ) -> Result<StructWriter, ReaderError> {
        let (window, skip) = super::reader::words(region, offset, size, mark)?;
        let len = window.len();
        Ok(StructWriter {
            skip,
            size,
            mark,
            order,
            written: 0,
            words: vec![0; len],
            window,
        })
    }

    /// Stores `value` in the marker's bytes in memory (and in `words`), by
    /// whole 32-bit stores: the word that holds a marker of up to 4 bytes
    /// (its other bytes as they are), or the two of an 8-byte one.
    fn marker(&mut self, at: usize, width: usize, value: u64) -> Result<(), RegionError> {
        let at = self.skip + at;
        let bytes = to_order(value, width, self.order);
        self.words[at..at + width].copy_from_slice(&bytes[..width]);
        let word = at - at % 4;
        let mut current = [0u8; 8];
        let span = if width == 8 { 8 } else { 4 };
        marker_bytes(&self.window, word, &mut current[..span])?;
        current[at - word..at - word + width].copy_from_slice(&bytes[..width]);
        for (i, chunk) in current[..span].chunks(4).enumerate() {
            let w = u32::from_ne_bytes(chunk.try_into().expect("4 bytes"));
            self.window.store_u32(word + 4 * i, w, Ordering::Release)?;
        }
        Ok(())
    }

    /// Writes `bytes` (the struct, `size` bytes; the marker's bytes in it are
    /// the writer's own) as the handshake says.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), RegionError> {
        let partial = self.skip != 0 || !self.size.is_multiple_of(4);
        if partial {
            // The neighbours' bytes in the first and last words, as they are.
            self.window.read(0, &mut self.words)?;
        }
        self.words[self.skip..self.skip + self.size].copy_from_slice(&bytes[..self.size]);
        match self.mark {
            Mark::Counter {
                at,
                width,
                counting: Counting::Seqlock,
            } => {
                self.marker(at, width, 2 * self.written + 1)?;
                fence(Ordering::Release);
                self.window.write(0, &self.words)?;
                fence(Ordering::Release);
                self.marker(at, width, 2 * self.written + 2)?;
            }
            Mark::Counter {
                at,
                width,
                counting: Counting::AfterData,
            } => {
                // The data with the counter as it was, then the counter moved.
                let was = self.written;
                let bytes = to_order(was, width, self.order);
                let at_words = self.skip + at;
                self.words[at_words..at_words + width].copy_from_slice(&bytes[..width]);
                self.window.write(0, &self.words)?;
                fence(Ordering::Release);
                self.marker(at, width, was + 1)?;
            }
            Mark::Flag { at, width, value } => {
                self.marker(at, width, 0)?;
                fence(Ordering::Release);
                self.window.write(0, &self.words)?;
                fence(Ordering::Release);
                self.marker(at, width, value)?;
            }
            Mark::None => self.window.write(0, &self.words)?,
        }
        self.written += 1;
        Ok(())
    }

    /// Whole structs written.
    pub fn written(&self) -> u64 {
        self.written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::{Outcome, StructReader};
    use rfm_memory::{Device, OpenOptions};

    fn memory(name: &str) -> Region {
        let d = Device::open(
            &format!("loopback:packed-w-{name}"),
            &OpenOptions::default(),
        )
        .unwrap();
        d.map(0, 4096).unwrap()
    }

    /// Each handshake's writer and reader agree, at an odd offset in either
    /// byte order, and the neighbours' bytes of shared words stay as they were.
    #[test]
    fn what_a_writer_writes_its_reader_takes_and_the_neighbours_stay() {
        let marks = [
            Mark::Counter {
                at: 2,
                width: 2,
                counting: Counting::Seqlock,
            },
            Mark::Counter {
                at: 2,
                width: 2,
                counting: Counting::AfterData,
            },
            Mark::Flag {
                at: 2,
                width: 2,
                value: 0xA55A,
            },
            Mark::None,
        ];
        for (i, mark) in marks.into_iter().enumerate() {
            for order in [ByteOrder::Little, ByteOrder::Big] {
                let region = memory(&format!("{i}-{order:?}"));
                region.fill(0, 64, 0xEE).unwrap();
                let mut w = StructWriter::new(&region, 10, 9, mark, order).unwrap();
                let mut r = StructReader::new(&region, 10, 9, mark, order).unwrap();
                let mut out = [0u8; 9];
                for k in 1..=3u8 {
                    let bytes = [k; 9];
                    w.write(&bytes).unwrap();
                    let read = r.read(&mut out).unwrap();
                    assert_eq!(read.outcome, Outcome::Taken, "{mark:?} {order:?}");
                    let data = |b: &[u8]| [&b[..2], &b[4..]].concat();
                    assert_eq!(data(&out), data(&bytes), "{mark:?} {order:?}");
                }
                let mut all = [0u8; 24];
                region.read(0, &mut all).unwrap();
                assert_eq!(all[..10], [0xEE; 10], "{mark:?}: the bytes before");
                assert_eq!(all[19..], [0xEE; 5], "{mark:?}: the bytes after");
                let marker = &all[12..14];
                let expected: [u8; 2] = match (mark, order) {
                    (
                        Mark::Counter {
                            counting: Counting::Seqlock,
                            ..
                        },
                        ByteOrder::Big,
                    ) => [0, 6],
                    (
                        Mark::Counter {
                            counting: Counting::Seqlock,
                            ..
                        },
                        _,
                    ) => [6, 0],
                    (Mark::Counter { .. }, ByteOrder::Big) => [0, 3],
                    (Mark::Counter { .. }, _) => [3, 0],
                    (Mark::Flag { .. }, ByteOrder::Big) => [0xA5, 0x5A],
                    (Mark::Flag { .. }, _) => [0x5A, 0xA5],
                    (Mark::None, _) => [3, 3],
                };
                assert_eq!(marker, expected, "{mark:?} {order:?}");
            }
        }
    }
}
