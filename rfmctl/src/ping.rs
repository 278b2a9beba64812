//! `ping`: round trips between two slots, timed on one clock.
//!
//! The end with the lower slot measures: it publishes frame k (a framed-layout
//! frame, as the FMU writes) and times until the other end's frame k, bound to
//! this session's epoch, comes back. The other end echoes each new ping. One
//! round trip is two one-way trips through the memory plus one poll on each side,
//! the quantity the article's 400-600 ns one-way figure is half of.
//!
//! Pings are attitude preset frames, so `rfmctl watch` shows them: the message
//! says ping or pong, the status byte marks the last ping, and an answer carries
//! the epoch of the session it answers as the bits of its roll.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::Args;
use rfm_core::link::Sample;
use rfm_frames::frame::framed::{FrameBuf, Header, SyncMode};
use rfm_frames::frame::Message;
use rfm_frames::slot::{FramedReader, FramedWriter, Ring};
use rfm_interface as interface;
use rfm_memory::Device;

use crate::failure::Failure;
use crate::numbers::parse_u64;
use crate::open::open;

pub const HELP: &str = "\
Run it in two terminals (on two PCs, or two processes) with the slots swapped; the
end with the lower slot measures and prints the distribution, the other echoes.
With --both, this one process runs both ends. Use slots no simulator is using.

Example: rfmctl ping /dev/rfm2g0 --slot 0 --peer 1     (PC A)
         rfmctl ping /dev/rfm2g0 --slot 1 --peer 0     (PC B)
         rfmctl ping shm:lab --slot 6 --peer 7 --both --count 100000";

#[derive(Args, Debug, Clone)]
pub struct PingArgs {
    pub device: String,
    /// This end's slot (written by this end only)
    #[arg(long)]
    pub slot: u8,
    /// The other end's slot
    #[arg(long)]
    pub peer: u8,
    /// Round trips to measure
    #[arg(long, default_value = "10000")]
    pub count: u64,
    /// Run both ends in this process (two threads)
    #[arg(long)]
    pub both: bool,
    /// Where slot 0 starts, as the FMU's regionOffset
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    pub region_offset: u64,
    /// Seconds to wait for the other end to start, and for any one answer
    #[arg(long, default_value = "30")]
    pub timeout: u64,
}

const PING: &str = "rfmctl ping";
const PONG: &str = "rfmctl pong";
/// Status byte of the measuring end's last frame: the echo may stop.
const DONE: u8 = 1;
/// Round trips not counted while caches and branch predictors warm up.
const WARM_UP: u64 = 100;

/// A random odd number per session, so that answers to an earlier session's
/// pings (still in memory) are never taken for ours.
fn session_epoch() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.finish() | 1
}

struct End {
    writer: FramedWriter,
    reader: FramedReader,
    /// This end's frame and the other end's last one.
    out: FrameBuf,
    input: FrameBuf,
    slot: u8,
    peer_slot: u8,
    epoch: u64,
}

impl End {
    fn open(device: &Device, args: &PingArgs) -> Result<End, Failure> {
        if args.slot == args.peer {
            return Err(Failure::usage(anyhow!(
                "--slot and --peer are both {}: a ping needs two slots",
                args.slot
            )));
        }
        let highest = args.slot.max(args.peer);
        let region = device
            .map(args.region_offset, interface::attitude_region_len(highest))
            .map_err(|e| Failure::device(anyhow!("slots up to {highest} do not fit: {e}")))?;
        let area = |slot| {
            rfm_frames::area::window(&region, &interface::attitude_area(slot))
                .map_err(Failure::device)
        };
        let ring = Ring::of(&interface::attitude_area(args.slot));
        let reader = FramedReader::new(area(args.peer)?, ring).map_err(Failure::device)?;
        Ok(End {
            writer: FramedWriter::new(area(args.slot)?, ring).map_err(Failure::device)?,
            out: reader.buffer(),
            input: reader.buffer(),
            reader,
            slot: args.slot,
            peer_slot: args.peer,
            epoch: session_epoch(),
        })
    }

    fn publish(
        &mut self,
        step: u64,
        ack_epoch: u64,
        status: u8,
        text: &str,
    ) -> Result<(), Failure> {
        Sample {
            sim_time: 0.0,
            attitude: [f64::from_bits(ack_epoch), 0.0, 0.0],
            status,
            message: Message::new(text).expect("short ASCII"),
        }
        .write(self.out.payload_mut());
        let header = Header {
            writer_slot: self.slot,
            mode: SyncMode::Free,
            epoch: self.epoch,
            fingerprint: interface::attitude(self.slot, self.peer_slot).fingerprint(),
            step,
            ..Header::default()
        };
        self.writer
            .publish(&mut self.out, &header)
            .map_err(Failure::device)
    }

    /// The other end's newest frame: its header and what it says.
    fn latest(&mut self) -> Option<(Header, Sample)> {
        let header = self.reader.read_latest(&mut self.input).ok()?;
        Some((header, Sample::read(self.input.payload(), header.sim_time)))
    }
}

/// Measures `count` round trips; returns their durations in ns.
fn measure(mut end: End, count: u64, timeout: Duration) -> Result<Vec<u64>, Failure> {
    let mut samples = Vec::with_capacity(count as usize);
    for k in 0..count + WARM_UP {
        let last = k + 1 == count + WARM_UP;
        end.publish(k, 0, if last { DONE } else { 0 }, PING)?;
        let sent = Instant::now();
        // The first answer may take until the other end is started.
        let limit = if k == 0 {
            timeout
        } else {
            timeout.min(Duration::from_secs(5))
        };
        loop {
            if let Some((h, answer)) = end.latest() {
                if answer.attitude[0].to_bits() == end.epoch && h.step == k {
                    break;
                }
            }
            if sent.elapsed() > limit {
                return Err(Failure::check_failed(anyhow!(
                    "no answer to ping {k} from slot {} within {} s: is `rfmctl ping` running \
                     there with --slot {} --peer {}?",
                    end.peer_slot,
                    limit.as_secs(),
                    end.peer_slot,
                    end.slot
                )));
            }
            std::hint::spin_loop();
        }
        if k >= WARM_UP {
            samples.push(sent.elapsed().as_nanos() as u64);
        }
    }
    Ok(samples)
}

/// Echoes pings until the measuring end says it is done; returns how many.
fn echo(mut end: End, timeout: Duration) -> Result<u64, Failure> {
    // A finished session left in memory by an earlier run must not stop us.
    let stale = end.latest().map(|(h, _)| h.epoch);
    let mut answered = 0u64;
    let mut last: Option<(u64, u64)> = None;
    let mut quiet_since = Instant::now();
    loop {
        match end.latest() {
            Some((f, ping))
                if ping.message.to_string_lossy() == PING && last != Some((f.epoch, f.step)) =>
            {
                let finished = ping.status == DONE;
                if finished && stale == Some(f.epoch) && last.is_none() {
                    std::hint::spin_loop();
                    continue;
                }
                end.publish(f.step, f.epoch, 0, PONG)?;
                answered += 1;
                last = Some((f.epoch, f.step));
                quiet_since = Instant::now();
                if finished {
                    return Ok(answered);
                }
            }
            _ => {
                if quiet_since.elapsed() > timeout {
                    return Err(Failure::check_failed(anyhow!(
                        "no ping from slot {} for {} s after {answered} answers",
                        end.peer_slot,
                        timeout.as_secs()
                    )));
                }
                std::hint::spin_loop();
            }
        }
    }
}

pub fn run(args: &PingArgs, library: Option<&Path>) -> Result<(), Failure> {
    if args.count == 0 {
        return Err(Failure::usage(anyhow!("--count must be at least 1")));
    }
    let timeout = Duration::from_secs(args.timeout.max(1));
    let device = open(&args.device, library)?;
    let measuring = args.slot < args.peer;
    if args.both {
        let other = PingArgs {
            slot: args.peer,
            peer: args.slot,
            ..args.clone()
        };
        let echo_end = End::open(&device, &other)?;
        let echoer = std::thread::spawn(move || echo(echo_end, timeout));
        let end = End::open(&device, args)?;
        let samples = measure(end, args.count, timeout)?;
        echoer
            .join()
            .map_err(|_| Failure::device(anyhow!("the echoing thread panicked")))??;
        report(args, &samples);
        return Ok(());
    }
    let end = End::open(&device, args)?;
    if measuring {
        let samples = measure(end, args.count, timeout)?;
        report(args, &samples);
    } else {
        println!(
            "echoing pings from slot {} in slot {} of {} (the lower slot measures)…",
            args.peer, args.slot, args.device
        );
        let n = echo(end, timeout)?;
        println!("answered {n} pings");
    }
    Ok(())
}

fn report(args: &PingArgs, samples: &[u64]) {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let pct = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
    println!(
        "{} round trips slot {} -> {} -> {} on {} ({WARM_UP} warm-up trips not counted)",
        sorted.len(),
        args.slot,
        args.peer,
        args.slot,
        args.device
    );
    println!(
        "round trip ns: min {}  median {}  p99 {}  p99.9 {}  max {}",
        sorted[0],
        pct(0.5),
        pct(0.99),
        pct(0.999),
        sorted[sorted.len() - 1]
    );
    println!("one way ≈ median / 2 = {} ns", pct(0.5) / 2);
    print!("{}", histogram(&sorted));
}

/// Counts per power-of-two bucket, as a bar chart a terminal can show.
pub fn histogram(sorted: &[u64]) -> String {
    let mut buckets: Vec<(u64, usize)> = Vec::new();
    for &s in sorted {
        let low = if s == 0 {
            0
        } else {
            1u64 << (63 - s.leading_zeros())
        };
        match buckets.last_mut() {
            Some((l, n)) if *l == low => *n += 1,
            _ => buckets.push((low, 1)),
        }
    }
    let most = buckets.iter().map(|b| b.1).max().unwrap_or(1);
    let mut out = String::new();
    for (low, n) in buckets {
        let high = if low == 0 { 0 } else { 2 * low - 1 };
        let bar = "#".repeat((n * 50).div_ceil(most));
        out.push_str(&format!(
            "{:>9}-{:<9} ns |{bar:<50}| {n} ({:.2} %)\n",
            low,
            high,
            100.0 * n as f64 / sorted.len() as f64
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::histogram;

    #[test]
    fn buckets_are_powers_of_two() {
        let text = histogram(&[300, 400, 511, 512, 600, 5000]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("      256-511       ns |"), "{text}");
        assert!(lines[0].ends_with("| 3 (50.00 %)"), "{text}");
        assert!(
            lines[1].contains("512-1023") && lines[1].ends_with("| 2 (33.33 %)"),
            "{text}"
        );
        assert!(
            lines[2].contains("4096-8191") && lines[2].ends_with("| 1 (16.67 %)"),
            "{text}"
        );
    }
}
