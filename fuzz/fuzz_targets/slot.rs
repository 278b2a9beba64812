//! One slot of loopback memory, made once per fuzzing process and reused by
//! every input (opening memory per input would dominate the run).

use std::sync::OnceLock;

use rfm_core::frame::SLOT_SIZE;
use rfm_core::{Device, OpenOptions, Region};

pub fn slot(name: &str) -> &'static Region {
    static SLOT: OnceLock<Region> = OnceLock::new();
    SLOT.get_or_init(|| {
        let options = OpenOptions {
            memory_size: SLOT_SIZE,
            ..OpenOptions::default()
        };
        let device = Device::open(&format!("loopback:{name}"), &options).unwrap();
        device.map(0, SLOT_SIZE).unwrap()
    })
}
