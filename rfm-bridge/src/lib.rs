//! Software reflective memory: `rfm-bridge` plays the card's part between
//! hosts that have none. Each host's bridge watches the areas its own nodes
//! write in the host's coupling memory ([`local`]) and sends what they store
//! to the other bridges over Zenoh ([`wire`], [`net`]), which write it into
//! their memories as the card would ([`remote`]). The FMU does not change: it
//! couples through `shm:NAME` (or a board) as on one memory.

pub mod bridge;
pub mod inbox;
pub mod local;
pub mod net;
pub mod pingpong;
pub mod remote;
pub mod report;
pub mod shared;
pub mod wire;
