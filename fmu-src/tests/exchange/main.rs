//! The FMU's exchange contract, through its C API: after doStep k the outputs are
//! exactly the peer's inputs of its step k − lag (its initial values while k < lag).

#[path = "../common/mod.rs"]
mod common;
mod waits;

use std::process::Command;

use common::{unique, Fmu, ShmGuard};
use fmu_model::fmi2::*;

const H: f64 = 1e-3;

/// The ramp node `node` feeds in at step k (k = -1: before the first step).
fn ramp(node: u8, k: i64) -> ([f64; 3], i32, String) {
    let x = k as f64;
    (
        [
            x * 1e-3 + f64::from(node),
            -x * 1e-3,
            (k.rem_euclid(1000)) as f64 * 0.01 + f64::from(node) * 0.5,
        ],
        k.rem_euclid(256) as i32,
        format!("n{node} k{k}"),
    )
}

fn feed(fmu: &Fmu, node: u8, k: i64) {
    let ([r, p, y], status, msg) = ramp(node, k);
    fmu.set_all(&[
        ("roll", &r.to_string()),
        ("pitch", &p.to_string()),
        ("yaw", &y.to_string()),
        ("status", &status.to_string()),
        ("message", &msg),
    ]);
}

/// The peer's outputs, exactly as the peer's ramp gave them (or not).
fn check(fmu: &Fmu, peer: u8, k: i64) {
    let ([r, p, y], status, msg) = ramp(peer, k);
    let got = fmu.reals(&["peer.roll", "peer.pitch", "peer.yaw"]);
    assert_eq!(got, vec![r, p, y], "peer attitude of step {k}");
    assert_eq!(fmu.integer("peer.status"), status);
    assert_eq!(fmu.string("peer.message"), msg);
    assert_eq!(fmu.integer("peer.step"), k as i32);
    assert!(fmu.boolean("link.ok"));
}

fn node(name: &str, device: &str, me: u8, peer: u8, lag: u8) -> Fmu {
    let fmu = Fmu::new(name);
    fmu.set_all(&[
        ("device", device),
        ("nodeSlot", &me.to_string()),
        ("peerSlot", &peer.to_string()),
        ("lag", &lag.to_string()),
        ("waitStrategy", "yield"),
        ("startupTimeout", "20"),
        ("timeout", "20"),
    ]);
    fmu
}

#[test]
fn two_instances_in_one_thread_with_lag_one() {
    let device = format!("loopback:{}", unique("fmu"));
    let a = node("a", &device, 0, 1, 1);
    let b = node("b", &device, 1, 0, 1);
    feed(&a, 0, -1);
    feed(&b, 1, -1);
    assert_eq!(a.init(), fmi2OK, "{:?}", a.log());
    assert_eq!(b.init(), fmi2OK, "{:?}", b.log());
    for k in 0..10_000i64 {
        let t = k as f64 * H;
        feed(&a, 0, k);
        assert_eq!(a.step(t, H), fmi2OK, "a step {k}: {:?}", a.log());
        feed(&b, 1, k);
        assert_eq!(b.step(t, H), fmi2OK, "b step {k}: {:?}", b.log());
        check(&a, 1, k - 1);
        check(&b, 0, k - 1);
        assert_eq!(
            a.real("peer.time"),
            if k == 0 { 0.0 } else { (k - 1) as f64 * H }
        );
    }
    assert_eq!(
        (
            a.integer("link.lost"),
            a.integer("link.badFrames"),
            a.integer("link.restarts")
        ),
        (0, 0, 0)
    );
    assert_eq!((a.terminate(), b.terminate()), (fmi2OK, fmi2OK));
}

#[test]
fn a_self_loop_echoes_the_inputs_of_the_same_step() {
    let fmu = node("solo", &format!("loopback:{}", unique("solo")), 4, 4, 0);
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    for k in 0..100 {
        feed(&fmu, 4, k);
        assert_eq!(fmu.step(k as f64 * H, H), fmi2OK);
        check(&fmu, 4, k);
    }
}

#[test]
fn free_mode_never_waits_and_reports_the_link() {
    let device = format!("loopback:{}", unique("free"));
    let a = node("a", &device, 0, 1, 0);
    a.set_all(&[("syncMode", "free"), ("timeout", "0.1")]);
    assert_eq!(a.init(), fmi2OK, "{:?}", a.log());
    assert_eq!(a.step(0.0, H), fmi2OK, "nothing from the peer, and no wait");
    assert!(!a.boolean("link.ok"));
    assert_eq!(a.real("link.age"), -1.0);
    let b = node("b", &device, 1, 0, 0);
    b.set_all(&[("syncMode", "free")]);
    feed(&b, 1, 7);
    assert_eq!(b.init(), fmi2OK);
    assert_eq!(b.step(0.0, H), fmi2OK);
    // b's frames are taken once its heartbeat has been seen to move.
    let mut k = 1;
    while !a.boolean("link.ok") {
        assert!(k < 1000, "b's heartbeat was never seen: {:?}", a.log());
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert_eq!(a.step(k as f64 * H, H), fmi2OK);
        k += 1;
    }
    assert_eq!(a.reals(&["peer.roll"]), vec![ramp(1, 7).0[0]]);
    // b's master idles three times the timeout: its heartbeat says it is alive,
    // its frame just ages.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(a.step(k as f64 * H, H), fmi2OK);
    assert!(a.boolean("link.ok"), "alive, only idle");
    assert!(a.real("link.age") >= 0.3);
    assert_eq!(a.real("link.wait"), 0.0);
    // b terminates: link down at a's next step (the peer's liveness words are
    // read at most once per millisecond), its last values kept.
    assert_eq!(b.terminate(), fmi2OK);
    std::thread::sleep(std::time::Duration::from_millis(2));
    assert_eq!(a.step((k + 1) as f64 * H, H), fmi2OK);
    assert!(!a.boolean("link.ok"), "closed");
    assert_eq!(a.reals(&["peer.roll"]), vec![ramp(1, 7).0[0]]);
}

/// One master, one thread, two instances at lag ≥ 1: every order of leaving
/// initialization and of stepping that FMI allows exchanges exactly. (Symptom:
/// initializing B first, then A, and stepping A first used to wait the whole
/// startupTimeout for an acknowledgement only B's own step could give.)
#[test]
fn one_thread_exchanges_exactly_in_every_order_of_init_and_step() {
    for lag in [1u8, 2] {
        for init_b_first in [false, true] {
            for step_a_first in [true, false] {
                let device = format!("loopback:{}", unique("order"));
                let a = node("a", &device, 0, 1, lag);
                let b = node("b", &device, 1, 0, lag);
                a.set_all(&[("startupTimeout", "2"), ("timeout", "2")]);
                b.set_all(&[("startupTimeout", "2"), ("timeout", "2")]);
                feed(&a, 0, -1);
                feed(&b, 1, -1);
                let inits = if init_b_first { [&b, &a] } else { [&a, &b] };
                for fmu in inits {
                    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
                }
                let order = if step_a_first {
                    [(&a, 0u8), (&b, 1)]
                } else {
                    [(&b, 1), (&a, 0)]
                };
                let case =
                    format!("lag {lag}, init b first {init_b_first}, step a first {step_a_first}");
                let started = std::time::Instant::now();
                for k in 0..200i64 {
                    for (fmu, me) in order {
                        feed(fmu, me, k);
                        assert_eq!(
                            fmu.step(k as f64 * H, H),
                            fmi2OK,
                            "{case}, step {k}: {:?}",
                            fmu.log()
                        );
                        check(fmu, 1 - me, (k - i64::from(lag)).max(-1));
                    }
                }
                assert!(
                    started.elapsed() < std::time::Duration::from_secs(1),
                    "{case}: no step waited for a timeout ({:?})",
                    started.elapsed()
                );
            }
        }
    }
}

/// A writer that stepped once and terminated cleanly leaves its frame in memory;
/// a free-mode reader started later never takes it: link.ok stays false and the
/// outputs keep their start values.
#[test]
fn free_mode_never_takes_the_frame_of_a_writer_that_is_gone() {
    let name = unique("gone");
    let _guard = ShmGuard(name.clone());
    let device = format!("shm:{name}");
    let writer = node("writer", &device, 1, 0, 0);
    writer.set_all(&[("syncMode", "free"), ("roll", "1.234")]);
    assert_eq!(writer.init(), fmi2OK);
    assert_eq!(writer.step(0.0, H), fmi2OK);
    assert_eq!(writer.terminate(), fmi2OK);
    drop(writer);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let reader = node("reader", &device, 0, 1, 0);
    reader.set_all(&[("syncMode", "free"), ("timeout", "0.1")]);
    assert_eq!(reader.init(), fmi2OK);
    let started = std::time::Instant::now();
    let mut k = 0;
    while started.elapsed() < std::time::Duration::from_millis(500) {
        assert_eq!(reader.step(k as f64 * H, H), fmi2OK);
        assert_eq!(
            reader.real("peer.roll"),
            0.0,
            "step {k}: a gone writer's value"
        );
        assert!(!reader.boolean("link.ok"), "step {k}");
        assert_eq!(reader.real("link.age"), -1.0);
        k += 1;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    drop(reader);
}

const PEER_ENV: &str = "RFM_ATTITUDE_TEST_PEER";
const PROCESS_STEPS: i64 = 100_000;

/// One master: steps its instance `steps` times with the parameters `extra`,
/// checks every output, and returns what the FMU logged.
fn master(device: &str, me: u8, steps: i64, extra: &[(&str, &str)]) -> Vec<String> {
    let fmu = node(&format!("node{me}"), device, me, 1 - me, 0);
    fmu.set_all(extra);
    feed(&fmu, me, -1);
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    for k in 0..steps {
        feed(&fmu, me, k);
        assert_eq!(
            fmu.step(k as f64 * H, H),
            fmi2OK,
            "node {me} step {k}: {:?}",
            fmu.log()
        );
        let got = fmu.reals(&["peer.roll", "peer.pitch", "peer.yaw"]);
        let ([r, p, y], _, _) = ramp(1 - me, k);
        assert_eq!(got, vec![r, p, y], "node {me} step {k}");
    }
    assert_eq!(fmu.terminate(), fmi2OK);
    fmu.log().into_iter().map(|(_, _, text)| text).collect()
}

#[test]
fn two_processes_with_lag_zero_agree_run_after_run() {
    if let Ok(device) = std::env::var(PEER_ENV) {
        master(&device, 1, PROCESS_STEPS, &[]);
        println!("every peer value exact");
        return;
    }
    // Each run checks every value against the inputs, so a second run that
    // differed from the first would fail there.
    for _ in 0..2 {
        let name = unique("fmu-procs");
        let _guard = ShmGuard(name.clone());
        let device = format!("shm:{name}");
        let peer = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "two_processes_with_lag_zero_agree_run_after_run",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(PEER_ENV, &device)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        master(&device, 0, PROCESS_STEPS, &[]);
        let out = peer.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("every peer value exact"),
            "peer failed: {stdout}"
        );
    }
}

#[test]
fn the_seed_layout_exchanges_in_free_mode() {
    let device = format!("loopback:{}", unique("seed"));
    let seed = |name, me: u8| {
        let fmu = node(name, &device, me, 1 - me, 0);
        fmu.set_all(&[("layout", "seed"), ("syncMode", "free")]);
        fmu
    };
    let (a, b) = (seed("a", 0), seed("b", 1));
    assert_eq!((a.init(), b.init()), (fmi2OK, fmi2OK));
    feed(&b, 1, 5);
    assert_eq!(b.step(0.0, H), fmi2OK);
    assert_eq!(a.step(0.0, H), fmi2OK);
    // The article's packet carries float attitude: the peer's values rounded to f32.
    let ([r, p, y], status, msg) = ramp(1, 5);
    let f32ed: Vec<f64> = [r, p, y].iter().map(|v| f64::from(*v as f32)).collect();
    assert_eq!(a.reals(&["peer.roll", "peer.pitch", "peer.yaw"]), f32ed);
    assert_eq!(
        (a.integer("peer.status"), a.string("peer.message")),
        (status, msg)
    );
    assert!(a.boolean("link.ok"));
}

const RFM2G_MASTER_ENV: &str = "RFM_ATTITUDE_TEST_RFM2G_MASTER";

/// What a user with two emulated boards does: each master's FMU opens
/// `/dev/rfm2g0`, which the emulator's configuration (`RFM2G_SIM_DEVICES`, read
/// by the process that opens the board) makes node 1 in one process and node 2
/// in the other, on one ring; lockstep waits on network interrupts. Both masters
/// are child processes, as each needs its own environment.
#[test]
fn two_processes_on_emulated_rfm2g_boards_wait_on_network_interrupts() {
    const STEPS: i64 = 20_000;
    if let Ok(me) = std::env::var(RFM2G_MASTER_ENV) {
        let lib = common::sim_library();
        let extra = [
            ("waitStrategy", "event"),
            ("rfm2gLibrary", lib.to_str().unwrap()),
        ];
        let log = master("/dev/rfm2g0", me.parse().unwrap(), STEPS, &extra);
        // What the FMU logs at fmi2Terminate of its waits on interrupts.
        let waits = log
            .iter()
            .find(|l| l.starts_with("waitStrategy event: "))
            .expect("the FMU logs its interrupt waits at terminate");
        println!("{waits}");
        return;
    }
    common::sim_library();
    let ring = unique("fmu-rfm2g");
    let _ring = common::RingGuard(ring.clone());
    let masters: Vec<_> = (0..2u8)
        .map(|me| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "two_processes_on_emulated_rfm2g_boards_wait_on_network_interrupts",
                    "--nocapture",
                ])
                .env(RFM2G_MASTER_ENV, me.to_string())
                .env(
                    "RFM2G_SIM_DEVICES",
                    format!("/dev/rfm2g0 ring={ring} node={} size=1M", me + 1),
                )
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (me, child) in masters.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "master {me} failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Interrupts woke the waits: without them each wait runs out its 10 ms
        // slice, and the exchange is still exact, only slower.
        let count = |what: &str| -> u64 {
            let before = text.split(what).next().unwrap_or_else(|| panic!("{text}"));
            let n = before
                .split_whitespace()
                .last()
                .and_then(|n| n.parse().ok());
            n.unwrap_or_else(|| panic!("master {me}: no count before `{what}` in {text}"))
        };
        let woken = count(" waits woken by a network interrupt");
        let timed_out = count(" ran out their 10 ms slice");
        assert!(
            woken > 0 && woken > timed_out,
            "master {me}: {woken} woken, {timed_out} timed out: {text}"
        );
    }
}
