//! The handshake, exhaustively: every interleaving of two nodes' scripts of init,
//! publish, take, stall, stop, kill and restart, with and without frames of dead
//! sessions in memory, replayed deterministically, for two nodes stepping alike
//! and for two nodes at different rates (a step of one spans two of the other).
//!
//! The model runs the real protocol ([`Node`]) over real slot memory (a loopback
//! region) in one thread. Only time and the heartbeat threads are modelled: the
//! clock is virtual, and each running session's heartbeat beats by hand every
//! [`HEARTBEAT_PERIOD`] of that clock unless the session is stalled, stopped or
//! killed. A blocking step is a `Publish` followed by a `Take`; a `Take` that cannot
//! complete stays pending while the other node acts (two masters, or one master
//! whose order of calls satisfies the step), and is polled again after every action.
//!
//! Checked for every interleaving:
//! - nothing stale: every value taken is exactly the peer's frame of the index the
//!   step needs, from a session of this run that was running after the taker
//!   started; in lockstep always from the first session bound (a restart is an
//!   error, never a value);
//! - no deadlock: a take whose frame is there, from a running peer session, is
//!   taken within a few heartbeat periods, in any order of init and step;
//! - a take that cannot complete ends in an error within its timeout, and a healthy
//!   run (no kill, stop, restart or long stall) has no error at all;
//! - a running session's heartbeat never finds its own slot taken.
//!
//! Cuts and mends of a ring are events of the model too: with them in a
//! script, both nodes couple over two rings (two loopback memories, each node
//! its own redundant window of them), and a cut withholds the node's stores
//! from that ring until the mend, so that the ring keeps what it held before
//! (protocol.md, "Two rings"). A cut is no fault: a run with cuts and mends
//! alone must have no error, and no node may judge a live peer dead,
//! restarted or closed, or its own slot taken. (What a cut board reads of
//! the ring meanwhile, its island, is not modelled: its loads see the ring.)
#![cfg(not(miri))]

#[path = "../common/mod.rs"]
mod common;

use std::task::Poll;
use std::time::{Duration, Instant};

use rfm_core::link::liveness::{Beater, MIN_SILENCE};
use rfm_core::link::{LinkConfig, Node, PeerSample, Sample, StartPoll};
use rfm_frames::area::HEARTBEAT_PERIOD;
use rfm_frames::frame::framed::{FrameBuf, SyncMode};
use rfm_frames::frame::Message;
use rfm_interface::settings::LinkSettings;
use rfm_interface::{self as interface, Interface};
use rfm_memory::{Device, Network, OpenOptions, Region};

mod world;

const TICK: Duration = Duration::from_millis(1);
const TIMEOUT: Duration = Duration::from_millis(150);
const STARTUP_TIMEOUT: Duration = Duration::from_millis(700);
/// How long a bound peer whose heartbeat beats is waited for: between the two.
const IDLE_TIMEOUT: Duration = Duration::from_millis(300);
/// Longest time a satisfiable take may stay pending: proving a session live takes
/// two sightings of its beat, one heartbeat period apart.
const TAKE_WITHIN: Duration = Duration::from_millis(35);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    Init,
    Publish,
    Take,
    /// The master does nothing for this long (between steps); its heartbeat beats.
    Idle(u64),
    /// The heartbeat stops for this long (the process paused), then resumes.
    Stall(u64),
    Stop,
    Kill,
    /// A new session of the node, after a Stop or Kill.
    Restart,
    /// The node's board of this ring is cut from it (two rings): its stores
    /// to that ring are lost until the mend, as an open fibre loses them.
    Cut(Network),
    /// The cut board is on its ring again: what it stored meanwhile is not.
    Mend(Network),
}

/// What the peer's session `epoch` publishes as frame `index`.
fn sample(epoch: u64, slot: u8, index: u64) -> Sample {
    Sample {
        sim_time: index as f64,
        attitude: [(epoch >> 8) as f64, f64::from(slot), index as f64],
        status: slot,
        message: Message::new(&format!("{epoch:x}/{index}")).unwrap(),
    }
}

/// The peer's newest frame taken by `node`, as a sample.
fn latest(node: &Node) -> Option<PeerSample> {
    let peer = &node.peers()[0];
    peer.observed().latest().map(|h| PeerSample {
        sample: Sample::read(peer.observed().payload(), h.sim_time),
        index: h.step,
    })
}

/// One session of one node.
struct Session {
    node: Node,
    /// The frame this session publishes (its owner lends it to each publish).
    frame: FrameBuf,
    epoch: u64,
    beater: Option<Beater>,
    next_beat: Duration,
    /// The heartbeat is silent until then (a stall), or for good (stopped, killed).
    silent_until: Option<Duration>,
    started: bool,
    /// When its claim was won: the taker's "since it started".
    started_at: Duration,
    ended_at: Option<Duration>,
    /// Frames published: indices 0..published.
    published: u64,
    /// Steps whose take completed.
    taken: u64,
    pending: Option<Duration>,
    /// When the pending take last became satisfiable.
    satisfiable_since: Option<Duration>,
    error: Option<String>,
    /// Sessions values were taken from.
    sources: Vec<u64>,
}

struct World {
    t0: Instant,
    t: Duration,
    /// Each node's window of the memory: on two rings, a pair of its own,
    /// so that a cut of one node's board withholds only its stores.
    regions: [Region; 2],
    cfg: [LinkConfig; 2],
    nodes: [Vec<Session>; 2],
    stale: Vec<u64>,
    next_epoch: u64,
    /// A fault (kill, stop, restart, long stall) happened to this node.
    faulted: [bool; 2],
    label: String,
    interface: std::sync::Arc<Interface>,
}

/// The attitude pair, or two nodes of its signals at `periods` (seconds).
fn pair_interface(periods: Option<[&str; 2]>) -> Interface {
    let Some(periods) = periods else {
        return interface::attitude(0, 1);
    };
    let signals = r#"signals = [
  { name = "roll", type = "Real" }, { name = "pitch", type = "Real" },
  { name = "yaw", type = "Real" }, { name = "status", type = "Integer" },
  { name = "message", type = "String", size = 31 },
]"#;
    let text = format!(
        "name = \"rates\"\n[[node]]\nname = \"slot0\"\nslot = 0\nperiod = \"{}\"\n{signals}\n\
         [[node]]\nname = \"slot1\"\nslot = 1\nperiod = \"{}\"\n{signals}\n",
        periods[0], periods[1]
    );
    Interface::parse("rates.toml", &text, &interface::Reserved::NONE).unwrap()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stale {
    None,
    Killed,
    Closed,
}

/// Replays one interleaving: `order[i]` says which node does its next action.
/// Returns false for an order two masters cannot produce: a node acting again while
/// its step still waits for something its peer does later in the order.
fn replay(
    mode: SyncMode,
    lag: u8,
    stale: Stale,
    periods: Option<[&str; 2]>,
    scripts: &[Vec<Act>; 2],
    order: &[usize],
) -> bool {
    let label = format!(
        "{mode:?} lag {lag}, periods {periods:?}, stale {stale:?}, scripts {scripts:?}, order {order:?}"
    );
    let rings = scripts
        .iter()
        .flatten()
        .any(|a| matches!(a, Act::Cut(_) | Act::Mend(_)));
    let mut w = World::new(mode, lag, stale, periods, rings, label.clone());
    for node in 0..2 {
        w.new_session(node);
    }
    let mut next = [0usize; 2];
    for &node in order {
        let act = scripts[node][next[node]];
        next[node] += 1;
        // A master that saw an error stops stepping that session.
        if w.done(node) && act != Act::Restart {
            continue;
        }
        let peer = 1 - node;
        let peer_running = w.nodes[peer].last().is_some_and(|s| s.ended_at.is_none());
        if w.blocked(node)
            && !w.satisfiable(node)
            && peer_running
            && next[peer] < scripts[peer].len()
        {
            return false;
        }
        w.finish_take(node);
        if w.done(node) && act != Act::Restart {
            continue;
        }
        w.act(node, act);
        w.poll_take(1 - node);
    }
    // Both masters finish their last steps. A step waiting for a frame its peer's
    // script never publishes ends in a timeout: the peer stopped stepping.
    for node in 0..2 {
        if w.blocked(node) && !w.satisfiable(node) {
            w.faulted[1 - node] = true;
        }
    }
    for node in 0..2 {
        w.finish_take(node);
    }
    for node in 0..2 {
        let s = w.nodes[node].last().unwrap();
        if let Some(e) = &s.error {
            assert!(
                w.faulted[1 - node],
                "{label}: node {node} failed although its peer was healthy: {e}"
            );
        }
    }
    true
}

/// Every way to merge two scripts, as the sequence of which node acts next.
fn interleavings(a: usize, b: usize) -> Vec<Vec<usize>> {
    if a == 0 {
        return vec![vec![1; b]];
    }
    if b == 0 {
        return vec![vec![0; a]];
    }
    let mut out = Vec::new();
    for (first, (ra, rb)) in [(0, (a - 1, b)), (1, (a, b - 1))] {
        for mut rest in interleavings(ra, rb) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

fn steps(n: usize) -> Vec<Act> {
    let mut s = vec![Act::Init];
    for _ in 0..n {
        s.extend([Act::Publish, Act::Take]);
    }
    s
}

fn run_all(
    mode: SyncMode,
    lags: &[u8],
    periods: Option<[&str; 2]>,
    scripts: &[[Vec<Act>; 2]],
) -> usize {
    let mut runs = 0;
    for stale in [Stale::None, Stale::Killed, Stale::Closed] {
        for &lag in lags {
            for pair in scripts {
                for order in interleavings(pair[0].len(), pair[1].len()) {
                    runs += usize::from(replay(mode, lag, stale, periods, pair, &order));
                }
            }
        }
    }
    runs
}

#[test]
fn healthy_lockstep_pairs_never_deadlock_or_take_a_stale_frame_in_any_order() {
    let runs = run_all(
        SyncMode::Lockstep,
        &[0, 1, 2],
        None,
        &[[steps(3), steps(3)]],
    );
    // Of the 3 × 3 × 3432 orders, those two masters can produce.
    println!("healthy lockstep: {runs} interleavings replayed");
    assert!(runs > 3 * 3 * 1000, "{runs}");
}

/// Two rates: node 0 steps 1 ms, node 1 2 ms, so node 1's step j takes node 0's
/// frame of step 2(j − lag) and node 0's step k node 1's of step floor((k − lag)/2).
#[test]
fn healthy_lockstep_pairs_at_two_rates_never_deadlock_or_take_a_stale_frame_in_any_order() {
    let periods = Some(["0.001", "0.002"]);
    let runs = run_all(
        SyncMode::Lockstep,
        &[0, 1, 2],
        periods,
        &[[steps(4), steps(2)]],
    );
    // Of the 3 × 3 × 2002 orders, those two masters can produce.
    println!("healthy lockstep at two rates: {runs} interleavings replayed");
    assert!(runs > 3 * 3 * 300, "{runs}");
}

#[test]
fn a_peer_that_stalls_stops_dies_or_restarts_is_never_taken_stale_and_never_hangs() {
    use Act::*;
    let faults = [
        vec![Init, Publish, Take, Kill, Restart, Publish, Take],
        vec![Init, Publish, Stop, Restart, Publish, Take],
        vec![Init, Stall(200), Publish, Take, Publish, Take],
        vec![Init, Publish, Stall(40), Take, Publish, Take],
        vec![Init, Kill],
        vec![Kill, Restart, Publish, Take],
    ];
    let scripts: Vec<[Vec<Act>; 2]> = faults.iter().map(|b| [steps(2), b.clone()]).collect();
    let runs = run_all(SyncMode::Lockstep, &[0, 1], None, &scripts);
    println!("faulty lockstep peers: {runs} interleavings replayed");
    assert!(runs > 3_000, "{runs}");
    let runs = run_all(
        SyncMode::Lockstep,
        &[0, 1],
        Some(["0.001", "0.002"]),
        &scripts,
    );
    println!("faulty lockstep peers at two rates: {runs} interleavings replayed");
    assert!(runs > 1_000, "{runs}");
}

#[test]
fn free_mode_takes_only_live_sessions_frames_through_faults_and_stale_memory() {
    use Act::*;
    // The taker idles between steps, so that it sees its peer's beat move (two
    // sightings a beat apart) and binds, then steps again after the peer's fault.
    let taker = vec![
        Init,
        Publish,
        Take,
        Idle(30),
        Publish,
        Take,
        Idle(200),
        Publish,
        Take,
    ];
    let scripts = [
        [taker.clone(), steps(2)],
        [taker.clone(), vec![Init, Publish, Kill, Restart, Publish]],
        [taker.clone(), vec![Init, Publish, Stop, Restart, Publish]],
        [taker, vec![Init, Publish, Stall(200), Publish]],
    ];
    let runs = run_all(SyncMode::Free, &[0], None, &scripts);
    println!("free mode: {runs} interleavings replayed");
    assert!(runs > 1_000, "{runs}");
}

/// Cuts and mends of one ring, at every moment of the two scripts: before
/// the claim, between the announce and the first frame, between steps, and
/// while a take waits; on ring A and on ring B; over memory left by an
/// earlier run, killed or closed. Nothing but the ring is faulted, so no
/// run may fail, and every value is the peer's by the rule.
#[test]
fn cuts_and_mends_of_one_ring_never_make_a_node_misjudge_its_peer_or_its_own_slot() {
    use Act::*;
    let mut scripts: Vec<[Vec<Act>; 2]> = Vec::new();
    for ring in Network::BOTH {
        scripts.extend([
            [
                steps(2),
                vec![Cut(ring), Init, Mend(ring), Publish, Take, Publish, Take],
            ],
            [
                steps(2),
                vec![Cut(ring), Init, Publish, Take, Mend(ring), Publish, Take],
            ],
            [
                steps(2),
                vec![Init, Cut(ring), Publish, Take, Mend(ring), Publish, Take],
            ],
            [
                vec![Cut(ring), Init, Publish, Take, Publish, Mend(ring), Take],
                steps(2),
            ],
        ]);
    }
    let runs = run_all(SyncMode::Lockstep, &[0, 1], None, &scripts);
    println!("cuts and mends, lockstep: {runs} interleavings replayed");
    assert!(runs > 1_000, "{runs}");
    let runs = run_all(SyncMode::Free, &[0], None, &scripts[..4]);
    println!("cuts and mends, free: {runs} interleavings replayed");
    assert!(runs > 100, "{runs}");
}
