//! The measuring parts shared by the `coupling` benchmark and the `soak` run.

pub mod bridge;
pub mod card;
pub mod fmu;
pub mod fmu3;
pub mod iceoryx;
pub mod patience;
pub mod raw;
pub mod report;
pub mod stats;
pub mod udp;
