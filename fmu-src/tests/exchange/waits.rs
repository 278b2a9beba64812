//! What a waiting node tells its master: a peer that beats but does not
//! step, and a peer whose last session closed before this node started.

use super::common::Fmu;
use super::*;

/// The first warning of a step's wait that the master's logger got.
fn wait_warning(fmu: &Fmu) -> String {
    let log = fmu.log();
    log.iter()
        .find(|(status, _, m)| *status == fmi2Warning && m.contains("has waited"))
        .map(|(_, _, m)| m.clone())
        .unwrap_or_else(|| panic!("no warning in {log:?}"))
}

/// Late is not dead, and the master hears of it: a peer whose heartbeat beats
/// but which does not step (here: the same thread never steps it) is waited for
/// up to idleTimeout, with a warning naming it every 5 s; then the step fails
/// saying the peer's heartbeat beats and naming idleTimeout, not timeout.
#[test]
fn a_live_peer_that_does_not_step_is_named_in_a_warning_then_an_idle_timeout() {
    let dev = format!("loopback:{}", unique("idle"));
    let a = node("a", &dev, 0, 1, 1);
    let b = node("b", &dev, 1, 0, 1);
    a.set_all(&[("idleTimeout", "6"), ("timeout", "1")]);
    for n in [&a, &b] {
        assert_eq!(n.init(), fmi2OK, "{:?}", n.log());
    }
    // Step 0 takes b's initial frame (lag 1); step 1 needs b's step 0.
    assert_eq!(a.step(0.0, H), fmi2OK, "{:?}", a.log());
    let started = std::time::Instant::now();
    assert_eq!(a.step(H, H), fmi2Error);
    let took = started.elapsed();
    assert!(
        (std::time::Duration::from_secs(6)..std::time::Duration::from_secs(8)).contains(&took),
        "{took:?}"
    );
    let warning = wait_warning(&a);
    assert!(
        warning.contains(
            "step 1 has waited 5 s for frame 1 (its step 0) of node `slot1` (slot 1), whose \
             heartbeat beats: its master is paused or slower, or steps its FMUs one after the \
             other in one thread (then every node needs lag 1 or more); waiting up to \
             idleTimeout (6 s)"
        ),
        "{warning:?}"
    );
    let error = a.last_error();
    assert!(
        error.contains("its heartbeat beats") && error.contains("raise idleTimeout"),
        "{error}"
    );
}

/// A node restarted alone finds its peer's last session closed before it
/// started: the wait's warning says so, with how that session ended, and that
/// a lockstep lab restarted in part needs every node restarted; not that the
/// peer "has not started yet".
#[test]
fn a_node_restarted_alone_is_told_its_peer_closed_before_it_started() {
    let dev = format!("loopback:{}", unique("alone"));
    let a = node("a", &dev, 0, 1, 1);
    let b = node("b", &dev, 1, 0, 1);
    for n in [&a, &b] {
        assert_eq!(n.init(), fmi2OK, "{:?}", n.log());
    }
    assert_eq!(a.step(0.0, H), fmi2OK, "{:?}", a.log());
    assert_eq!(b.step(0.0, H), fmi2OK, "{:?}", b.log());
    assert_eq!(b.terminate(), fmi2OK);
    drop(a);
    let again = node("a", &dev, 0, 1, 1);
    again.set_all(&[("startupTimeout", "6")]);
    assert_eq!(again.init(), fmi2OK, "{:?}", again.log());
    assert_eq!(again.step(0.0, H), fmi2Error);
    let warning = wait_warning(&again);
    assert!(
        warning.contains(
            "of node `slot1` (slot 1), whose last session closed before this node started \
             (its master terminated it); it is waited for as a node starting again, but if \
             this node alone was restarted it will not come back: a lockstep lab restarted \
             in part needs every node restarted; waiting up to startupTimeout (6 s)"
        ),
        "{warning:?}"
    );
}
