//! `rfmctl show` on recordings: a whole one, one cut short as a killed master
//! leaves it, and corrupt, foreign and newer ones, each with its exit status.

use std::path::{Path, PathBuf};
use std::process::Command;

use rfm_frames::frame::framed::{FrameBuf, Header as FrameHeader, SyncMode};
use rfm_interface as interface;
use rfm_record::{Header, Kind, Recorder, VERSION};

mod typed;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rfmctl"))
        .args(args)
        .output()
        .expect("run rfmctl");
    (
        out.status.code().expect("exited"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Node 0's recording of the attitude pair: its frame and node 1's each step,
/// steps 0..10 (roll = step + slot / 2), then a restart of node 1 (a new session)
/// and a skipped step.
fn write_recording(path: &Path) {
    write_recording_with(path, (2, 5), &|_| {});
}

/// A recording of `steps` steps of node 0 alone.
fn write_long_recording(path: &Path, steps: u64) {
    let iface = interface::attitude(0, 1);
    let payload = iface.map().unwrap().area(0).payload.len;
    let header = Header::for_interface(&iface, Some(0), String::new());
    let mut recorder = Recorder::create(path, &header, 1 << 24, true, "a test").unwrap();
    let mut f = FrameBuf::new(payload);
    for step in 0..steps {
        f.seal(&FrameHeader {
            writer_slot: 0,
            epoch: 1,
            fingerprint: iface.fingerprint(),
            step,
            ..FrameHeader::default()
        });
        assert!(recorder.record(Kind::Published, 0, 0, f.bytes()));
    }
    recorder.finish().unwrap();
}

/// [`write_recording`] with `change` applied to the payload of slot 1's frame
/// of epoch and step `at` (epoch 2 is its first session, 3 its restart).
fn write_recording_with(path: &Path, at: (u64, u64), change: &dyn Fn(&mut [u8])) {
    let iface = interface::attitude(0, 1);
    let map = iface.map().unwrap();
    let fingerprint = iface.fingerprint();
    let header = Header::for_interface(&iface, Some(0), "device=shm:lab\nlag=0\n".into());
    let mut recorder = Recorder::create(path, &header, 1 << 20, true, "a test").unwrap();
    let frame = |slot: u8, epoch: u64, step: u64| {
        let mut f = FrameBuf::new(map.area(usize::from(slot)).payload.len);
        let roll = step as f64 + f64::from(slot) / 2.0;
        f.payload_mut()[..8].copy_from_slice(&roll.to_le_bytes());
        if slot == 1 && (epoch, step) == at {
            change(f.payload_mut());
        }
        f.seal(&FrameHeader {
            writer_slot: slot,
            lag: 0,
            mode: SyncMode::Lockstep,
            epoch,
            fingerprint,
            step,
            sim_time: step as f64 * 0.01,
            wall_clock_ns: 0,
        });
        f.bytes().to_vec()
    };
    for k in 0..10 {
        assert!(recorder.record(Kind::Published, 0, 0, &frame(0, 1, k)));
        assert!(recorder.record(Kind::Taken, 1, 0, &frame(1, 2, k)));
    }
    assert!(recorder.record(Kind::Taken, 1, 0, &frame(1, 3, 0)));
    assert!(recorder.record(Kind::Taken, 1, 0, &frame(1, 3, 2)));
    recorder.finish().unwrap();
}

#[test]
fn show_names_the_interface_nodes_steps_gaps_and_restarts() {
    let path = temp("whole.rec");
    write_recording(&path);
    let (code, out, err) = run(&["show", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "interface   rfm_attitude",
        "recorded by node `slot0` (slot 0)",
        "parameter   device=shm:lab",
        "node        slot   1 `slot1`: 5 signals (roll, pitch, yaw, status, message)",
        "records     22",
        "end         complete",
    ] {
        assert!(out.contains(line), "no `{line}` in:\n{out}");
    }
    // Slot 0: frames 0..9, its steps -1..8; slot 1: 12 frames, one restart,
    // one step skipped.
    assert!(out.contains("   0      10  -1..8 "), "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("   1      12  -1..1 ")
            && l.split_whitespace().skip(4).take(2).eq(["1", "1"])),
        "{out}"
    );
}

#[test]
fn a_recording_cut_short_shows_up_to_its_last_record() {
    let path = temp("cut.rec");
    write_recording(&path);
    let bytes = std::fs::read(&path).unwrap();
    let cut = temp("cut-short.rec");
    std::fs::write(&cut, &bytes[..bytes.len() - 50]).unwrap();
    let (code, out, err) = run(&["show", cut.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("records     21"), "{out}");
    assert!(out.contains("cut short:"), "{out}");
}

#[test]
fn bad_recordings_are_refused_with_status_4_naming_the_problem() {
    let path = temp("bad.rec");
    write_recording(&path);
    let bytes = std::fs::read(&path).unwrap();
    let mut corrupt = bytes.clone();
    let at = bytes.len() - 300;
    corrupt[at] ^= 0x10;
    let mut newer = bytes.clone();
    newer[8] = 9;
    let newer_text = format!("format version 9; this build reads version {VERSION}");
    for (name, content, expected) in [
        ("corrupt.rec", corrupt, "is corrupt: its CRC does not match"),
        ("newer.rec", newer, newer_text.as_str()),
        (
            "text.rec",
            b"roll,pitch\n0,0\n".to_vec(),
            "is not a recording",
        ),
    ] {
        let file = temp(name);
        std::fs::write(&file, content).unwrap();
        let (code, _, err) = run(&["show", file.to_str().unwrap()]);
        assert_eq!(code, 4, "{name}: {err}");
        assert!(err.contains(expected), "{name}: {err}");
    }
    let (code, _, err) = run(&["show", temp("missing.rec").to_str().unwrap()]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("cannot open the recording"), "{err}");
}

#[test]
fn export_writes_a_row_per_frame_and_a_column_per_signal() {
    let path = temp("export.rec");
    write_recording(&path);
    let (code, out, err) = run(&["export", path.to_str().unwrap(), "--csv"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "kind,slot,node,step,time,wall_ns,slot0.roll,slot0.pitch,slot0.yaw,slot0.status,\
         slot0.message,slot1.roll,slot1.pitch,slot1.yaw,slot1.status,slot1.message"
    );
    assert_eq!(lines.len(), 1 + 22);
    // Frame 3, which the writer's step 2 published: the step the FMU's
    // <peer>.step output gives it.
    assert_eq!(lines[7], "published,0,slot0,2,0.03,0,3.0,0.0,0.0,0,,,,,,");
    assert_eq!(lines[8], "taken,1,slot1,2,0.03,0,,,,,,3.5,0.0,0.0,0,");
}

#[test]
fn diff_names_the_first_step_and_signal_that_differ() {
    let (a, b) = (temp("diff-a.rec"), temp("diff-b.rec"));
    write_recording(&a);
    write_recording_with(&b, (2, 5), &|p| {
        p[..8].copy_from_slice(&99.0f64.to_le_bytes())
    });
    let (code, out, err) = run(&["diff", a.to_str().unwrap(), a.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no difference: 22 frames"), "{out}");
    let (code, _, err) = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("first difference at step 4 of node `slot1` (slot 1): slot1.roll is 5.5 in")
            && err.contains("and 99 in"),
        "{err}"
    );
}

#[test]
fn plot_writes_a_png_of_the_signals_asked_for_and_names_a_wrong_one() {
    let path = temp("plot.rec");
    write_recording(&path);
    let png = temp("plot.png");
    let (code, out, err) = run(&[
        "plot",
        path.to_str().unwrap(),
        "--signals",
        "slot0.roll,slot1.roll",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote") && out.contains("2 signals"), "{out}");
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.len() > 1000 && bytes.starts_with(b"\x89PNG"),
        "{} bytes",
        bytes.len()
    );
    for (signals, expected) in [
        ("slot1.message", "is a String"),
        (
            "cockpit.roll",
            "no node `cockpit` in the recording (it has slot0, slot1)",
        ),
        ("slot0.wind", "node `slot0` has no signal `wind`"),
        ("roll", "name a signal as NODE.SIGNAL"),
    ] {
        let (code, _, err) = run(&["plot", path.to_str().unwrap(), "--signals", signals]);
        assert_eq!(code, 2, "{signals}: {err}");
        assert!(err.contains(expected), "{signals}: {err}");
    }
}

/// `plot FILE` used to need --signals even for a quick look: without it,
/// every number of every node gets its panel (the Strings are left out).
#[test]
fn plot_without_signals_plots_every_number_of_every_node() {
    let path = temp("plot-all.rec");
    write_recording(&path);
    let png = temp("plot-all.png");
    let (code, out, err) = run(&[
        "plot",
        path.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // roll, pitch, yaw and status of both nodes; not their message Strings.
    assert!(out.contains("(8 signals over"), "{out}");
    let bytes = std::fs::read(&png).unwrap();
    // Eight panels: two columns of four, 170 pixels a panel, in the PNG's IHDR.
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1600, 60 + 170 * 4));
}

/// A restarted writer repeats steps: its second session's step 0 is compared
/// with the other recording's second session's, not taken for the first's.
#[test]
fn diff_compares_a_restarted_writer_session_by_session() {
    let (a, b) = (temp("restart-a.rec"), temp("restart-b.rec"));
    write_recording(&a);
    write_recording_with(&b, (3, 0), &|p| {
        p[..8].copy_from_slice(&7.0f64.to_le_bytes())
    });
    let (code, _, err) = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "first difference at step -1 of node `slot1` (slot 1) after its restart 1: slot1.roll \
             is 0.5 in"
        ) && err.contains("and 7 in"),
        "{err}"
    );
}

/// Frames that differ only in bytes no signal covers (here the end of the
/// message, after its terminating NUL) are a difference, named as such.
#[test]
fn diff_names_a_difference_between_signals_too() {
    let (a, b) = (temp("pad-a.rec"), temp("pad-b.rec"));
    write_recording(&a);
    write_recording_with(&b, (2, 5), &|p| *p.last_mut().unwrap() = b'x');
    let (code, _, err) = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("first difference at step 4 of node `slot1` (slot 1): the frames differ only between signals"),
        "{err}"
    );
}

/// `export … | head` used to end with "Broken pipe (os error 32)" and a
/// failure: output into a closed pipe ends rfmctl as it ends `cat`, by
/// SIGPIPE, with nothing on stderr.
#[cfg(unix)]
#[test]
fn export_into_a_closed_pipe_ends_quietly_by_sigpipe() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    // Far more rows than a pipe holds: the first line read leaves most unwritten.
    let big = temp("pipe.rec");
    write_long_recording(&big, 20_000);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rfmctl"))
        .args(["export", big.to_str().unwrap(), "--csv"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("kind,slot,node,step"), "{first}");
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.signal() == Some(libc::SIGPIPE),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// A lab of one FMU node and a struct of the lab's programs, `motion`.
const MOTION_LAB: &str = r#"name = "lab"
[[node]]
name = "ios"
slot = 0
signals = [ { name = "x", type = "Real" } ]
[[node]]
name = "motion"
offset = 0x4000
handshake = "none"
fields = [ { name = "mode", type = "int16" }, { name = "surge", type = "float", unit = "m/s2" } ]
"#;

/// Node ios's recording of 10 steps, as its FMU records them: each step's own
/// frame, then `motion` when its program moved it (every other step, surge
/// = step / 2), with `change` applied to the struct read at `at`.
fn write_struct_recording(path: &Path, at: u64, change: f32) {
    let iface =
        interface::Interface::parse("lab.toml", MOTION_LAB, &interface::Reserved::NONE).unwrap();
    let map = iface.map().unwrap();
    let header = Header::for_interface(&iface, Some(0), String::new());
    let mut recorder = Recorder::create(path, &header, 1 << 20, true, "a test").unwrap();
    for k in 0..10u64 {
        let mut f = FrameBuf::new(map.area(0).payload.len);
        f.seal(&FrameHeader {
            writer_slot: 0,
            mode: SyncMode::Lockstep,
            epoch: 1,
            fingerprint: iface.fingerprint(),
            step: k + 1,
            sim_time: k as f64 * 0.01,
            ..FrameHeader::default()
        });
        assert!(recorder.record(Kind::Published, 0, 0, f.bytes()));
        if k % 2 == 0 {
            let surge = if k == at { change } else { k as f32 / 2.0 };
            let mut s = vec![0u8; 8];
            s[..2].copy_from_slice(&(k as i16).to_le_bytes());
            s[4..].copy_from_slice(&surge.to_le_bytes());
            assert!(recorder.record(Kind::Struct, 0, 0, &s));
        }
    }
    recorder.finish().unwrap();
}

/// `plot` draws a struct element over the simulation time of the steps that
/// read it; `diff` compares the structs of two runs and names the first
/// element that differs.
#[test]
fn plot_and_diff_take_the_structs_of_the_labs_programs() {
    let (a, b) = (temp("structs-a.rec"), temp("structs-b.rec"));
    write_struct_recording(&a, 4, 2.0);
    write_struct_recording(&b, 4, 99.0);
    let png = temp("structs.png");
    let (code, out, err) = run(&[
        "plot",
        a.to_str().unwrap(),
        "--signals",
        "ios.x,motion.surge",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 signals over 0.090 s"), "{out}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let (code, _, err) = run(&["plot", a.to_str().unwrap(), "--signals", "motion.heave"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("foreign struct `motion` has no element `heave` (it has mode, surge)"),
        "{err}"
    );
    let (code, out, err) = run(&["diff", a.to_str().unwrap(), a.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("5 structs of the lab's programs agree"),
        "{out}"
    );
    let (code, _, err) = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "first difference at struct 3 of foreign node `motion`, read at step 5 (t = 0.04): \
             motion.surge is 2 in"
        ) && err.contains("and 99 in"),
        "{err}"
    );
}
