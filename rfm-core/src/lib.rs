//! Reflective memory for coupling simulators: regions, frames and link health.
//!
//! A [`Device`] (an RFM2g board, POSIX shared memory, or an in-process loopback
//! buffer, chosen by one device string) maps [`Region`]s: bounds-checked windows
//! accessed only in aligned 32-bit atomic words. An [`interface`] declares the
//! nodes of a coupling and what each publishes; its memory map gives each node one
//! area of the region, in which it publishes frames in one of two layouts:
//! [`frame::framed`] (seqlocked, CRC-checked, a ring indexed by step) or
//! [`frame::seed`] (the article's `FlightData`). The [`slot`] readers never return
//! a torn or corrupt frame as data, and [`health::PeerHealth`] turns what they read
//! into link diagnostics.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod area;
pub mod backend;
pub mod card;
pub mod counts;
mod device;
pub mod frame;
pub mod health;
pub mod interface;
pub mod link;
pub mod mirror;
mod names;
pub mod payload;
pub mod realtime;
pub mod record;
mod region;
mod seqlock;
pub mod slot;
mod thread;
pub mod wait;

pub use backend::rfm2g::{Interrupt, Rfm2gError};
pub use device::{
    split_rings, Device, DeviceError, DeviceInfo, DeviceSpec, Events, OpenOptions,
    DEFAULT_MEMORY_SIZE, DEVICE_FORMS, MAX_MEMORY_SIZE,
};
pub use region::{Network, OutsideMemory, Region, RegionError, WORD};
