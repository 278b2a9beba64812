//! Finding the nodes of a coupling in its memory, without their interface file.
//!
//! Every node writes its descriptor at [`DESCRIPTOR_OFFSET`] of its area, and areas
//! start on [`ALIGN`]-byte boundaries, so a descriptor can only begin at one of
//! those boundaries plus that offset: a scan reads one word per boundary and
//! decodes (with its CRC) only where the magic is. A descriptor left by an earlier
//! coupling in the same memory is found as well; callers tell current from stale by
//! the area's liveness words.

use super::descriptor::{self, Descriptor, DescriptorError};
use rfm_frames::area::{Area, ALIGN, DESCRIPTOR_OFFSET};
use rfm_memory::{Region, RegionError, WORD};
use std::sync::atomic::Ordering;

/// A node found in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub descriptor: Descriptor,
    /// Its area, from the start of the scanned region.
    pub area: Area,
}

/// Every valid descriptor in `region` whose area lies inside it, in address
/// order. On two rings, each ring's: a ring that missed a node's announce (cut
/// at its board) holds the descriptor before it, so a place may hold two, each
/// found once.
pub fn discover(region: &Region) -> Result<Vec<Found>, RegionError> {
    let mut found = Vec::new();
    for &ring in region.rings() {
        let mut more = Vec::new();
        Scan::default().step(&region.on(ring), usize::MAX, &mut more)?;
        for f in more {
            if !found.contains(&f) {
                found.push(f);
            }
        }
    }
    found.sort_by_key(|f: &Found| f.area.offset);
    Ok(found)
}

/// A scan in steps, for memory whose every load costs (a card's cross PCIe):
/// each [`Scan::step`] looks at a bounded number of places and goes on
/// from there the next time.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// The next area boundary to look at, from the start of the region.
    next: usize,
}

impl Scan {
    /// Looks at up to `places` area boundaries from where the last step
    /// ended, appending the nodes found to `found`; `true` when the scan
    /// reached the end of `region` (the next step starts again at its start).
    pub fn step(
        &mut self,
        region: &Region,
        places: usize,
        found: &mut Vec<Found>,
    ) -> Result<bool, RegionError> {
        let mut bytes = Vec::new();
        for _ in 0..places {
            let at = self.next + DESCRIPTOR_OFFSET;
            if at + 24 > region.len() {
                self.next = 0;
                return Ok(true);
            }
            self.next += ALIGN;
            if region.load_u32(at, Ordering::Acquire)? == descriptor::MAGIC {
                read_at(region, at, &mut bytes)?;
                if let Some(f) = accept(&bytes, (at - DESCRIPTOR_OFFSET) as u64, region.len()) {
                    found.push(f);
                }
            }
        }
        Ok(false)
    }
}

/// The descriptor at `at` of `region` (an area's own window, or the whole
/// memory), however long its header says it is: a node of this interface
/// built from another file writes a descriptor of another length than this
/// file's.
pub fn descriptor_at(region: &Region, at: usize) -> Result<Descriptor, DescriptorError> {
    let mut bytes = Vec::new();
    read_at(region, at, &mut bytes).map_err(|_| DescriptorError::Missing)?;
    descriptor::decode(&bytes)
}

/// Reads into `bytes` the descriptor at `at`, as long as its header says (at
/// most to the end of `region`; nothing when the header does not fit).
fn read_at(region: &Region, at: usize, bytes: &mut Vec<u8>) -> Result<(), RegionError> {
    bytes.clear();
    if at + 24 > region.len() {
        return Ok(());
    }
    let len = region.load_u32(at + 16, Ordering::Relaxed)? as usize;
    // Memory is read in whole words; the decoder ignores bytes past its length.
    let len = len.next_multiple_of(WORD).min(region.len() - at);
    bytes.resize(len, 0);
    region.read(at, bytes)
}

fn accept(bytes: &[u8], offset: u64, region_len: usize) -> Option<Found> {
    let descriptor = match descriptor::decode(bytes) {
        Ok(d) => d,
        Err(
            DescriptorError::Missing | DescriptorError::Damaged(_) | DescriptorError::Version(_),
        ) => return None,
    };
    let area = descriptor.area(offset)?;
    (area.end() <= region_len as u64).then_some(Found { descriptor, area })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{attitude, MemoryMap};
    use rfm_frames::payload::Payload;
    use rfm_memory::{Device, OpenOptions};

    #[test]
    fn a_scan_in_steps_finds_what_one_whole_scan_finds() {
        let device = Device::open("loopback:discover-steps", &OpenOptions::default()).unwrap();
        // Both areas, and few places for Miri to scan.
        let region = device.map(0, 16384).unwrap();
        let interface = attitude(0, 1);
        for area in MemoryMap::new(&interface).unwrap().areas {
            let node = &interface.nodes[area.node];
            let payload = Payload::of(node.signals.iter().map(|s| s.kind));
            let mut bytes = descriptor::encode(
                &interface.name,
                interface.fingerprint(),
                (node, &[]),
                &payload,
                Some(rfm_frames::session::Token::of(1)),
            );
            bytes.resize(bytes.len().next_multiple_of(WORD), 0);
            region
                .write(area.offset as usize + DESCRIPTOR_OFFSET, &bytes)
                .unwrap();
        }
        let whole = discover(&region).unwrap();
        assert_eq!(whole.len(), 2);
        let (mut scan, mut found, mut steps) = (Scan::default(), Vec::new(), 0);
        while !scan.step(&region, 7, &mut found).unwrap() {
            steps += 1;
        }
        assert_eq!(found, whole);
        // Every place a descriptor's first 24 bytes fit, seven a step.
        let places = (region.len() - DESCRIPTOR_OFFSET - 24) / ALIGN + 1;
        assert_eq!(steps, places / 7);
        // And the next round starts again at the start.
        let mut again = Vec::new();
        scan.step(&region, 60, &mut again).unwrap();
        assert_eq!(again, whole[..1]);
    }
}
