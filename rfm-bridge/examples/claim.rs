//! A claimant for the bridge test (`scripts/bridge-test.sh`): takes slot SLOT
//! of DEVICE (the attitude self-loop, which waits for no peer) at the
//! wall-clock instant AT_NS (ns since 1970), so that claimants on two bridged
//! hosts claim within a millisecond or so of each other. Prints `won TOKEN`
//! and holds the slot for HOLD_MS, stepping (`taken MESSAGE` if it loses it
//! then), or `refused MESSAGE` when its claim is refused.
//!
//! `claim DEVICE SLOT AT_NS HOLD_MS`

use rfm_interface::settings::LinkSettings;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rfm_core::link::{Link, LinkConfig};
use rfm_frames::frame::framed::FrameBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [device, slot, at_ns, hold_ms] = &args[..] else {
        eprintln!("usage: claim DEVICE SLOT AT_NS HOLD_MS");
        std::process::exit(2);
    };
    let parse = |what: &str, s: &str| -> u128 {
        s.parse().unwrap_or_else(|_| {
            eprintln!("claim: {what} `{s}` is not a number");
            std::process::exit(2)
        })
    };
    let slot = parse("SLOT", slot) as u8;
    let (at_ns, hold) = (parse("AT_NS", at_ns), parse("HOLD_MS", hold_ms));
    let mut link = match Link::open(LinkConfig {
        node_slot: slot,
        peer_slot: slot,
        settings: LinkSettings {
            device: device.clone().parse().expect("a device string"),
            ..Default::default()
        },
        ..LinkConfig::default()
    }) {
        Ok(link) => link,
        Err(e) => {
            eprintln!("claim: {e}");
            std::process::exit(2)
        }
    };
    let mut frame = FrameBuf::new(link.payload_len());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::thread::sleep(Duration::from_nanos(at_ns.saturating_sub(now) as u64));
    if let Err(e) = link.start(0.0, &mut frame) {
        println!("refused {e}");
        return;
    }
    println!("won {:#010x}", link.epoch() as u32);
    let started = Instant::now();
    let mut k = 0;
    while started.elapsed() < Duration::from_millis(hold as u64) {
        if let Err(e) = link.step(k, k as f64 * 1e-3, &mut frame) {
            println!("taken {e}");
            return;
        }
        k += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
}
