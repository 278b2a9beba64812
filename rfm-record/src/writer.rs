//! Writing a recording without ever holding up a step: the step copies each
//! record into a ring of bytes, a writer thread drains the ring into the file,
//! and a full ring drops the record and counts it instead of waiting.
//!
//! The step's share is kept to one copy of the frame: it writes the record's
//! length, kind, slot, time and frame into the ring, and the writer thread
//! computes each record's CRC and writes everything it found in one system call.
//! A single-producer ring (rtrb) needs no allocation, lock or system call in the
//! step.

use rfm_thread::Thread;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use rtrb::{CopyToUninit, Producer, RingBuffer};

use super::drain::{drain, Loss, Sink};
pub use super::error::RecorderError;
use super::{Header, Kind, MAGIC, MAX_FRAME, MAX_HEADER, RECORD_HEAD, SEQUENCE_WORD, VERSION};

/// A record's bytes before its frame: length, kind, slot, reserved, time.
const HEAD: usize = 4 + RECORD_HEAD;

/// Bytes a record of a `frame_len`-byte frame takes in the ring (its CRC is
/// added by the writer thread): what a queue of N records needs.
pub fn in_flight_len(frame_len: usize) -> usize {
    HEAD + frame_len
}

/// Records a recorder's ring holds: about 9 MB of attitude frames. At 1 kHz, a
/// minute of a stalled disk before a record is dropped; at a spinning coupling's
/// 2 MHz on two cores, whose writer threads get little CPU, 30 ms (a 4,096-record
/// queue dropped one record in ten in a 20,000-step demo run).
const QUEUE_RECORDS: usize = 65_536;
/// The most memory a ring takes: large frames get fewer records in flight
/// (65,536 of 1,000 Reals would be 530 MB), but never fewer than two steps'.
const QUEUE_BYTES: usize = 64 << 20;

/// The capacity to give [`Recorder::create`] for records of frames up to
/// `largest_frame` bytes, `per_step` of them a step: what the FMU and a
/// third-party recorder both use.
pub fn queue_capacity(largest_frame: usize, per_step: usize) -> usize {
    let record = in_flight_len(largest_frame);
    (QUEUE_RECORDS * record)
        .min(QUEUE_BYTES)
        .max(2 * per_step.max(1) * record)
}

/// What the writer thread has lost, news since the last look
/// ([`Recorder::loss_news`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LossNews {
    /// Writing fails: records are lost from here on.
    Began { error: String },
    /// Writing works again; `lost` records are lost in all.
    Ended { lost: u64 },
}

/// An open recording. Dropping it finishes the file, like [`Recorder::finish`].
#[derive(Debug)]
pub struct Recorder {
    path: PathBuf,
    ring: Option<Producer<u8>>,
    /// Records dropped because the ring was full.
    dropped: u64,
    loss: Arc<Loss>,
    /// The failures and whether one went on, at the last [`Recorder::loss_news`].
    seen: (u32, bool),
    thread: Option<Thread>,
    /// The file's lock, held until the writer thread has finished with it.
    lock: Option<super::file::Locked>,
}

/// The file's first bytes: magic, version, header and its CRC.
fn file_head(path: &Path, header: &Header) -> Result<Vec<u8>, RecorderError> {
    let too_large = |what: String, limit: usize| RecorderError::TooLarge {
        path: path.to_owned(),
        what,
        limit,
    };
    let frame = header.largest_record();
    if frame > MAX_FRAME {
        return Err(too_large(
            format!("records of {frame} bytes (its largest node's frame or foreign struct)"),
            MAX_FRAME,
        ));
    }
    let body = header.encode();
    if body.len() > MAX_HEADER as usize {
        return Err(too_large(
            format!(
                "a header of {} bytes (the descriptors of {} nodes)",
                body.len(),
                header.descriptors.len()
            ),
            MAX_HEADER as usize,
        ));
    }
    let mut head = Vec::with_capacity(20 + body.len());
    head.extend_from_slice(&MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&(body.len() as u32).to_le_bytes());
    head.extend_from_slice(&body);
    let crc = crc32c::crc32c(&head[MAGIC.len()..]);
    head.extend_from_slice(&crc.to_le_bytes());
    Ok(head)
}

impl Recorder {
    /// Creates the file at `path` for the recorder `by` describes (named to
    /// a second recorder refused the same file), writes `header`, and starts
    /// the writer thread with room for `capacity` bytes of records in flight
    /// (see [`queue_capacity`]). An existing file is replaced only with
    /// `overwrite`.
    pub fn create(
        path: &Path,
        header: &Header,
        capacity: usize,
        overwrite: bool,
        by: &str,
    ) -> Result<Recorder, RecorderError> {
        let head = file_head(path, header)?;
        let locked = super::file::create(path, overwrite, by)?;
        let file = locked
            .file
            .try_clone()
            .map_err(|cause| RecorderError::Create {
                path: path.to_owned(),
                cause,
            })?;
        match Self::start(path, file, head, capacity) {
            Ok(mut recorder) => {
                recorder.lock = Some(locked);
                Ok(recorder)
            }
            Err(e) => {
                // Not even the header is there: a file left would refuse the
                // next try as an existing one.
                drop(locked);
                let _ = std::fs::remove_file(path);
                Err(e)
            }
        }
    }

    /// [`Recorder::create`] writing into `sink` (tests hold the writer up, or
    /// fill its disk, with one).
    pub fn with_sink<W: Sink>(
        path: &Path,
        sink: W,
        header: &Header,
        capacity: usize,
    ) -> Result<Recorder, RecorderError> {
        Self::start(path, sink, file_head(path, header)?, capacity)
    }

    fn start<W: Sink>(
        path: &Path,
        mut sink: W,
        head: Vec<u8>,
        capacity: usize,
    ) -> Result<Recorder, RecorderError> {
        let failed_create = |cause| RecorderError::Create {
            path: path.to_owned(),
            cause,
        };
        sink.write_all(&head).map_err(failed_create)?;
        sink.flush().map_err(failed_create)?;
        let (ring, records) = RingBuffer::new(capacity);
        let loss = Arc::new(Loss::default());
        let thread_loss = Arc::clone(&loss);
        let written = head.len() as u64;
        let thread = Thread::spawn("rfm-recorder", move || {
            drain(records, sink, written, &thread_loss)
        })
        .map_err(|cause| RecorderError::Thread {
            path: path.to_owned(),
            cause,
        })?;
        Ok(Recorder {
            path: path.to_owned(),
            ring: Some(ring),
            dropped: 0,
            loss,
            seen: (0, false),
            thread: Some(thread),
            lock: None,
        })
    }

    /// Queues one record, got at `recorded_ns` (wall clock, ns since 1970);
    /// never waits. Returns false, and counts the record as dropped, when the
    /// ring is full or the writer has stopped.
    pub fn record(&mut self, kind: Kind, slot: u8, recorded_ns: u64, frame: &[u8]) -> bool {
        let len = in_flight_len(frame.len());
        let Some(Ok(mut chunk)) = self.ring.as_mut().map(|r| r.write_chunk_uninit(len)) else {
            self.dropped += 1;
            return false;
        };
        // The length, kind, slot and reserved bytes, then the time: two words
        // stored from registers (a head built in a byte array and copied from it
        // stalled the step on the copy's load).
        let head = [
            (RECORD_HEAD + frame.len()) as u64
                | u64::from(kind.code()) << 32
                | u64::from(slot) << 40,
            recorded_ns,
        ];
        // The writer's copy holds 0 in the sequence word, a reader's the sequence
        // it read: the same frame must record as the same bytes.
        let zeroed = matches!(kind, Kind::Published | Kind::Taken) && frame.len() >= SEQUENCE_WORD;
        let (first, second) = chunk.as_mut_slices();
        if second.is_empty() {
            let (at, body) = first.split_at_mut(HEAD);
            store_words(at, head);
            frame.copy_to_uninit(body);
            if zeroed {
                body[..SEQUENCE_WORD].fill(MaybeUninit::new(0));
            }
        } else {
            // Across the ring's end (rare): piece by piece.
            let mut at = [0; HEAD];
            at[..8].copy_from_slice(&head[0].to_le_bytes());
            at[8..].copy_from_slice(&head[1].to_le_bytes());
            let parts: [&[u8]; 3] = if zeroed {
                [&at, &[0; SEQUENCE_WORD], &frame[SEQUENCE_WORD..]]
            } else {
                [&at, &[], frame]
            };
            copy_into(&parts, first, second);
        }
        // SAFETY: every one of the chunk's `len` bytes was written: the head and
        // the frame, in one piece or by copy_into, which fills both pieces.
        unsafe { chunk.commit_all() };
        true
    }

    /// Records lost so far: dropped because the ring was full, or lost
    /// because a write failed.
    pub fn dropped(&self) -> u64 {
        self.dropped + self.loss.lost.load(Ordering::Acquire)
    }

    /// Records dropped so far because the ring was full (the writer fell behind).
    pub fn dropped_full(&self) -> u64 {
        self.dropped
    }

    /// What the writer thread's losses have done since the last call: a
    /// failure that began (its error) or one that ended. Two atomic loads.
    pub fn loss_news(&mut self) -> Option<LossNews> {
        let failures = self.loss.failures.load(Ordering::Acquire);
        let failing = self.loss.failing.load(Ordering::Acquire);
        let news = if failures != self.seen.0 {
            Some(LossNews::Began {
                error: self.loss.error(),
            })
        } else if self.seen.1 && !failing {
            Some(LossNews::Ended {
                lost: self.loss.lost.load(Ordering::Acquire),
            })
        } else {
            None
        };
        // A failure that began and ended between two looks is told as begun
        // now, and as ended at the next look.
        self.seen = (failures, failing || failures != self.seen.0);
        news
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes what is queued, closes the file, and says whether every record
    /// is in it: an error names the loss, however it ended.
    pub fn finish(mut self) -> Result<(), RecorderError> {
        self.stop()
    }

    /// Stops and removes the file: a recording of a run that never started
    /// (its node could not take its slot) holds nothing, and left behind it
    /// would refuse the next try as an existing file.
    pub fn discard(mut self) {
        let _ = self.stop();
        let _ = std::fs::remove_file(&self.path);
    }

    fn stop(&mut self) -> Result<(), RecorderError> {
        // A dropped producer ends the writer's loop once the ring is empty.
        self.ring = None;
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        thread.join();
        self.lock = None;
        let lost = self.loss.lost.load(Ordering::Acquire);
        let broken = (self
            .loss
            .broken
            .lock()
            .unwrap_or_else(PoisonError::into_inner))
        .take();
        match (lost, broken) {
            (0, None) if !self.loss.failing.load(Ordering::Acquire) => Ok(()),
            (lost, broken) => Err(RecorderError::Write {
                path: self.path.clone(),
                cause: match broken {
                    Some(e) => format!(
                        "{}, and the file could not be cut back: {e}",
                        self.loss.error()
                    ),
                    None => self.loss.error(),
                },
                lost,
            }),
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            log::warn!("{e}");
        }
    }
}

/// Stores two little-endian words into the [`HEAD`] bytes of `to`.
#[inline]
fn store_words(to: &mut [MaybeUninit<u8>], words: [u64; 2]) {
    for (to, word) in to.chunks_exact_mut(8).zip(words) {
        for (to, byte) in to.iter_mut().zip(word.to_le_bytes()) {
            to.write(byte);
        }
    }
}

/// Copies `parts`, one after the other, into `first` and then `second` (the two
/// halves of a chunk that wraps around the ring), which they fill exactly.
fn copy_into(parts: &[&[u8]], first: &mut [MaybeUninit<u8>], second: &mut [MaybeUninit<u8>]) {
    let (mut dst, mut rest) = (first, second);
    for part in parts {
        let mut part = *part;
        while !part.is_empty() {
            if dst.is_empty() {
                (dst, rest) = (rest, &mut []);
            }
            let n = part.len().min(dst.len());
            let (to, left) = std::mem::take(&mut dst).split_at_mut(n);
            part[..n].copy_to_uninit(to);
            (dst, part) = (left, &part[n..]);
        }
    }
    assert!(
        dst.is_empty() && rest.is_empty(),
        "a record's parts fill its chunk"
    );
}
