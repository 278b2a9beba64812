//! The RFM2g backend closes every handle and unmaps every mapping it made, once,
//! when the last device or region using it is dropped (checked through the
//! emulator's counters; a test binary of its own, so no other test moves them).
#![cfg(not(miri))]

mod common;

use rfm_memory::{Device, OpenOptions};

#[test]
fn handles_and_mappings_are_released_exactly_once() {
    let path = common::sim_library();
    // SAFETY: the emulator's initialisers do nothing.
    let lib = unsafe { libloading::Library::new(&path) }.unwrap();
    // SAFETY: both counters are `int (void)` in rfm2g-sim.
    let handles =
        unsafe { lib.get::<unsafe extern "C" fn() -> i32>(b"rfm2gsim_live_handles\0") }.unwrap();
    // SAFETY: as above.
    let maps =
        unsafe { lib.get::<unsafe extern "C" fn() -> i32>(b"rfm2gsim_live_maps\0") }.unwrap();
    // SAFETY: plain counter reads.
    let live = || unsafe { (handles(), maps()) };
    assert_eq!(live(), (0, 0));

    let options = OpenOptions {
        rfm2g_library: Some(path.clone()),
        ..OpenOptions::default()
    };
    let ring = common::unique("life");
    let _ring = common::RingGuard(ring.clone());
    let device = Device::open(&format!("/dev/rfm2g-sim/{ring}/0/64K"), &options).unwrap();
    assert_eq!(device.info().node_id, Some(0));
    assert_eq!(
        device.info().library.as_deref(),
        Some(path.to_str().unwrap())
    );
    let a = device.map(0, 64).unwrap();
    let b = device.map(8192, 4096 * 3).unwrap();
    let a2 = a.subregion(0, 32).unwrap();
    assert_eq!(live(), (1, 2));
    drop(device);
    assert_eq!(live(), (1, 2), "regions keep the board open");
    drop(a);
    assert_eq!(live(), (1, 2), "a subregion keeps its mapping");
    drop(a2);
    assert_eq!(live(), (1, 1));
    drop(b);
    assert_eq!(live(), (0, 0));
}
