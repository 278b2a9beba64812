//! The watcher against a real link of the attitude pair on loopback memory.

use rfm_interface::settings::LinkSettings;
use std::time::Duration;

use rfm_core::link::{Link, LinkConfig};
use rfm_frames::frame::framed::{FrameBuf, SyncMode};
use rfm_memory::{Device, OpenOptions};

use super::*;

/// Keeps what the watcher gave out, as the other bridges would get it.
#[derive(Default)]
struct Kept {
    /// (tag, area offset, head) of every message sent.
    sent: Vec<(&'static str, u64, Option<u32>)>,
    events: Vec<Event>,
    stamps: u64,
}

impl Sink for Kept {
    fn send(&mut self, m: &Message) {
        let (tag, offset, head) = match *m {
            Message::Session { offset, .. } => ("session", offset, None),
            Message::Frame { offset, head, .. } => ("frame", offset, head),
            Message::Beat { offset, .. } => ("beat", offset, None),
            _ => ("other", 0, None),
        };
        self.sent.push((tag, offset, head));
    }

    fn stamp(&mut self) -> Stamp {
        self.stamps += 1;
        Stamp {
            time: self.stamps,
            id: [0; 16],
        }
    }

    fn event(&mut self, e: Event) {
        self.events.push(e);
    }
}

impl Kept {
    fn count(&self, tag: &str) -> usize {
        self.sent.iter().filter(|(t, ..)| *t == tag).count()
    }
}

/// A watcher over loopback memory `name`, and a started link of the attitude
/// pair's node in slot 1 (free, so that it steps without its peer) that the
/// watcher has seen start.
struct Watched {
    w: Watcher,
    link: Link,
    frame: FrameBuf,
    kept: Kept,
    /// The memory, mapped while the test runs.
    memory: Region,
}

fn started(name: &str) -> Watched {
    let device = format!("loopback:{name}");
    let memory = Device::open(&device, &OpenOptions::default()).unwrap();
    let memory = memory.map(0, memory.size() as usize).unwrap();
    let mut link = Link::open(LinkConfig {
        node_slot: 1,
        peer_slot: 0,
        settings: LinkSettings {
            device: device.parse().expect("a device string"),
            mode: SyncMode::Free,
            ..Default::default()
        },
        ..LinkConfig::default()
    })
    .unwrap();
    let mut w = Watcher::new(memory.clone());
    let mut frame = FrameBuf::new(link.payload_len());
    link.start(0.0, &mut frame).unwrap();
    let mut kept = Kept::default();
    poll_until(&mut w, &mut kept, |k| !k.events.is_empty());
    Watched {
        w,
        link,
        frame,
        kept,
        memory,
    }
}

/// Polls the words and scans until `done` holds of what was kept (the
/// heartbeat moves every 10 ms), for at most 5 s.
fn poll_until(w: &mut Watcher, kept: &mut Kept, done: impl Fn(&Kept) -> bool) {
    let shared = Shared::default();
    let until = Instant::now() + Duration::from_secs(5);
    while !done(kept) {
        assert!(Instant::now() < until, "not within 5 s: {:?}", kept.sent);
        let now = Instant::now();
        w.scan(now, usize::MAX).unwrap();
        w.poll_words(now, &shared, kept).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_node_is_announced_once_its_beat_moves_and_its_end_is_told() {
    let Watched {
        mut w,
        mut link,
        frame: _,
        mut kept,
        memory: _memory,
    } = started("watcher-announce");
    let Event::Started { node, slot, .. } = &kept.events[0] else {
        panic!("{:?}", kept.events)
    };
    assert_eq!((node.as_str(), *slot), ("slot1", 1));
    assert_eq!(
        kept.sent[0].0, "session",
        "the claim first: {:?}",
        kept.sent
    );
    assert_eq!(kept.stamps, 1, "one stamp orders the claim");
    assert_eq!(w.nodes(), vec![("slot1".to_owned(), 1)]);
    link.close().unwrap();
    poll_until(&mut w, &mut kept, |k| k.events.len() == 2);
    assert_eq!(
        kept.events[1],
        Event::Ended {
            node: "slot1".into(),
            slot: 1,
            closed: true
        }
    );
    assert!(w.nodes().is_empty());
}

#[test]
fn a_nodes_new_frames_are_sent_once_each_with_the_head_on_the_newest() {
    let Watched {
        mut w,
        mut link,
        mut frame,
        mut kept,
        memory: _memory,
    } = started("watcher-frames");
    let traffic = Traffic::default();
    // Frame 0 is published: the ring goes out whole once, then nothing.
    assert!(w.poll_frames(&traffic, &mut kept).unwrap());
    assert!(!w.poll_frames(&traffic, &mut kept).unwrap());
    let sent = kept.count("frame");
    assert_eq!(kept.sent.last().unwrap().2, Some(0), "the head last");
    for k in 0..3 {
        link.step(k, (k + 1) as f64 * 0.01, &mut frame).unwrap();
    }
    assert!(w.poll_frames(&traffic, &mut kept).unwrap());
    let new: Vec<_> = kept.sent[kept.sent.len() - 3..].to_vec();
    assert_eq!(kept.count("frame"), sent + 3, "each new frame once");
    let heads: Vec<_> = new.iter().map(|m| m.2).collect();
    assert_eq!(
        heads,
        [None, None, Some(3)],
        "the head with the newest only"
    );
    assert_eq!(
        traffic
            .frames_out
            .load(std::sync::atomic::Ordering::Relaxed),
        3
    );
    link.close().unwrap();
}

/// A node that steps and closes between two polls of the frames (the bridge
/// polls the frames, then the words): its last frames go out before its
/// closed mark. They used to be dropped with the session, and a peer on
/// another host still waiting for one of them failed with "stopped before
/// step …" (the three-rate lab over bridges, once in CI).
#[test]
fn a_closing_nodes_last_frames_go_out_before_its_closed_mark() {
    let Watched {
        mut w,
        mut link,
        mut frame,
        mut kept,
        memory: _memory,
    } = started("watcher-close");
    let traffic = Traffic::default();
    assert!(w.poll_frames(&traffic, &mut kept).unwrap());
    let sent = kept.count("frame");
    for k in 0..3 {
        link.step(k, (k + 1) as f64 * 0.01, &mut frame).unwrap();
    }
    link.close().unwrap();
    poll_until(&mut w, &mut kept, |k| k.events.len() == 2);
    assert_eq!(
        kept.count("frame"),
        sent + 3,
        "the three last frames went out: {:?}",
        kept.sent
    );
    let last_frame = kept.sent.iter().rposition(|m| m.0 == "frame").unwrap();
    let last_beat = kept.sent.iter().rposition(|m| m.0 == "beat").unwrap();
    assert!(
        last_frame < last_beat,
        "the frames before the closed mark: {:?}",
        kept.sent
    );
    assert_eq!(kept.sent[last_frame].2, Some(3), "the newest with its head");
}
