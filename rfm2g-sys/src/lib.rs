//! The RFM2g vendor API as this project declares it: `include/rfm2g_api.h`
//! (written from the vendor's documented API; the SDK's own header is
//! proprietary), its bindgen output ([`ffi`], checked in so that no build needs
//! libclang or the SDK), the one table of its status codes ([`STATUSES`]: name,
//! message, hint) and the error of a call that returned one ([`Rfm2gError`]).
//!
//! A crate of its own so that the backend that calls the library
//! (`rfm-memory`'s `backend::rfm2g`) and the emulator that is one
//! (`rfm2g-sim`) share the declarations without the emulator depending on the
//! backend.
#![deny(unsafe_op_in_unsafe_fn)]

// As bindgen writes it: the bindings test compares it byte for byte.
#[rustfmt::skip]
pub mod ffi;
mod status;

pub use status::{status, status_message, status_name, Rfm2gError, Status, STATUSES};
