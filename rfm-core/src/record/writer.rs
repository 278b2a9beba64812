//! Writing a recording without ever holding up a step: the step copies each
//! record into a ring of bytes, a writer thread drains the ring into the file,
//! and a full ring drops the record and counts it instead of waiting.
//!
//! The step's share is kept to one copy of the frame: it writes the record's
//! length, kind, slot, time and frame into the ring, and the writer thread
//! computes each record's CRC and writes everything it found in one system call.
//! A single-producer ring (rtrb) needs no allocation, lock or system call in the
//! step.

use crate::thread::Thread;
use std::fs::File;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rtrb::{Consumer, CopyToUninit, Producer, RingBuffer};

use super::{Header, Kind, MAGIC, RECORD_HEAD, SEQUENCE_WORD, VERSION};

/// Why a recording could not be made or finished.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error("cannot create the recording `{path}`: {cause}")]
    Create { path: PathBuf, cause: io::Error },
    #[error("writing the recording `{path}` failed: {cause}; records after the failure are lost")]
    Write { path: PathBuf, cause: io::Error },
    #[error("the recording `{path}`'s writer thread could not start: {cause}")]
    Thread { path: PathBuf, cause: io::Error },
}

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
/// (65,536 of 1,000 Reals would be 530 MB).
const QUEUE_BYTES: usize = 64 << 20;

/// The capacity to give [`Recorder::create`] for records of frames up to
/// `largest_frame` bytes: what the FMU and a third-party recorder both use.
pub fn queue_capacity(largest_frame: usize) -> usize {
    (QUEUE_RECORDS * in_flight_len(largest_frame)).min(QUEUE_BYTES)
}

/// An open recording. Dropping it finishes the file, like [`Recorder::finish`].
#[derive(Debug)]
pub struct Recorder {
    path: PathBuf,
    ring: Option<Producer<u8>>,
    dropped: u64,
    /// The first write error, kept for [`Recorder::finish`].
    failed: Arc<Mutex<Option<io::Error>>>,
    thread: Option<Thread>,
}

impl Recorder {
    /// Creates (or replaces) the file at `path`, writes `header`, and starts the
    /// writer thread with room for `capacity` bytes of records in flight (see
    /// [`in_flight_len`]).
    pub fn create(
        path: &Path,
        header: &Header,
        capacity: usize,
    ) -> Result<Recorder, RecorderError> {
        let file = File::create(path).map_err(|cause| RecorderError::Create {
            path: path.to_owned(),
            cause,
        })?;
        Self::with_sink(path, file, header, capacity)
    }

    /// [`Recorder::create`] writing into `sink` (tests hold the writer up with one).
    pub fn with_sink<W: Write + Send + 'static>(
        path: &Path,
        mut sink: W,
        header: &Header,
        capacity: usize,
    ) -> Result<Recorder, RecorderError> {
        let failed_create = |cause| RecorderError::Create {
            path: path.to_owned(),
            cause,
        };
        let body = header.encode();
        let mut head = Vec::with_capacity(20 + body.len());
        head.extend_from_slice(&MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&(body.len() as u32).to_le_bytes());
        head.extend_from_slice(&body);
        let crc = crc32c::crc32c(&head[MAGIC.len()..]);
        head.extend_from_slice(&crc.to_le_bytes());
        sink.write_all(&head).map_err(failed_create)?;
        sink.flush().map_err(failed_create)?;

        let (ring, records) = RingBuffer::new(capacity);
        let failed = Arc::new(Mutex::new(None));
        let thread_failed = Arc::clone(&failed);
        let thread = Thread::spawn("rfm-recorder", move || drain(records, sink, &thread_failed))
            .map_err(|cause| RecorderError::Thread {
                path: path.to_owned(),
                cause,
            })?;
        Ok(Recorder {
            path: path.to_owned(),
            ring: Some(ring),
            dropped: 0,
            failed,
            thread: Some(thread),
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
        let zeroed = kind != Kind::Missed && frame.len() >= SEQUENCE_WORD;
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

    /// Records dropped so far because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes what is queued, closes the file, and says whether every write
    /// succeeded (within a millisecond of the writer's next look at the ring).
    pub fn finish(mut self) -> Result<(), RecorderError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), RecorderError> {
        // A dropped producer ends the writer's loop once the ring is empty.
        self.ring = None;
        if let Some(thread) = self.thread.take() {
            thread.join();
        }
        match self
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            Some(cause) => Err(RecorderError::Write {
                path: self.path.clone(),
                cause,
            }),
            None => Ok(()),
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

/// How long the writer sleeps between two looks at the ring. A writer blocked on
/// the ring would have to be woken by the step that queues the next record, a
/// system call in the step; a polling one never is.
const POLL: Duration = Duration::from_millis(1);

/// The writer thread: takes everything in the ring, appends each record's CRC,
/// and writes it all at once, so that a killed process loses at most what was in
/// the ring and the last millisecond. After a failed write it keeps taking
/// records (the steps must not wait) but writes none.
fn drain<W: Write>(mut ring: Consumer<u8>, mut out: W, failed: &Mutex<Option<io::Error>>) {
    let mut taken = Vec::new();
    let mut file_bytes = Vec::new();
    let mut broken = false;
    let mut unflushed = false;
    let fail = |e: io::Error, broken: &mut bool| {
        *broken = true;
        failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(e);
    };
    loop {
        // Read before the count: a producer gone before it holds nothing more.
        let abandoned = ring.is_abandoned();
        let n = ring.slots();
        if n == 0 {
            if abandoned {
                break;
            }
            if unflushed && !broken {
                if let Err(e) = out.flush() {
                    fail(e, &mut broken);
                }
                unflushed = false;
            }
            std::thread::sleep(POLL);
            continue;
        }
        let chunk = ring.read_chunk(n).expect("n slots are there");
        let (first, second) = chunk.as_slices();
        taken.clear();
        taken.extend_from_slice(first);
        taken.extend_from_slice(second);
        chunk.commit_all();
        if broken {
            continue;
        }
        with_crcs(&taken, &mut file_bytes);
        if let Err(e) = out.write_all(&file_bytes) {
            fail(e, &mut broken);
        }
        unflushed = true;
        // A millisecond's records per write, not a few: fewer system calls, and
        // less of the CPU the steps spin on. Straight on when the ring is filling.
        if ring.slots() < ring.buffer().capacity() / 2 {
            std::thread::sleep(POLL);
        }
    }
    if !broken {
        if let Err(e) = out.flush() {
            fail(e, &mut broken);
        }
    }
}

/// The file's bytes of the whole records in `taken`: each followed by the CRC-32C
/// of its body.
fn with_crcs(taken: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut at = 0;
    while at < taken.len() {
        let len = u32::from_le_bytes(taken[at..at + 4].try_into().expect("4 bytes")) as usize;
        let end = at + 4 + len;
        let body = &taken[at + 4..end];
        out.extend_from_slice(&taken[at..end]);
        out.extend_from_slice(&crc32c::crc32c(body).to_le_bytes());
        at = end;
    }
}
