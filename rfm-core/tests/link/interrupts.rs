//! Waiting on the RFM2g network interrupts of an emulated ring.

use super::*;
use rfm_interface::settings::LinkSettings;

#[test]
fn lockstep_on_network_interrupts_exchanges_exactly() {
    let (_ring, dev, lib) = common::two_boards();
    let cfg = |node: u8, peer| LinkConfig {
        settings: LinkSettings {
            wait: WaitStrategy::Event,
            rfm2g_library: lib.clone(),
            ..config(&dev[usize::from(node)], node, peer, 0).settings
        },
        ..config(&dev[usize::from(node)], node, peer, 0)
    };
    for (me, link) in exchange_in_two_threads(cfg(0, 1), cfg(1, 0), 2_000)
        .iter()
        .enumerate()
    {
        // Interrupts woke the waits: without them every wait runs out its 10 ms
        // slice (and the exchange is still exact, only slower).
        let waits = link.event_waits();
        assert!(
            waits.woken > 0 && waits.woken > waits.timed_out,
            "node {me}: {waits:?}"
        );
    }
}

/// Two couplings share two board nodes. Freeing the first one used to disable the
/// interrupt for the whole board node, and the second then failed in
/// `RFM2gWaitForEvent` with RFM2G_NOT_ENABLED.
#[test]
fn freeing_one_coupling_leaves_the_interrupts_of_another_on_the_same_board_nodes() {
    let (_ring, dev, lib) = common::two_boards();
    let cfg = |board: usize, node: u8, peer: u8| LinkConfig {
        settings: LinkSettings {
            wait: WaitStrategy::Event,
            rfm2g_library: lib.clone(),
            ..config(&dev[board], node, peer, 0).settings
        },
        ..config(&dev[board], node, peer, 0)
    };
    let started = |c: LinkConfig, me: u8| {
        let mut link = AttitudeLink::open(c).unwrap();
        link.start(&input(me, u64::MAX)).unwrap();
        link
    };
    let first = [started(cfg(0, 0, 1), 0), started(cfg(1, 1, 0), 1)];
    let second = [started(cfg(0, 2, 3), 0), started(cfg(1, 3, 2), 1)];
    drop(first);
    let [a, b] = second;
    exchange_started(a, b, 500);
}

#[test]
fn waiting_on_interrupts_is_refused_without_an_rfm2g_board() {
    let err = AttitudeLink::open(LinkConfig {
        settings: LinkSettings {
            wait: WaitStrategy::Event,
            ..config(&loopback(), 0, 1, 0).settings
        },
        ..config(&loopback(), 0, 1, 0)
    })
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "parameter waitStrategy = event: RFM2g network interrupts need an RFM2g device"
        ),
        "{text}"
    );
    assert!(text.contains("use spin, yield or sleep"), "{text}");
}
