//! A mapped window of reflective memory, and the only code that dereferences it
//! (or, on a card, hands a block of it to the vendor's `RFM2gRead`).
//!
//! Every access through the mapping is an aligned 32-bit atomic load or store. That width is the
//! vendor's advice for RFM2g PIO mappings (uncached, every access crosses PCIe),
//! atomics make the cross-process/cross-node sharing sound for the Rust memory
//! model (and for Miri), and on x86-64 they compile to the same plain `mov` a
//! `volatile` access would. No read-modify-write instruction is ever issued: a
//! locked RMW over PCIe is not something the board promises to honour.
//!
//! Byte buffers are moved word by word with `u32::from_ne_bytes`, so the bytes in
//! memory are exactly the bytes of the buffer: callers fix the byte order of their
//! fields themselves (the frame codecs use little-endian), whatever the host.

use std::any::Any;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU8, Ordering};
use std::sync::Arc;

use crate::counts;
use rfm2g_sys::Rfm2gError;

mod rings;

pub use rings::Network;
use rings::Twin;

/// Alignment, in bytes, of every offset and length given to a [`Region`].
pub const WORD: usize = 4;

/// The largest `shm:` or `loopback:` memory, and the largest `memory_size` an
/// interface may give: the memory of the largest RFM2g board (a PCIE-5565 holds
/// 64-256 MiB). More cannot be a card's, and in-process or shared memory of
/// that size is a typo, not a coupling (2^40 bytes aborted a master).
pub const MAX_MEMORY_SIZE: u64 = 256 << 20;

/// A window asked of a memory that does not fit it: the one rule, and message,
/// of every backend's and the device's window check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "device `{device}`: a window of {len} bytes at offset {offset} does not fit its \
     {size}-byte memory"
)]
pub struct OutsideMemory {
    pub device: String,
    pub offset: u64,
    pub len: u64,
    pub size: u64,
}

/// An access that would leave the window or break its alignment rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegionError {
    /// `offset + len` reaches past the end of the window.
    #[error(
        "access of {len} bytes at offset {offset} is outside the {region_len}-byte region \
         (it must end at or before byte {region_len})"
    )]
    OutOfBounds {
        offset: usize,
        len: usize,
        region_len: usize,
    },
    /// The offset is not a multiple of [`WORD`].
    #[error("offset {offset} is not a multiple of {WORD}: reflective memory is accessed in aligned 32-bit words")]
    UnalignedOffset { offset: usize },
    /// The length is not a multiple of [`WORD`].
    #[error("length {len} is not a multiple of {WORD}: reflective memory is accessed in whole 32-bit words")]
    UnalignedLength { len: usize },
    /// A single access of `width` bytes at an offset that is not a multiple of it.
    #[error("offset {offset} is not a multiple of {width}: a {width}-byte access must be aligned to {width} bytes")]
    UnalignedAccess { offset: usize, width: usize },
    /// A single access of a width other than 1, 2, 4 or 8 bytes.
    #[error("a single access is 1, 2, 4 or 8 bytes wide, not {width}")]
    BadWidth { width: usize },
    /// A DMA read through the vendor library failed.
    #[error(transparent)]
    Call(Rfm2gError),
}

/// What reads a range of a window in one call instead of word by word: the
/// vendor library's `RFM2gRead`, which the driver runs as one DMA transfer.
/// On a card that is one fixed cost instead of a PCIe round trip per word.
pub(crate) trait DmaRead: Send + Sync {
    /// Reads `buf.len()` bytes at `offset` of the whole memory.
    fn read_dma(&self, offset: u64, buf: &mut [u8]) -> Result<(), Rfm2gError>;
}

/// A window's DMA reads: where its first byte lies in the whole memory, and
/// from how many bytes on a read goes through [`DmaRead`].
#[derive(Clone)]
struct Dma {
    reader: Arc<dyn DmaRead>,
    base: u64,
    from: usize,
}

/// A window of mapped memory: base, length and whatever keeps the mapping alive.
///
/// Cloning is cheap and shares the mapping; it is unmapped when the last clone
/// (and the backend's own handle) is dropped.
#[derive(Clone)]
pub struct Region {
    base: NonNull<AtomicU32>,
    len: usize,
    /// Unmaps on drop (munmap, `RFM2gUnMapUserMemory`, or frees the loopback buffer).
    _owner: Arc<dyn Any + Send + Sync>,
    /// Dma of at least `from` bytes read in one vendor call ([`Region::read_dma`]).
    dma: Option<Dma>,
    /// The same window of a second memory on a redundant ring ([`Region::redundant`]).
    twin: Option<Twin>,
}

// SAFETY: the region only hands out atomic accesses to memory that `_owner` keeps
// mapped; atomics may be used from any thread.
unsafe impl Send for Region {}
// SAFETY: as above: all shared access goes through `AtomicU32`.
unsafe impl Sync for Region {}

impl fmt::Debug for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Region")
            .field("base", &self.base)
            .field("len", &self.len)
            .finish()
    }
}

impl Region {
    /// Wraps a mapping that a backend made.
    ///
    /// # Safety
    /// `base` must be aligned to [`WORD`] and valid for reads and writes of `len`
    /// bytes for as long as `owner` lives; the memory may be changed concurrently
    /// only through aligned 32-bit accesses (other processes, the RFM board, or other
    /// `Region`s over the same memory), never through Rust references.
    pub(crate) unsafe fn from_raw_parts(
        base: NonNull<u8>,
        len: usize,
        owner: Arc<dyn Any + Send + Sync>,
    ) -> Region {
        debug_assert_eq!(base.as_ptr() as usize % WORD, 0, "unaligned mapping");
        Region {
            base: base.cast(),
            len: len - len % WORD,
            _owner: owner,
            dma: None,
            twin: None,
        }
    }

    /// Reads ranges of at least `from` bytes through `reader`, this window's
    /// first byte being byte `base` of the memory `reader` reads.
    pub(crate) fn with_dma_reads(
        mut self,
        reader: Arc<dyn DmaRead>,
        base: u64,
        from: usize,
    ) -> Region {
        self.dma = Some(Dma { reader, base, from });
        self
    }

    /// Length of the window in bytes (a multiple of [`WORD`]).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for an empty window.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A sub-window `[offset, offset + len)` sharing this mapping.
    pub fn subregion(&self, offset: usize, len: usize) -> Result<Region, RegionError> {
        self.check(offset, len)?;
        Ok(Region {
            // SAFETY: `check` proved `offset + len <= self.len`, so the pointer stays
            // inside (or one past) the mapping; it is word-aligned because both base
            // and offset are.
            base: unsafe { self.base.add(offset / WORD) },
            len,
            _owner: Arc::clone(&self._owner),
            dma: self.dma.as_ref().map(|b| Dma {
                reader: Arc::clone(&b.reader),
                base: b.base + offset as u64,
                from: b.from,
            }),
            twin: self.twin.as_ref().map(|t| Twin {
                // SAFETY: the twin maps the same length, so the same bound holds.
                base: unsafe { t.base.add(offset / WORD) },
                _owner: Arc::clone(&t._owner),
                source: Arc::clone(&t.source),
                withheld: Arc::clone(&t.withheld),
            }),
        })
    }

    #[inline]
    fn check(&self, offset: usize, len: usize) -> Result<(), RegionError> {
        if !offset.is_multiple_of(WORD) {
            return Err(RegionError::UnalignedOffset { offset });
        }
        if !len.is_multiple_of(WORD) {
            return Err(RegionError::UnalignedLength { len });
        }
        match offset.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(RegionError::OutOfBounds {
                offset,
                len,
                region_len: self.len,
            }),
        }
    }

    /// The word at `offset` of the memory at `base` (this window's, or its
    /// twin's), which the caller checked.
    #[inline]
    fn word(&self, base: NonNull<AtomicU32>, offset: usize) -> &AtomicU32 {
        // SAFETY: in bounds and aligned (the caller checked); both memories of a
        // window are as long, and outlive `&self` because their owners do;
        // shared mutation happens only through atomics.
        unsafe { AtomicU32::from_ptr(base.as_ptr().add(offset / WORD).cast()) }
    }

    /// The words of a range of the memory at `base`, which the caller checked.
    #[inline]
    fn words(&self, base: NonNull<AtomicU32>, offset: usize, len: usize) -> &[AtomicU32] {
        // SAFETY: `[offset, offset + len)` is in bounds and word-aligned (the
        // caller checked) in either memory of the window; `AtomicU32` has the
        // size and alignment of `u32` and interior mutability, so a shared
        // slice of them over memory others write concurrently is sound.
        unsafe { std::slice::from_raw_parts(base.as_ptr().add(offset / WORD), len / WORD) }
    }

    /// Loads the 32-bit word at `offset` (native byte order).
    #[inline]
    pub fn load_u32(&self, offset: usize, order: Ordering) -> Result<u32, RegionError> {
        self.check(offset, WORD)?;
        counts::pio_read(1, WORD);
        Ok(self.word(self.read_base(), offset).load(order))
    }

    /// Stores the 32-bit word at `offset` (native byte order).
    #[inline]
    pub fn store_u32(&self, offset: usize, value: u32, order: Ordering) -> Result<(), RegionError> {
        self.check(offset, WORD)?;
        self.each_written(|base| {
            self.word(base, offset).store(value, order);
            counts::pio_write(1, WORD);
        });
        Ok(())
    }

    /// Reads `buf.len()` bytes at `offset` in one vendor call when this window
    /// reads ranges that long that way (DMA); `Ok(false)`, having read nothing, when
    /// it does not (the caller then reads word by word).
    #[inline]
    pub(crate) fn read_dma(&self, offset: usize, buf: &mut [u8]) -> Result<bool, RegionError> {
        let Some(dma) = self.dma.as_ref().filter(|b| buf.len() >= b.from) else {
            return Ok(false);
        };
        if self.reading() == Network::B {
            return Ok(false);
        }
        self.check(offset, buf.len())?;
        dma.reader
            .read_dma(dma.base + offset as u64, buf)
            .map_err(RegionError::Call)?;
        counts::vendor_call(buf.len(), true);
        Ok(true)
    }

    /// Copies `buf.len()` bytes from the region into `buf`, one relaxed word at a time.
    ///
    /// Not atomic as a whole: a concurrent writer can tear it. The [`seqlock`]
    /// and rfm-core's seed reader are what make whole frames consistent.
    ///
    /// [`seqlock`]: crate::seqlock
    #[inline]
    pub fn read(&self, offset: usize, buf: &mut [u8]) -> Result<(), RegionError> {
        self.check(offset, buf.len())?;
        let words = self.words(self.read_base(), offset, buf.len());
        counts::pio_read(words.len(), buf.len());
        copy_out(words, buf);
        Ok(())
    }

    /// Copies `buf` into the region, one relaxed word at a time.
    #[inline]
    pub fn write(&self, offset: usize, buf: &[u8]) -> Result<(), RegionError> {
        self.check(offset, buf.len())?;
        self.each_written(|base| {
            let words = self.words(base, offset, buf.len());
            counts::pio_write(words.len(), buf.len());
            let (chunks, _) = buf.as_chunks::<WORD>();
            for (chunk, word) in chunks.iter().zip(words) {
                word.store(u32::from_ne_bytes(*chunk), Ordering::Relaxed);
            }
        });
        Ok(())
    }

    /// Loads one naturally aligned value of `width` bytes (1, 2, 4 or 8) at
    /// `offset`, little-endian as RFM2g presents memory.
    ///
    /// For diagnostics (a person peeking at memory): 1- and 2-byte accesses are
    /// single atomic loads of that width, and 8 bytes are two 32-bit loads (low
    /// word first), not one atomic access, as RFM2g PIO has no 64-bit access.
    pub fn peek(&self, offset: usize, width: usize) -> Result<u64, RegionError> {
        self.single(offset, width)?;
        if width < WORD {
            counts::pio_read(1, width);
        }
        let base = self.read_base();
        Ok(match width {
            1 => u64::from(self.byte(base, offset).load(Ordering::Acquire)),
            2 => u64::from(u16::from_le(
                self.half(base, offset).load(Ordering::Acquire),
            )),
            4 => u64::from(u32::from_le(self.load_u32(offset, Ordering::Acquire)?)),
            _ => {
                let low = u32::from_le(self.load_u32(offset, Ordering::Acquire)?);
                let high = u32::from_le(self.load_u32(offset + WORD, Ordering::Acquire)?);
                u64::from(low) | (u64::from(high) << 32)
            }
        })
    }

    /// Stores one naturally aligned value of `width` bytes at `offset`: the
    /// counterpart of [`Region::peek`], with the same rules.
    pub fn poke(&self, offset: usize, width: usize, value: u64) -> Result<(), RegionError> {
        self.single(offset, width)?;
        if width < WORD {
            counts::pio_write(1, width);
        }
        match width {
            1 | 2 => self.each_written(|base| match width {
                1 => self
                    .byte(base, offset)
                    .store(value as u8, Ordering::Release),
                _ => self
                    .half(base, offset)
                    .store((value as u16).to_le(), Ordering::Release),
            }),
            4 => self.store_u32(offset, (value as u32).to_le(), Ordering::Release)?,
            _ => {
                self.store_u32(offset, (value as u32).to_le(), Ordering::Release)?;
                self.store_u32(
                    offset + WORD,
                    ((value >> 32) as u32).to_le(),
                    Ordering::Release,
                )?;
            }
        }
        Ok(())
    }

    /// Checks a single access: a width of 1, 2, 4 or 8, inside the window,
    /// naturally aligned (the base is 4-aligned; 8-byte accesses are two words).
    fn single(&self, offset: usize, width: usize) -> Result<(), RegionError> {
        if !matches!(width, 1 | 2 | 4 | 8) {
            return Err(RegionError::BadWidth { width });
        }
        match offset.checked_add(width) {
            Some(end) if end <= self.len => {}
            _ => {
                return Err(RegionError::OutOfBounds {
                    offset,
                    len: width,
                    region_len: self.len,
                })
            }
        }
        if !offset.is_multiple_of(width) {
            return Err(RegionError::UnalignedAccess { offset, width });
        }
        Ok(())
    }

    /// The byte at an offset [`Region::single`] accepted for width 1.
    fn byte(&self, base: NonNull<AtomicU32>, offset: usize) -> &AtomicU8 {
        // SAFETY: in bounds (checked by `single`) of either memory; the mapping
        // outlives `&self`.
        unsafe { AtomicU8::from_ptr(base.as_ptr().cast::<u8>().add(offset)) }
    }

    /// The half-word at an offset [`Region::single`] accepted for width 2.
    fn half(&self, base: NonNull<AtomicU32>, offset: usize) -> &AtomicU16 {
        // SAFETY: in bounds and 2-aligned (checked by `single`; the base is
        // 4-aligned); the mapping outlives `&self`.
        unsafe { AtomicU16::from_ptr(base.as_ptr().cast::<u8>().add(offset).cast()) }
    }

    /// Sets `len` bytes at `offset` to `byte`.
    pub fn fill(&self, offset: usize, len: usize, byte: u8) -> Result<(), RegionError> {
        let value = u32::from_ne_bytes([byte; WORD]);
        self.check(offset, len)?;
        self.each_written(|base| {
            let words = self.words(base, offset, len);
            counts::pio_write(words.len(), len);
            for word in words {
                word.store(value, Ordering::Relaxed);
            }
        });
        Ok(())
    }
}

/// Copies `words` into `buf`, as long as they are.
///
/// Pairs of words land in the buffer as one 8-byte store, so that a consumer
/// loading 8 bytes (the frame CRC) is forwarded from it instead of stalling.
/// Over arrays, one counter drives the loop and a last odd word is one store.
#[inline]
fn copy_out(words: &[AtomicU32], buf: &mut [u8]) {
    let (pairs, rest) = buf.as_chunks_mut::<{ 2 * WORD }>();
    let (word_pairs, last) = words.as_chunks::<2>();
    for (chunk, [lo, hi]) in pairs.iter_mut().zip(word_pairs) {
        let (lo, hi) = (lo.load(Ordering::Relaxed), hi.load(Ordering::Relaxed));
        let mut both = [0u8; 2 * WORD];
        both[..WORD].copy_from_slice(&lo.to_ne_bytes());
        both[WORD..].copy_from_slice(&hi.to_ne_bytes());
        *chunk = both;
    }
    if let (Ok(rest), [last]) = (<&mut [u8; WORD]>::try_from(rest), last) {
        *rest = last.load(Ordering::Relaxed).to_ne_bytes();
    }
}

#[cfg(test)]
mod tests;
