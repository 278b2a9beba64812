//! The RFM2g network interrupts of an emulated ring, through the memory
//! floor's `Events` (the link's waits on them: rfm-core's tests).
#![cfg(all(not(miri), target_os = "linux"))]

mod common;

#[test]
fn network_interrupts_reach_the_other_nodes_of_the_ring() {
    let (_ring, dev, lib) = common::two_boards();
    let options = rfm_memory::OpenOptions {
        rfm2g_library: lib,
        ..Default::default()
    };
    let a = rfm_memory::Device::open(&dev[0], &options).unwrap();
    let b = rfm_memory::Device::open(&dev[1], &options).unwrap();
    let (ea, eb) = (a.events().unwrap().unwrap(), b.events().unwrap().unwrap());
    ea.broadcast(42).unwrap();
    assert_eq!(
        eb.wait(1000).unwrap(),
        Some((a.info().node_id.unwrap(), 42))
    );
    assert_eq!(eb.wait(5).unwrap(), None, "one event, one wake-up");
    assert_eq!(
        ea.wait(5).unwrap(),
        None,
        "a broadcast does not come back to its sender"
    );
}
