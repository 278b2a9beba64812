//! One attitude preset area of loopback memory, made once per fuzzing process and
//! reused by every input (opening memory per input would dominate the run).

use std::sync::OnceLock;

use rfm_frames::area::Area;
use rfm_interface as interface;
use rfm_memory::{Device, OpenOptions, Region};

/// The area's geometry: the same for every attitude slot.
pub fn area() -> Area {
    interface::attitude_area(0)
}

pub fn slot(name: &str) -> &'static Region {
    static SLOT: OnceLock<Region> = OnceLock::new();
    SLOT.get_or_init(|| {
        let len = area().len;
        let options = OpenOptions {
            memory_size: len,
            ..OpenOptions::default()
        };
        let device = Device::open(&format!("loopback:{name}"), &options).unwrap();
        device.map(0, len).unwrap()
    })
}
