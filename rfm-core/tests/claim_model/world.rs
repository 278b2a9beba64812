//! The model's world: one loopback memory on a virtual clock, the sessions
//! claiming it, and what a run of another interface left there.

use rfm_interface::settings::LinkSettings;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{common, TICK};
use rfm_core::link::liveness::Beater;
use rfm_core::link::ownership::block::{self, Words};
use rfm_core::link::{LinkConfig, Node, StartError, StartPoll};
use rfm_frames::area::HEARTBEAT_PERIOD;
use rfm_frames::area::{window, Area, DESCRIPTOR_OFFSET};
use rfm_frames::frame::framed::FrameBuf;
use rfm_frames::session::Token;
use rfm_interface::{descriptor, Interface};
use rfm_memory::{Device, OpenOptions, Region};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Left {
    Nothing,
    Closed,
    Dead,
    Live,
}

/// One session: a node, the heartbeat it beats once it announced, and how its
/// claim ended.
pub(crate) struct Session {
    pub(crate) name: &'static str,
    pub(crate) node: Node,
    pub(crate) frame: FrameBuf,
    pub(crate) epoch: u64,
    pub(crate) beater: Option<Beater>,
    pub(crate) started: bool,
    pub(crate) error: Option<StartError>,
    pub(crate) area: Area,
    pub(crate) own: Region,
}

pub(crate) struct World {
    pub(crate) t0: Instant,
    pub(crate) t: Duration,
    pub(crate) region: Region,
    pub(crate) next_epoch: u64,
    /// Sessions of the leftover run that still beat (live), and the mirrored one.
    pub(crate) beating: Vec<Beater>,
    /// Live sessions no claimant may write over: (area, window, token).
    pub(crate) protected: Vec<(Area, Region, Token, &'static str)>,
}

impl World {
    pub(crate) fn new() -> World {
        let name = format!("loopback:{}", common::unique("claims"));
        let device = Device::open(&name, &OpenOptions::default()).unwrap();
        World {
            t0: Instant::now(),
            t: Duration::ZERO,
            region: device.map(0, 64 << 10).unwrap(),
            next_epoch: 0x71,
            beating: Vec::new(),
            protected: Vec::new(),
        }
    }

    pub(crate) fn now(&self) -> Instant {
        self.t0 + self.t
    }

    pub(crate) fn session(
        &mut self,
        name: &'static str,
        iface: &Arc<Interface>,
        file: Option<&Arc<Interface>>,
        slot: u8,
        peer: u8,
    ) -> Session {
        self.next_epoch += 0x1_0000_0002;
        let map = iface.map().unwrap();
        let config = LinkConfig {
            node_slot: slot,
            peer_slot: peer,
            interface: file.cloned(),
            settings: LinkSettings {
                device: "loopback:model".parse().expect("a device string"),
                ..Default::default()
            },
            ..LinkConfig::default()
        };
        let node = Node::new(
            config,
            iface.clone(),
            &map,
            &self.region,
            self.next_epoch,
            self.now(),
        )
        .unwrap();
        let me = iface.nodes.iter().position(|n| n.slot == slot).unwrap();
        Session {
            name,
            frame: FrameBuf::new(node.payload_len()),
            own: window(&self.region, map.area(me)).unwrap(),
            area: map.area(me).clone(),
            node,
            epoch: self.next_epoch,
            beater: None,
            started: false,
            error: None,
        }
    }

    /// One poll of a claimant's start at the current time.
    pub(crate) fn poll(&mut self, s: &mut Session) {
        if s.started || s.error.is_some() {
            return;
        }
        match s.node.poll_start(self.now(), 0.0, &mut s.frame) {
            Ok(StartPoll::Pending) => {}
            Ok(StartPoll::Announced) => s.beater = Some(s.node.beater().unwrap()),
            Ok(StartPoll::Started) => s.started = true,
            Err(e) => {
                // As the link does: the heartbeat stops, the slot is closed.
                s.beater = None;
                s.node.close().unwrap();
                s.error = Some(e);
            }
        }
    }

    /// A tick of time: every beating session beats on its period.
    pub(crate) fn tick<'a>(&mut self, sessions: impl Iterator<Item = &'a mut Session>) {
        self.t += TICK;
        if self
            .t
            .as_millis()
            .is_multiple_of(HEARTBEAT_PERIOD.as_millis())
        {
            for s in sessions {
                if let Some(b) = &mut s.beater {
                    if b.beat().unwrap().is_some() {
                        s.beater = None;
                    }
                }
            }
            for b in &mut self.beating {
                b.beat().unwrap();
            }
        }
    }

    /// A whole run of interface `left` that ended as `how`.
    pub(crate) fn leave(&mut self, left: &Arc<Interface>, how: Left) {
        let mut sessions: Vec<Session> = [(0u8, 1u8), (1, 0)]
            .into_iter()
            .map(|(slot, peer)| self.session("left", left, Some(left), slot, peer))
            .collect();
        while !sessions.iter().all(|s| s.started) {
            for s in &mut sessions {
                self.poll(s);
            }
            self.tick(sessions.iter_mut());
        }
        for mut s in sessions {
            match how {
                Left::Closed => s.node.close().unwrap(),
                Left::Dead => s.node.abandon(),
                Left::Live => {
                    self.protected.push((
                        s.area.clone(),
                        s.own.clone(),
                        Token::of(s.epoch),
                        "leftover",
                    ));
                    self.beating.push(s.beater.take().unwrap());
                }
                Left::Nothing => unreachable!(),
            }
        }
        for _ in 0..30 {
            self.tick(std::iter::empty());
        }
    }

    /// Another host's session of interface `other`, written here as a bridge
    /// writes it (remote mark, words, descriptor), and beating from then on.
    pub(crate) fn mirror(&mut self, other: &Interface) {
        let map = other.map().unwrap();
        let area = map.area(0);
        let own = window(&self.region, area).unwrap();
        let epoch = 0x7777_7777;
        let token = Token::of(epoch);
        let mut bytes = descriptor::encode(
            &other.name,
            other.fingerprint(),
            (&other.nodes[0], &[]),
            &area.payload,
            Some(token),
        );
        bytes.resize(area.descriptor_len, 0);
        let words = Words {
            owner: Some(token),
            beat: 1,
            closed: None,
        };
        block::write_mirrored(&own, words, 0xb1, &[]).unwrap();
        own.write(DESCRIPTOR_OFFSET, &bytes).unwrap();
        self.protected
            .push((area.clone(), own.clone(), token, "mirrored"));
        self.beating.push(Beater::new(own, epoch).unwrap());
    }
}
