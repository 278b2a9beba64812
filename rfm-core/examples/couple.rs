//! Two simulator processes coupled through reflective memory, in lockstep.
//!
//! `cargo run --release -p rfm-core --example couple -- [--steps N] [--device DEV]
//! [--wait spin|yield|sleep]`
//!
//! The parent starts two child processes, node 0 and node 1. Each integrates its own
//! aircraft attitude, publishes it every step into its slot, waits for exactly the
//! peer's frame of the same step, and checks it against the peer's model (both
//! models are deterministic, so every value received must be exact). Each prints
//! attitudes crossing and its step-time distribution. The default device is a fresh
//! `shm:` object, removed at the end.

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rfm_core::link::Sample;
use rfm_frames::frame::framed::{FrameBuf, Header, SyncMode};
use rfm_frames::frame::Message;
use rfm_frames::slot::{FramedReader, FramedWriter, Ring};
use rfm_frames::wait::{wait_step, WaitStrategy};
use rfm_interface as interface;
use rfm_memory::{Device, OpenOptions};

const DT: f64 = 0.001;

struct Args {
    steps: u64,
    device: Option<String>,
    wait: WaitStrategy,
    node: Option<u8>,
}

fn usage() -> ! {
    eprintln!("usage: couple [--steps N] [--device DEV] [--wait spin|yield|sleep]");
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        steps: 200_000,
        device: None,
        wait: WaitStrategy::Spin,
        node: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--steps" => args.steps = value().parse().unwrap_or_else(|_| usage()),
            "--device" => args.device = Some(value()),
            "--wait" => {
                args.wait = value().parse().unwrap_or_else(|e| {
                    eprintln!("{e}");
                    usage()
                })
            }
            "--node" => args.node = Some(value().parse().unwrap_or_else(|_| usage())),
            "-h" | "--help" => usage(),
            _ => usage(),
        }
    }
    args
}

/// Node `node`'s attitude at `step`: a different slow manoeuvre per node.
fn attitude(node: u8, step: u64) -> [f64; 3] {
    let t = step as f64 * DT;
    let phase = f64::from(node) * 1.3;
    [
        0.3 * (0.7 * t + phase).sin(),
        0.1 * (0.4 * t + phase).cos(),
        (0.05 * t + phase) % std::f64::consts::TAU,
    ]
}

/// Fills `frame` with what `node` publishes at `step`; returns the header to seal it with.
fn frame_of(frame: &mut FrameBuf, node: u8, epoch: u64, step: u64) -> Header {
    let sample = Sample {
        sim_time: step as f64 * DT,
        attitude: attitude(node, step),
        status: 1,
        message: Message::new(&format!("aircraft {node}")).expect("short ASCII"),
    };
    sample.write(frame.payload_mut());
    Header {
        writer_slot: node,
        mode: SyncMode::Lockstep,
        epoch,
        fingerprint: interface::attitude(0, 1).fingerprint(),
        step,
        sim_time: sample.sim_time,
        wall_clock_ns: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
        ..Header::default()
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn run_node(device: &str, node: u8, steps: u64, wait: WaitStrategy) -> Result<(), String> {
    let peer = 1 - node;
    let d = Device::open(device, &OpenOptions::default()).map_err(|e| e.to_string())?;
    let region = d
        .map(0, interface::attitude_region_len(1))
        .map_err(|e| e.to_string())?;
    let slot = |s| {
        rfm_frames::area::window(&region, &interface::attitude_area(s)).map_err(|e| e.to_string())
    };
    let ring = Ring::of(&interface::attitude_area(node));
    let mut writer = FramedWriter::new(slot(node)?, ring).map_err(|e| e.to_string())?;
    let reader = FramedReader::new(slot(peer)?, ring).map_err(|e| e.to_string())?;
    let (mut mine, mut theirs) = (reader.buffer(), reader.buffer());
    let epoch = u64::from(std::process::id()) << 8 | u64::from(node) | 1;
    let mut times = Vec::with_capacity(steps as usize);
    let report_every = (steps / 5).max(1);
    let mut peer_epoch = None;
    for step in 0..steps {
        let start = Instant::now();
        let header = frame_of(&mut mine, node, epoch, step);
        writer
            .publish(&mut mine, &header)
            .map_err(|e| e.to_string())?;
        let timeout = if step == 0 {
            Duration::from_secs(30)
        } else {
            Duration::from_secs(1)
        };
        let got = wait_step(&reader, &mut theirs, step, timeout, wait)
            .map_err(|e| format!("node {node}, {device} slot {peer}, step {step}: {e}"))?;
        times.push(start.elapsed().as_nanos() as u64);
        if *peer_epoch.get_or_insert(got.epoch) != got.epoch {
            return Err(format!("node {node}: peer restarted at step {step}"));
        }
        let sample = Sample::read(theirs.payload(), got.sim_time);
        if sample.attitude != attitude(peer, step) || got.step != step || got.writer_slot != peer {
            return Err(format!(
                "node {node}: step {step}: got {got:?} {sample:?}, which the peer never sent"
            ));
        }
        if step % report_every == 0 || step + 1 == steps {
            let [r, p, y] = sample.attitude;
            let [mr, mp, my] = attitude(node, step);
            println!(
                "node {node} step {step:>7}  t={:7.3}s  own roll {mr:+.4} pitch {mp:+.4} yaw {my:+.4}  \
                 | peer roll {r:+.4} pitch {p:+.4} yaw {y:+.4}",
                got.sim_time
            );
        }
    }
    print_times(node, steps, &times);
    Ok(())
}

/// The step times' distribution after the warm-up.
fn print_times(node: u8, steps: u64, times: &[u64]) {
    let warm = (times.len() / 10).min(10_000);
    let mut sorted = times[warm..].to_vec();
    sorted.sort_unstable();
    println!(
        "node {node}: {steps} steps in lockstep, every peer value exact; step time (publish + wait for peer) \
         over {} steps after {warm} warm-up: median {} ns, p99 {} ns, p99.9 {} ns, max {} ns",
        sorted.len(),
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.99),
        percentile(&sorted, 0.999),
        sorted[sorted.len() - 1],
    );
}

/// Memory outlives programs (shm objects, RFM boards): clears both slots so that no
/// node takes the frames of an earlier run for its peer's.
fn clear_slots(device: &str) -> Result<(), String> {
    let d = Device::open(device, &OpenOptions::default()).map_err(|e| e.to_string())?;
    let region = d
        .map(0, interface::attitude_region_len(1))
        .map_err(|e| e.to_string())?;
    region.fill(0, region.len(), 0).map_err(|e| e.to_string())
}

/// Runs the two simulator processes; whether both succeeded.
fn run_pair(device: &str, steps: u64, wait: WaitStrategy) -> bool {
    let exe = std::env::current_exe().expect("own path");
    let wait = format!("{wait:?}").to_lowercase();
    let children: Vec<_> = (0..2u8)
        .map(|node| {
            Command::new(&exe)
                .args([
                    "--node",
                    &node.to_string(),
                    "--device",
                    device,
                    "--steps",
                    &steps.to_string(),
                ])
                .args(["--wait", &wait])
                .spawn()
                .expect("spawn a simulator process")
        })
        .collect();
    children
        .into_iter()
        .all(|mut c| c.wait().is_ok_and(|s| s.success()))
}

fn main() -> ExitCode {
    let args = parse_args();
    if let Some(node) = args.node {
        let device = args.device.expect("the parent passes --device");
        return match run_node(&device, node, args.steps, args.wait) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("couple: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let (device, shm_name) = match args.device {
        Some(d) => (d, None),
        None => {
            let name = format!("rfm-couple-{}", std::process::id());
            (format!("shm:{name}"), Some(name))
        }
    };
    if matches!(
        device.parse(),
        Ok(rfm_memory::DeviceSetting::One(
            rfm_memory::DeviceSpec::Loopback { .. }
        ))
    ) {
        eprintln!(
            "couple: `loopback:` memory does not cross processes; use shm:NAME or an RFM2g device"
        );
        return ExitCode::from(2);
    }
    if let Err(e) = clear_slots(&device) {
        eprintln!("couple: {e}");
        return ExitCode::FAILURE;
    }
    println!(
        "coupling two simulator processes through {device}, {} steps, wait {:?}",
        args.steps, args.wait
    );
    let ok = run_pair(&device, args.steps, args.wait);
    if let Some(name) = shm_name {
        let _ = rfm_memory::backend::shm::unlink(&name);
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("couple: a simulator process failed");
        ExitCode::FAILURE
    }
}
