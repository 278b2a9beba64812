//! The model's world: the two nodes' sessions over one loopback region, the
//! virtual clock and the hand-beaten heartbeats, and every act of a script with
//! the checks made after it.

use super::*;

impl World {
    pub(super) fn new(
        mode: SyncMode,
        lag: u8,
        stale: Stale,
        periods: Option<[&str; 2]>,
        rings: bool,
        label: String,
    ) -> World {
        let name = format!("loopback:{}", common::unique("model"));
        let interface = std::sync::Arc::new(pair_interface(periods));
        let map = interface.map().unwrap();
        let memory = |name: &str| {
            let device = Device::open(name, &OpenOptions::default()).unwrap();
            device.map(0, map.len() as usize).unwrap()
        };
        let a = memory(&name);
        let regions = if rings {
            let b = memory(&format!("{name}-b"));
            let pair = || Region::redundant(a.clone(), b.clone()).expect("one length");
            [pair(), pair()]
        } else {
            [a.clone(), a]
        };
        let cfg = |node: u8| LinkConfig {
            node_slot: node,
            peer_slot: 1 - node,
            interface: periods.is_some().then(|| interface.clone()),
            settings: LinkSettings {
                device: name.clone().parse().expect("a device string"),
                mode,
                lag,
                timeout: TIMEOUT,
                startup_timeout: STARTUP_TIMEOUT,
                idle_timeout: IDLE_TIMEOUT,
                ..Default::default()
            },
            ..LinkConfig::default()
        };
        let mut w = World {
            t0: Instant::now(),
            t: Duration::ZERO,
            regions,
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

    pub(super) fn new_session(&mut self, node: usize) {
        let epoch = self.epoch();
        let interface = self.interface.clone();
        let map = interface.map().unwrap();
        let n = Node::new(
            self.cfg[node].clone(),
            interface,
            &map,
            &self.regions[node],
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
                                let taken = b.beat().unwrap();
                                assert_eq!(
                                    taken, None,
                                    "{}: the heartbeat of running session {:#x} of node {node} \
                                     found its slot taken",
                                    self.label, s.epoch
                                );
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
                Ok(StartPoll::Announced) => {
                    // The heartbeat thread starts, and beats at once.
                    let mut b = s.node.beater().unwrap();
                    assert_eq!(b.beat().unwrap(), None, "{}: taken at once", self.label);
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
            .publish(index, (sample.sim_time, 0), &mut s.frame)
            .unwrap();
        s.published += 1;
    }

    /// The peer's frame index node's next take needs: the rule on time, counted
    /// here from the periods alone.
    fn need(&self, node: usize) -> u64 {
        let s = self.nodes[node].last().unwrap();
        let Some(behind) = s.taken.checked_sub(u64::from(self.cfg[node].settings.lag)) else {
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
    pub(super) fn satisfiable(&self, node: usize) -> bool {
        let me = self.nodes[node].last().unwrap();
        let Some(peer) = self.nodes[1 - node].last() else {
            return false;
        };
        let running = peer.started && peer.ended_at.is_none() && peer.silent_until.is_none();
        let bound_ok = match me.node.peers()[0].bound() {
            None => true,
            Some(e) => e == peer.epoch,
        };
        let frame_there = match self.cfg[node].settings.mode {
            SyncMode::Lockstep => peer.published > self.need(node),
            SyncMode::Free => true,
        };
        running && bound_ok && frame_there
    }

    /// Polls a pending take of `node` once at the current time.
    pub(super) fn poll_take(&mut self, node: usize) {
        let now = self.now();
        let t = self.t;
        let satisfiable = self.satisfiable(node);
        let need = self.need(node);
        let mode = self.cfg[node].settings.mode;
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
        if self.cfg[node].settings.mode == SyncMode::Lockstep {
            assert!(
                me.sources.iter().all(|&s| s == source),
                "{label}: node {node} took values of two peer sessions in one lockstep run"
            );
        }
    }

    pub(super) fn act(&mut self, node: usize, act: Act) {
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
            Act::Cut(ring) => self.regions[node].withhold(ring, true),
            Act::Mend(ring) => self.regions[node].withhold(ring, false),
        }
        self.advance(TICK);
    }

    /// A node may act next unless a take of its current session is pending: it
    /// completes first (the master is inside fmi2DoStep).
    pub(super) fn blocked(&self, node: usize) -> bool {
        self.nodes[node]
            .last()
            .is_some_and(|s| s.pending.is_some() && s.error.is_none())
    }

    /// Time passes until `node`'s pending take completes or fails.
    pub(super) fn finish_take(&mut self, node: usize) {
        while self.blocked(node) {
            self.advance(TICK);
            self.poll_take(1 - node);
            self.poll_take(node);
        }
    }

    pub(super) fn done(&self, node: usize) -> bool {
        self.nodes[node].last().is_some_and(|s| s.error.is_some())
    }
}
