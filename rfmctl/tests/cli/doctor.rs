//! `rfmctl doctor`: a board and this PC, shared memory, and redundant rings.

use super::*;
use rfm_frames::area::LIVENESS_OFFSET;

/// Every check `rfmctl doctor` makes, by name (the JSON's and the table's).
const DOCTOR_CHECKS: [&str; 15] = [
    "library",
    "board",
    "node-id",
    "ring",
    "memory",
    "isolated-cores",
    "governor",
    "c-states",
    "rt-throttling",
    "busy-processes",
    "power-plan",
    "timer-resolution",
    "jitter",
    "packet-layout",
    "foreign-structs",
];

/// `doctor` on an emulated board: every check prints a verdict; the board's
/// pass (library, board, node id, ring, the memory's one coupling); with the
/// board's fibre open (`link=down`) the ring check fails, naming the fix,
/// and the exit status is 1; `--json` names every check.
#[test]
fn doctor_checks_a_board_and_this_pc_and_fails_on_an_open_ring() {
    let (ring, lib, dev) = board(3);
    let (code, out, err) = run(&["--library", &lib, "doctor", &dev, "--seconds", "0.2"]);
    assert_eq!(code, 0, "{out} {err}");
    for name in DOCTOR_CHECKS {
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().nth(1) == Some(name)),
            "{name}: {out}"
        );
    }
    for name in [
        "library",
        "board",
        "node-id",
        "ring",
        "memory",
        "packet-layout",
    ] {
        assert!(out.contains(&format!("PASS  {name:<15}")), "{name}: {out}");
    }
    assert!(out.contains("node 3"), "{out}");
    assert!(
        out.contains("came back; LCSR 0x00000004 (receive signal detected)"),
        "the card's status register: {out}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_rfmctl"))
        .args([
            "--library",
            &lib,
            "doctor",
            "/dev/rfm2g0",
            "--seconds",
            "0.1",
            "--json",
        ])
        .env(
            "RFM2G_SIM_DEVICES",
            format!("/dev/rfm2g0 ring={} node=4 size=64K link=down", ring.0),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = v["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, DOCTOR_CHECKS);
    let ring_check = &checks[3];
    assert_eq!(ring_check["verdict"], "fail", "{ring_check}");
    assert!(
        ring_check["detail"]
            .as_str()
            .unwrap()
            .contains("RFM2G_LINK_TEST_FAIL")
            && ring_check["detail"].as_str().unwrap().starts_with(
                "the ring is open at this board (LCSR 0x00000008 (receive sync lost)): "
            )
            && ring_check["fix"]
                .as_str()
                .unwrap()
                .contains("the fibre into this board"),
        "{ring_check}"
    );
    assert_eq!(v["failed"], json!(["ring"]));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 check(s) failed: ring"));
}

/// On shared memory the board's own checks do not apply (skip), what the
/// memory holds is named: the nodes held, and apart from them what earlier
/// runs left (a closed node, a descriptor whose area another session holds
/// now; both used to be counted as nodes of the lab); a memory that does not
/// exist fails the board check.
#[test]
fn doctor_on_shared_memory_names_its_couplings_and_a_missing_one_fails() {
    let m = shm(64 << 10);
    let region = m.memory.map(0, interface::attitude_region_len(3)).unwrap();
    // The words a simulator's session writes: its token as owner, and as
    // closed mark once it stopped (rfm-core's link::block).
    let token = 0x1234_5679;
    for s in 0..4u8 {
        let area = publish_attitude(&region, s, 3);
        let owner = match s {
            2 => token + 2, // another session's since
            _ => token,
        };
        area.store_u32(LIVENESS_OFFSET, owner, Ordering::Release)
            .unwrap();
        if s == 3 {
            area.store_u32(LIVENESS_OFFSET + 8, token, Ordering::Release)
                .unwrap();
        }
    }
    let (code, out, err) = run(&["doctor", &m.device, "--seconds", "0.1"]);
    assert_eq!(code, 0, "{out} {err}");
    assert!(
        out.contains("SKIP  ring            shared memory has no ring"),
        "{out}"
    );
    assert!(
        out.contains(
            "PASS  memory          2 nodes described, of `rfm_attitude`; 2 more left by \
             earlier runs, not counted (`slot2` of `rfm_attitude`, written over since; `slot3` \
             of `rfm_attitude`, closed)"
        ),
        "{out}"
    );
    let (code, out, _) = run(&["doctor", "shm:rfmctl-doctor-none", "--seconds", "0.1"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("FAIL  board") && out.contains("does not exist"),
        "{out}"
    );
}

/// `doctor A+B` checks both memories of a redundant device: each check once,
/// with both rings' details; ring B's fibre open fails the ring check naming
/// ring B, and two boards of different node ids fail the node-id check.
#[test]
fn doctor_checks_both_rings_of_a_redundant_device() {
    let (ring_a, lib, _) = board(3);
    let ring_b = sim::RingGuard(sim::unique("rfmctl"));
    let doctor = |b_node: u8, b_link: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_rfmctl"))
            .args([
                "--library",
                &lib,
                "doctor",
                "/dev/rfm2g0+/dev/rfm2g1",
                "--seconds",
                "0.1",
                "--json",
            ])
            .env(
                "RFM2G_SIM_DEVICES",
                format!(
                    "/dev/rfm2g0 ring={} node=4 size=64K; /dev/rfm2g1 ring={} node={b_node} \
                     size=64K link={b_link}",
                    ring_a.0, ring_b.0
                ),
            )
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), v)
    };
    let (code, v) = doctor(4, "up");
    assert_eq!(code, Some(0), "{v}");
    let checks = v["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, DOCTOR_CHECKS);
    let ring = checks[3]["detail"].as_str().unwrap();
    assert!(
        ring.starts_with("ring A `/dev/rfm2g0`: a packet sent round the ring came back")
            && ring.contains("; ring B `/dev/rfm2g1`: a packet sent round the ring came back"),
        "{ring}"
    );
    let (code, v) = doctor(4, "down");
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["failed"], json!(["ring"]));
    let ring = v["checks"][3]["detail"].as_str().unwrap();
    let (on_a, on_b) = ring.split_once("; ring B `/dev/rfm2g1`: ").expect(ring);
    assert!(
        !on_a.contains("LINK_TEST_FAIL") && on_b.contains("RFM2G_LINK_TEST_FAIL"),
        "{ring}"
    );
    // The board opened down stays cut from ring B, as an open fibre stays
    // open, and opens the ring for every board of it: mend it first.
    let mend = run(&[
        "--library",
        &lib,
        "mend",
        &format!("/dev/rfm2g-sim/{}/4/64K", ring_b.0),
    ]);
    assert_eq!(mend.0, 0, "{mend:?}");
    let (code, v) = doctor(5, "up");
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["failed"], json!(["node-id"]));
    assert!(
        v["checks"][2]["fix"]
            .as_str()
            .unwrap()
            .contains("set both boards' node switches alike"),
        "{v}"
    );
}
