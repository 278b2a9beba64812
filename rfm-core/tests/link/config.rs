//! Configurations refused: incompatible peers at first contact, and settings
//! that cannot work, naming the parameter.

use super::*;

#[test]
fn incompatible_peers_are_refused_at_first_contact() {
    // A lockstep node refuses a free-running peer it waits for: its frames
    // would be overwritten before they are taken.
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        ..config(&dev, 1, 0, 1)
    })
    .unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let err = a.step(0, &input(0, 0)).unwrap_err();
    assert!(matches!(err, LinkError::Incompatible { .. }), "{err:?}");
    let part = "node `slot1` runs syncMode = free, and this node waits for it in lockstep: run \
                `slot1` with syncMode = lockstep, or list it in this node's `free`";
    assert!(err.to_string().contains(part), "{err}");
    // A peer writing the article's layout where ours is expected.
    let dev = loopback();
    let mut a = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        ..config(&dev, 0, 1, 0)
    })
    .unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        layout: Layout::Seed,
        ..config(&dev, 1, 0, 0)
    })
    .unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let err = a.step(0, &input(0, 0)).unwrap_err();
    assert!(err.to_string().contains("uses layout seed"), "{err}");
    // b started after a: a's layout counts once b has seen it beat (what
    // a run that is over left in an area is never judged), within a beat.
    let started = std::time::Instant::now();
    let err = (0..)
        .find_map(|k| {
            std::thread::sleep(Duration::from_millis(1));
            assert!(started.elapsed() < Duration::from_secs(1), "no error");
            b.step(k, &input(1, k)).err()
        })
        .unwrap();
    assert!(
        err.to_string()
            .contains("uses layout framed, this node layout seed"),
        "{err}"
    );
    // And a lockstep node meets the seed writer while it waits for its first frame.
    let dev = loopback();
    let mut a = AttitudeLink::open(LinkConfig {
        startup_timeout: Duration::from_secs(60),
        ..config(&dev, 0, 1, 0)
    })
    .unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        mode: SyncMode::Free,
        layout: Layout::Seed,
        ..config(&dev, 1, 0, 0)
    })
    .unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    let err = a.step(0, &input(0, 0)).unwrap_err();
    assert!(err.to_string().contains("uses layout seed"), "{err}");
}

#[test]
fn configurations_that_cannot_work_name_the_parameter() {
    let dev = loopback();
    let cases: Vec<(LinkConfig, &str)> = vec![
        (
            LinkConfig {
                lag: 8,
                ..config(&dev, 0, 1, 0)
            },
            "parameter lag = 8: at most 7",
        ),
        (
            LinkConfig {
                region_offset: 6,
                ..config(&dev, 0, 1, 0)
            },
            "parameter regionOffset = 6: must be a multiple of 4",
        ),
        (
            LinkConfig {
                layout: Layout::Seed,
                ..config(&dev, 0, 1, 0)
            },
            "parameter layout = seed",
        ),
        (
            LinkConfig {
                timeout: Duration::ZERO,
                ..config(&dev, 0, 1, 0)
            },
            "parameter timeout",
        ),
        (
            LinkConfig {
                region_offset: 1 << 20,
                ..config(&dev, 0, 1, 0)
            },
            "does not fit its 1048576-byte memory",
        ),
        (
            LinkConfig {
                region_offset: 600 << 10,
                ..config(&dev, 0, 255, 0)
            },
            "does not fit its 1048576-byte memory",
        ),
        (config("udp:host", 0, 1, 0), "not a form this FMU knows"),
    ];
    for (cfg, part) in cases {
        let err = AttitudeLink::open(cfg).unwrap_err();
        assert!(err.to_string().contains(part), "`{err}` lacks `{part}`");
    }
}
