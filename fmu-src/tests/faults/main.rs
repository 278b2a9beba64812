//! Peer faults between two master processes, over `shm:` and over emulated RFM2g
//! boards: a peer killed with SIGKILL, a peer restarted, a peer paused with
//! SIGSTOP longer than `timeout` and resumed. The survivor is this test's
//! instance; the peer is this test binary run again as a child process.

#[path = "../common/mod.rs"]
mod common;
mod peer;

use std::time::{Duration, Instant};

use peer::{peer_main, spawn_peer, spawn_recording_peer, Peer};

use common::{unique, Fmu, ShmGuard};
use fmu_model::fmi2::*;

const H: f64 = 1e-3;
const PEER_ENV: &str = "RFM_ATTITUDE_FAULT_PEER";
/// Scheduling slack allowed on top of `timeout` on this shared 2-core machine.
const MARGIN: Duration = Duration::from_millis(1500);

/// Where the two ends meet: their device strings and extra parameters.
struct Net {
    kind: &'static str,
    devices: [String; 2],
    library: Option<String>,
    _guard: Box<dyn std::any::Any>,
}

fn shm() -> Net {
    let name = unique("fault");
    Net {
        kind: "shm",
        devices: [format!("shm:{name}"), format!("shm:{name}")],
        library: None,
        _guard: Box::new(ShmGuard(name)),
    }
}

/// Two emulated boards, nodes 1 and 2 of one ring.
fn rfm2g() -> Net {
    let ring = unique("fault");
    let lib = common::sim_library();
    Net {
        kind: "rfm2g",
        devices: [1, 2].map(|n| format!("/dev/rfm2g-sim/{ring}/{n}/1M")),
        library: Some(lib.to_str().unwrap().to_owned()),
        _guard: Box::new(common::RingGuard(ring)),
    }
}

fn roll(node: u8, k: i64) -> f64 {
    f64::from(node) * 1000.0 + k as f64
}

fn instance(device: &str, library: Option<&str>, me: u8, mode: &str, timeout: &str) -> Fmu {
    let fmu = Fmu::new(&format!("node{me}"));
    fmu.set_all(&[
        ("device", device),
        ("nodeSlot", &me.to_string()),
        ("peerSlot", &(1 - me).to_string()),
        ("syncMode", mode),
        ("waitStrategy", "yield"),
        ("timeout", timeout),
        ("startupTimeout", "20"),
    ]);
    if let Some(lib) = library {
        fmu.set("rfm2gLibrary", lib);
    }
    fmu
}

fn step(fmu: &Fmu, me: u8, k: i64) -> fmi2Status {
    fmu.set("roll", &roll(me, k).to_string());
    fmu.step(k as f64 * H, H)
}

/// Steps node 0 in lockstep `steps` times, checking each peer value.
fn lockstep_run(fmu: &Fmu, steps: i64) {
    for k in 0..steps {
        assert_eq!(step(fmu, 0, k), fmi2OK, "step {k}: {:?}", fmu.log());
        assert_eq!(fmu.real("peer.roll"), roll(1, k), "step {k}");
    }
}

/// Steps on until a step fails; returns (the failed step's duration, message).
fn until_error(fmu: &Fmu, from: i64, most: i64) -> (Duration, String) {
    for k in from..from + most {
        let started = Instant::now();
        match step(fmu, 0, k) {
            s if s == fmi2OK => assert_eq!(fmu.real("peer.roll"), roll(1, k), "step {k}"),
            s => {
                assert_eq!(s, fmi2Error);
                return (started.elapsed(), fmu.last_error());
            }
        }
    }
    panic!("no step failed in {most} steps after the fault")
}

/// Node 0 in free mode, its peer running free too.
struct FreeNode {
    fmu: Fmu,
    k: i64,
}

impl FreeNode {
    fn start(test: &str, net: &Net, timeout: &str) -> (Peer, FreeNode) {
        let peer = spawn_peer(test, net, "free", timeout, 0);
        let fmu = instance(&net.devices[0], net.library.as_deref(), 0, "free", timeout);
        assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
        peer.expect("step 50", Duration::from_secs(10));
        (peer, FreeNode { fmu, k: 0 })
    }

    /// One step, 1 ms after the last; returns `link.ok` and when the step
    /// returned.
    fn step(&mut self) -> (bool, Instant) {
        assert_eq!(
            step(&self.fmu, 0, self.k),
            fmi2OK,
            "free mode never fails a step"
        );
        let stepped = Instant::now();
        self.k += 1;
        std::thread::sleep(Duration::from_millis(1));
        (self.fmu.boolean("link.ok"), stepped)
    }

    /// Steps until `link.ok` is `want`, at most `within`; returns how long it
    /// took until the step that said so. (Not until after the sleep that
    /// follows it: the step's `link.age` was compared with that, and a sleep
    /// of 1 ms that took 3 on a loaded machine failed the comparison.)
    fn until_ok(&mut self, want: bool, within: Duration, what: &str) -> Duration {
        let started = Instant::now();
        loop {
            let (ok, stepped) = self.step();
            if ok == want {
                return stepped - started;
            }
            assert!(
                started.elapsed() < within,
                "{what}: link.ok not {want} after {within:?}"
            );
        }
    }
}

fn killed_peer_in_lockstep(net: Net) {
    const TEST: &str = "a_killed_peer_fails_the_next_lockstep_step_within_timeout";
    let mut peer = spawn_peer(TEST, &net, "lockstep", "1", 0);
    let me = instance(&net.devices[0], net.library.as_deref(), 0, "lockstep", "1");
    assert_eq!(me.init(), fmi2OK, "{:?}", me.log());
    lockstep_run(&me, 500);
    peer.expect("step 450", Duration::from_secs(10));
    peer.kill(); // SIGKILL: no destructor, the slot is left as it was
                 // A lag-0 peer may have published one step ahead before it died.
    let (took, message) = until_error(&me, 500, 3);
    println!(
        "{}: SIGKILL, lockstep: fmi2Error after {took:.3?} (timeout 1 s)",
        net.kind
    );
    assert!(
        took >= Duration::from_millis(900) && took <= Duration::from_secs(1) + MARGIN,
        "{}: the failing step took {took:?} with timeout = 1 s",
        net.kind
    );
    // Its heartbeat stopped with it: the wait ends as the silence reaches timeout
    // (or as the step's own timeout does, a moment before: it says the same).
    assert!(
        message.contains("fmi2DoStep")
            && message.contains("from node `slot1` (slot 1")
            && message.contains("stopped beating")
            && message.contains("its process died or is stalled"),
        "{message}"
    );
    assert_eq!(
        me.step(1.0, H),
        fmi2Error,
        "an instance in error stays in error"
    );
}

#[test]
fn a_killed_peer_fails_the_next_lockstep_step_within_timeout() {
    if let Ok(spec) = std::env::var(PEER_ENV) {
        return peer_main(&spec);
    }
    killed_peer_in_lockstep(shm());
    killed_peer_in_lockstep(rfm2g());
}

fn killed_peer_in_free_mode(net: Net) {
    const TEST: &str = "a_killed_peer_turns_link_ok_false_in_free_mode";
    let (mut peer, mut me) = FreeNode::start(TEST, &net, "0.3");
    me.until_ok(true, Duration::from_secs(10), net.kind);
    let values_before = me.fmu.real("peer.roll");
    assert!(values_before >= 1000.0, "the peer's roll: {values_before}");
    peer.kill();
    let took = me.until_ok(false, Duration::from_millis(300) + MARGIN, net.kind);
    println!(
        "{}: SIGKILL, free: link.ok false after {took:.3?} (timeout 0.3 s)",
        net.kind
    );
    assert!(took >= Duration::from_millis(250), "{took:?}");
    // link.ok follows the heartbeat; link.age the last frame, which predates the kill.
    let age = me.fmu.real("link.age");
    assert!(
        age >= took.as_secs_f64() - 0.002,
        "link.age {age} < {took:?} since the kill"
    );
    assert_eq!(me.fmu.integer("link.badFrames"), 0);
}

#[test]
fn a_killed_peer_turns_link_ok_false_in_free_mode() {
    if let Ok(spec) = std::env::var(PEER_ENV) {
        return peer_main(&spec);
    }
    killed_peer_in_free_mode(shm());
    killed_peer_in_free_mode(rfm2g());
}

fn restarted_peer(make: fn() -> Net) {
    let net = make();
    const TEST: &str = "a_restarted_peer_is_refused_in_lockstep_and_counted_in_free_mode";
    // Lockstep: the restart is an error naming it, well before the timeout.
    let mut peer = spawn_peer(TEST, &net, "lockstep", "20", 0);
    let me = instance(&net.devices[0], net.library.as_deref(), 0, "lockstep", "20");
    assert_eq!(me.init(), fmi2OK, "{:?}", me.log());
    lockstep_run(&me, 200);
    peer.expect("step 150", Duration::from_secs(10));
    peer.kill();
    // The new process takes the slot once the dead session's heartbeat has been
    // silent for DEAD_AFTER (0.5 s), well before this node's timeout (20 s).
    let mut again = spawn_peer(TEST, &net, "lockstep", "20", 0);
    let (took, message) = until_error(&me, 200, 3);
    println!("{}: restart, lockstep: fmi2Error after {took:.3?} (the new process takes the slot after 0.5 s of silence)", net.kind);
    assert!(took < Duration::from_secs(10), "{}: {took:?}", net.kind);
    assert!(
        message.contains("restarted") && message.contains("cannot continue across a restart"),
        "{message}"
    );
    assert_eq!(
        me.integer("link.restarts"),
        1,
        "link.* say what the link saw"
    );
    assert!(!me.boolean("link.ok"));
    // The new session never met this one (whose frames are bound to the old
    // session): for it this node is absent, and its own startupTimeout applies.
    again.kill();

    // Free mode: counted, and the new session's values are taken.
    let net = make();
    let (mut peer, mut me) = FreeNode::start(TEST, &net, "0.5");
    me.until_ok(true, Duration::from_secs(10), net.kind);
    peer.kill();
    let mut again = spawn_peer(TEST, &net, "free", "0.5", 0);
    again.expect("step 50", Duration::from_secs(20));
    let deadline = Instant::now() + Duration::from_secs(10);
    while me.fmu.integer("link.restarts") == 0 {
        me.step();
        assert!(
            Instant::now() < deadline,
            "{}: restart never counted",
            net.kind
        );
    }
    assert!(
        me.fmu.real("peer.roll") >= 1000.0,
        "the new session's values"
    );
    assert!(me.fmu.boolean("link.ok"));
    assert_eq!(me.fmu.integer("link.restarts"), 1);
    again.kill();
}

#[test]
fn a_restarted_peer_is_refused_in_lockstep_and_counted_in_free_mode() {
    if let Ok(spec) = std::env::var(PEER_ENV) {
        return peer_main(&spec);
    }
    restarted_peer(shm);
    restarted_peer(rfm2g);
}

fn paused_peer(make: fn() -> Net) {
    let net = make();
    const TEST: &str =
        "a_peer_paused_longer_than_timeout_is_an_error_in_lockstep_and_stale_in_free";
    // Lockstep: the pause is a timeout, as a death would be. The master ends its
    // instance; the resumed peer (timeout 20 s) finds the slot closed and fails
    // at once.
    let mut peer = spawn_peer(TEST, &net, "lockstep", "20", 0);
    let me = instance(&net.devices[0], net.library.as_deref(), 0, "lockstep", "1");
    assert_eq!(me.init(), fmi2OK);
    lockstep_run(&me, 300);
    peer.expect("step 250", Duration::from_secs(10));
    peer.stop();
    let (took, message) = until_error(&me, 300, 3);
    println!(
        "{}: SIGSTOP, lockstep: fmi2Error after {took:.3?} (timeout 1 s)",
        net.kind
    );
    assert!(
        took <= Duration::from_secs(1) + MARGIN,
        "{}: {took:?}",
        net.kind
    );
    // SIGSTOP stops its heartbeat too: a pause looks like a death until it ends.
    assert!(
        message.contains("stopped beating") && message.contains("its process died or is stalled"),
        "{message}"
    );
    assert_eq!(me.terminate(), fmi2OK, "Terminate is legal after an error");
    drop(me);
    peer.signal(libc::SIGCONT);
    let resumed = Instant::now();
    let line = peer.expect("error", Duration::from_secs(10));
    let took = resumed.elapsed();
    assert!(
        line.contains("of this coupling stopped before step")
            && line.contains("a peer of its own stopped, died or restarted (node `slot1`, slot 1)"),
        "{}: {line}",
        net.kind
    );
    println!(
        "{}: SIGCONT, lockstep: the resumed peer failed after {took:.3?} (its timeout 20 s)",
        net.kind
    );
    assert!(
        took < Duration::from_secs(5),
        "the resumed peer fails at once, not after its timeout: {took:?}"
    );
    peer.child.wait().unwrap();

    // Free mode: stale while paused, fresh again after, no restart counted.
    let net = make();
    let (mut peer, mut me) = FreeNode::start(TEST, &net, "0.2");
    me.until_ok(true, Duration::from_secs(10), net.kind);
    peer.stop();
    me.until_ok(false, Duration::from_millis(200) + MARGIN, net.kind);
    std::thread::sleep(Duration::from_millis(300));
    peer.signal(libc::SIGCONT);
    me.until_ok(true, MARGIN, net.kind);
    assert_eq!(
        me.fmu.integer("link.restarts"),
        0,
        "a pause is not a restart"
    );
    peer.kill();
}

#[test]
fn a_peer_paused_longer_than_timeout_is_an_error_in_lockstep_and_stale_in_free() {
    if let Ok(spec) = std::env::var(PEER_ENV) {
        return peer_main(&spec);
    }
    paused_peer(shm);
    paused_peer(rfm2g);
}

/// A master killed mid-run leaves its recording readable up to its last whole
/// record: the header, then its published frames from step 0 on, without a gap.
#[test]
fn a_killed_recorder_leaves_a_recording_read_up_to_its_last_record() {
    const TEST: &str = "a_killed_recorder_leaves_a_recording_read_up_to_its_last_record";
    if let Ok(spec) = std::env::var(PEER_ENV) {
        return peer_main(&spec);
    }
    let net = shm();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("killed.rec");
    let mut peer = spawn_recording_peer(TEST, &net, "lockstep", "1", 0, file.to_str().unwrap());
    let me = instance(&net.devices[0], None, 0, "lockstep", "1");
    assert_eq!(me.init(), fmi2OK, "{:?}", me.log());
    lockstep_run(&me, 500);
    peer.expect("step 450", Duration::from_secs(10));
    peer.kill();
    let mut reader = rfm_record::Reader::open(&file).unwrap();
    assert_eq!(reader.header().node, Some(1));
    let mut steps = Vec::new();
    while let Some(record) = reader.next_record().unwrap() {
        if record.kind == rfm_record::Kind::Published {
            let payload = record.body.len() - rfm_frames::frame::framed::HEADER_SIZE;
            steps.push(
                rfm_frames::frame::framed::check(&record.body, payload)
                    .unwrap()
                    .step,
            );
        }
    }
    println!(
        "killed recorder: {} published frames read back, {} bytes cut",
        steps.len(),
        reader.cut()
    );
    assert!(steps.len() > 100, "only {} frames", steps.len());
    assert!(
        steps.iter().enumerate().all(|(i, &s)| s == i as u64),
        "{steps:?}"
    );
}
