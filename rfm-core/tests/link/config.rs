//! Configurations refused: incompatible peers at first contact, and settings
//! that cannot work, naming the parameter.

use super::*;
use rfm_interface::settings::{LinkSettings, SettingError};

#[test]
fn incompatible_peers_are_refused_at_first_contact() {
    // A lockstep node refuses a free-running peer it waits for: its frames
    // would be overwritten before they are taken.
    let dev = loopback();
    let mut a = AttitudeLink::open(config(&dev, 0, 1, 1)).unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        settings: LinkSettings {
            mode: SyncMode::Free,
            ..config(&dev, 1, 0, 1).settings
        },
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
        settings: LinkSettings {
            mode: SyncMode::Free,
            ..config(&dev, 0, 1, 0).settings
        },
        ..config(&dev, 0, 1, 0)
    })
    .unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        settings: LinkSettings {
            mode: SyncMode::Free,
            layout: Layout::Seed,
            ..config(&dev, 1, 0, 0).settings
        },
        ..config(&dev, 1, 0, 0)
    })
    .unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    let err = a.step(0, &input(0, 0)).unwrap_err();
    // What the peers read as its ending (`Ending::Incompatible`) is the variant's.
    assert!(
        matches!(err, LinkError::Incompatible { .. })
            && err.to_string().contains("uses layout seed"),
        "{err}"
    );
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
        matches!(err, LinkError::Incompatible { .. })
            && err
                .to_string()
                .contains("uses layout framed, this node layout seed"),
        "{err}"
    );
    // And a lockstep node meets the seed writer while it waits for its first frame.
    let dev = loopback();
    let mut a = AttitudeLink::open(LinkConfig {
        settings: LinkSettings {
            startup_timeout: Duration::from_secs(60),
            ..config(&dev, 0, 1, 0).settings
        },
        ..config(&dev, 0, 1, 0)
    })
    .unwrap();
    let mut b = AttitudeLink::open(LinkConfig {
        settings: LinkSettings {
            mode: SyncMode::Free,
            layout: Layout::Seed,
            ..config(&dev, 1, 0, 0).settings
        },
        ..config(&dev, 1, 0, 0)
    })
    .unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    let err = a.step(0, &input(0, 0)).unwrap_err();
    // What the peers read as its ending (`Ending::Incompatible`) is the variant's.
    assert!(
        matches!(err, LinkError::Incompatible { .. })
            && err.to_string().contains("uses layout seed"),
        "{err}"
    );
}

#[test]
fn configurations_that_cannot_work_name_the_parameter() {
    // What the link holds settings to itself: each other and the interface
    // (each value alone is the settings table's, by its type).
    let dev = loopback();
    let with = |f: &dyn Fn(&mut LinkSettings)| {
        let mut c = config(&dev, 0, 1, 0);
        f(&mut c.settings);
        AttitudeLink::open(c).unwrap_err()
    };
    let err = with(&|s| s.lag = 8);
    assert!(
        matches!(
            &err,
            OpenError::Setting(SettingError::Range { key: "lag", .. })
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "parameter lag = 8: expected 0..7 steps (the file's max_lag: the rings are sized for it)"
    );
    let err = with(&|s| s.layout = Layout::Seed);
    assert!(
        matches!(
            &err,
            OpenError::Setting(SettingError::Combination { key: "layout", .. })
        ),
        "{err:?}"
    );
    // What only the memory can tell: the message is what a user reads.
    let cases: Vec<(LinkConfig, &str)> = vec![
        (
            LinkConfig {
                settings: LinkSettings {
                    region_offset: 1 << 20,
                    ..config(&dev, 0, 1, 0).settings
                },
                ..config(&dev, 0, 1, 0)
            },
            "does not fit its 1048576-byte memory",
        ),
        (
            LinkConfig {
                settings: LinkSettings {
                    region_offset: 600 << 10,
                    ..config(&dev, 0, 255, 0).settings
                },
                ..config(&dev, 0, 255, 0)
            },
            "does not fit its 1048576-byte memory",
        ),
    ];
    for (cfg, part) in cases {
        let err = AttitudeLink::open(cfg).unwrap_err();
        assert!(err.to_string().contains(part), "`{err}` lacks `{part}`");
    }
}
