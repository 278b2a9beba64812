//! The writer thread of a recording: it drains the ring into the file, and
//! when a write fails (a full disk) it loses nothing silently: the file is cut
//! back to its last whole record, every record of the failed write is counted
//! lost, per slot, and the next write that succeeds first writes a kind-2
//! record per slot saying how many are missing there. The steps are told
//! through [`Loss`], never held up.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rtrb::Consumer;

use super::{Kind, RECORD_HEAD};

/// Where a recording's bytes go: a file, or what a test holds up.
pub trait Sink: Write + Send + 'static {
    /// Cuts what was written back to its first `len` bytes, writing on from
    /// there: a write that failed partway may have left part of a record,
    /// which every record after it would then be misread behind.
    fn cut_to(&mut self, len: u64) -> io::Result<()>;
}

impl Sink for File {
    fn cut_to(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)?;
        self.seek(SeekFrom::Start(len)).map(drop)
    }
}

/// Nowhere: what a benchmark of the step's share records into.
impl Sink for io::Sink {
    fn cut_to(&mut self, _: u64) -> io::Result<()> {
        Ok(())
    }
}

/// What the writer thread lost, read by the steps (two atomic loads a step).
#[derive(Debug, Default)]
pub(crate) struct Loss {
    /// Records the writer could not write.
    pub lost: AtomicU64,
    /// Failures begun so far: a failure lasts until a write succeeds.
    pub failures: AtomicU32,
    /// Whether the last write failed.
    pub failing: AtomicBool,
    /// The error of the failure going on or of the last one.
    pub error: Mutex<Option<String>>,
    /// The first error of a failure the writer could not get past (the file
    /// could not be cut back): nothing more is written.
    pub broken: Mutex<Option<io::Error>>,
}

impl Loss {
    pub fn error(&self) -> String {
        (self.error.lock().unwrap_or_else(PoisonError::into_inner))
            .clone()
            .unwrap_or_default()
    }

    fn fail(&self, e: &io::Error) {
        *self.error.lock().unwrap_or_else(PoisonError::into_inner) = Some(e.to_string());
        if !self.failing.swap(true, Ordering::AcqRel) {
            self.failures.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// How long the writer sleeps between two looks at the ring. A writer blocked on
/// the ring would have to be woken by the step that queues the next record, a
/// system call in the step; a polling one never is.
const POLL: Duration = Duration::from_millis(1);

/// The writer thread: takes everything in the ring, appends each record's CRC,
/// and writes it all at once, so that a killed process loses at most what was in
/// the ring and the last millisecond. `written` bytes (the file's header) are
/// in the sink already.
pub(crate) fn drain<W: Sink>(mut ring: Consumer<u8>, out: W, written: u64, loss: &Loss) {
    let mut taken = Vec::new();
    let mut file = FileEnd {
        out,
        written,
        bytes: Vec::new(),
        missing: [0u64; 256],
        unflushed: false,
        broken: false,
    };
    loop {
        // Read before the count: a producer gone before it holds nothing more.
        let abandoned = ring.is_abandoned();
        let n = ring.slots();
        if n == 0 {
            if abandoned {
                break;
            }
            file.flush(loss);
            std::thread::sleep(POLL);
            continue;
        }
        let chunk = ring.read_chunk(n).expect("n slots are there");
        let (first, second) = chunk.as_slices();
        taken.clear();
        taken.extend_from_slice(first);
        taken.extend_from_slice(second);
        chunk.commit_all();
        file.write(&taken, loss);
        // A millisecond's records per write, not a few: fewer system calls, and
        // less of the CPU the steps spin on. Straight on when the ring is filling.
        if ring.slots() < ring.buffer().capacity() / 2 {
            std::thread::sleep(POLL);
        }
    }
    file.unflushed = true;
    file.flush(loss);
}

/// The writer's side of the file: what is in it, and what it still owes.
struct FileEnd<W> {
    out: W,
    /// Bytes in the sink that a failed write is cut back to.
    written: u64,
    /// The bytes of one write, reused.
    bytes: Vec<u8>,
    /// Per slot, records lost since the last successful write.
    missing: [u64; 256],
    unflushed: bool,
    /// A failed write could not be cut back: nothing more is written.
    broken: bool,
}

impl<W: Sink> FileEnd<W> {
    /// Flushes what was written since the last flush.
    fn flush(&mut self, loss: &Loss) {
        if self.unflushed && !self.broken {
            if let Err(e) = self.out.flush() {
                loss.fail(&e);
            }
        }
        self.unflushed = false;
    }

    /// Writes the records in `taken` with their CRCs, after a record of
    /// each slot's losses since the last write; a failed write is cut back
    /// and its records counted lost.
    fn write(&mut self, taken: &[u8], loss: &Loss) {
        self.bytes.clear();
        if !self.broken {
            for (slot, &count) in self.missing.iter().enumerate().filter(|(_, &c)| c > 0) {
                missed_record(slot as u8, count, &mut self.bytes);
            }
        }
        let records = with_crcs(taken, &mut self.bytes);
        let result = match self.broken {
            true => Err(io::Error::other("an earlier write could not be undone")),
            false => self.out.write_all(&self.bytes),
        };
        match result {
            Ok(()) => {
                self.written += self.bytes.len() as u64;
                self.missing.fill(0);
                loss.failing.store(false, Ordering::Release);
                self.unflushed = true;
            }
            Err(e) => {
                for (slot, count) in records {
                    self.missing[usize::from(slot)] += count;
                    loss.lost.fetch_add(count, Ordering::AcqRel);
                }
                if !self.broken {
                    loss.fail(&e);
                    if let Err(cut) = self.out.cut_to(self.written) {
                        self.broken = true;
                        *loss.broken.lock().unwrap_or_else(PoisonError::into_inner) = Some(cut);
                    }
                }
            }
        }
    }
}

/// Appends to `out` the file's bytes of the whole records in `taken`, each
/// followed by the CRC-32C of its body; returns how many records of each
/// writer slot they hold.
fn with_crcs(taken: &[u8], out: &mut Vec<u8>) -> Vec<(u8, u64)> {
    let mut records: Vec<(u8, u64)> = Vec::new();
    let mut at = 0;
    while at < taken.len() {
        let len = u32::from_le_bytes(taken[at..at + 4].try_into().expect("4 bytes")) as usize;
        let end = at + 4 + len;
        let body = &taken[at + 4..end];
        out.extend_from_slice(&taken[at..end]);
        out.extend_from_slice(&crc32c::crc32c(body).to_le_bytes());
        match records.iter_mut().find(|(slot, _)| *slot == body[1]) {
            Some((_, n)) => *n += 1,
            None => records.push((body[1], 1)),
        }
        at = end;
    }
    records
}

/// Appends a kind-2 record: `count` records of `slot` are missing before it.
fn missed_record(slot: u8, count: u64, out: &mut Vec<u8>) {
    let mut body = Vec::with_capacity(RECORD_HEAD + 8);
    body.extend_from_slice(&[Kind::Missed.code(), slot, 0, 0]);
    body.extend_from_slice(&rfm_frames::wall::now_ns().to_le_bytes());
    body.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32c::crc32c(&body).to_le_bytes());
}
