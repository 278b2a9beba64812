//! Two processes claiming one slot of one `shm:` memory at the same moment, as
//! two PCs' masters started together with the same nodeSlot: every try ends
//! with exactly one owner, and the other refused at its claim (never later, at
//! a heartbeat), naming the winner's session. The test binary runs itself again
//! as the claimants (selected by an environment variable); both start their
//! claim at one wall-clock instant, so they are within a millisecond or so.
#![cfg(not(miri))]

mod common;

use rfm_interface::settings::LinkSettings;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rfm_core::link::{Link, LinkConfig};
use rfm_frames::frame::framed::FrameBuf;

const CLAIMANT_ENV: &str = "RFM_CORE_TEST_CLAIMANT";
const TRIES: usize = 20;
/// How long the winner holds the slot, stepping: past every loser's claim.
const HOLD: Duration = Duration::from_millis(400);

fn wall_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// One claimant: opens the attitude self-loop in slot 3 of `device`, starts
/// (claims) at wall-clock `at_ns`, and prints `won TOKEN` (then steps for
/// [`HOLD`], printing `taken TEXT` if it loses the slot later) or `refused TEXT`.
fn claimant(spec: &str) {
    let (device, at_ns) = spec.split_once('@').unwrap();
    let at_ns: u128 = at_ns.parse().unwrap();
    let mut link = Link::open(LinkConfig {
        node_slot: 3,
        peer_slot: 3,
        settings: LinkSettings {
            device: device.to_owned().parse().expect("a device string"),
            ..Default::default()
        },
        ..LinkConfig::default()
    })
    .unwrap();
    let mut frame = FrameBuf::new(link.payload_len());
    let wait = at_ns.saturating_sub(wall_ns());
    std::thread::sleep(Duration::from_nanos(wait as u64));
    match link.start(0.0, &mut frame) {
        Ok(_) => println!("won {:#010x}", link.epoch() as u32),
        Err(e) => {
            println!("refused {e}");
            return;
        }
    }
    let started = std::time::Instant::now();
    let mut k = 0;
    while started.elapsed() < HOLD {
        if let Err(e) = link.step(k, k as f64 * 1e-3, &mut frame) {
            println!("taken {e}");
            return;
        }
        k += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    link.close().unwrap();
}

#[test]
fn of_two_processes_claiming_one_slot_at_one_moment_one_owns_it_and_the_other_is_refused_at_its_claim(
) {
    if let Ok(spec) = std::env::var(CLAIMANT_ENV) {
        return claimant(&spec);
    }
    let exe = std::env::current_exe().unwrap();
    let mut outcomes = [0usize; 2];
    for attempt in 0..TRIES {
        let name = common::unique("claims");
        let device = format!("shm:{name}");
        // Far enough ahead for both to have loaded and mapped the memory.
        let at = wall_ns() + 150_000_000;
        let children: Vec<_> = (0..2)
            .map(|_| {
                Command::new(&exe)
                    .args([
                        "--exact",
                        "of_two_processes_claiming_one_slot_at_one_moment_one_owns_it_and_the_other_is_refused_at_its_claim",
                        "--nocapture",
                    ])
                    .env(CLAIMANT_ENV, format!("{device}@{at}"))
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let lines: Vec<String> = children
            .into_iter()
            .map(|c| {
                let out = c.wait_with_output().unwrap();
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .find(|l| {
                        ["won ", "refused ", "taken "]
                            .iter()
                            .any(|p| l.starts_with(p))
                    })
                    .unwrap_or("(no answer)")
                    .to_owned()
            })
            .collect();
        let _ = std::fs::remove_file(format!("/dev/shm/{name}"));
        let won: Vec<&String> = lines.iter().filter(|l| l.starts_with("won ")).collect();
        assert_eq!(won.len(), 1, "try {attempt}: {lines:?}");
        assert!(
            !lines.iter().any(|l| l.starts_with("taken ")),
            "try {attempt}: decided after the claim: {lines:?}"
        );
        let token = won[0].trim_start_matches("won ");
        let refused = lines.iter().find(|l| l.starts_with("refused ")).unwrap();
        assert!(
            refused.contains(token)
                && (refused.contains("slot 3 is held by another running node")
                    || refused.contains("slot 3 was claimed at the same moment by another node")),
            "try {attempt}: the refusal names the winner {token}: {refused}"
        );
        outcomes[usize::from(refused.contains("at the same moment"))] += 1;
    }
    println!(
        "{TRIES} tries: {} refused as held (one claim seen first), {} as claimed at the same \
         moment",
        outcomes[0], outcomes[1]
    );
}
