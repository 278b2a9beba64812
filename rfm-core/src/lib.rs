//! One node coupled to its peers through reflective memory. It stands on the
//! floors beneath, each imported from its own crate and never re-exported
//! here (module-cycles fails on a re-export, so every caller says which floor
//! it means): the memory of `rfm-memory`, the area of `rfm-frames`, the
//! interface files of `rfm-interface` and the recordings of `rfm-record`.
//! Its modules, each naming only those above it in this list:
//!
//! - [`link`]: one node coupled to its peers (ownership, heartbeat, exchange,
//!   redundant rings), with [`health`], [`realtime`].
//!
//! What a step costs on a card is `rfm-card-model`'s, beside the link, not in it.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod health;
pub mod link;
pub mod realtime;
