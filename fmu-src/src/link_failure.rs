//! What the master is told when the link fails: each operation's errors
//! mapped to a status by one `match`, so that a new way to fail is a compile
//! error here, not a message flattened into whatever status was at hand.
//! Every one is `fmi2Error` today: the instance can be reset or freed, and
//! nothing of the master's process is broken (the memory is mapped until the
//! instance is freed).

use rfm_core::link::{LinkError, OpenError, PublishError, StartError};
use rfm_memory::RegionError;

use crate::error::{Failure, FmiError};

fn failed(status: Failure, e: &dyn std::fmt::Display) -> FmiError {
    FmiError {
        status,
        message: e.to_string(),
        context: None,
    }
}

/// Opening the link (fmi2ExitInitializationMode): a setting, the memory or
/// the recording replayed.
impl From<OpenError> for FmiError {
    fn from(e: OpenError) -> FmiError {
        let status = match &e {
            OpenError::Setting(_)
            | OpenError::Config { .. }
            | OpenError::Device(_)
            | OpenError::Region(_)
            | OpenError::Replay { .. } => Failure::Error,
        };
        failed(status, &e)
    }
}

/// Starting the link (fmi2ExitInitializationMode): the claim, the
/// heartbeat, frame 0.
impl From<StartError> for FmiError {
    fn from(e: StartError) -> FmiError {
        let status = match &e {
            StartError::SlotInUse { .. }
            | StartError::SlotContended { .. }
            | StartError::Foreign { .. } => Failure::Error,
            StartError::Heartbeat(_) | StartError::Events(_) => Failure::Error,
            StartError::Publish(p) => publish_status(p),
            StartError::Region(_) => Failure::Error,
        };
        failed(status, &e)
    }
}

fn publish_status(e: &PublishError) -> Failure {
    match e {
        PublishError::FrameSize { .. } | PublishError::Region(_) => Failure::Error,
    }
}

/// Stepping the link: the peers, the rings, the lab's programs, the
/// recording replayed.
impl From<LinkError> for FmiError {
    fn from(e: LinkError) -> FmiError {
        let status = match &e {
            LinkError::Publish(p) => publish_status(p),
            LinkError::Region(_) | LinkError::Events(_) => Failure::Error,
            LinkError::SlotTakenOver { .. } => Failure::Error,
            LinkError::Timeout { .. }
            | LinkError::PeerRestarted { .. }
            | LinkError::PeerStopped { .. }
            | LinkError::PeerDead { .. }
            | LinkError::RingOpenHere { .. }
            | LinkError::Incompatible { .. }
            | LinkError::Overwritten { .. }
            | LinkError::ForeignBehind { .. } => Failure::Error,
            LinkError::Replay { .. } | LinkError::ReplayEnded { .. } => Failure::Error,
        };
        failed(status, &e)
    }
}

/// Closing the link (fmi2Terminate): marking its slot closed.
impl From<RegionError> for FmiError {
    fn from(e: RegionError) -> FmiError {
        failed(Failure::Error, &e)
    }
}
