//! rfmctl as a script runs it: every subcommand against `shm:` and the emulated
//! RFM2g library, its output, its exit status, and its errors.

#[path = "../../../rfm2g-sim/tests/support/library.rs"]
mod sim;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::json;

use rfm_core::link::Sample;
use rfm_frames::area::DESCRIPTOR_OFFSET;
use rfm_frames::frame::framed::{FrameBuf, Header, SyncMode};
use rfm_frames::frame::seed::FlightData;
use rfm_frames::frame::{self, Message};
use rfm_frames::slot::{FramedWriter, Ring, SeedWriter};
use rfm_interface::{self as interface, descriptor};
use rfm_memory::{Device, OpenOptions, Region};

mod board;
mod doctor;
mod foreign;
mod header;
mod memory;
mod record;
mod serve;
mod watch;

/// A child whose stderr is read as it comes, so that a test waits for what
/// the child prints instead of sleeping.
struct Following {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Following {
    /// `child`, spawned with its stderr piped.
    fn new(mut child: std::process::Child) -> Following {
        use std::io::BufRead;
        let stderr = child.stderr.take().expect("stderr piped");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Following {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Returns once the child printed a line holding `what` on stderr.
    fn until(&mut self, what: &str) {
        loop {
            let line = (self.lines.recv_timeout(Duration::from_secs(30)))
                .unwrap_or_else(|e| panic!("no `{what}` on stderr ({e}): {:?}", self.seen));
            self.seen.push(line);
            if self.seen.last().is_some_and(|l| l.contains(what)) {
                return;
            }
        }
    }

    /// The child's status, its stdout and all its stderr, once it exits.
    fn finish(self) -> (std::process::ExitStatus, String, String) {
        let out = self.child.wait_with_output().unwrap();
        let mut seen = self.seen;
        seen.extend(self.lines.iter());
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status, stdout, seen.join("\n"))
    }
}

fn rfmctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rfmctl"))
        .args(args)
        .output()
        .expect("run rfmctl")
}

/// Runs rfmctl and returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = rfmctl(args);
    (
        out.status.code().expect("exited"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A `shm:` memory as a simulator would have created it; removed at the end.
struct Shm {
    device: String,
    memory: Device,
    _guard: ShmGuard,
}

struct ShmGuard(String);

impl Drop for ShmGuard {
    fn drop(&mut self) {
        let _ = rfm_memory::backend::shm::unlink(&self.0);
    }
}

fn shm(size: usize) -> Shm {
    let name = sim::unique("rfmctl");
    let device = format!("shm:{name}");
    let memory = Device::open(
        &device,
        &OpenOptions {
            memory_size: size,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    Shm {
        device,
        memory,
        _guard: ShmGuard(name),
    }
}

/// `--library` and a self-describing device path of a fresh emulated ring.
fn board(node: u8) -> (sim::RingGuard, String, String) {
    let ring = sim::unique("rfmctl");
    let lib = sim::sim_library().to_str().unwrap().to_owned();
    (
        sim::RingGuard(ring.clone()),
        lib,
        format!("/dev/rfm2g-sim/{ring}/{node}/64K"),
    )
}

#[test]
fn help_explains_every_subcommand_with_an_example() {
    let (code, text, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for sub in [
        "info",
        "peek",
        "poke",
        "dump",
        "fill",
        "watch",
        "ping",
        "ring-check",
        "cut",
        "mend",
        "dma-threshold",
        "events",
        "show",
        "export",
        "diff",
        "plot",
        "record",
    ] {
        assert!(text.contains(&format!("  {sub} ")), "--help lacks {sub}");
        let args: Vec<&str> = if sub == "events" {
            vec!["events", "send", "--help"]
        } else {
            vec![sub, "--help"]
        };
        let (code, help, _) = run(&args);
        assert_eq!(code, 0);
        assert!(
            help.contains("Example: rfmctl "),
            "{sub} --help has no example:\n{help}"
        );
    }
    assert!(text.contains("Exit codes:") && text.contains("3  the device could not be opened"));
    // The usage reads in order: the recording read, then where its CSV goes.
    let (_, help, _) = run(&["export", "--help"]);
    assert!(
        help.contains("Usage: rfmctl export [OPTIONS] <RECORDING>")
            && help.contains("--csv [<OUT>]"),
        "{help}"
    );
    let (code, _, err) = run(&["peek"]);
    assert_eq!(code, 2, "{err}");
}

/// Node `slot` of the attitude preset as a simulator starts it in `region` (mapped
/// at 0): its descriptor written, then frames 0..=`last`. Returns its area.
fn publish_attitude(region: &Region, slot: u8, last: u64) -> Region {
    publish_attitude_steps(region, slot, 0..=last)
}

/// [`publish_attitude`] of the frames `steps` (the descriptor written again).
fn publish_attitude_steps(
    region: &Region,
    slot: u8,
    steps: std::ops::RangeInclusive<u64>,
) -> Region {
    let interface = interface::attitude(slot, slot);
    let map = interface.map().unwrap();
    let area = rfm_frames::area::window(region, &map.areas[0]).unwrap();
    let mut d = descriptor::encode(
        &interface.name,
        interface.fingerprint(),
        (&interface.nodes[0], &[]),
        &map.areas[0].payload,
        Some(rfm_frames::session::Token::of(0x1234_5679)),
    );
    d.resize(d.len().next_multiple_of(4), 0);
    area.write(DESCRIPTOR_OFFSET, &d).unwrap();
    let mut w = FramedWriter::new(area.clone(), Ring::of(&map.areas[0])).unwrap();
    let mut f = FrameBuf::new(map.areas[0].payload.len);
    for step in steps {
        Sample {
            sim_time: step as f64 * 0.001,
            attitude: [0.25, -0.5, 1.0],
            status: 7,
            message: Message::new(&format!("slot {slot}")).unwrap(),
        }
        .write(f.payload_mut());
        let h = Header {
            writer_slot: slot,
            mode: SyncMode::Lockstep,
            epoch: 0x1234_5679,
            fingerprint: interface.fingerprint(),
            step,
            sim_time: step as f64 * 0.001,
            ..Header::default()
        };
        w.publish(&mut f, &h).unwrap();
    }
    area
}

/// A running attitude node in `slot` of `m`, its own peer (a self-loop).
fn running_node(m: &Shm, slot: u8) -> rfm_core::link::AttitudeLink {
    let mut l = rfm_core::link::AttitudeLink::open(rfm_core::link::LinkConfig {
        node_slot: slot,
        peer_slot: slot,
        settings: rfm_interface::settings::LinkSettings {
            device: m.device.parse().expect("a device string"),
            ..Default::default()
        },
        ..rfm_core::link::LinkConfig::default()
    })
    .unwrap();
    l.start(&Sample::default()).unwrap();
    l
}

fn watch_json(args: &[&str]) -> (i32, serde_json::Value, String) {
    let (code, out, err) = run(args);
    let v = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, v, err)
}
