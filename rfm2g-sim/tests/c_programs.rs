//! The article's sender and receiver, written in C against our header and built
//! with `cc`, run as two processes on two emulated boards of one ring (node 1 and
//! node 2, both opening `/dev/rfm2g0` as on two PCs) and agree on every packet.

#[path = "support/library.rs"]
mod support;

use std::process::{Command, Stdio};

/// Runs receiver and sender on a fresh ring; returns (sender's lines, receiver's
/// lines, receiver's stderr).
fn exchange(count: u32, mode: &str) -> (String, String, String) {
    let (sender, receiver) = (
        support::article_program("sender"),
        support::article_program("receiver"),
    );
    let ring = support::unique("c");
    let _ring = support::RingGuard(ring.clone());
    let board = |node| format!("/dev/rfm2g0 ring={ring} node={node} size=64K");
    let rx = Command::new(receiver)
        .args(["/dev/rfm2g0", &count.to_string(), mode])
        .env("RFM2G_SIM_DEVICES", board(2))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tx = Command::new(sender)
        .args(["/dev/rfm2g0", &count.to_string()])
        .env("RFM2G_SIM_DEVICES", board(1))
        .output()
        .unwrap();
    let rx = rx.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(tx.status.success(), "sender: {}", text(&tx.stderr));
    assert!(rx.status.success(), "receiver: {}", text(&rx.stderr));
    (text(&tx.stdout), text(&rx.stdout), text(&rx.stderr))
}

#[test]
fn a_polling_receiver_gets_every_packet_the_sender_wrote() {
    let (sent, received, report) = exchange(1000, "poll");
    assert_eq!(sent.lines().count(), 1000);
    assert!(sent.starts_with("1 "), "{sent:.80}");
    assert!(sent
        .lines()
        .last()
        .unwrap()
        .ends_with(" 232 Hello RFM 1000"));
    assert_eq!(received, sent);
    assert!(report.contains("1000 packets, 0 missing"), "{report}");
}

#[test]
fn a_receiver_woken_by_network_interrupts_gets_every_packet() {
    let (sent, received, report) = exchange(300, "event");
    assert_eq!(sent.lines().count(), 300);
    assert_eq!(received, sent);
    // Woken by the sender's interrupts (without them, each packet would wait out
    // a 100 ms timeout and the run would take 30 s).
    let interrupts: u32 = report
        .split(" missing, ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{report}"));
    assert!(interrupts >= 150, "{report}");
}
