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
//!   run (no kill, stop, restart or long stall) has no error at all.
#![cfg(not(miri))]

mod common;

use std::task::Poll;
use std::time::{Duration, Instant};

use rfm_core::frame::framed::{FrameBuf, SyncMode};
use rfm_core::frame::Message;
use rfm_core::interface::{self, Interface};
use rfm_core::link::liveness::{Beater, HEARTBEAT_PERIOD, MIN_SILENCE};
use rfm_core::link::{LinkConfig, Node, PeerSample, Sample, StartPoll};
use rfm_core::{Device, OpenOptions, Region};

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
    region: Region,
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

impl World {
    fn new(
        mode: SyncMode,
        lag: u8,
        stale: Stale,
        periods: Option<[&str; 2]>,
        label: String,
    ) -> World {
        let name = format!("loopback:{}", common::unique("model"));
        let device = Device::open(&name, &OpenOptions::default()).unwrap();
        let interface = std::sync::Arc::new(pair_interface(periods));
        let map = interface.map().unwrap();
        let region = device.map(0, map.len() as usize).unwrap();
        let cfg = |node: u8| LinkConfig {
            device: name.clone(),
            node_slot: node,
            peer_slot: 1 - node,
            mode,
            lag,
            timeout: TIMEOUT,
            startup_timeout: STARTUP_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            interface: periods.is_some().then(|| interface.clone()),
            ..LinkConfig::default()
        };
        let mut w = World {
            t0: Instant::now(),
            t: Duration::ZERO,
            region,
            cfg: [cfg(0), cfg(1)],
            nodes: [Vec::new(), Vec::new()],
            stale: Vec::new(),
            next_epoch: 0x51,
            faulted: [false; 2],
            label,
            interface,
        };
        if stale != Stale::None {
            w.leave_stale_sessions(stale);
        }
        w
    }

    fn now(&self) -> Instant {
        self.t0 + self.t
    }

    fn epoch(&mut self) -> u64 {
        self.next_epoch += 0x1_0000_0002;
        self.next_epoch
    }

    /// A whole earlier run of both nodes, then a crash or a clean stop: their slots
    /// hold frames of every index the new run will ask for, in the same mode.
    fn leave_stale_sessions(&mut self, how: Stale) {
        for node in 0..2 {
            self.new_session(node);
        }
        for node in 0..2 {
            self.init(node);
        }
        for _ in 0..6 {
            for node in 0..2 {
                self.publish(node);
            }
        }
        for node in 0..2 {
            let s = self.nodes[node].last_mut().unwrap();
            self.stale.push(s.epoch);
            match how {
                Stale::Killed => s.node.abandon(),
                _ => s.node.close().unwrap(),
            }
            s.silent_until = Some(Duration::MAX);
        }
        self.advance(Duration::from_millis(50));
        self.nodes = [Vec::new(), Vec::new()];
    }

    fn new_session(&mut self, node: usize) {
        let epoch = self.epoch();
        let interface = self.interface.clone();
        let map = interface.map().unwrap();
        let n = Node::new(
            self.cfg[node].clone(),
            interface,
            &map,
            &self.region,
            epoch,
            self.now(),
        )
        .unwrap();
        self.nodes[node].push(Session {
            frame: FrameBuf::new(n.payload_len()),
            node: n,
            epoch,
            beater: None,
            next_beat: Duration::MAX,
            silent_until: None,
            started: false,
            started_at: Duration::MAX,
            ended_at: None,
            published: 0,
            taken: 0,
            pending: None,
            satisfiable_since: None,
            error: None,
            sources: Vec::new(),
        });
    }

    fn current(&mut self, node: usize) -> &mut Session {
        self.nodes[node].last_mut().expect("a session")
    }

    /// Time passes: heartbeats beat on schedule.
    fn advance(&mut self, by: Duration) {
        let end = self.t + by;
        while self.t < end {
            self.t += TICK;
            let t = self.t;
            for node in 0..2 {
                for s in &mut self.nodes[node] {
                    let silent = s.silent_until.is_some_and(|u| t < u);
                    if let Some(b) = s.beater.as_mut() {
                        if t >= s.next_beat {
                            s.next_beat = t + HEARTBEAT_PERIOD;
                            if !silent {
                                b.beat().unwrap();
                            }
                        }
                    }
                }
            }
        }
    }

    fn init(&mut self, node: usize) {
        let slot = node as u8;
        loop {
            let now = self.now();
            let t = self.t;
            let s = self.current(node);
            let init = sample(s.epoch, slot, 0);
            init.write(s.frame.payload_mut());
            match s.node.poll_start(now, init.sim_time, &mut s.frame) {
                Ok(StartPoll::Claimed) => {
                    // The heartbeat thread starts, and beats at once.
                    let mut b = s.node.beater().unwrap();
                    b.beat().unwrap();
                    s.beater = Some(b);
                    s.next_beat = t + HEARTBEAT_PERIOD;
                }
                Ok(StartPoll::Started) => {
                    s.started = true;
                    s.started_at = t;
                    s.published = 1;
                    return;
                }
                Ok(StartPoll::Pending) => {}
                Err(e) => panic!("{}: init of node {node} failed: {e}", self.label),
            }
            self.advance(TICK);
        }
    }

    fn publish(&mut self, node: usize) {
        let s = self.current(node);
        let (epoch, index) = (s.epoch, s.published);
        let sample = sample(epoch, node as u8, index);
        sample.write(s.frame.payload_mut());
        s.node
            .publish(index, sample.sim_time, &mut s.frame)
            .unwrap();
        s.published += 1;
    }

    /// The peer's frame index node's next take needs: the rule on time, counted
    /// here from the periods alone.
    fn need(&self, node: usize) -> u64 {
        let s = self.nodes[node].last().unwrap();
        let Some(behind) = s.taken.checked_sub(u64::from(self.cfg[node].lag)) else {
            return 0;
        };
        let (mine, theirs) = match (
            self.interface.nodes[node].period,
            self.interface.nodes[1 - node].period,
        ) {
            (Some(a), Some(b)) => (a, b),
            _ => return behind + 1,
        };
        // j = floor(behind·T_me / T_peer), in integers.
        let num = u128::from(behind) * u128::from(mine.num()) * u128::from(theirs.den());
        let den = u128::from(mine.den()) * u128::from(theirs.num());
        (num / den) as u64 + 1
    }

    /// The take of `node` could complete now: a running peer session has published
    /// the frame, and it is the session the taker is bound to (if any).
    fn satisfiable(&self, node: usize) -> bool {
        let me = self.nodes[node].last().unwrap();
        let Some(peer) = self.nodes[1 - node].last() else {
            return false;
        };
        let running = peer.started && peer.ended_at.is_none() && peer.silent_until.is_none();
        let bound_ok = match me.node.peers()[0].bound() {
            None => true,
            Some(e) => e == peer.epoch,
        };
        let frame_there = match self.cfg[node].mode {
            SyncMode::Lockstep => peer.published > self.need(node),
            SyncMode::Free => true,
        };
        running && bound_ok && frame_there
    }

    /// Polls a pending take of `node` once at the current time.
    fn poll_take(&mut self, node: usize) {
        let now = self.now();
        let t = self.t;
        let satisfiable = self.satisfiable(node);
        let need = self.need(node);
        let mode = self.cfg[node].mode;
        let label = self.label.clone();
        let s = self.nodes[node].last_mut().unwrap();
        let Some(since) = s.pending else { return };
        let ended_by_error = &mut self.faulted[node];
        if !satisfiable {
            s.satisfiable_since = None;
        } else if s.satisfiable_since.is_none() {
            s.satisfiable_since = Some(t);
        }
        let k = s.taken;
        let frames = s.node.peers()[0].observed().health().frames;
        let got = match mode {
            SyncMode::Lockstep => match s.node.exchange().poll_lockstep(k, now) {
                Ok(Poll::Ready(())) => latest(&s.node).map(Ok),
                Ok(Poll::Pending) => None,
                Err(e) => Some(Err(e.to_string())),
            },
            // Free mode never waits: a step with no new frame keeps the old values.
            SyncMode::Free => match s.node.exchange().free_read(now) {
                Ok(_) if s.node.peers()[0].observed().health().frames == frames => {
                    Some(Err(String::new()))
                }
                Ok(_) => latest(&s.node).map(Ok),
                Err(e) => Some(Err(e.to_string())),
            },
        };
        match got {
            None => {
                if let Some(from) = s.satisfiable_since {
                    assert!(
                        t - from <= TAKE_WITHIN,
                        "{label}: node {node} step {k} could take the peer's frame {need} \
                         since t = {from:?} and still waits at {t:?} (deadlock)"
                    );
                }
                assert!(
                    t - since <= STARTUP_TIMEOUT.max(IDLE_TIMEOUT) + TICK,
                    "{label}: node {node} step {k} waits past every timeout"
                );
            }
            Some(Err(e)) if e.is_empty() => {
                s.pending = None;
                s.taken += 1;
                self.check_alive(node);
            }
            Some(Err(e)) => {
                // The FMU's answer to an error: the link is closed at once, which
                // its peer sees as a fault of this node (checked in its turn).
                *ended_by_error = true;
                s.pending = None;
                s.error = Some(e);
                s.node.close().unwrap();
                s.silent_until = Some(Duration::MAX);
                s.ended_at = Some(t);
            }
            Some(Ok(p)) => {
                s.pending = None;
                s.taken += 1;
                let source = s.node.peers()[0].bound().unwrap_or(0);
                s.sources.push(source);
                let index = match mode {
                    SyncMode::Lockstep => need,
                    SyncMode::Free => p.index,
                };
                self.check_value(node, source, index, p.sample, p.index);
                if mode == SyncMode::Free {
                    self.check_alive(node);
                }
            }
        }
    }

    /// Free mode's `link.ok`: true only while the session taken from runs (a dead
    /// one is reported within the timeout).
    fn check_alive(&self, node: usize) {
        let me = self.nodes[node].last().unwrap();
        if !me.node.peers()[0].alive(self.now(), TIMEOUT) {
            return;
        }
        let label = &self.label;
        let bound = me.node.peers()[0].bound().expect("alive means bound");
        assert!(
            !self.stale.contains(&bound),
            "{label}: link.ok on a dead session"
        );
        let peer = self.nodes[1 - node]
            .iter()
            .find(|s| s.epoch == bound)
            .expect("a session of this run");
        let slack = TIMEOUT + 2 * HEARTBEAT_PERIOD;
        assert!(
            peer.ended_at.is_none_or(|end| self.t - end <= slack),
            "{label}: node {node} reports link.ok {:?} after its peer ended",
            self.t - peer.ended_at.unwrap()
        );
    }

    fn check_value(&self, node: usize, source: u64, index: u64, got: Sample, got_index: u64) {
        let label = &self.label;
        assert!(
            !self.stale.contains(&source),
            "{label}: node {node} took a frame of the dead session {source:#x}"
        );
        let me = self.nodes[node].last().unwrap();
        let peer_slot = 1 - node;
        let producer = self.nodes[peer_slot]
            .iter()
            .find(|s| s.epoch == source)
            .unwrap_or_else(|| {
                panic!("{label}: node {node} took a frame of unknown session {source:#x}")
            });
        assert_eq!(got_index, index, "{label}: node {node} got the wrong frame");
        assert_eq!(
            got,
            sample(source, peer_slot as u8, index),
            "{label}: node {node} got another value than the peer's frame {index}"
        );
        assert!(
            producer.ended_at.is_none_or(|end| end > me.started_at),
            "{label}: node {node} took a frame of a session that ended before it started"
        );
        if self.cfg[node].mode == SyncMode::Lockstep {
            assert!(
                me.sources.iter().all(|&s| s == source),
                "{label}: node {node} took values of two peer sessions in one lockstep run"
            );
        }
    }

    fn act(&mut self, node: usize, act: Act) {
        match act {
            Act::Init => self.init(node),
            Act::Publish => self.publish(node),
            Act::Take => {
                let t = self.t;
                let s = self.current(node);
                s.pending = Some(t);
                s.satisfiable_since = None;
                self.poll_take(node);
            }
            Act::Idle(ms) | Act::Stall(ms) => {
                let until = self.t + Duration::from_millis(ms);
                if matches!(act, Act::Stall(_)) {
                    self.current(node).silent_until = Some(until);
                    if Duration::from_millis(ms) >= MIN_SILENCE {
                        self.faulted[node] = true;
                    }
                }
                // The node's master does nothing meanwhile; the other node's
                // pending take is polled.
                while self.t < until {
                    self.advance(TICK);
                    self.poll_take(1 - node);
                }
                self.current(node).silent_until = None;
            }
            Act::Stop | Act::Kill => {
                self.faulted[node] = true;
                let t = self.t;
                let s = self.current(node);
                if act == Act::Stop {
                    s.node.close().unwrap();
                } else {
                    s.node.abandon();
                }
                s.silent_until = Some(Duration::MAX);
                s.ended_at = Some(t);
                s.pending = None;
            }
            Act::Restart => {
                self.faulted[node] = true;
                self.new_session(node);
                self.init(node);
            }
        }
        self.advance(TICK);
    }

    /// A node may act next unless a take of its current session is pending: it
    /// completes first (the master is inside fmi2DoStep).
    fn blocked(&self, node: usize) -> bool {
        self.nodes[node]
            .last()
            .is_some_and(|s| s.pending.is_some() && s.error.is_none())
    }

    /// Time passes until `node`'s pending take completes or fails.
    fn finish_take(&mut self, node: usize) {
        while self.blocked(node) {
            self.advance(TICK);
            self.poll_take(1 - node);
            self.poll_take(node);
        }
    }

    fn done(&self, node: usize) -> bool {
        self.nodes[node].last().is_some_and(|s| s.error.is_some())
    }
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
    let mut w = World::new(mode, lag, stale, periods, label.clone());
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
