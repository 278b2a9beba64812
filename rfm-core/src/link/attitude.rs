//! The attitude preset's payload as numbers: what the article's programs and the
//! library's own examples step with, beside the FMU's interface-driven signals.
//! [`AttitudeLink`] is a [`Link`] that steps with [`Sample`]s: its own frame,
//! its codec, and its first (the preset's only) peer as a [`PeerSample`].

use std::ops::{Deref, DerefMut};

use super::{Link, LinkConfig, LinkError, OpenError, StartError};
use crate::health::PeerHealth;
use rfm_frames::frame::framed::FrameBuf;
use rfm_frames::frame::seed::payload as at;
use rfm_frames::frame::{Message, MESSAGE_LEN};

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

/// A [`Link`] that steps with attitude [`Sample`]s: it owns the frame it lends
/// the link, and reads its first peer as a [`PeerSample`]. Everything else is
/// the link's (it dereferences to it).
#[derive(Debug)]
pub struct AttitudeLink {
    link: Link,
    frame: FrameBuf,
}

impl AttitudeLink {
    /// [`Link::open`], with a frame of the link's payload.
    pub fn open(config: LinkConfig) -> Result<AttitudeLink, OpenError> {
        let link = Link::open(config)?;
        let frame = FrameBuf::new(link.payload_len());
        Ok(AttitudeLink { link, frame })
    }

    /// [`Link::start`] with `init` as the initial frame.
    pub fn start(&mut self, init: &Sample) -> Result<(), StartError> {
        init.write(self.frame.payload_mut());
        self.link.start(init.sim_time, &mut self.frame)?;
        Ok(())
    }

    /// [`Link::step`] `k` with `sample`: the first peer's frame it took, if any.
    pub fn step(&mut self, k: u64, sample: &Sample) -> Result<Option<PeerSample>, LinkError> {
        sample.write(self.frame.payload_mut());
        self.link.step(k, sample.sim_time, &mut self.frame)?;
        Ok(self.latest())
    }

    /// [`Link::step_within`]: `None` if the step returned early (the next
    /// call of step `k` goes on, `sample` of the first call published).
    pub fn step_within(
        &mut self,
        k: u64,
        sample: &Sample,
        patience: std::time::Duration,
    ) -> Result<Option<Option<PeerSample>>, LinkError> {
        sample.write(self.frame.payload_mut());
        let stepped = (self.link).step_within(k, sample.sim_time, &mut self.frame, patience)?;
        Ok(stepped.map(|_| self.latest()))
    }

    /// The first peer's newest frame taken, as an attitude sample (lockstep: the
    /// one of the last step).
    pub fn latest(&self) -> Option<PeerSample> {
        let peer = &self.link.peers()[0];
        peer.observed().latest().map(|h| PeerSample {
            sample: Sample::read(peer.observed().payload(), h.sim_time),
            index: h.step,
        })
    }

    /// The first peer's health.
    pub fn health(&self) -> &PeerHealth {
        self.link.peers()[0].observed().health()
    }

    /// Free mode's `link.ok` of the first peer after the last step: the peer
    /// session frames are taken from is running.
    pub fn peer_alive(&self) -> bool {
        let read_at = self.link.report().read_at;
        self.link.peers()[0].alive(read_at, self.link.config().settings.timeout)
    }

    /// [`Link::abandon`]: leaves the slot as a killed process would.
    pub fn abandon(self) {
        self.link.abandon();
    }
}

impl Deref for AttitudeLink {
    type Target = Link;

    fn deref(&self) -> &Link {
        &self.link
    }
}

impl DerefMut for AttitudeLink {
    fn deref_mut(&mut self) -> &mut Link {
        &mut self.link
    }
}
