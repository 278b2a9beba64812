//! The parameter `recordFile`: two instances coupled at lag 1 each record their
//! run; every frame one took is, byte for byte, one the other published, in
//! order, the records' times never go back, and nothing is dropped. A file that
//! cannot be made fails initialization naming it.

mod common;

use std::path::Path;

use common::{unique, Fmu};
use fmu_model::fmi2::*;
use rfm_frames::frame::framed;
use rfm_record::{Kind, Reader, Record};

/// Every record of the recording at `path`, and its header.
fn read(path: &Path) -> (rfm_record::Header, Vec<Record>) {
    let mut reader = Reader::open(path).unwrap();
    let mut records = Vec::new();
    while let Some(r) = reader.next_record().unwrap() {
        records.push(r);
    }
    assert_eq!(
        reader.cut(),
        0,
        "a recording closed by fmi2Terminate is whole"
    );
    (reader.header().clone(), records)
}

fn frames(records: &[Record], kind: Kind) -> Vec<&Vec<u8>> {
    records
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| &r.body)
        .collect()
}

#[test]
fn two_recordings_agree_on_every_frame_exchanged() {
    let device = format!("loopback:{}", unique("rec"));
    let dir = tempfile::tempdir().unwrap();
    let files = [dir.path().join("a.rec"), dir.path().join("b.rec")];
    let nodes = [Fmu::new("a"), Fmu::new("b")];
    for (me, (fmu, f)) in nodes.iter().zip(&files).enumerate() {
        fmu.set_all(&[
            ("device", device.as_str()),
            ("nodeSlot", &me.to_string()),
            ("peerSlot", &(1 - me).to_string()),
            ("lag", "1"),
            ("recordFile", f.to_str().unwrap()),
        ]);
        assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    }
    let steps = 1000;
    for k in 0..steps {
        for (me, fmu) in nodes.iter().enumerate() {
            fmu.set_all(&[("roll", &format!("{}", k as f64 + me as f64 * 0.5))]);
            assert_eq!(fmu.step(k as f64 * 1e-3, 1e-3), fmi2OK, "{:?}", fmu.log());
        }
    }
    for fmu in &nodes {
        assert_eq!(fmu.integer("record.dropped"), 0);
        assert_eq!(fmu.terminate(), fmi2OK, "{:?}", fmu.log());
    }
    let [(ha, a), (hb, b)] = [read(&files[0]), read(&files[1])];
    assert_eq!((ha.node, hb.node), (Some(0), Some(1)));
    assert_eq!(ha.interface, "rfm_attitude");
    assert_eq!(ha.descriptors.len(), 2);
    assert!(ha.parameters.contains("lag=1\n"), "{}", ha.parameters);
    assert!(ha.parameters.contains("recordFile="), "{}", ha.parameters);
    for (records, other) in [(&a, &b), (&b, &a)] {
        let published = frames(records, Kind::Published);
        // The initial frame, then one per step, steps 0..=1000 in order.
        assert_eq!(published.len(), steps + 1);
        for (k, f) in published.iter().enumerate() {
            let h = framed::check(f, f.len() - framed::HEADER_SIZE).unwrap();
            assert_eq!(h.step, k as u64);
        }
        // The records' times never go back.
        if let Some(w) = records
            .windows(2)
            .find(|w| w[1].recorded_ns < w[0].recorded_ns)
        {
            panic!(
                "a {:?} record of {} ns follows a {:?} one of {} ns",
                w[1].kind, w[1].recorded_ns, w[0].kind, w[0].recorded_ns
            );
        }
        // Each step took the peer's frame of the step before (lag 1): those are
        // the peer's published frames 0..1000, byte for byte.
        let taken = frames(records, Kind::Taken);
        let theirs = frames(other, Kind::Published);
        assert_eq!(taken.len(), steps);
        if let Some(i) = (0..steps).find(|&i| taken[i] != theirs[i]) {
            panic!("the frame taken at step {i} is not the one the peer published");
        }
    }
}

#[test]
fn a_record_file_that_cannot_be_made_fails_initialization_naming_it() {
    let fmu = Fmu::new("a");
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("deeper").join("a.rec");
    fmu.set_all(&[
        ("device", &format!("loopback:{}", unique("rec"))),
        ("peerSlot", "0"),
        ("recordFile", missing.to_str().unwrap()),
    ]);
    assert_eq!(fmu.init(), fmi2Error);
    let err = fmu.last_error();
    assert!(
        err.contains("recordFile") && err.contains("deeper") && err.contains("cannot create"),
        "{err}"
    );
}

/// One node of the attitude self-loop on its own loopback memory, recording
/// into `file` with the extra parameters `more`: its initialization status.
fn recorder(name: &str, file: &Path, more: &[(&str, &str)]) -> (Fmu, fmi2Status) {
    let fmu = Fmu::new(name);
    fmu.set_all(&[
        ("device", &format!("loopback:{}", unique("rec"))),
        ("peerSlot", "0"),
        ("recordFile", file.to_str().unwrap()),
    ]);
    fmu.set_all(more);
    let status = fmu.init();
    (fmu, status)
}

/// Two instances given one recordFile: both used to record, interleaved into
/// one unreadable file. The second is refused at initialization naming the
/// first's instance, and the first's recording is whole.
#[test]
fn a_second_instance_recording_into_the_same_file_is_refused_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.rec");
    let (first, status) = recorder("first", &file, &[]);
    assert_eq!(status, fmi2OK, "{:?}", first.log());
    for overwrite in ["false", "true"] {
        let (second, status) = recorder("second", &file, &[("recordOverwrite", overwrite)]);
        assert_eq!(status, fmi2Error, "{overwrite}");
        let err = second.last_error();
        assert!(
            err.contains("is being recorded into by instance `first` (slot 0")
                && err.contains("give each instance its own recordFile"),
            "{err}"
        );
    }
    for k in 0..100 {
        assert_eq!(first.step(k as f64 * 1e-3, 1e-3), fmi2OK);
    }
    assert_eq!(first.terminate(), fmi2OK, "{:?}", first.log());
    let (_, records) = read(&file);
    assert_eq!(frames(&records, Kind::Published).len(), 101);
}

/// Yesterday's recording named again used to be replaced without a word: it
/// is refused (the file untouched) unless recordOverwrite allows it, and
/// `{start}` gives every run its own file.
#[test]
fn an_existing_recording_is_replaced_only_with_record_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("yesterday.rec");
    std::fs::write(&file, b"yesterday's run").unwrap();
    let (fmu, status) = recorder("a", &file, &[]);
    assert_eq!(status, fmi2Error);
    let err = fmu.last_error();
    assert!(
        err.contains("exists") && err.contains("recordOverwrite = true") && err.contains("{start}"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"yesterday's run");
    let (fmu, status) = recorder("a", &file, &[("recordOverwrite", "true")]);
    assert_eq!(status, fmi2OK, "{:?}", fmu.log());
    assert_eq!(fmu.terminate(), fmi2OK);
    assert_eq!(read(&file).0.node, Some(0));

    let template = dir.path().join("run-{start}.rec");
    let (fmu, status) = recorder("a", &template, &[]);
    assert_eq!(status, fmi2OK, "{:?}", fmu.log());
    assert_eq!(fmu.terminate(), fmi2OK);
    let made: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("run-"))
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let stamp = &made[0]["run-".len()..made[0].len() - ".rec".len()];
    assert!(
        stamp.len() == 16 && stamp.as_bytes()[8] == b'T' && stamp.ends_with('Z'),
        "{stamp}"
    );
    assert!(
        fmu.log().iter().any(|(_, _, l)| l.contains(&made[0])),
        "the log names the file: {:?}",
        fmu.log()
    );
}
