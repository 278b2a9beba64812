//! Reflective memory for coupling simulators: on the memory of `rfm-memory`
//! (devices and bounds-checked [`Region`]s), the area of `rfm-frames`
//! ([`payload`], [`area`], [`frame`], [`slot`], [`wait`], [`mirror`]) and the
//! [`interface`] files of `rfm-interface` (the memory map, descriptors, rates,
//! settings) and the [`record`]ings of `rfm-record`, all re-exported here under
//! their old paths, the floors of a coupling, each naming only those above it
//! in this list:
//!
//! - [`link`]: one node coupled to its peers (ownership, heartbeat, exchange,
//!   redundant rings), with [`health`], [`realtime`];
//! - [`card`]: what a step costs on a PCIE-5565, and a coupling's share of the
//!   ring.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod card;
pub mod health;
pub mod link;
pub mod realtime;

// The area floor and interfaces, crates of their own (rfm-frames,
// rfm-interface), under their old paths.
use rfm_frames::names;
pub use rfm_frames::{area, frame, mirror, packed, payload, slot, wait};
pub use rfm_interface as interface;
pub use rfm_record as record;
use rfm_thread as thread;

// The memory floor, a crate of its own (rfm-memory), under its old paths.
pub use rfm_memory::backend::rfm2g::{Interrupt, Rfm2gError};
pub use rfm_memory::{backend, counts};
pub use rfm_memory::{
    split_rings, Device, DeviceError, DeviceInfo, DeviceSpec, Events, Network, OpenOptions,
    OutsideMemory, Region, RegionError, DEFAULT_MEMORY_SIZE, DEVICE_FORMS, MAX_MEMORY_SIZE, WORD,
};
