//! Two processes over `shm:`: each publishes step k and waits for exactly the
//! peer's step k (lockstep), checking every value it receives. The test binary
//! runs itself again as the peer (selected by an environment variable).
#![cfg(not(miri))]

mod common;

use std::process::Command;
use std::time::Duration;

use rfm_frames::frame::framed::{FrameBuf, Header};
use rfm_frames::slot::{FramedReader, FramedWriter};
use rfm_frames::wait::{wait_step, WaitStrategy};
use rfm_memory::{Device, OpenOptions};

const STEPS: u64 = 20_000;
const PEER_ENV: &str = "RFM_FRAMES_TEST_PEER";

/// What node `slot` publishes at `step`: exact values the other side can predict.
fn frame_of(slot: u8, step: u64) -> (FrameBuf, Header) {
    let words = std::array::from_fn(|i| (step << 16) ^ ((i as u64) << 8) ^ u64::from(slot));
    let (mut frame, header) = common::frame(slot, step, 1 + u64::from(slot), words);
    frame.seal(&header);
    (frame, header)
}

/// One side of the exchange; returns how many peer frames matched.
fn run_node(device: &str, me: u8, peer: u8) -> u64 {
    let d = Device::open(device, &OpenOptions::default()).unwrap();
    let region = d.map(0, common::region_len(1)).unwrap();
    let ring = common::ring();
    let mut writer = FramedWriter::new(common::window(&region, me), ring).unwrap();
    let reader = FramedReader::new(common::window(&region, peer), ring).unwrap();
    let mut buf = reader.buffer();
    let mut matched = 0;
    for step in 0..STEPS {
        let (mut frame, header) = frame_of(me, step);
        writer.publish(&mut frame, &header).unwrap();
        let got = wait_step(
            &reader,
            &mut buf,
            step,
            Duration::from_secs(20),
            WaitStrategy::Yield,
        )
        .unwrap_or_else(|e| panic!("node {me}: {e}"));
        let (expected, header) = frame_of(peer, step);
        assert_eq!(got, header, "node {me} got a wrong header at step {step}");
        assert!(
            buf.bytes()[4..] == expected.bytes()[4..],
            "node {me} got wrong signals at step {step}"
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
