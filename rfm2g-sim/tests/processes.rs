//! Boards across processes: a process that dies holding a board leaves the ring
//! usable (no lock to be left held, an interrupt left enabled is still fine).

#[path = "support/library.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use rfm_memory::{Device, OpenOptions};

const CHILD_ENV: &str = "RFM2G_SIM_TEST_DYING_NODE";

fn options() -> OpenOptions {
    OpenOptions {
        rfm2g_library: Some(support::sim_library()),
        ..OpenOptions::default()
    }
}

#[test]
fn a_node_whose_process_was_killed_opens_and_wakes_again() {
    if let Ok(device) = std::env::var(CHILD_ENV) {
        // The victim: opens the board, enables its interrupt, maps memory, writes,
        // then waits on the interrupt until it is killed.
        let board = Device::open(&device, &options()).unwrap();
        let events = board.events().unwrap().expect("the emulator has events");
        board.map(0, 8).unwrap().write(0, b"victim!!").unwrap();
        println!("ready");
        loop {
            let _ = events.wait(1000);
        }
    }
    let ring = support::unique("killed");
    let _ring = support::RingGuard(ring.clone());
    let node1 = format!("/dev/rfm2g-sim/{ring}/1/64K");
    let mut victim = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_node_whose_process_was_killed_opens_and_wakes_again",
            "--nocapture",
        ])
        .env(CHILD_ENV, &node1)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(victim.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.is_ok_and(|l| l == "ready")),
        "the victim never got ready"
    );
    victim.kill().unwrap(); // SIGKILL: no destructor runs
    victim.wait().unwrap();

    let again = Device::open(&node1, &options()).expect("reopen the dead process's board");
    let mut memory = [0u8; 8];
    again.map(0, 8).unwrap().read(0, &mut memory).unwrap();
    assert_eq!(&memory, b"victim!!", "the ring keeps its memory");
    let events = again
        .events()
        .expect("an interrupt left enabled is not an error")
        .unwrap();
    let node2 = Device::open(&format!("/dev/rfm2g-sim/{ring}/2/64K"), &options()).unwrap();
    node2.events().unwrap().unwrap().broadcast(7).unwrap();
    assert_eq!(events.wait(1000).unwrap(), Some((2, 7)));
}
