//! rfm2g-sim: a drop-in `librfm2g.so` that emulates GE/Abaco RFM2g boards in
//! shared memory, so RFM2g programs (the article's sender and receiver, our own
//! RFM2g backend, the FMU with `device=/dev/rfm2g0`) run on any Linux PC.
//!
//! Each emulated board is a node of a *ring*: a shared-memory object that every
//! board of the ring maps, as nodes on one fibre see one memory. The exports take
//! the vendor's names, argument types and status codes (the header is
//! `rfm2g-sys/include/rfm2g_api.h`); [`config`] says which device path opens which
//! board; [`ring`] holds the shared layout and the network interrupts.
//!
//! What a program can tell apart from hardware: nothing in the API (the same
//! misuse gets the same status), but memory written through a mapping is seen by
//! the other nodes at once, not ~500 ns later. The `delay=` setting delays
//! network interrupts only: a store through a mapped pointer cannot be held back
//! without trapping every store.
#![cfg(any(target_os = "linux", windows))]

pub mod abi;
pub mod api;
pub mod config;
pub mod cut;
mod handle;
pub mod ring;
mod wake;

pub use api::*;
