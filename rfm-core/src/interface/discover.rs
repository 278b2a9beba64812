//! Finding the nodes of a coupling in its memory, without their interface file.
//!
//! Every node writes its descriptor at [`DESCRIPTOR_OFFSET`] of its area, and areas
//! start on [`ALIGN`]-byte boundaries, so a descriptor can only begin at one of
//! those boundaries plus that offset: a scan reads one word per boundary and
//! decodes (with its CRC) only where the magic is. A descriptor left by an earlier
//! coupling in the same memory is found as well; callers tell current from stale by
//! the area's liveness words.

use super::descriptor::{self, Descriptor, DescriptorError};
use crate::area::{Area, ALIGN, DESCRIPTOR_OFFSET};
use crate::region::{Region, RegionError, WORD};
use std::sync::atomic::Ordering;

/// A node found in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub descriptor: Descriptor,
    /// Its area, from the start of the scanned region.
    pub area: Area,
}

/// Every valid descriptor in `region` whose area lies inside it, in address order.
pub fn discover(region: &Region) -> Result<Vec<Found>, RegionError> {
    let mut found = Vec::new();
    let mut at = DESCRIPTOR_OFFSET;
    let mut bytes = Vec::new();
    while at + 24 <= region.len() {
        if region.load_u32(at, Ordering::Acquire)? == descriptor::MAGIC {
            read_at(region, at, &mut bytes)?;
            if let Some(f) = accept(&bytes, (at - DESCRIPTOR_OFFSET) as u64, region.len()) {
                found.push(f);
            }
        }
        at += ALIGN;
    }
    Ok(found)
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
