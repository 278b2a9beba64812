//! Writers and readers of one node's area, for both frame layouts.
//!
//! A writer owns its area (single-writer rule); readers may be anywhere on the
//! ring. No reader ever returns a torn, half-written, wrong-magic or bad-CRC frame
//! as data: it retries up to its attempt budget, then reports what it saw.

use std::fmt;
use std::sync::atomic::Ordering;

use crate::area::Area;
use crate::frame::framed::{FrameBuf, Header, HEAD_OFFSET, STEP_OFFSET};
use crate::frame::FrameError;
use rfm_memory::seqlock::{self, Miss};
use rfm_memory::{Region, RegionError};

/// Read attempts before a reader gives up on a slot that never reads consistently.
pub const DEFAULT_READ_ATTEMPTS: u32 = 64;

/// What the failed attempts of one read saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rejections {
    /// The writer was inside the frame (odd sequence, or seed header cleared).
    pub in_progress: u32,
    /// The frame changed while it was copied.
    pub torn: u32,
    pub bad_magic: u32,
    pub bad_version: u32,
    pub bad_crc: u32,
    /// A complete frame of another payload length (another interface's).
    pub bad_length: u32,
    /// The last decoding error, if any attempt got that far.
    pub last: Option<FrameError>,
}

impl Rejections {
    fn count(&mut self, err: FrameError) {
        match err {
            FrameError::Empty => self.in_progress += 1,
            FrameError::BadMagic { .. } => self.bad_magic += 1,
            FrameError::BadVersion { .. } => self.bad_version += 1,
            FrameError::BadCrc { .. } => self.bad_crc += 1,
            FrameError::BadLength { .. } => self.bad_length += 1,
        }
        self.last = Some(err);
    }

    fn miss(&mut self, miss: Miss) {
        match miss {
            Miss::InProgress => self.in_progress += 1,
            Miss::Torn => self.torn += 1,
        }
    }

    /// True when some attempt found a frame that was complete but wrong (corruption
    /// or a foreign writer), as opposed to only racing the writer.
    pub fn saw_bad_frame(&self) -> bool {
        self.bad_magic + self.bad_version + self.bad_crc > 0
    }

    /// True when some attempt found a whole frame of another interface's length.
    pub fn saw_other_length(&self) -> bool {
        self.bad_length > 0
    }
}

impl fmt::Display for Rejections {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = [
            (self.in_progress, "write in progress"),
            (self.torn, "torn"),
            (self.bad_magic, "wrong magic"),
            (self.bad_version, "wrong version"),
            (self.bad_crc, "bad CRC"),
            (self.bad_length, "other payload length"),
        ];
        let mut first = true;
        for (n, what) in parts.into_iter().filter(|(n, _)| *n > 0) {
            write!(f, "{}{n} {what}", if first { "" } else { ", " })?;
            first = false;
        }
        if let Some(last) = self.last {
            write!(f, " (last: {last})")?;
        }
        Ok(())
    }
}

/// A read that produced no frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Region(#[from] RegionError),
    /// Nothing was ever written there (or its writer cleared the slot).
    #[error("slot is empty: its writer has not published yet")]
    Empty,
    #[error("no consistent frame after {attempts} attempts: {rejections}")]
    Unreadable {
        attempts: u32,
        rejections: Rejections,
    },
}

fn check_len(area: &Region, len: usize) -> Result<(), RegionError> {
    if area.len() < len {
        return Err(RegionError::OutOfBounds {
            offset: 0,
            len,
            region_len: area.len(),
        });
    }
    Ok(())
}

/// Where the frames of an area lie: what a reader or writer needs of its [`Area`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ring {
    pub offset: usize,
    pub entry_len: usize,
    pub payload_len: usize,
    /// Entries: a power of two.
    pub depth: usize,
}

impl Ring {
    pub fn of(area: &Area) -> Ring {
        Ring {
            offset: area.ring_offset(),
            entry_len: area.entry_len,
            payload_len: area.payload.len,
            depth: area.depth,
        }
    }

    /// The entry (0..depth) that holds `step`.
    #[inline]
    pub fn entry(&self, step: u64) -> usize {
        (step & (self.depth as u64 - 1)) as usize
    }

    /// Offset within the area of the entry that holds `step`.
    #[inline]
    pub fn entry_offset(&self, step: u64) -> usize {
        self.offset + self.entry(step) * self.entry_len
    }

    fn end(&self) -> usize {
        self.offset + self.depth * self.entry_len
    }
}

/// The single writer of a framed area.
#[derive(Debug)]
pub struct FramedWriter {
    area: Region,
    ring: Ring,
    /// The writer's copy of each ring entry's sequence word.
    seqs: Vec<u32>,
}

impl FramedWriter {
    /// Takes over the area, continuing each entry's sequence from what memory holds
    /// (an odd value left by a writer that died mid-frame is closed by the next write).
    pub fn new(area: Region, ring: Ring) -> Result<FramedWriter, RegionError> {
        check_len(&area, ring.end())?;
        let mut seqs = vec![0u32; ring.depth];
        for (i, seq) in seqs.iter_mut().enumerate() {
            *seq = area.load_u32(ring.entry_offset(i as u64), Ordering::Relaxed)?;
        }
        Ok(FramedWriter { area, ring, seqs })
    }

    /// Seals `frame` with `header` (its payload as filled in) and publishes it into
    /// the ring entry of `header.step`, then advances the head.
    pub fn publish(&mut self, frame: &mut FrameBuf, header: &Header) -> Result<(), RegionError> {
        frame.seal(header);
        let entry = self.ring.entry(header.step);
        seqlock::write(
            &self.area,
            self.ring.entry_offset(header.step),
            &mut self.seqs[entry],
            frame.bytes(),
        )?;
        self.area
            .store_u32(HEAD_OFFSET, header.step as u32, Ordering::Release)
    }

    /// Empties every ring entry and the head, so that nothing an earlier session left
    /// in this area is read as the current one's.
    pub fn clear(&mut self) -> Result<(), RegionError> {
        let zero = vec![0u8; self.ring.entry_len];
        for (i, seq) in self.seqs.iter_mut().enumerate() {
            seqlock::write(&self.area, self.ring.entry_offset(i as u64), seq, &zero)?;
        }
        self.area.store_u32(HEAD_OFFSET, 0, Ordering::Release)
    }
}

/// What a framed area holds for one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepPoll {
    /// The frame is in the caller's buffer.
    Ready(Header),
    /// The writer has not published that step yet.
    NotYet,
    /// The entry already holds a later step (of session `epoch`): the frame
    /// asked for was overwritten, if that is the writer's session.
    Overwritten { found: u64, epoch: u64 },
}

/// What a try of a lockstep wait loads before it reads the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPoll {
    /// The writer's head word, stored after the frame: one load a try, what a
    /// card wants (each load is a PCIe round trip).
    Head,
    /// The entry's sequence and step: three loads, but in host memory the one
    /// cache line the frame is then copied from (the head word costs another).
    /// On a card, the path before its costs were counted, kept for the bench.
    Entry,
}

/// A reader of a framed area.
#[derive(Debug, Clone)]
pub struct FramedReader {
    area: Region,
    ring: Ring,
    attempts: u32,
}

impl FramedReader {
    pub fn new(area: Region, ring: Ring) -> Result<FramedReader, RegionError> {
        check_len(&area, ring.end())?;
        Ok(FramedReader {
            area,
            ring,
            attempts: DEFAULT_READ_ATTEMPTS,
        })
    }

    /// Sets how many attempts a read makes before it reports [`ReadError::Unreadable`].
    pub fn with_attempts(mut self, attempts: u32) -> FramedReader {
        self.attempts = attempts.max(1);
        self
    }

    /// The area this reader reads.
    pub fn region(&self) -> &Region {
        &self.area
    }

    pub fn ring(&self) -> Ring {
        self.ring
    }

    /// A buffer for this reader's frames.
    pub fn buffer(&self) -> FrameBuf {
        FrameBuf::new(self.ring.payload_len)
    }

    /// Low 32 bits of the newest step the writer completed (one word: cheap to poll).
    #[inline]
    pub fn head(&self) -> Result<u32, RegionError> {
        self.area.load_u32(HEAD_OFFSET, Ordering::Acquire)
    }

    /// The frame in the ring entry that `step` maps to, whatever step it holds,
    /// copied into `buf` (whose contents are unspecified after an error).
    pub fn read_entry(&self, step: u64, buf: &mut FrameBuf) -> Result<Header, ReadError> {
        let offset = self.ring.entry_offset(step);
        let mut rejections = Rejections::default();
        for _ in 0..self.attempts {
            match seqlock::read_once(&self.area, offset, buf.bytes_mut())? {
                Err(miss) => rejections.miss(miss),
                Ok(()) => match buf.check() {
                    Ok(header) => return Ok(header),
                    // A stable, even sequence over a zero magic: nothing is there.
                    Err(FrameError::Empty) => return Err(ReadError::Empty),
                    Err(err) => rejections.count(err),
                },
            }
            std::hint::spin_loop();
        }
        Err(ReadError::Unreadable {
            attempts: self.attempts,
            rejections,
        })
    }

    /// Exactly `step`, into `buf`, if the writer has published it and it is still
    /// in the ring.
    pub fn poll_step(&self, step: u64, buf: &mut FrameBuf) -> Result<StepPoll, ReadError> {
        self.poll_step_by(step, buf, WaitPoll::Head)
    }

    /// As [`FramedReader::poll_step`], loading the entry's sequence and step
    /// on this try with `WaitPoll::Entry` instead of the head word: in host memory,
    /// where they share the cache line the frame is copied from; for a writer
    /// not yet known, whose head word may not be where this reader's map
    /// expects it (a node built from another file), while its entries, read,
    /// tell what it is.
    pub fn poll_step_by(
        &self,
        step: u64,
        buf: &mut FrameBuf,
        poll: WaitPoll,
    ) -> Result<StepPoll, ReadError> {
        if !self.published(step, poll)? {
            return Ok(StepPoll::NotYet);
        }
        match self.read_entry(step, buf) {
            Ok(h) if h.step == step => Ok(StepPoll::Ready(h)),
            Ok(h) if h.step < step => Ok(StepPoll::NotYet),
            Ok(h) => Ok(StepPoll::Overwritten {
                found: h.step,
                epoch: h.epoch,
            }),
            Err(ReadError::Empty) => Ok(StepPoll::NotYet),
            Err(err) => Err(err),
        }
    }

    /// Whether the writer has published `step` (or a later one): one load of
    /// the head word, which the writer stores after the frame (and the ring
    /// delivers a writer's stores in order). On a card each load is a PCIe
    /// round trip, so a try loads one word, never the frame.
    #[inline]
    fn published(&self, step: u64, poll: WaitPoll) -> Result<bool, RegionError> {
        if poll == WaitPoll::Entry {
            let at = self.ring.entry_offset(step);
            let seq = self.area.load_u32(at, Ordering::Acquire)?;
            if seq & 1 == 1 {
                return Ok(false);
            }
            let low = u32::from_le(self.area.load_u32(at + STEP_OFFSET, Ordering::Relaxed)?);
            let high = u32::from_le(
                self.area
                    .load_u32(at + STEP_OFFSET + 4, Ordering::Relaxed)?,
            );
            return Ok(u64::from(high) << 32 | u64::from(low) >= step);
        }
        // The head is the step's low 32 bits: compared in the window of 2^31
        // steps around it, which no ring depth comes near.
        Ok(self.head()?.wrapping_sub(step as u32) as i32 >= 0)
    }

    /// The newest frame the writer completed, into `buf`.
    #[inline]
    pub fn read_latest(&self, buf: &mut FrameBuf) -> Result<Header, ReadError> {
        let head = self.head()?;
        self.read_entry(u64::from(head), buf)
    }
}

mod seed;

pub use seed::{SeedReader, SeedWriter};
