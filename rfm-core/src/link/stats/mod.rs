//! A node's own timing, published for whoever watches the lab (`rfmctl
//! watch`, `rfmctl serve`): measured on its steps ([`window`]), stored in its
//! area's statistics block ([`block`]).

pub mod block;
pub mod window;

pub use block::{Card, PeerLatency, Stats, Summary};
