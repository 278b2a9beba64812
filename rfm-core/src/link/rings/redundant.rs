//! A link's two rings over a redundant device (`A+B`): what it tells the
//! master's log when a ring stops or starts carrying a peer's frames, what it
//! reports per ring, and the fault a test injects.

use std::time::{Duration, Instant};

use super::watch::{CardFault, RingWatch};
use crate::link::stats::Card;
use crate::link::{ForeignPeer, Node};
use rfm_interface::Interface;
use rfm_memory::{Device, DeviceSetting, DeviceSpec};
use rfm_memory::{Network, Region};

/// The two rings of a link: their names, the watch of their cards, and what
/// was last told of them.
#[derive(Debug)]
pub(crate) struct Redundant {
    /// Any window of the pair: withholding applies to every one.
    region: Region,
    /// The two memories' device strings, for messages.
    names: [String; 2],
    /// Whether each ring held every peer's newest frames, as last told.
    ok: [bool; 2],
    /// Two cards, until the watch starts with the heartbeat (opening writes
    /// nothing), and where its own-data probe goes.
    cards: Option<([Device; 2], u32)>,
    /// The cards' RFM2g node ids: what names a board on the ring.
    boards: [Option<u8>; 2],
    watch: Option<RingWatch>,
    /// What the watch found wrong with each card, as last told.
    fault: [Option<CardFault>; 2],
    /// The error events each card raised, as last told.
    events: [u32; 2],
    /// Whether each ring held each foreign struct's newest, as last told.
    foreign_ok: Vec<[bool; 2]>,
}

impl Redundant {
    /// `None` for a device of one memory. `devices`: the two opened memories;
    /// cards get a watch, whose probe goes to byte `probe` of the memory.
    pub(crate) fn of(
        region: &Region,
        device: &DeviceSetting,
        devices: (Device, Option<Device>),
        probe: u64,
    ) -> Option<Redundant> {
        let DeviceSetting::Rings(a, b) = device else {
            return None;
        };
        let board = |d: &Device| d.info().node_id.and_then(|n| u8::try_from(n).ok());
        let cards = match devices {
            (a, Some(b))
                if matches!(a.spec(), DeviceSpec::Rfm2g { .. })
                    && matches!(b.spec(), DeviceSpec::Rfm2g { .. }) =>
            {
                u32::try_from(probe).ok().map(|probe| ([a, b], probe))
            }
            _ => None,
        };
        let boards = cards
            .as_ref()
            .map_or([None, None], |(cards, _)| cards.each_ref().map(board));
        Some(Redundant {
            region: region.clone(),
            names: [a.to_string(), b.to_string()],
            ok: [true, true],
            cards,
            boards,
            watch: None,
            fault: [None, None],
            events: [0, 0],
            foreign_ok: Vec::new(),
        })
    }

    /// Starts watching the cards (once; nothing for `shm:` pairs).
    pub(crate) fn start_watch(&mut self) -> std::io::Result<()> {
        if let Some((cards, probe)) = self.cards.take() {
            self.watch = Some(RingWatch::start(cards, probe)?);
        }
        Ok(())
    }

    /// Stops the watch (a closed link stores nothing more).
    pub(crate) fn stop_watch(&mut self) {
        self.watch = None;
    }

    fn card_fault(&self, ring: Network) -> Option<CardFault> {
        self.watch.as_ref().and_then(|w| w.fault(ring))
    }

    /// The error events each ring's card raised since the last step.
    fn tell_events(&mut self, k: u64) {
        for ring in Network::BOTH {
            let Some((count, last)) = self.watch.as_ref().map(|w| w.events(ring)) else {
                break;
            };
            if count != self.events[ring.index()] {
                self.events[ring.index()] = count;
                log::warn!(
                    "{}: its card raised {} ({count} error events so far) (step {k})",
                    self.name(ring),
                    last.describe()
                );
            }
        }
    }

    /// A card that became faulty, or well again, at step `k`.
    fn tell_faults(&mut self, k: u64) {
        for ring in Network::BOTH {
            let fault = self.card_fault(ring);
            if fault == self.fault[ring.index()] {
                continue;
            }
            match &fault {
                Some(why) => log::warn!(
                    "{}: {why} (step {k}): the coupling goes on over {}; check that ring's \
                     fibres and cards",
                    self.name(ring),
                    self.name(ring.other())
                ),
                None => log::info!("{}: its card is well again (step {k})", self.name(ring)),
            }
            self.fault[ring.index()] = fault;
        }
    }

    /// A ring that stopped, or started again, carrying every peer of `node`'s
    /// newest frames at step `k`.
    fn tell_delivery(&mut self, k: u64, node: &Node) {
        let delivering = delivering(node);
        for ring in Network::BOTH {
            let i = ring.index();
            if delivering[i] == self.ok[i] {
                continue;
            }
            self.ok[i] = delivering[i];
            if delivering[i] {
                log::info!(
                    "{} carries every peer's frames again (step {k})",
                    self.name(ring)
                );
            } else {
                log::warn!(
                    "{} has not carried the newest frames of {} for timeout ({:?}) \
                     (step {k}): the coupling goes on over {}; check that ring's fibres and cards",
                    self.name(ring),
                    lagging(node, ring),
                    node.config().settings.timeout,
                    self.name(ring.other())
                );
            }
        }
    }

    fn name(&self, ring: Network) -> String {
        format!(
            "ring {} (`{}`)",
            ring.name().to_uppercase(),
            self.names[ring.index()]
        )
    }
}

/// What the rings did, for the master's outputs (`ring.a.ok`, …).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingsReport {
    /// Whether each ring held every peer's newest frame within `timeout`.
    pub ok: [bool; 2],
    /// Frames taken from each ring, all peers together.
    pub frames: [u64; 2],
    /// Times a peer's frames moved from ring A to ring B.
    pub failovers: u64,
}

impl RingsReport {
    /// A device of one memory: ring A is it, and ring B is never ok.
    pub(crate) fn of_one_ring(node: &Node) -> RingsReport {
        let mut r = RingsReport {
            ok: [true, false],
            ..RingsReport::default()
        };
        r.frames[0] = (node.peers().iter())
            .map(|p| p.observed().health().frames)
            .sum();
        r
    }
}

impl Redundant {
    /// What this node's card on each ring says, for its statistics block.
    pub(crate) fn cards(&self) -> [Card; 2] {
        Network::BOTH.map(|ring| match (&self.watch, self.card_fault(ring)) {
            (None, _) => Card::Unwatched,
            (Some(_), None) => Card::Well,
            (Some(_), Some(CardFault::Register(_))) => Card::OpenHere,
            (Some(_), Some(CardFault::OwnDataLost)) => Card::OwnDataLost,
        })
    }

    /// The node ids of this node's cards (A, B), where they are watched.
    pub(crate) fn boards(&self) -> [Option<u8>; 2] {
        self.boards
    }

    /// What the rings did.
    pub(crate) fn report(&self, node: &Node) -> RingsReport {
        let mut r = RingsReport {
            ok: [true, true],
            ..RingsReport::default()
        };
        for peer in node.peers() {
            let s = peer.observed().rings();
            for ring in Network::BOTH {
                r.frames[ring.index()] += s.taken(ring);
            }
            r.failovers += s.failovers();
        }
        let delivering = delivering(node);
        for ring in Network::BOTH {
            r.ok[ring.index()] = delivering[ring.index()] && self.card_fault(ring).is_none();
        }
        r
    }

    /// Withholds this node's stores from `ring` (or stops withholding them).
    pub(crate) fn withhold(&self, ring: Network, withheld: bool) {
        self.region.withhold(ring, withheld);
    }

    /// After step `k`: tells the master's log of every peer whose frames
    /// changed ring, of a card's error events and faults, and of a ring that
    /// stopped (or started again) carrying every peer's frames. Out of line,
    /// so that a device of one ring pays one comparison a step
    /// (`Link::tell_rings`), not the call inlined into it.
    #[inline(never)]
    pub(crate) fn tell(&mut self, k: u64, node: &mut Node) {
        self.tell_failovers(k, node);
        self.tell_events(k);
        self.tell_faults(k);
        self.tell_delivery(k, node);
    }

    /// Each peer whose frames changed ring at step `k`.
    fn tell_failovers(&self, k: u64, node: &mut Node) {
        let interface = node.interface().clone();
        for peer in node.exchange().peers_mut() {
            let Some(ring) = peer.observer().rings_mut().take_change() else {
                continue;
            };
            let (name, slot) = (peer.name(&interface), peer.slot());
            match ring {
                Network::B => log::warn!(
                    "{} did not hold a whole frame of node `{name}` (slot {slot}) at step {k}: \
                     taken from {} (failover; ring.failovers counts them)",
                    self.name(Network::A),
                    self.name(Network::B)
                ),
                Network::A => log::info!(
                    "{} holds the frames of node `{name}` (slot {slot}) again from step {k}",
                    self.name(Network::A)
                ),
            }
        }
    }

    /// One line for the master's log at the end: what each ring carried.
    pub(crate) fn summary(&self, node: &Node, foreign: &[ForeignPeer]) -> String {
        let r = self.report(node);
        let mut line = format!(
            "redundant rings: {} gave {} frames, {} gave {}; {} failovers from A to B",
            self.name(Network::A),
            r.frames[0],
            self.name(Network::B),
            r.frames[1],
            r.failovers
        );
        let read = foreign.iter().filter(|f| !f.writes_struct());
        let (mut taken, mut failovers) = ([0u64; 2], 0);
        for f in read.clone() {
            for ring in Network::BOTH {
                taken[ring.index()] += f.rings().taken(ring);
            }
            failovers += f.rings().failovers();
        }
        if read.count() > 0 {
            line.push_str(&format!(
                "; the lab's structs: {} from A, {} from B, {failovers} failovers from A to B",
                taken[0], taken[1]
            ));
        }
        line
    }

    /// After step `k` (read at `now`): each struct of the lab's programs
    /// whose ring changed, and a ring that stopped (or started again)
    /// carrying a struct's newest writes within `timeout`, told as a peer's
    /// frames are.
    #[inline(never)]
    pub(crate) fn tell_foreign(
        &mut self,
        k: u64,
        foreign: &mut [ForeignPeer],
        interface: &Interface,
        now: Instant,
        timeout: Duration,
    ) {
        self.foreign_ok.resize(foreign.len(), [true; 2]);
        let mut told = std::mem::take(&mut self.foreign_ok);
        for (peer, ok) in foreign.iter_mut().zip(&mut told) {
            let name = &interface.foreign[peer.node()].name;
            match peer.rings_mut().take_change() {
                Some(Network::B) => log::warn!(
                    "{} did not give the newest whole struct of foreign node `{name}` at step \
                     {k}: taken from {} (failover; {name}.link.failovers counts them)",
                    self.name(Network::A),
                    self.name(Network::B)
                ),
                Some(Network::A) => log::info!(
                    "{} gives the structs of foreign node `{name}` again from step {k}",
                    self.name(Network::A)
                ),
                None => {}
            }
            for ring in Network::BOTH {
                let delivers = peer.rings().delivers(ring, now, timeout);
                if delivers == ok[ring.index()] {
                    continue;
                }
                ok[ring.index()] = delivers;
                if delivers {
                    log::info!(
                        "{} carries the writes of foreign node `{name}` again (step {k})",
                        self.name(ring)
                    );
                } else {
                    log::warn!(
                        "{} has not carried the newest struct of foreign node `{name}` for \
                         timeout ({timeout:?}) (step {k}): it is read from {}; check that \
                         ring's fibres and cards, and that its program writes both rings",
                        self.name(ring),
                        self.name(ring.other())
                    );
                }
            }
        }
        self.foreign_ok = told;
    }
}

/// Whether each ring held every peer's newest frame within `timeout` of the
/// last step.
fn delivering(node: &Node) -> [bool; 2] {
    let (now, timeout) = (node.stepped_at(), node.config().settings.timeout);
    Network::BOTH.map(|ring| {
        node.peers()
            .iter()
            .all(|p| p.observed().rings().delivers(ring, now, timeout))
    })
}

/// The peers whose newest frames `ring` has not held within `timeout`, named.
fn lagging(node: &Node, ring: Network) -> String {
    let (now, timeout) = (node.stepped_at(), node.config().settings.timeout);
    let names: Vec<String> = node
        .peers()
        .iter()
        .filter(|p| !p.observed().rings().delivers(ring, now, timeout))
        .map(|p| format!("node `{}` (slot {})", p.name(node.interface()), p.slot()))
        .collect();
    names.join(", ")
}
