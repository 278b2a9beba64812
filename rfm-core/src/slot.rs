//! Writers and readers of one node slot, for both frame layouts.
//!
//! A writer owns its slot (single-writer rule); readers may be anywhere on the
//! ring. No reader ever returns a torn, half-written, wrong-magic or bad-CRC frame
//! as data: it retries up to its attempt budget, then reports what it saw.

use std::fmt;
use std::sync::atomic::{fence, Ordering};

use crate::frame::framed::{self, Frame, FrameBytes, FRAME_SIZE, HEAD_OFFSET};
use crate::frame::seed::{self, FlightData, PACKET_WORDS_SIZE};
use crate::frame::{FrameError, RING_DEPTH, SLOT_SIZE};
use crate::region::{Region, RegionError, WORD};
use crate::seqlock::{self, Miss};

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
}

impl fmt::Display for Rejections {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = [
            (self.in_progress, "write in progress"),
            (self.torn, "torn"),
            (self.bad_magic, "wrong magic"),
            (self.bad_version, "wrong version"),
            (self.bad_crc, "bad CRC"),
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

fn check_slot(slot: &Region) -> Result<(), RegionError> {
    if slot.len() < SLOT_SIZE {
        return Err(RegionError::OutOfBounds {
            offset: 0,
            len: SLOT_SIZE,
            region_len: slot.len(),
        });
    }
    Ok(())
}

/// The single writer of a framed slot.
#[derive(Debug)]
pub struct FramedWriter {
    slot: Region,
    /// The writer's copy of each ring entry's sequence word.
    seqs: [u32; RING_DEPTH],
}

impl FramedWriter {
    /// Takes over the slot, continuing each entry's sequence from what memory holds
    /// (an odd value left by a writer that died mid-frame is closed by the next write).
    pub fn new(slot: Region) -> Result<FramedWriter, RegionError> {
        check_slot(&slot)?;
        let mut seqs = [0u32; RING_DEPTH];
        for (i, seq) in seqs.iter_mut().enumerate() {
            *seq = slot.load_u32(framed::entry_offset(i as u64), Ordering::Relaxed)?;
        }
        Ok(FramedWriter { slot, seqs })
    }

    /// Publishes `frame` into the ring entry of `frame.step`, then advances the head.
    pub fn publish(&mut self, frame: &Frame) -> Result<(), RegionError> {
        let bytes = framed::encode(frame);
        let entry = (frame.step % RING_DEPTH as u64) as usize;
        seqlock::write(
            &self.slot,
            framed::entry_offset(frame.step),
            &mut self.seqs[entry],
            &bytes[..],
        )?;
        self.slot
            .store_u32(HEAD_OFFSET, frame.step as u32, Ordering::Release)
    }

    /// Empties every ring entry and the head, so that nothing an earlier session left
    /// in this slot is read as the current one's.
    pub fn clear(&mut self) -> Result<(), RegionError> {
        let zero = [0u8; FRAME_SIZE];
        for (i, seq) in self.seqs.iter_mut().enumerate() {
            seqlock::write(&self.slot, framed::entry_offset(i as u64), seq, &zero)?;
        }
        self.slot.store_u32(HEAD_OFFSET, 0, Ordering::Release)
    }
}

/// What a framed slot holds for one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepPoll {
    Ready(Frame),
    /// The writer has not published that step yet.
    NotYet,
    /// The entry already holds a later step: the frame asked for was overwritten.
    Overwritten {
        found: u64,
    },
}

/// A reader of a framed slot.
#[derive(Debug, Clone)]
pub struct FramedReader {
    slot: Region,
    attempts: u32,
}

impl FramedReader {
    pub fn new(slot: Region) -> Result<FramedReader, RegionError> {
        check_slot(&slot)?;
        Ok(FramedReader {
            slot,
            attempts: DEFAULT_READ_ATTEMPTS,
        })
    }

    /// Sets how many attempts a read makes before it reports [`ReadError::Unreadable`].
    pub fn with_attempts(mut self, attempts: u32) -> FramedReader {
        self.attempts = attempts.max(1);
        self
    }

    /// The slot this reader reads.
    pub fn region(&self) -> &Region {
        &self.slot
    }

    /// Low 32 bits of the newest step the writer completed (one word: cheap to poll).
    pub fn head(&self) -> Result<u32, RegionError> {
        self.slot.load_u32(HEAD_OFFSET, Ordering::Acquire)
    }

    /// The frame in the ring entry that `step` maps to, whatever step it holds.
    pub fn read_entry(&self, step: u64) -> Result<Frame, ReadError> {
        let offset = framed::entry_offset(step);
        let mut buf = FrameBytes([0u8; FRAME_SIZE]);
        let mut rejections = Rejections::default();
        for _ in 0..self.attempts {
            match seqlock::read_once(&self.slot, offset, &mut buf[..])? {
                Err(miss) => rejections.miss(miss),
                Ok(()) => match framed::decode(&buf) {
                    Ok(frame) => return Ok(frame),
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

    /// Exactly `step`, if the writer has published it and it is still in the ring.
    pub fn poll_step(&self, step: u64) -> Result<StepPoll, ReadError> {
        // The head is one word: waiting on it costs one read per poll, not a frame.
        if (self.head()?.wrapping_sub(step as u32) as i32) < 0 {
            return Ok(StepPoll::NotYet);
        }
        match self.read_entry(step) {
            Ok(frame) if frame.step == step => Ok(StepPoll::Ready(frame)),
            Ok(frame) if frame.step < step => Ok(StepPoll::NotYet),
            Ok(frame) => Ok(StepPoll::Overwritten { found: frame.step }),
            Err(ReadError::Empty) => Ok(StepPoll::NotYet),
            Err(err) => Err(err),
        }
    }

    /// The newest frame the writer completed.
    pub fn read_latest(&self) -> Result<Frame, ReadError> {
        let head = self.head()?;
        self.read_entry(u64::from(head))
    }
}

/// The single writer of a seed slot (the article's `FlightData`).
#[derive(Debug)]
pub struct SeedWriter {
    slot: Region,
}

impl SeedWriter {
    pub fn new(slot: Region) -> Result<SeedWriter, RegionError> {
        check_slot(&slot)?;
        Ok(SeedWriter { slot })
    }

    /// Clears `header`, writes the packet, then sets `header`: a reader that sees the
    /// header both before and after its copy knows no rewrite was in progress.
    pub fn publish(&mut self, packet: &FlightData) -> Result<(), RegionError> {
        let bytes = seed::encode(packet);
        self.slot.store_u32(0, 0, Ordering::Relaxed)?;
        fence(Ordering::Release);
        self.slot.write(WORD, &bytes[WORD..])?;
        let header = u32::from_ne_bytes(bytes[..WORD].try_into().expect("one word"));
        self.slot.store_u32(0, header, Ordering::Release)
    }

    /// Zeroes the packet (an empty slot to the article's receivers: wrong header).
    pub fn clear(&mut self) -> Result<(), RegionError> {
        self.slot.fill(0, PACKET_WORDS_SIZE, 0)
    }
}

/// A reader of a seed slot.
///
/// The article's writers store the fields one by one with no sequence word, so a
/// packet is taken only when the header is valid before, between and after two
/// copies and the two copies agree. Against our [`SeedWriter`] that is as strong as
/// a seqlock; against an article writer that stalls mid-packet it is the best the
/// format allows (two identical torn copies need the stall to span both copies).
#[derive(Debug, Clone)]
pub struct SeedReader {
    slot: Region,
    attempts: u32,
}

impl SeedReader {
    pub fn new(slot: Region) -> Result<SeedReader, RegionError> {
        check_slot(&slot)?;
        Ok(SeedReader {
            slot,
            attempts: DEFAULT_READ_ATTEMPTS,
        })
    }

    pub fn with_attempts(mut self, attempts: u32) -> SeedReader {
        self.attempts = attempts.max(1);
        self
    }

    /// The slot this reader reads.
    pub fn region(&self) -> &Region {
        &self.slot
    }

    pub fn read(&self) -> Result<FlightData, ReadError> {
        let mut first = [0u8; PACKET_WORDS_SIZE];
        let mut second = [0u8; PACKET_WORDS_SIZE];
        let mut rejections = Rejections::default();
        for _ in 0..self.attempts {
            let h1 = self.slot.load_u32(0, Ordering::Acquire)?;
            self.slot.read(WORD, &mut first[WORD..])?;
            fence(Ordering::Acquire);
            // Acquire, not Relaxed: if this sees the header of a newer packet, the
            // second copy must then see at least that packet's body; a Relaxed load
            // would let both copies return the same stale mix (Miri finds it).
            let h2 = self.slot.load_u32(0, Ordering::Acquire)?;
            self.slot.read(WORD, &mut second[WORD..])?;
            fence(Ordering::Acquire);
            let h3 = self.slot.load_u32(0, Ordering::Relaxed)?;
            first[..WORD].copy_from_slice(&h1.to_ne_bytes());
            if h1 == 0 && h2 == 0 && h3 == 0 && first.iter().all(|&b| b == 0) {
                return Err(ReadError::Empty);
            }
            if h1 != h2 || h2 != h3 || first[WORD..] != second[WORD..] {
                rejections.miss(Miss::Torn);
            } else {
                match seed::decode(&first) {
                    Ok(packet) => return Ok(packet),
                    Err(err) => rejections.count(err),
                }
            }
            std::hint::spin_loop();
        }
        Err(ReadError::Unreadable {
            attempts: self.attempts,
            rejections,
        })
    }
}
