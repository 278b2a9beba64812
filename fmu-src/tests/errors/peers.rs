//! Errors that come from other instances: a silent peer, a slot another live
//! instance writes, and two instances claiming one slot at once.

use super::*;

#[test]
fn a_silent_peer_fails_the_step_naming_device_slots_step_and_time() {
    let dev = format!("loopback:{}", unique("silent"));
    let fmu = Fmu::new("alone");
    fmu.set_all(&[
        ("device", &dev),
        ("nodeSlot", "2"),
        ("peerSlot", "7"),
        ("startupTimeout", "0.05"),
    ]);
    assert_eq!(fmu.init(), fmi2OK);
    assert_eq!(fmu.step(0.0, 0.1), fmi2Error);
    assert_logged(
        &fmu,
        fmi2Error,
        &[
            "fmi2DoStep (step 0, t = 0)",
            &dev,
            "from node `slot7` (slot 7",
            "this node: slot 2",
            "within",
        ],
    );
    // After the error: outputs can still be read, stepping cannot.
    assert!(!fmu.boolean("link.ok"));
    assert_eq!(fmu.step(0.0, 0.1), fmi2Error);
    assert_logged(
        &fmu,
        fmi2Error,
        &["fmi2DoStep: illegal call sequence", "Error"],
    );
}

#[test]
fn a_slot_another_live_instance_writes_is_refused_at_initialization() {
    // The first instance steps, then its master idles far longer than any frame
    // age once mattered (2.5 s): its heartbeat still holds the slot, in both modes.
    for mode in ["lockstep", "free"] {
        let dev = format!("loopback:{}", unique("twin"));
        let params = [
            ("device", dev.as_str()),
            ("nodeSlot", "3"),
            ("peerSlot", "3"),
            ("syncMode", mode),
        ];
        let first = Fmu::new("first");
        first.set_all(&params);
        assert_eq!(first.init(), fmi2OK);
        assert_eq!(first.step(0.0, 1e-3), fmi2OK, "{:?}", first.log());
        std::thread::sleep(std::time::Duration::from_millis(2500));
        let twin = Fmu::new("twin");
        twin.set_all(&params);
        assert_eq!(twin.init(), fmi2Error, "{mode}");
        assert_logged(
            &twin,
            fmi2Error,
            &[
                &format!("{dev}: slot 3 is held by another running node"),
                "its heartbeat last moved",
                "ms ago",
                "own nodeSlot",
            ],
        );
        // The first one is untouched: it still steps, and echoes its own inputs.
        first.set("roll", "0.5");
        assert_eq!(first.step(1e-3, 1e-3), fmi2OK, "{mode}: {:?}", first.log());
        assert_eq!(first.real("peer.roll"), 0.5);
    }
}

#[test]
fn of_two_instances_claiming_one_slot_at_the_same_moment_exactly_one_wins() {
    // loopback: claims serialized by a process lock; shm: Fischer's protocol over
    // the owner word, as between two PCs.
    for round in 0..10 {
        let name = unique("race");
        let _guard = ShmGuard(name.clone());
        let dev = if round % 2 == 0 {
            format!("loopback:{name}")
        } else {
            format!("shm:{name}")
        };
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let claim = |name: &'static str| {
            let (dev, barrier) = (dev.clone(), barrier.clone());
            std::thread::spawn(move || {
                let fmu = Fmu::new(name);
                fmu.set_all(&[("device", &dev), ("nodeSlot", "7"), ("peerSlot", "7")]);
                barrier.wait();
                let status = fmu.init();
                // Both hold on until both have an answer: a winner that freed at
                // once would leave a free slot to a later claimant.
                barrier.wait();
                (status, fmu.log())
            })
        };
        let (a, b) = (claim("a"), claim("b"));
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        let won = [a.0, b.0].iter().filter(|s| **s == fmi2OK).count();
        assert_eq!(won, 1, "round {round}: {:?} {:?}", a.1, b.1);
        let loser = if a.0 == fmi2OK { &b } else { &a };
        let text = format!("{:?}", loser.1);
        assert!(
            text.contains("slot 7 was claimed at the same moment by another node")
                || text.contains("slot 7 is held by another running node"),
            "round {round}: {text}"
        );
    }
}
