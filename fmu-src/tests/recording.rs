//! The parameter `recordFile`: two instances coupled at lag 1 each record their
//! run; every frame one took is, byte for byte, one the other published, in
//! order, the records' times never go back, and nothing is dropped. A file that
//! cannot be made fails initialization naming it.

mod common;

use std::path::Path;

use common::{unique, Fmu};
use fmu_model::fmi2::*;
use rfm_core::frame::framed;
use rfm_core::record::{Kind, Reader, Record};

/// Every record of the recording at `path`, and its header.
fn read(path: &Path) -> (rfm_core::record::Header, Vec<Record>) {
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
    assert_eq!((ha.node, hb.node), (0, 1));
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
