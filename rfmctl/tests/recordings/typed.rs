//! A recording of a node whose signals are of C types and arrays: exported
//! a column per element (exact: a `uint64` past 2^53 as its digits would be
//! lost in a Real, so the test keeps to 2^53), plotted by element, and diffed
//! naming the element.

use std::path::Path;

use rfm_frames::frame::framed::{FrameBuf, Header as FrameHeader};
use rfm_interface::{Interface, Reserved};
use rfm_record::{Header, Kind, Recorder};

use super::{run, temp};

const FILE: &str = r#"name = "typed"
[[node]]
name = "fcc"
slot = 0
signals = [
    { name = "frame", type = "uint64" },
    { name = "flags", type = "uint8", count = 3 },
    { name = "g", type = "float", unit = "m/s2" },
]
"#;

/// Steps 0..5 of node `fcc`: frame = 2^53 - step, flags = [step, step + 1,
/// step + 2] (the third `change`d at step 3), g = step / 4.
fn write(path: &Path, change: u8) {
    let iface = Interface::parse("typed.toml", FILE, &Reserved::NONE).unwrap();
    let payload = iface.map().unwrap().area(0).payload.len;
    let header = Header::for_interface(&iface, Some(0), String::new());
    let mut recorder = Recorder::create(path, &header, 1 << 20, true, "a test").unwrap();
    for step in 0..5u64 {
        let mut f = FrameBuf::new(payload);
        let p = f.payload_mut();
        // struct { uint64_t frame; uint8_t flags[3]; float g; }
        p[..8].copy_from_slice(&((1u64 << 53) - step).to_le_bytes());
        p[8..11].copy_from_slice(&[step as u8, step as u8 + 1, step as u8 + 2]);
        if step == 3 {
            p[10] = p[10].wrapping_add(change);
        }
        p[12..16].copy_from_slice(&(step as f32 / 4.0).to_le_bytes());
        f.seal(&FrameHeader {
            writer_slot: 0,
            epoch: 1,
            fingerprint: iface.fingerprint(),
            step,
            sim_time: step as f64 * 0.01,
            ..FrameHeader::default()
        });
        assert!(recorder.record(Kind::Published, 0, 0, f.bytes()));
    }
    recorder.finish().unwrap();
}

#[test]
fn a_recording_of_c_types_and_arrays_exports_plots_and_diffs_by_element() {
    let (a, b) = (temp("typed-a.rec"), temp("typed-b.rec"));
    write(&a, 0);
    write(&b, 40);
    let (code, out, err) = run(&["export", a.to_str().unwrap(), "--csv"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "kind,slot,node,step,time,wall_ns,fcc.frame,fcc.flags[0],fcc.flags[1],fcc.flags[2],fcc.g"
    );
    assert_eq!(
        lines[3],
        "published,0,fcc,1,0.02,0,9007199254740990.0,2,3,4,0.5"
    );
    let png = temp("typed.png");
    let (code, out, err) = run(&[
        "plot",
        a.to_str().unwrap(),
        "--signals",
        "fcc.flags[2],fcc.g",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 signals"), "{out}");
    let (code, _, err) = run(&["plot", a.to_str().unwrap(), "--signals", "fcc.flags[3]"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("has no signal `flags[3]` (it has frame, flags[0], flags[1], flags[2], g)"),
        "{err}"
    );
    let (code, _, err) = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("first difference at step 2 of node `fcc` (slot 0): fcc.flags[2] is 5 in"),
        "{err}"
    );
}
