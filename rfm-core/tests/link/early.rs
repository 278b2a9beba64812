//! A step that returns early ([`Link::step_within`], FMI 3.0's
//! `earlyReturnAllowed`): published once, resumed by the next call of the
//! same step, its timeout counted from its first call.

use super::*;

const PATIENCE: Duration = Duration::from_millis(20);

/// Nodes 0 and 1 at lag 0 on one memory, started.
fn pair(idle_timeout: Duration) -> (AttitudeLink, AttitudeLink) {
    let dev = loopback();
    let mut a = config(&dev, 0, 1, 0);
    a.settings.idle_timeout = idle_timeout;
    let mut a = AttitudeLink::open(a).unwrap();
    let mut b = AttitudeLink::open(config(&dev, 1, 0, 0)).unwrap();
    a.start(&input(0, u64::MAX)).unwrap();
    b.start(&input(1, u64::MAX)).unwrap();
    (a, b)
}

/// One thread steps both nodes at lag 0, which a plain step cannot (node 0's
/// step k waits for node 1's, whose master waits for node 0's to return):
/// node 0's step returns early, node 1 steps, node 0's next call of the same
/// step ends it with node 1's frame, by the rule, having waited since its
/// first call. A call after the first publishes nothing: node 1 sees the
/// first call's inputs.
#[test]
fn a_step_that_returns_early_is_resumed_by_the_next_call_of_the_same_step() {
    let (mut a, mut b) = pair(Duration::from_secs(10));
    for k in 0..100 {
        let began = Instant::now();
        assert_eq!(a.step_within(k, &input(0, k), PATIENCE).unwrap(), None);
        assert!(began.elapsed() >= PATIENCE, "{:?}", began.elapsed());
        let changed = input(0, k + 1000);
        assert_eq!(a.step_within(k, &changed, PATIENCE).unwrap(), None);
        let got = b.step(k, &input(1, k)).unwrap().unwrap();
        assert_eq!(got.sample, input(0, k), "node 1 at step {k}");
        let got = a
            .step_within(k, &changed, PATIENCE)
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            (got.sample, got.index),
            (input(1, k), k + 1),
            "node 0 at step {k}"
        );
        // Its wait counts from its first call, through both early returns.
        let waited = a.report().waited;
        assert!(waited >= PATIENCE * 2, "step {k} waited {waited:?}");
    }
}

/// A step resumed call after call still times out as one call would: its
/// wait counts from its first call, up to idleTimeout for a live peer.
#[test]
fn a_step_resumed_call_after_call_times_out_as_one_call_would() {
    let idle = Duration::from_millis(300);
    let (mut a, mut b) = pair(idle);
    a.step_within(0, &input(0, 0), PATIENCE).unwrap();
    b.step(0, &input(1, 0)).unwrap();
    assert!(a.step_within(0, &input(0, 0), PATIENCE).unwrap().is_some());
    // Node 1 stalls: node 0's step 1 returns early until idleTimeout.
    let (began, mut early) = (Instant::now(), 0);
    let failed = loop {
        match a.step_within(1, &input(0, 1), PATIENCE) {
            Ok(None) => early += 1,
            Ok(Some(_)) => panic!("node 1 never took step 1"),
            Err(e) => break e,
        }
    };
    let took = began.elapsed();
    assert!(idle <= took && took < idle * 3, "{took:?}");
    assert!(early >= 5, "{early} early returns in {took:?}");
    assert!(
        matches!(failed, LinkError::Timeout { .. }),
        "{failed:?}: {failed}"
    );
}
