//! The memory floor of the coupling: reflective memory as windows of aligned
//! 32-bit words, and nothing about what is stored in them.
//!
//! - [`Device`] opens one memory by its device string ([`DEVICE_FORMS`]): an
//!   RFM2g board through the vendor library loaded at run time
//!   ([`backend::rfm2g`]), POSIX shared memory or a Windows file mapping
//!   ([`backend::shm`]), an in-process loopback buffer ([`backend::loopback`]),
//!   or two of one kind as a redundant pair ([`DeviceSetting`]). Each backend
//!   only provides storage and its own error.
//! - [`Region`] is a bounds-checked window of it, and the only code in the
//!   workspace that dereferences mapped memory: every access an aligned 32-bit
//!   atomic load or store, a DMA read handed to the vendor's `RFM2gRead`.
//! - [`seqlock`] writes and reads a byte range whole across processes, bounded.
//! - [`counts`] counts exactly what a thread does to the memory (compiled in
//!   with the `counts` feature only).
//!
//! Above it: a node's area and its frames (`rfm-frames`), interface files
//! (`rfm-interface`), recordings (`rfm-record`) and the link (`rfm-core`).
#![deny(unsafe_op_in_unsafe_fn)]

pub mod backend;
pub mod counts;
mod device;
mod error;
mod forms;
mod region;
pub mod seqlock;
mod spec;
pub mod spelling;

pub use backend::rfm2g::Interrupt;
pub use device::{Device, DeviceInfo, Events, OpenOptions, DEFAULT_MEMORY_SIZE, MAX_MEMORY_SIZE};
pub use error::DeviceError;
pub use forms::DEVICE_FORMS;
pub use region::{Network, OutsideMemory, Region, RegionError, WORD};
pub use spec::{DeviceSetting, DeviceSpec};
