//! A node's area of reflective memory, the floor above the memory
//! (`rfm-memory`) and below interface files (`rfm-interface`), recordings
//! (`rfm-record`) and the link (`rfm-core`), each module naming only those
//! above it in this list:
//!
//! - [`payload`]: a node's signals as bytes, laid out as a C struct;
//! - [`area`]: an area's parts (head block, liveness, descriptor, ring) and
//!   its window;
//! - [`frame`]: the framed layout (headers, CRC, the head word) and the
//!   article's seed packet;
//! - [`slot`]: one slot's readers and writers, which never return a torn or
//!   corrupt frame as data;
//! - [`wait`]: how a lockstep step waits for a peer's frame;
//! - [`mirror`]: the raw entry copies a bridge makes;
//! - [`names`]: settings spelt as words, one table each;
//! - [`fmi`]: FMI's types and one value of them;
//! - [`packed`]: the lab's own packed C structs, their layouts and values;
//! - [`session`]: a session's token, the word that names it in an area;
//! - [`wall`]: the wall clock recordings are stamped with.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod area;
pub mod fmi;
pub mod frame;
pub mod mirror;
pub mod names;
pub mod packed;
pub mod payload;
pub mod session;
pub mod slot;
pub mod wait;
pub mod wall;
