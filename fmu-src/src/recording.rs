//! The parameter `recordFile`: every frame this node publishes and every peer
//! frame it takes, into a recording (`rfm_core::record`), without a step ever
//! waiting for the disk.

use std::path::Path;

use rfm_core::frame::framed::{crc_of, FrameBuf};
use rfm_core::link::{Layout, Link, StepReport};
use rfm_core::record::{queue_capacity, Header, Kind, Recorder};

use crate::error::{error, FmiError};
use fmu_model::{fmu_params, Model};
use rfm_core::interface::Value;

/// An open recording of one instance's link.
#[derive(Debug)]
pub struct Recording {
    recorder: Recorder,
    /// Per peer, the CRC of the frame recorded last: in free mode a step may
    /// take no new frame, and one frame is recorded once.
    last_taken: Vec<Option<u32>>,
    /// Whether the first dropped record was logged (once per recording).
    warned: bool,
}

impl Recording {
    /// Starts recording `link` into `file`, with the instance's parameters in the
    /// header, and records the initial frame it published (`published`, which
    /// the start reported as `report`).
    pub fn start(
        file: &str,
        model: &Model,
        params: &[Value],
        link: &Link,
        report: &StepReport,
        published: &FrameBuf,
    ) -> Result<Recording, FmiError> {
        if link.config().layout != Layout::Framed {
            return Err(error(format!(
                "recordFile `{file}`: recording needs layout = framed (the seed layout's packets \
                 are the article's, without steps)"
            )));
        }
        let parameters: String = fmu_params(model.preset)
            .map(|p| format!("{}={}\n", p.name, params[p.param as usize]))
            .collect();
        let header = Header::for_interface(link.interface(), link.config().node_slot, parameters);
        let capacity = queue_capacity(published.bytes().len());
        let recorder = Recorder::create(Path::new(file), &header, capacity)
            .map_err(|e| error(format!("recordFile: {e}")))?;
        let mut recording = Recording {
            recorder,
            last_taken: vec![None; link.peers().len()],
            warned: false,
        };
        recording.recorder.record(
            Kind::Published,
            link.config().node_slot,
            report.wall_ns,
            published.bytes(),
        );
        Ok(recording)
    }

    /// Records the frame this step published and each peer frame `link` took
    /// that was not recorded yet, all at the step's time (the report's
    /// `wall_ns`: no second clock read).
    pub fn step(&mut self, link: &Link, report: &StepReport, published: &FrameBuf) {
        let slot = link.config().node_slot;
        let now = report.wall_ns;
        let mut kept = self
            .recorder
            .record(Kind::Published, slot, now, published.bytes());
        for (peer, last) in link.peers().iter().zip(&mut self.last_taken) {
            if let Some(frame) = peer.observed().taken_frame() {
                let crc = crc_of(frame);
                if *last != Some(crc) {
                    *last = Some(crc);
                    kept &= self.recorder.record(Kind::Taken, peer.slot(), now, frame);
                }
            }
        }
        if !kept && !self.warned {
            self.warned = true;
            log::warn!(
                "recordFile `{}`: its writer falls behind; records are dropped (counted in \
                 record.dropped) rather than holding up the steps",
                self.recorder.path().display()
            );
        }
    }

    /// Records lost because the writer fell behind.
    pub fn dropped(&self) -> u64 {
        self.recorder.dropped()
    }

    /// Writes what is queued and closes the file.
    pub fn finish(self) -> Result<(), FmiError> {
        let dropped = self.recorder.dropped();
        if dropped > 0 {
            log::warn!(
                "recordFile `{}`: {dropped} records were dropped because its writer fell behind",
                self.recorder.path().display()
            );
        }
        self.recorder
            .finish()
            .map_err(|e| error(format!("recordFile: {e}")))
    }
}
