//! Where regions come from. Each backend only provides memory; frames, seqlock and
//! link logic are written once over [`crate::Region`].

pub mod loopback;
pub mod rfm2g;
pub mod shm;
