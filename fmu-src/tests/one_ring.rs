//! A ring cut on a single ring (issue 47): the node whose board was cut off
//! says its ring is open at its board (its card's LCSR and ring check), not
//! that its peer died; the peer, whose receiver holds sync but whose ring
//! check fails, says the ring is open at another board beside a dead
//! process. Both within `timeout`.

mod common;

use std::time::{Duration, Instant};

use common::{sim_library, unique, Fmu, RingGuard};
use fmu_model::fmi2::*;
use rfm_memory::backend::rfm2g::emulated;

const H: f64 = 1e-3;
const TIMEOUT: f64 = 1.0;

#[test]
#[cfg(target_os = "linux")]
fn a_cut_board_names_its_open_ring_and_its_peer_names_the_cut_board() {
    let ring = unique("one-ring");
    let _guard = RingGuard(ring.clone());
    let lib = sim_library();
    let board = |node: u8| format!("/dev/rfm2g-sim/{ring}/{node}/64K");
    let nodes: Vec<Fmu> = [0u8, 1]
        .into_iter()
        .map(|me| {
            let fmu = Fmu::new(["a", "b"][usize::from(me)]);
            fmu.set_all(&[
                ("device", &board(me + 1)),
                ("rfm2gLibrary", lib.to_str().unwrap()),
                ("nodeSlot", &me.to_string()),
                ("peerSlot", &(1 - me).to_string()),
                ("lag", "1"),
                ("waitStrategy", "yield"),
                ("timeout", &TIMEOUT.to_string()),
                ("idleTimeout", &TIMEOUT.to_string()),
            ]);
            assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
            fmu
        })
        .collect();
    let (a, b) = (&nodes[0], &nodes[1]);
    for k in 0..100 {
        for fmu in [a, b] {
            assert_eq!(fmu.step(k as f64 * H, H), fmi2OK, "{:?}", fmu.log());
        }
    }
    emulated::set_link(Some(&lib), &board(1), false).unwrap();
    // Each steps on until its peer's frames stop; the first failure of each
    // comes within the timeout (and the silence the peer judges by).
    let mut failed = [None, None];
    for k in 100..400 {
        for (i, fmu) in [a, b].into_iter().enumerate() {
            if failed[i].is_some() {
                continue;
            }
            let began = Instant::now();
            if fmu.step(k as f64 * H, H) != fmi2OK {
                failed[i] = Some((began.elapsed(), fmu.last_error()));
            }
        }
        if failed.iter().all(Option::is_some) {
            break;
        }
    }
    let [Some((a_took, a_said)), Some((b_took, b_said))] = failed else {
        panic!("a step of each fails once a's board is cut: {failed:?}");
    };
    println!("a, cut, after {a_took:?}: {a_said}\nb, whole, after {b_took:?}: {b_said}");
    let within = Duration::from_secs_f64(TIMEOUT * 1.5);
    assert!(a_took < within && b_took < within, "{a_took:?} {b_took:?}");
    assert!(
        a_said.contains("the ring is open at this board (LCSR")
            && a_said.contains("RFM2gCheckRingCont fails")
            && a_said.contains("node `slot1` (slot 1)")
            && a_said.contains("Check the fibre into this board"),
        "{a_said}"
    );
    assert!(!a_said.contains("died"), "{a_said}");
    // A packet sent round an open ring comes back to no board: b's card
    // says the ring is open at another board, its receiver in sync.
    assert!(
        b_said.contains("or its board is off the ring: the ring is open at another board (LCSR")
            && b_said.contains("while this board's receiver holds sync)"),
        "{b_said}"
    );
    emulated::set_link(Some(&lib), &board(1), true).unwrap();
}
