//! Writing a recording without ever holding up a step: the step hands each frame
//! to a bounded queue, a writer thread drains it into the file, and a full queue
//! drops the record and counts it instead of waiting.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{encode_record, wall_ns, Header, Kind, MAGIC, VERSION};

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

/// An open recording. Dropping it finishes the file, like [`Recorder::finish`].
#[derive(Debug)]
pub struct Recorder {
    path: PathBuf,
    queue: Option<SyncSender<Vec<u8>>>,
    /// Buffers the writer has written, back for reuse: no allocation per record
    /// once the queue has filled up once.
    spare: Receiver<Vec<u8>>,
    dropped: Arc<AtomicU64>,
    /// The first write error, kept for [`Recorder::finish`].
    failed: Arc<Mutex<Option<io::Error>>>,
    thread: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Creates (or replaces) the file at `path`, writes `header`, and starts the
    /// writer thread with room for `capacity` records in flight.
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

        let (queue, records) = mpsc::sync_channel::<Vec<u8>>(capacity);
        let (give_back, spare) = mpsc::sync_channel::<Vec<u8>>(capacity + 1);
        let failed = Arc::new(Mutex::new(None));
        let thread_failed = Arc::clone(&failed);
        let thread = std::thread::Builder::new()
            .name("rfm-recorder".into())
            .spawn(move || drain(records, give_back, BufWriter::new(sink), &thread_failed))
            .map_err(|cause| RecorderError::Thread {
                path: path.to_owned(),
                cause,
            })?;
        Ok(Recorder {
            path: path.to_owned(),
            queue: Some(queue),
            spare,
            dropped: Arc::new(AtomicU64::new(0)),
            failed,
            thread: Some(thread),
        })
    }

    /// Queues one record; never waits. Returns false, and counts the record as
    /// dropped, when the queue is full or the writer has stopped.
    pub fn record(&self, kind: Kind, slot: u8, frame: &[u8]) -> bool {
        let Some(queue) = &self.queue else {
            return false;
        };
        let mut buf = self.spare.try_recv().unwrap_or_default();
        buf.clear();
        encode_record(kind, slot, wall_ns(), frame, &mut buf);
        match queue.try_send(buf) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Records dropped so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes what is queued, closes the file, and says whether every write
    /// succeeded (within a millisecond of the writer's next look at the queue).
    pub fn finish(mut self) -> Result<(), RecorderError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), RecorderError> {
        // Closing the queue ends the writer's loop once it is empty.
        self.queue = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
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

/// How long the writer sleeps when the queue is empty. A writer blocked on the
/// queue would have to be woken by the step that queues the next record, a
/// system call in the step; a polling one never is.
const POLL: Duration = Duration::from_millis(1);

/// The writer thread: writes each record, and flushes whenever it finds the queue
/// empty, so a killed process loses at most what was queued and the last
/// millisecond. After a failed write it keeps taking records (the steps must not
/// wait) but writes none.
fn drain<W: Write>(
    records: Receiver<Vec<u8>>,
    give_back: SyncSender<Vec<u8>>,
    mut out: BufWriter<W>,
    failed: &Mutex<Option<io::Error>>,
) {
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
        match records.try_recv() {
            Ok(mut record) => {
                if !broken {
                    if let Err(e) = out.write_all(&record) {
                        fail(e, &mut broken);
                    }
                    unflushed = true;
                }
                let _ = give_back.try_send(std::mem::take(&mut record));
            }
            Err(TryRecvError::Empty) => {
                if unflushed && !broken {
                    if let Err(e) = out.flush() {
                        fail(e, &mut broken);
                    }
                    unflushed = false;
                }
                std::thread::sleep(POLL);
            }
            Err(TryRecvError::Disconnected) => break,
        }
    }
    if !broken {
        if let Err(e) = out.flush() {
            fail(e, &mut broken);
        }
    }
}
