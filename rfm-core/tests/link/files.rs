//! Nodes built from different interface files, or of another interface: each
//! refused or told, naming the difference, whichever starts first.

use super::*;
use rfm_interface::settings::LinkSettings;

const LAB: &str = r#"
name = "lab"
[[node]]
name = "cockpit"
slot = 0
signals = [ { name = "roll", type = "Real", unit = "rad" }, { name = "flap_detent", type = "Integer" } ]
[[node]]
name = "visual"
slot = 1
signals = [ { name = "frame_count", type = "Integer" } ]
"#;

/// The visual node's error at its first step when the cockpit was built from
/// `cockpit_file` and the visual from [`LAB`].
fn first_exchange_error(cockpit_file: &str) -> String {
    use rfm_interface::{Interface, Reserved};
    use std::sync::Arc;
    let dev = loopback();
    let open = |slot: u8, interface: Interface| {
        let mut link = rfm_core::link::Link::open(LinkConfig {
            interface: Some(Arc::new(interface)),
            ..config(&dev, slot, 1 - slot, 0)
        })
        .unwrap();
        let mut frame = FrameBuf::new(link.payload_len());
        link.start(0.0, &mut frame).unwrap();
        (link, frame)
    };
    let (mut cockpit, mut cockpit_frame) = open(
        0,
        Interface::parse("cockpit.toml", cockpit_file, &Reserved::NONE).unwrap(),
    );
    let (mut visual, mut visual_frame) = open(
        1,
        Interface::parse("lab.toml", LAB, &Reserved::NONE).unwrap(),
    );
    // The cockpit steps too (and fails the same way, from its side).
    // It stays open until the visual has stepped: a node that closed its area is
    // no longer exchanged with.
    let other = std::thread::spawn(move || {
        let result = cockpit
            .step(0, 0.0, &mut cockpit_frame)
            .map_err(|e| e.to_string());
        (cockpit, result)
    });
    let err = visual
        .step(0, 0.0, &mut visual_frame)
        .unwrap_err()
        .to_string();
    let (_cockpit, theirs) = other.join().unwrap();
    let theirs = theirs.unwrap_err();
    assert!(
        theirs.contains("node `visual` (slot 1) and this node `cockpit` (slot 0)"),
        "{theirs}"
    );
    err
}

/// Peers built from files that differ are refused at the first exchange, and the
/// message names the first signal that differs and both nodes: with frames of the
/// same length (another type) and of another length (a signal more).
#[test]
fn peers_built_from_different_interface_files_are_refused_naming_the_first_difference() {
    let other_type = LAB.replace(
        r#"{ name = "flap_detent", type = "Integer" }"#,
        r#"{ name = "flap_detent", type = "Real" }"#,
    );
    let text = first_exchange_error(&other_type);
    for part in [
        "node `cockpit` (slot 0) and this node `visual` (slot 1) were built from different interface files",
        "signal `cockpit.flap_detent` is a Real there and an Integer here",
        "build every node's FMU from one file",
    ] {
        assert!(text.contains(part), "`{text}` lacks `{part}`");
    }
    let one_more = LAB.replace(
        r#"{ name = "flap_detent", type = "Integer" } ]"#,
        r#"{ name = "flap_detent", type = "Integer" }, { name = "gear_down", type = "Boolean" }, { name = "speed", type = "Real" } ]"#,
    );
    let text = first_exchange_error(&one_more);
    assert!(
        text.contains("signal `cockpit.gear_down` is missing here"),
        "{text}"
    );
    // Its fingerprint beside this node's, not "of another length, this
    // node's is 0x…" (whose length?).
    assert!(
        text.contains(
            "its frames are of another length and its descriptor carries interface fingerprint 0x"
        ) && text.contains(", this node's is 0x"),
        "{text}"
    );
    let other_unit = LAB.replace(r#"unit = "rad""#, r#"unit = "deg""#);
    let text = first_exchange_error(&other_unit);
    assert!(
        text.contains(r#"signal `cockpit.roll` has unit "deg" there and "rad" here"#),
        "{text}"
    );
}

/// [`LAB`] with the cockpit publishing twelve Reals more: the visual's area
/// then lies elsewhere in it.
fn wider_cockpit() -> String {
    let more: String = (0..12)
        .map(|i| format!(r#", {{ name = "extra{i}", type = "Real" }}"#))
        .collect();
    LAB.replace(
        r#"{ name = "flap_detent", type = "Integer" } ]"#,
        &format!(r#"{{ name = "flap_detent", type = "Integer" }}{more} ]"#),
    )
}

/// The cockpit (from [`wider_cockpit`]) and the visual (from [`LAB`]) started
/// on one memory, each waiting `startupTimeout` = 20 s for its peers.
fn opened_apart() -> [(rfm_core::link::Link, FrameBuf); 2] {
    use rfm_interface::{Interface, Reserved};
    use std::sync::Arc;
    let cockpit = Interface::parse("cockpit.toml", &wider_cockpit(), &Reserved::NONE).unwrap();
    let visual = Interface::parse("lab.toml", LAB, &Reserved::NONE).unwrap();
    assert_ne!(
        cockpit.map().unwrap().area(1).offset,
        visual.map().unwrap().area(1).offset,
        "the files must lay the visual out apart"
    );
    let dev = loopback();
    [(0, cockpit), (1, visual)].map(|(slot, interface)| {
        let mut link = rfm_core::link::Link::open(LinkConfig {
            interface: Some(Arc::new(interface)),
            settings: LinkSettings {
                startup_timeout: Duration::from_secs(20),
                ..config(&dev, slot, 1 - slot, 0).settings
            },
            ..config(&dev, slot, 1 - slot, 0)
        })
        .unwrap();
        let mut frame = FrameBuf::new(link.payload_len());
        link.start(0.0, &mut frame).unwrap();
        (link, frame)
    })
}

/// Two nodes whose files differ in layout (the cockpit publishes twelve Reals
/// more, so the visual's area lies elsewhere in the cockpit's file): each used
/// to wait `startupTimeout` where its file puts the other. Both are told within
/// a second, naming both nodes.
#[test]
fn nodes_whose_files_differ_in_layout_are_both_told_within_a_second() {
    let [(mut cockpit, mut cockpit_frame), (mut visual, mut visual_frame)] = opened_apart();
    let started = Instant::now();
    let other = std::thread::spawn(move || {
        let result = cockpit.step(0, 0.0, &mut cockpit_frame);
        (
            cockpit,
            result.map_err(|e| e.to_string()),
            started.elapsed(),
        )
    });
    let visual_result = visual
        .step(0, 0.0, &mut visual_frame)
        .map_err(|e| e.to_string());
    let visual_took = started.elapsed();
    let (_cockpit, cockpit_result, cockpit_took) = other.join().unwrap();
    for (who, result, took, peer) in [
        ("cockpit", cockpit_result, cockpit_took, "visual"),
        ("visual", visual_result, visual_took, "cockpit"),
    ] {
        let text = result.expect_err(who);
        assert!(took < Duration::from_secs(1), "{who} took {took:?}: {text}");
        assert!(
            text.contains("were built from different interface files")
                && text.contains(&format!("node `{peer}`"))
                && text.contains(&format!("this node `{who}`")),
            "{who}: {text}"
        );
    }
}

/// The visual finds the cockpit built from another file and gives up (its
/// master closes it) before the cockpit's first step has looked at the
/// memory: the cockpit used to find only a closed area, wait its whole
/// `startupTimeout` and blame the visual ("nothing from node `visual`"; a
/// third of the two-process runs did). The visual's ending names the
/// cockpit's session, and the cockpit is told within a second.
#[test]
fn a_node_told_by_a_peer_from_another_file_that_already_gave_up_is_told_too() {
    let [(mut cockpit, mut cockpit_frame), (mut visual, mut visual_frame)] = opened_apart();
    let refused = visual.step(0, 0.0, &mut visual_frame).unwrap_err();
    assert!(
        matches!(refused, LinkError::Incompatible { .. })
            && refused.to_string().contains("this node `visual`"),
        "{refused}"
    );
    visual.close().unwrap();
    let started = Instant::now();
    let err = cockpit.step(0, 0.0, &mut cockpit_frame).unwrap_err();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(1), "told after {took:?}: {err}");
    assert!(
        err.to_string().contains(
            "node `visual` (slot 1) and this node `cockpit` (slot 0) were built from \
             different interface files"
        ),
        "{err}"
    );
}

/// A node of another interface whose area lies over a running pair's memory:
/// it used to leave initialization and break the pair within milliseconds. It
/// is refused before it writes anything, naming what it found, and the pair
/// steps on exactly.
#[test]
fn a_node_of_another_interface_over_a_running_pair_is_refused_and_the_pair_runs_on() {
    use rfm_interface::{Interface, Reserved};
    use std::sync::Arc;
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 1)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let step = |a: &mut AttitudeLink, b: &mut AttitudeLink, k: u64| {
        let got_a = a.step(k, &input(0, k)).unwrap().unwrap();
        let got_b = b.step(k, &input(1, k)).unwrap().unwrap();
        let want = |node| {
            k.checked_sub(1)
                .map_or(input(node, u64::MAX), |j| input(node, j))
        };
        assert_eq!((got_a.sample, got_b.sample), (want(1), want(0)), "step {k}");
    };
    for k in 0..100 {
        step(&mut a, &mut b, k);
    }
    let foreign = Interface::parse(
        "pq.toml",
        r#"
name = "pq"
[[node]]
name = "p"
slot = 7
signals = [ { name = "x", type = "Real" } ]
[[node]]
name = "q"
slot = 8
signals = [ { name = "y", type = "Real" } ]
"#,
        &Reserved::NONE,
    )
    .unwrap();
    let mut q = rfm_core::link::Link::open(LinkConfig {
        interface: Some(Arc::new(foreign)),
        ..config(&dev, 8, 7, 0)
    })
    .unwrap();
    let mut frame = FrameBuf::new(q.payload_len());
    // The pair's heartbeats beat on their own threads while q watches them.
    let err = q.start(0.0, &mut frame).unwrap_err();
    assert!(matches!(err, StartError::Foreign { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("whose heartbeat last moved")
            && text.contains("it is of interface `rfm_attitude`, this node of `pq`")
            && text.contains("Nothing was written"),
        "{text}"
    );
    for k in 100..1_000 {
        step(&mut a, &mut b, k);
    }
}

/// The cockpit (from [`LAB`] with twelve Reals more, so that its area covers
/// where [`LAB`] puts the visual's) and the visual (from [`LAB`]), opened
/// together so that neither sees the other's descriptor, then claiming in the
/// order given: both started, and the time (ms after the returned instant)
/// when the later did.
fn started_apart(
    cockpit_wins_first: bool,
) -> ([rfm_core::link::Node; 2], Instant, u64, rfm_memory::Device) {
    use rfm_core::link::{Node, StartPoll};
    use rfm_interface::{Interface, Reserved};
    use std::sync::Arc;
    let cockpit_file = wider_cockpit();
    let dev = loopback();
    let memory = rfm_memory::Device::open(&dev, &rfm_memory::OpenOptions::default()).unwrap();
    let region = memory.map(0, memory.size() as usize).unwrap();
    let files = [
        Interface::parse("cockpit.toml", &cockpit_file, &Reserved::NONE).unwrap(),
        Interface::parse("lab.toml", LAB, &Reserved::NONE).unwrap(),
    ];
    let t0 = Instant::now();
    let mut nodes = [0u8, 1].map(|n| {
        let interface = Arc::new(files[usize::from(n)].clone());
        let map = interface.map().unwrap();
        Node::new(
            LinkConfig {
                interface: Some(interface.clone()),
                ..config(&dev, n, 1 - n, 0)
            },
            interface,
            &map,
            &region,
            0x21 + 2 * u64::from(n),
            t0,
        )
        .unwrap()
    });
    let mut frames = nodes.each_ref().map(|n| FrameBuf::new(n.payload_len()));
    let mut poll = |n: usize, ms: u64| {
        nodes[n]
            .poll_start(t0 + Duration::from_millis(ms), 0.0, &mut frames[n])
            .unwrap_or_else(|e| panic!("node {n} at {ms} ms: {e}"))
    };
    // Both look at the memory (nothing there) and write their owner words.
    for n in [0, 1] {
        assert_eq!(poll(n, 0), StartPoll::Announced);
    }
    let (first, second) = if cockpit_wins_first { (0, 1) } else { (1, 0) };
    let settled = rfm_core::link::CLAIM_SETTLE.as_millis() as u64 + 10;
    assert_eq!(poll(first, settled), StartPoll::Started);
    let mut ms = settled;
    while poll(second, ms) != StartPoll::Started {
        ms += 1;
        assert!(ms < 1_000, "node {second} never started");
    }
    (nodes, t0, ms, memory)
}

/// Whether `text` names both nodes of [`started_apart`] as built apart, told
/// to node `n`.
fn names_both_apart(text: &str, n: usize) -> bool {
    let [who, peer] = if n == 0 {
        ["cockpit", "visual"]
    } else {
        ["visual", "cockpit"]
    };
    text.contains(&format!(
        "node `{peer}` (slot {}) and this node `{who}` (slot {n}) were built from different \
         interface files",
        1 - n
    ))
}

/// Two nodes whose files differ in layout, started together and claiming in
/// the two orders a race can take: the cockpit's clear used to wipe the owner
/// word the visual had just written ("slot 1 was claimed by another node at
/// the same moment") or the descriptor it had written. Both start, and each
/// one's first exchange names both nodes.
#[test]
fn nodes_whose_files_differ_in_layout_both_start_whichever_claims_first() {
    for cockpit_wins_first in [true, false] {
        let (mut nodes, t0, started, _memory) = started_apart(cockpit_wins_first);
        let mut beaters: Vec<_> = nodes.iter().map(|n| n.beater().unwrap()).collect();
        let mut t = started + 1;
        let mut errors = [None, None];
        while errors.iter().any(Option::is_none) {
            for b in &mut beaters {
                b.beat().unwrap();
            }
            for n in [0, 1] {
                if errors[n].is_none() {
                    let at = t0 + Duration::from_millis(t);
                    if let Err(e) = nodes[n].exchange().poll_lockstep(0, at) {
                        errors[n] = Some(e.to_string());
                    }
                }
            }
            t += 10;
            assert!(t < 5_000, "{errors:?}");
        }
        for n in [0, 1] {
            let text = errors[n].as_deref().unwrap();
            assert!(names_both_apart(text, n), "{cockpit_wins_first}: {text}");
        }
    }
}

/// The cockpit of the other file fails and closes while the visual waits for
/// its first frame: the visual used to say "node `cockpit` stopped", which
/// sends the user to restart it; its descriptor says why it stopped.
#[test]
fn a_peer_from_another_file_that_stops_before_its_first_frame_is_named_built_apart() {
    let (mut nodes, t0, started, _memory) = started_apart(true);
    let mut cockpit = nodes[0].beater().unwrap();
    let at = |ms: u64| t0 + Duration::from_millis(started + ms);
    for ms in [1, 11] {
        cockpit.beat().unwrap();
        assert!(nodes[1]
            .exchange()
            .poll_lockstep(0, at(ms))
            .unwrap()
            .is_pending());
    }
    nodes[0].close().unwrap();
    let err = nodes[1].exchange().poll_lockstep(0, at(21)).unwrap_err();
    assert!(names_both_apart(&err.to_string(), 1), "{err}");
}
