//! Reflective memory for coupling simulators: on the memory of `rfm-memory`
//! (devices and bounds-checked [`Region`]s, re-exported here under their old
//! paths), the floors of a coupling, each naming only those above it in this
//! list:
//!
//! - the area: [`payload`] (a node's signals as bytes), [`area`] (its parts and
//!   ring), [`frame`] (the framed and seed layouts), [`slot`] (one slot's
//!   readers and writers, which never return a torn or corrupt frame as data),
//!   [`wait`] (the lockstep wait), [`mirror`];
//! - [`interface`]: files, the memory map, descriptors, rates, settings;
//! - [`record`]: recordings, their writer thread and reader;
//! - [`link`]: one node coupled to its peers (ownership, heartbeat, exchange,
//!   redundant rings), with [`health`], [`realtime`];
//! - [`card`]: what a step costs on a PCIE-5565, and a coupling's share of the
//!   ring.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod area;
pub mod card;
pub mod frame;
pub mod health;
pub mod interface;
pub mod link;
pub mod mirror;
mod names;
pub mod payload;
pub mod realtime;
pub mod record;
pub mod slot;
mod thread;
pub mod wait;

// The memory floor, a crate of its own (rfm-memory), under its old paths.
pub use rfm_memory::backend::rfm2g::{Interrupt, Rfm2gError};
pub use rfm_memory::{backend, counts};
pub use rfm_memory::{
    split_rings, Device, DeviceError, DeviceInfo, DeviceSpec, Events, Network, OpenOptions,
    OutsideMemory, Region, RegionError, DEFAULT_MEMORY_SIZE, DEVICE_FORMS, MAX_MEMORY_SIZE, WORD,
};
