//! Copying a node's ring from one memory into another, as a bridge between
//! hosts does (`rfm-bridge`): the card's part in software.
//!
//! A ring entry is read whole through its seqlock on the writer's host and
//! written on the other through the same protocol, with the writer's own
//! sequence: a reader there sees an odd sequence while the bridge is inside,
//! then the writer's even one, never a torn frame; and the head word is
//! stored after the entry, as the writer stores it. Liveness words are
//! `rfm_core::link::ownership::block`'s (`rfm_core::link::ownership::block::write_mirrored`).

use std::sync::atomic::Ordering;

use crate::frame::framed::HEAD_OFFSET;
use rfm_memory::seqlock;
use rfm_memory::{Region, RegionError, WORD};

/// Attempts of a whole copy before [`read_entry`] gives up: a writer rewrites
/// an entry only once a ring of steps later.
const ATTEMPTS: u32 = 64;

/// The head word of an area (the low 32 bits of its newest step).
pub fn head(area: &Region) -> Result<u32, RegionError> {
    area.load_u32(HEAD_OFFSET, Ordering::Acquire)
}

/// Copies the entry at `offset` of `area` into `buf` (a whole number of
/// words, its first word the sequence) as one whole frame; `false` if the
/// writer was inside it at every attempt.
pub fn read_entry(area: &Region, offset: usize, buf: &mut [u8]) -> Result<bool, RegionError> {
    for _ in 0..ATTEMPTS {
        if seqlock::read_once(area, offset, buf)?.is_ok() {
            return Ok(true);
        }
        std::hint::spin_loop();
    }
    Ok(false)
}

/// Writes `bytes` (an entry as [`read_entry`] copied it) at `offset` of
/// `area` as its writer did: the sequence odd, the frame, the writer's
/// sequence; then, with `head`, the head word.
pub fn write_entry(
    area: &Region,
    offset: usize,
    bytes: &[u8],
    head: Option<u32>,
) -> Result<(), RegionError> {
    let Some(seq) = bytes.get(..WORD) else {
        return Err(RegionError::OutOfBounds {
            offset,
            len: bytes.len(),
            region_len: area.len(),
        });
    };
    let written = u32::from_ne_bytes(seq.try_into().expect("one word"));
    // The guard stores `seq | 1`, then one more: the writer's even sequence.
    let mut seq = written.wrapping_sub(1) | 1;
    seqlock::write(area, offset, &mut seq, bytes)?;
    if let Some(head) = head {
        area.store_u32(HEAD_OFFSET, head, Ordering::Release)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfm_memory::{Device, OpenOptions};

    #[test]
    fn an_entry_copied_into_another_memory_keeps_the_writers_sequence_and_bytes() {
        let a = Device::open("loopback:mirror-a", &OpenOptions::default()).unwrap();
        let b = Device::open("loopback:mirror-b", &OpenOptions::default()).unwrap();
        let (ra, rb) = (a.map(0, 4096).unwrap(), b.map(0, 4096).unwrap());
        let mut seq = 0;
        let frame: Vec<u8> = (0..128u32).map(|i| i as u8).collect();
        seqlock::write(&ra, 256, &mut seq, &frame).unwrap();
        seqlock::write(&ra, 256, &mut seq, &frame).unwrap();
        let mut buf = vec![0u8; 128];
        assert!(read_entry(&ra, 256, &mut buf).unwrap());
        write_entry(&rb, 256, &buf, Some(7)).unwrap();
        let mut copied = vec![0u8; 128];
        rb.read(256, &mut copied).unwrap();
        assert_eq!(copied, buf);
        assert_eq!(rb.load_u32(256, Ordering::Acquire).unwrap(), 4);
        assert_eq!(head(&rb).unwrap(), 7);
    }
}
