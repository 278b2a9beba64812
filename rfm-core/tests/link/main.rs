//! The link's contract: exact lockstep exchange (lag 0 and 1), free mode, the seed
//! layout, the startup handshake over stale memory, and every failure it reports.
#![cfg(not(miri))]

#[path = "../common/mod.rs"]
mod common;

use common::input;
use rfm_interface::settings::LinkSettings;

use std::time::{Duration, Instant};

use rfm_core::link::{
    AttitudeLink, LinkConfig, LinkError, OpenError, PublishError, Sample, StartError,
};
use rfm_frames::frame::framed::FrameBuf;
use rfm_frames::frame::framed::SyncMode;
use rfm_frames::frame::Layout;
use rfm_frames::wait::WaitStrategy;

mod config;
mod early;
mod exchange;
mod files;
mod interrupts;
mod liveness;
mod stats;

fn config(device: &str, node: u8, peer: u8, lag: u8) -> LinkConfig {
    LinkConfig {
        node_slot: node,
        peer_slot: peer,
        settings: LinkSettings {
            device: device.to_owned().parse().expect("a device string"),
            lag,
            wait: WaitStrategy::Yield,
            timeout: Duration::from_secs(10),
            startup_timeout: Duration::from_secs(10),
            ..Default::default()
        },
        ..LinkConfig::default()
    }
}

/// Nodes 0 and 1 of the attitude preset on `dev`, both free, in `layout`,
/// started.
fn started_free_pair(dev: &str, layout: Layout) -> (AttitudeLink, AttitudeLink) {
    let free = |node, peer| LinkConfig {
        settings: LinkSettings {
            mode: SyncMode::Free,
            layout,
            ..config(dev, node, peer, 0).settings
        },
        ..config(dev, node, peer, 0)
    };
    let mut a = AttitudeLink::open(free(0, 1)).unwrap();
    let mut b = AttitudeLink::open(free(1, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    (a, b)
}

fn loopback() -> String {
    format!("loopback:{}", common::unique("link"))
}

/// Nodes 0 and 1 start, then step concurrently in two threads, each checking that
/// every frame it takes is exactly the other's input of the same step.
fn exchange_in_two_threads(a: LinkConfig, b: LinkConfig, steps: u64) -> [AttitudeLink; 2] {
    let mut a = AttitudeLink::open(a).unwrap();
    let mut b = AttitudeLink::open(b).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    exchange_started(a, b, steps)
}

/// As [`exchange_in_two_threads`], for two started links of slots 0 and 1 (or of
/// any two slots whose nodes feed `input(0, k)` and `input(1, k)`).
fn exchange_started(a: AttitudeLink, b: AttitudeLink, steps: u64) -> [AttitudeLink; 2] {
    let run = |mut link: AttitudeLink, me: u8| {
        std::thread::spawn(move || {
            for k in 0..steps {
                let got = link.step(k, &input(me, k)).unwrap().unwrap();
                assert_eq!(got.sample, input(1 - me, k), "node {me} at step {k}");
            }
            link
        })
    };
    let (ta, tb) = (run(a, 0), run(b, 1));
    [ta.join().unwrap(), tb.join().unwrap()]
}
