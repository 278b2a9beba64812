//! The attitude preset's payload as numbers: what the article's programs and the
//! library's own examples step with, beside the FMU's interface-driven signals.

use crate::frame::seed::payload as at;
use crate::frame::{Message, MESSAGE_LEN};

/// What one node contributes per step.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sample {
    pub sim_time: f64,
    pub attitude: [f64; 3],
    pub status: u8,
    pub message: Message,
}

impl Sample {
    /// Writes the sample into an attitude preset payload.
    pub fn write(&self, p: &mut [u8]) {
        for (offset, a) in [at::ROLL, at::PITCH, at::YAW]
            .into_iter()
            .zip(self.attitude)
        {
            p[offset..offset + 8].copy_from_slice(&a.to_le_bytes());
        }
        p[at::STATUS..at::STATUS + 4].copy_from_slice(&i32::from(self.status).to_le_bytes());
        p[at::MESSAGE..at::MESSAGE + at::MESSAGE_SIZE]
            .copy_from_slice(&self.message.as_raw()[..at::MESSAGE_SIZE]);
    }

    /// The sample an attitude preset payload holds.
    pub fn read(p: &[u8], sim_time: f64) -> Sample {
        let f = |offset: usize| f64::from_le_bytes(p[offset..offset + 8].try_into().expect("8"));
        let mut message = [0u8; MESSAGE_LEN];
        message[..at::MESSAGE_SIZE]
            .copy_from_slice(&p[at::MESSAGE..at::MESSAGE + at::MESSAGE_SIZE]);
        Sample {
            sim_time,
            attitude: [f(at::ROLL), f(at::PITCH), f(at::YAW)],
            status: p[at::STATUS],
            message: Message::from_raw(message),
        }
    }
}

/// A frame received from the peer.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PeerSample {
    pub sample: Sample,
    /// The frame's index (packet id for the seed layout).
    pub index: u64,
}
