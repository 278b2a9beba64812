//! Two processes over `shm:`: each publishes step k and waits for exactly the
//! peer's step k (lockstep), checking every value it receives. The test binary
//! runs itself again as the peer (selected by an environment variable).
#![cfg(not(miri))]

mod common;

use std::process::Command;
use std::time::Duration;

use rfm_core::frame::framed::{Frame, SyncMode};
use rfm_core::frame::{self, Message};
use rfm_core::slot::{FramedReader, FramedWriter};
use rfm_core::wait::{wait_step, WaitStrategy};
use rfm_core::{Device, OpenOptions};

const STEPS: u64 = 20_000;
const PEER_ENV: &str = "RFM_CORE_TEST_PEER";

/// What node `slot` publishes at `step`: exact values the other side can predict.
fn frame_of(slot: u8, step: u64) -> Frame {
    let x = step as f64 + f64::from(slot) / 10.0;
    Frame {
        writer_slot: slot,
        status: (step % 251) as u8,
        mode: SyncMode::Lockstep,
        epoch: 1 + u64::from(slot),
        step,
        sim_time: step as f64 * 1e-3,
        attitude: [x, -x, x * 1e-7],
        message: Message::new(&format!("node {slot} step {step}")).unwrap(),
        ..Frame::default()
    }
}

/// One side of the exchange; returns how many peer frames matched.
fn run_node(device: &str, me: u8, peer: u8) -> u64 {
    let d = Device::open(device, &OpenOptions::default()).unwrap();
    let region = d.map(0, frame::region_len(1)).unwrap();
    let mut writer = FramedWriter::new(frame::slot(&region, me).unwrap()).unwrap();
    let reader = FramedReader::new(frame::slot(&region, peer).unwrap()).unwrap();
    let mut matched = 0;
    for step in 0..STEPS {
        writer.publish(&frame_of(me, step)).unwrap();
        let got = wait_step(&reader, step, Duration::from_secs(20), WaitStrategy::Yield)
            .unwrap_or_else(|e| panic!("node {me}: {e}"));
        assert_eq!(
            got,
            frame_of(peer, step),
            "node {me} got a wrong frame at step {step}"
        );
        matched += 1;
    }
    matched
}

#[test]
fn lockstep_exchange_between_two_processes() {
    if let Ok(device) = std::env::var(PEER_ENV) {
        run_node(&device, 1, 0);
        return;
    }
    let name = common::unique("procs");
    let _guard = common::ShmGuard(name.clone());
    let device = format!("shm:{name}");
    // Create the memory before the peer starts, so both map the same object.
    drop(Device::open(&device, &OpenOptions::default()).unwrap());
    let mut peer = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "lockstep_exchange_between_two_processes",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PEER_ENV, &device)
        .spawn()
        .unwrap();
    let matched = run_node(&device, 0, 1);
    let status = peer.wait().unwrap();
    assert!(status.success(), "the peer process failed: {status}");
    assert_eq!(matched, STEPS);
}
