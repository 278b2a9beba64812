use std::io::Write;
use std::sync::{Arc, Mutex};

use std::path::Path;

use super::*;

mod sinks;
use rfm_frames::frame::framed::{FrameBuf, Header as FrameHeader, SyncMode};
use rfm_interface as interface;

/// The attitude interface's header, as node 0 would record it, with a fixed
/// start time (a test builds it twice and compares).
fn header() -> Header {
    let mut h = Header::for_interface(
        &interface::attitude(0, 1),
        Some(0),
        "device=shm:x\nlag=0\n".into(),
    );
    h.started_ns = 1_700_000_000_000_000_000;
    h
}

/// A sealed frame of step `step` from `slot`.
fn frame(slot: u8, step: u64) -> Vec<u8> {
    let payload = interface::attitude(0, 1).map().unwrap().area(0).payload.len;
    let mut f = FrameBuf::new(payload);
    for (i, b) in f.payload_mut().iter_mut().enumerate() {
        *b = (i as u64 ^ step) as u8;
    }
    f.seal(&FrameHeader {
        writer_slot: slot,
        lag: 0,
        mode: SyncMode::Lockstep,
        epoch: 7,
        fingerprint: 9,
        step,
        sim_time: step as f64 * 1e-3,
        wall_clock_ns: 5,
    });
    f.bytes().to_vec()
}

/// A sink that keeps what is written; tests read it back.
#[derive(Clone, Default)]
struct Memory(Arc<Mutex<Vec<u8>>>);

impl Write for Memory {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink for Memory {
    fn cut_to(&mut self, len: u64) -> std::io::Result<()> {
        self.0.lock().unwrap().truncate(len as usize);
        Ok(())
    }
}

/// What was recorded: kind, slot and frame of each record.
type Wrote = Vec<(Kind, u8, Vec<u8>)>;

/// The time `recording` gives the record of step `k` from `slot`.
fn stamp(k: u64, slot: u8) -> u64 {
    1_700_000_000_000_000_000 + k * 1000 + u64::from(slot)
}

/// A recording of `n` steps: node 0's frame, then node 1's, each step.
fn recording(n: u64) -> (Vec<u8>, Wrote) {
    let sink = Memory::default();
    let capacity = 4096 * in_flight_len(frame(0, 0).len());
    let mut recorder =
        Recorder::with_sink(Path::new("test.rec"), sink.clone(), &header(), capacity).unwrap();
    let mut wrote = Vec::new();
    for k in 0..n {
        for (kind, slot) in [(Kind::Published, 0), (Kind::Taken, 1)] {
            let f = frame(slot, k);
            assert!(recorder.record(kind, slot, stamp(k, slot), &f));
            wrote.push((kind, slot, f));
        }
    }
    recorder.finish().unwrap();
    let bytes = sink.0.lock().unwrap().clone();
    (bytes, wrote)
}

/// Every record `bytes` yields, and how reading ended.
fn read_all(
    bytes: &[u8],
) -> (
    Result<Header, RecordError>,
    Vec<Record>,
    Option<RecordError>,
    u64,
) {
    let mut reader = match Reader::new("test.rec", bytes) {
        Ok(r) => r,
        Err(e) => return (Err(e), vec![], None, 0),
    };
    let mut records = Vec::new();
    loop {
        match reader.next_record() {
            Ok(Some(r)) => records.push(r),
            Ok(None) => return (Ok(reader.header().clone()), records, None, reader.cut()),
            Err(e) => return (Ok(reader.header().clone()), records, Some(e), reader.cut()),
        }
    }
}

#[test]
fn a_recording_reads_back_exactly() {
    let (bytes, wrote) = recording(500);
    let (header_read, records, error, cut) = read_all(&bytes);
    assert_eq!(header_read.unwrap(), header());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(cut, 0);
    assert_eq!(records.len(), wrote.len());
    for (r, (kind, slot, f)) in records.iter().zip(&wrote) {
        assert_eq!((r.kind, r.slot, &r.body), (*kind, *slot, f));
        let h = rfm_frames::frame::framed::check(
            &r.body,
            f.len() - rfm_frames::frame::framed::HEADER_SIZE,
        )
        .unwrap();
        assert_eq!(h.writer_slot, *slot);
        assert_eq!(r.recorded_ns, stamp(h.step, *slot));
    }
}

/// A ring that is no whole number of records long splits records across its
/// end: the step writes them in two pieces and the writer reads them back whole.
#[test]
fn records_that_wrap_around_the_ring_read_back_exactly() {
    let sink = Memory::default();
    let len = in_flight_len(frame(0, 0).len());
    let mut recorder =
        Recorder::with_sink(Path::new("wrap.rec"), sink.clone(), &header(), 3 * len + 7).unwrap();
    let mut wrote = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    for k in 0..200 {
        let f = frame(0, k);
        // The writer drains every millisecond: a full ring is waited out here.
        while !recorder.record(Kind::Published, 0, stamp(k, 0), &f) {
            assert!(
                std::time::Instant::now() < deadline,
                "the writer stopped draining the ring at record {k}"
            );
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        wrote.push(f);
    }
    recorder.finish().unwrap();
    let (_, records, error, cut) = read_all(&sink.0.lock().unwrap());
    assert!(error.is_none() && cut == 0, "{error:?}, {cut} bytes cut");
    let bodies: Vec<_> = records.iter().map(|r| &r.body).collect();
    assert_eq!(bodies, wrote.iter().collect::<Vec<_>>());
}

/// A master killed mid-write leaves a file cut anywhere: every cut reads up to
/// the last record that is whole, and says how many bytes follow it.
#[test]
fn a_recording_cut_anywhere_reads_up_to_its_last_complete_record() {
    let (bytes, wrote) = recording(3);
    let record_len = 4 + RECORD_HEAD + wrote[0].2.len() + 4;
    let first = bytes.len() - wrote.len() * record_len;
    for cut_at in 0..=bytes.len() {
        let (header_read, records, error, cut) = read_all(&bytes[..cut_at]);
        if cut_at < first {
            let e = header_read.unwrap_err();
            assert!(
                matches!(
                    e,
                    RecordError::NotARecording { .. } | RecordError::TruncatedHeader { .. }
                ),
                "cut at {cut_at}: {e}"
            );
            continue;
        }
        assert!(error.is_none(), "cut at {cut_at}: {error:?}");
        let whole = (cut_at - first) / record_len;
        assert_eq!(records.len(), whole, "cut at {cut_at}");
        assert_eq!(
            cut as usize,
            (cut_at - first) % record_len,
            "cut at {cut_at}"
        );
        for (r, (_, _, f)) in records.iter().zip(&wrote) {
            assert_eq!(&r.body, f);
        }
    }
}

/// Any byte changed: the reader stops with an error (or, for a record length
/// made to reach past the end, as a cut file), and never returns a record that
/// was not written.
#[test]
fn a_changed_byte_is_never_read_as_a_record() {
    let (bytes, wrote) = recording(2);
    for at in 0..bytes.len() {
        for flip in [0x01u8, 0x80] {
            let mut bad = bytes.clone();
            bad[at] ^= flip;
            let (header_read, records, error, cut) = read_all(&bad);
            if header_read.is_err() {
                continue;
            }
            for (r, (kind, slot, f)) in records.iter().zip(&wrote) {
                assert_eq!(
                    (r.kind, r.slot, &r.body),
                    (*kind, *slot, f),
                    "byte {at} ^ {flip:#x}"
                );
            }
            assert!(
                error.is_some() || cut > 0 || records.len() < wrote.len(),
                "byte {at} ^ {flip:#x} went unnoticed"
            );
        }
    }
}

#[test]
fn a_recording_of_a_newer_format_is_refused_naming_both_versions() {
    let (mut bytes, _) = recording(1);
    bytes[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    let err = Reader::new("new.rec", &bytes[..]).unwrap_err();
    assert!(
        matches!(err, RecordError::NewerVersion { found, .. } if found == VERSION + 1),
        "{err:?}"
    );
    let text = err.to_string();
    let (newer, reads) = (
        format!("version {}", VERSION + 1),
        format!("reads version {VERSION}"),
    );
    assert!(text.contains(&newer) && text.contains(&reads), "{text}");
}

#[test]
fn a_file_that_is_no_recording_says_so() {
    let err = Reader::new("notes.txt", &b"hello, this is text"[..]).unwrap_err();
    assert!(matches!(err, RecordError::NotARecording { .. }), "{err:?}");
}

/// 256 nodes (slots 0..=255, which interfaces allow) used to panic the
/// header's one-byte count; the recorder in slot 255 is no "no node" either.
#[test]
fn a_recording_of_256_nodes_by_the_node_in_slot_255_reads_back() {
    let nodes: String = (0..=255)
        .map(|i| {
            format!(
                "[[node]]\nname = \"n{i}\"\nslot = {i}\nsignals = [ {{ name = \"x\", type = \"Real\" }} ]\n"
            )
        })
        .collect();
    let text = format!("name = \"wide\"\nmemory_size = 67108864\n{nodes}");
    let wide = interface::Interface::parse("wide.toml", &text, &interface::Reserved::NONE).unwrap();
    let header = Header::for_interface(&wide, Some(255), String::new());
    let sink = Memory::default();
    let recorder = Recorder::with_sink(Path::new("wide.rec"), sink.clone(), &header, 4096).unwrap();
    recorder.finish().unwrap();
    let (read, _, error, _) = read_all(&sink.0.lock().unwrap());
    assert!(error.is_none(), "{error:?}");
    let read = read.unwrap();
    assert_eq!((read.node, read.nodes().len()), (Some(255), 256));
}

/// The largest frame an interface allows (one node filling a 256 MiB memory
/// with its ring of 16): the reader used to cap records at 16 MiB whatever
/// the writer took. What the writer takes, the reader reads.
#[test]
fn the_largest_frame_an_interface_allows_reads_back() {
    let signals: String = (0..16_200)
        .map(|i| format!("{{ name = \"s{i}\", type = \"String\", size = 1024 }},"))
        .collect();
    let text = format!(
        "name = \"big\"\nmemory_size = 268435456\nmax_lag = 1\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{signals}]\n"
    );
    let big = interface::Interface::parse("big.toml", &text, &interface::Reserved::NONE).unwrap();
    let payload = big.map().unwrap().area(0).payload.len;
    assert!(payload > 16_000 << 10, "{payload}");
    let header = Header::for_interface(&big, Some(0), String::new());
    let mut f = FrameBuf::new(payload);
    f.payload_mut()[payload - 1] = 0x5a;
    let sink = Memory::default();
    let capacity = queue_capacity(header.largest_frame(), 1);
    let mut recorder =
        Recorder::with_sink(Path::new("big.rec"), sink.clone(), &header, capacity).unwrap();
    assert!(recorder.record(Kind::Published, 0, 1, f.bytes()));
    recorder.finish().unwrap();
    let (_, records, error, _) = read_all(&sink.0.lock().unwrap());
    assert!(error.is_none(), "{error:?}");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].body.len(), f.bytes().len());
    assert_eq!(records[0].body.last(), Some(&0x5a));
}

/// A recording of format `version` with the header `body` and no record.
fn file_of(version: u32, body: &[u8]) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&version.to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u32).to_le_bytes());
    bytes.extend_from_slice(body);
    let crc = crc32c::crc32c(&bytes[MAGIC.len()..]);
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes
}

/// A version-1 file (one byte each for the recorder's slot and the count)
/// still reads.
#[test]
fn a_recording_of_format_version_1_still_reads() {
    let h = header();
    let mut body = h.encode();
    // Version 1: slot (1), count (1), two reserved, in the place of two u16s,
    // and no struct count.
    body.splice(8..12, [0u8, 2, 0, 0]);
    body.truncate(body.len() - 2);
    let bytes = file_of(1, &body);
    let read = Reader::new("old.rec", &bytes[..]).unwrap();
    assert_eq!(read.header(), &h);
}

/// The start-time placeholder gives every run's file its own name, valid on
/// every file system.
#[test]
fn the_start_placeholder_names_the_file_by_its_start_in_utc() {
    let at = 1_796_086_923_000_000_000; // 2026-12-01 01:02:03 UTC
    assert_eq!(
        expand_file_name("runs/cockpit-{start}.rec", at),
        "runs/cockpit-20261201T010203Z.rec"
    );
    assert_eq!(expand_file_name("plain.rec", at), "plain.rec");
}

/// A lab's two foreign structs (one big-endian, with an array, a `char[N]`
/// and units), beside an FMU node.
fn foreign_interface() -> interface::Interface {
    let text = r#"
name = "lab"
memory_size = 65536
[[node]]
name = "sim"
slot = 0
signals = [ { name = "x", type = "Real" } ]
[[node]]
name = "motion"
offset = 4096
byte_order = "big"
handshake = { kind = "counter", field = "seq" }
fields = [
  { name = "seq", type = "uint32" },
  { name = "pos", type = "double", count = 3, unit = "m" },
  { name = "mode", type = "int16" },
  { name = "label", type = "char[5]" },
]
[[node]]
name = "ios"
offset = 8192
handshake = "none"
align = "packed"
fields = [ { name = "wind", type = "float", unit = "m/s" }, { name = "on", type = "bool" } ]
"#;
    interface::Interface::parse("lab.toml", text, &interface::Reserved::NONE).unwrap()
}

/// Recording `records` (kind, slot, body) under `header`: the file's bytes.
fn record_all(header: &Header, records: &[(Kind, u8, Vec<u8>)]) -> Vec<u8> {
    let sink = Memory::default();
    let capacity = 64 * in_flight_len(header.largest_record());
    let mut recorder =
        Recorder::with_sink(Path::new("test.rec"), sink.clone(), header, capacity).unwrap();
    for (kind, slot, body) in records {
        assert!(recorder.record(*kind, *slot, 1, body));
    }
    recorder.finish().unwrap();
    let bytes = sink.0.lock().unwrap().clone();
    bytes
}

#[test]
fn a_recordings_foreign_structs_read_back_with_their_layouts_and_records() {
    let i = foreign_interface();
    let h = Header::for_interface(&i, Some(0), String::new());
    assert_eq!(h.structs.len(), 2);
    assert_eq!(h.structs[0], RecordedStruct::of(&i.foreign[0]));
    let (motion, ios) = (&h.structs[0], &h.structs[1]);
    assert_eq!(motion.units[1].as_deref(), Some("m"));
    // Bytes whose sequence word is not zero: a struct records as it was read.
    let a: Vec<u8> = (0..motion.layout.size).map(|b| b as u8 | 1).collect();
    let b: Vec<u8> = (0..ios.layout.size).map(|b| 200 - b as u8).collect();
    let wrote = vec![
        (Kind::Struct, 0, a),
        (Kind::Struct, 1, b),
        (Kind::Struct, 0, vec![7; 40]),
    ];
    let (header_read, records, error, _) = read_all(&record_all(&h, &wrote));
    assert_eq!(header_read.unwrap(), h, "the layouts read back as declared");
    assert!(error.is_none(), "{error:?}");
    let read: Vec<_> = records
        .into_iter()
        .map(|r| (r.kind, r.slot, r.body))
        .collect();
    assert_eq!(read, wrote);
}

#[test]
fn a_struct_record_of_no_struct_or_of_another_size_is_refused() {
    let h = Header::for_interface(&foreign_interface(), Some(0), String::new());
    let size = h.structs[1].layout.size;
    for (slot, len, names) in [(2, size, "struct 2"), (1, size + 1, "struct `ios`")] {
        let bytes = record_all(&h, &[(Kind::Struct, slot, vec![0; len])]);
        let (_, records, error, _) = read_all(&bytes);
        assert!(records.is_empty());
        let error = error.expect("refused").to_string();
        assert!(error.contains(names), "{error}");
    }
}

#[test]
fn a_recording_of_format_version_2_still_reads() {
    let h = header();
    let mut body = h.encode();
    // Version 2: no struct count after the descriptors.
    assert_eq!(body.split_off(body.len() - 2), [0, 0]);
    let bytes = file_of(2, &body);
    let read = Reader::new("old.rec", &bytes[..]).unwrap();
    assert_eq!(read.header(), &h);
}
