//! The writer thread against disks that misbehave: one stuck (a slow disk)
//! and one that fills mid-run. Recording never holds up a step, and every
//! record lost is counted and said.

use std::io::Write;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use super::*;

/// A sink whose second write waits until the test lets it go: the writer thread
/// is then stuck as on a slow disk.
struct Stuck {
    writes: usize,
    started: mpsc::Sender<()>,
    release: Arc<Mutex<()>>,
}

impl Write for Stuck {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writes += 1;
        if self.writes == 2 {
            self.started.send(()).unwrap();
            drop(self.release.lock().unwrap());
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink for Stuck {
    fn cut_to(&mut self, _: u64) -> std::io::Result<()> {
        Ok(())
    }
}

/// With the writer stuck, records fill the queue and the rest are dropped and
/// counted at once: recording never holds up a step.
#[test]
fn a_full_queue_drops_and_counts_records_instead_of_waiting() {
    let release = Arc::new(Mutex::new(()));
    let held = release.lock().unwrap();
    let (started, writing) = mpsc::channel();
    let sink = Stuck {
        writes: 0,
        started,
        release: Arc::clone(&release),
    };
    let capacity = 4;
    let f = frame(0, 0);
    let mut recorder = Recorder::with_sink(
        Path::new("stuck.rec"),
        sink,
        &header(),
        capacity * in_flight_len(f.len()),
    )
    .unwrap();
    // The writer takes the first record and is stuck writing it.
    assert!(recorder.record(Kind::Published, 0, 1, &f));
    writing.recv().unwrap();
    let accepted = (0..capacity + 5)
        .filter(|_| recorder.record(Kind::Published, 0, 1, &f))
        .count();
    assert_eq!(accepted, capacity);
    assert_eq!(recorder.dropped(), 5);
    drop(held);
    recorder.finish().unwrap();
}

/// A disk that fills: writes fail from byte `full_at` on until the test frees
/// it. What was written before a failed write stays (partly written records
/// too, as on a real disk).
#[derive(Clone)]
struct Disk {
    bytes: Arc<Mutex<Vec<u8>>>,
    room: Arc<Mutex<usize>>,
}

impl Write for Disk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = *self.room.lock().unwrap();
        let mut bytes = self.bytes.lock().unwrap();
        let n = buf.len().min(room.saturating_sub(bytes.len()));
        if n == 0 {
            return Err(std::io::Error::from_raw_os_error(28)); // ENOSPC
        }
        bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink for Disk {
    fn cut_to(&mut self, len: u64) -> std::io::Result<()> {
        self.bytes.lock().unwrap().truncate(len as usize);
        Ok(())
    }
}

/// Waits until `f` holds, at most 10 s.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !f() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// The disk fills mid-run: used to go unsaid until the end (`dropped` 0, no
/// news). Every record lost is counted, the news says when losing began (with
/// the error) and when it ended, the file reads back whole up to the loss, a
/// kind-2 record per slot says how many are missing, and writing goes on.
#[test]
fn a_full_disk_counts_every_lost_record_and_the_file_reads_on_after_it() {
    let disk = Disk {
        bytes: Arc::default(),
        room: Arc::new(Mutex::new(usize::MAX)),
    };
    let f = frame(0, 0);
    let mut recorder = Recorder::with_sink(
        Path::new("full.rec"),
        disk.clone(),
        &header(),
        64 * in_flight_len(f.len()),
    )
    .unwrap();
    let record = |r: &mut Recorder, k: u64| {
        for (kind, slot) in [(Kind::Published, 0), (Kind::Taken, 1)] {
            assert!(r.record(kind, slot, stamp(k, slot), &frame(slot, k)));
        }
    };
    for k in 0..10 {
        record(&mut recorder, k);
    }
    let head = recording(0).0.len();
    let record_len = 4 + RECORD_HEAD + f.len() + 4;
    eventually("the first records are written", || {
        disk.bytes.lock().unwrap().len() == head + 20 * record_len
    });
    assert_eq!(recorder.loss_news(), None);
    // The disk holds half a record more, then nothing.
    let full_at = disk.bytes.lock().unwrap().len() + f.len() / 2;
    *disk.room.lock().unwrap() = full_at;
    for k in 10..20 {
        record(&mut recorder, k);
    }
    eventually("the loss is counted", || recorder.dropped() == 20);
    let began = recorder.loss_news();
    assert!(
        matches!(&began, Some(LossNews::Began { error }) if error.contains("No space left")),
        "{began:?}"
    );
    assert_eq!(recorder.loss_news(), None);
    *disk.room.lock().unwrap() = usize::MAX;
    for k in 20..30 {
        record(&mut recorder, k);
    }
    eventually("writing works again", || {
        recorder.loss_news() == Some(LossNews::Ended { lost: 20 })
    });
    let err = recorder.finish().unwrap_err().to_string();
    assert!(err.contains("20 records are lost"), "{err}");
    let (_, records, error, cut) = read_all(&disk.bytes.lock().unwrap());
    assert!(error.is_none() && cut == 0, "{error:?}, {cut} bytes cut");
    let steps = |slot: u8| -> Vec<u64> {
        records
            .iter()
            .filter(|r| r.slot == slot && r.kind != Kind::Missed)
            .map(|r| {
                rfm_frames::frame::framed::check(&r.body, f.len() - 64)
                    .unwrap()
                    .step
            })
            .collect()
    };
    let expected: Vec<u64> = (0..10).chain(20..30).collect();
    assert_eq!((steps(0), steps(1)), (expected.clone(), expected));
    let missed: Vec<(u8, u64)> = records
        .iter()
        .filter_map(|r| Some((r.slot, r.missed()?)))
        .collect();
    assert_eq!(missed, [(0, 10), (1, 10)]);
}
