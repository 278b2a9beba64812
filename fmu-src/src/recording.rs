//! The parameter `recordFile`: every frame this node publishes and every peer
//! frame it takes, into a recording (`rfm_record`), without a step ever
//! waiting for the disk, and without losing a record unsaid: every one lost
//! counts in `record.dropped`, and the master's logger is told when losing
//! begins, when it ends, and at terminate.

use std::path::Path;

use rfm_core::link::{Link, StepReport};
use rfm_frames::frame::framed::{crc_of, FrameBuf};
use rfm_frames::frame::Layout;
use rfm_record::{
    expand_file_name, queue_capacity, Header, Kind, LossNews, Recorder, RecorderError, MAX_STRUCTS,
    START_PLACEHOLDER,
};

use crate::error::{error, FmiError};
use fmu_model::{fmu_params, Model, ParamValues};

/// An open recording of one instance's link.
#[derive(Debug)]
pub struct Recording {
    recorder: Recorder,
    /// The file's name as the recording made it (placeholder replaced).
    file: String,
    /// Per peer, the CRC of the frame recorded last: in free mode a step may
    /// take no new frame, and one frame is recorded once.
    last_taken: Vec<Option<u32>>,
    /// Per foreign struct the header describes, which of its structs was
    /// recorded last ([`rfm_core::link::ForeignPeer::newest`]).
    last_struct: Vec<Option<u64>>,
    /// Whether the first record dropped because the queue was full was
    /// logged (once per recording).
    warned: bool,
}

impl Recording {
    /// Creates the recording `template` (the parameter `recordFile`) names for
    /// `link` (opened, not yet started: a file that cannot be recorded into
    /// refuses initialization before the node takes its slot), with the
    /// instance's parameters in the header; `overwrite` is `recordOverwrite`.
    pub fn create(
        model: &Model,
        params: &ParamValues,
        link: &Link,
        instance: &str,
        (template, overwrite): (&str, bool),
    ) -> Result<Recording, FmiError> {
        if link.config().settings.layout != Layout::Framed {
            return Err(error(format!(
                "recordFile `{template}`: recording needs layout = framed (the seed layout's \
                 packets are the article's, without steps)"
            )));
        }
        let started_ns = rfm_frames::wall::now_ns();
        let file = expand_file_name(template, started_ns);
        let parameters: String = fmu_params(model.kind)
            .map(|p| format!("{}={}\n", p.name, params.get(p.param)))
            .chain([format!("instanceName={instance}\n")])
            .collect();
        let slot = link.config().node_slot;
        let mut header = Header::for_interface(link.interface(), Some(slot), parameters);
        header.started_ns = started_ns;
        let per_step = 1 + link.peers().len() + header.structs.len();
        let capacity = queue_capacity(header.largest_record(), per_step);
        let by = format!(
            "instance `{instance}` (slot {slot}, process {})",
            std::process::id()
        );
        let recorder = Recorder::create(Path::new(&file), &header, capacity, overwrite, &by)
            .map_err(|e| {
                let fix = match e {
                    RecorderError::Exists { .. } => format!(
                        ": set recordOverwrite = true to replace it, or put {START_PLACEHOLDER} \
                         in recordFile to give every run its own file"
                    ),
                    RecorderError::InUse { .. } => ": give each instance its own recordFile".into(),
                    _ => String::new(),
                };
                error(format!("recordFile: {e}{fix}"))
            })?;
        if file != template {
            log::info!("recordFile: recording into `{file}`");
        }
        let foreign = link.interface().foreign.len();
        if foreign > MAX_STRUCTS {
            log::warn!(
                "recordFile `{file}`: the interface has {foreign} foreign nodes and a recording \
                 holds the first {MAX_STRUCTS}; the others' structs are not recorded"
            );
        }
        Ok(Recording {
            recorder,
            file,
            last_taken: vec![None; link.peers().len()],
            last_struct: vec![None; foreign.min(MAX_STRUCTS)],
            warned: false,
        })
    }

    /// Records the initial frame the link published (`published`, which its
    /// start reported as `report`).
    pub fn started(&mut self, link: &Link, report: &StepReport, published: &FrameBuf) {
        let slot = link.config().node_slot;
        self.recorder
            .record(Kind::Published, slot, report.wall_ns, published.bytes());
        self.tell();
    }

    /// Records the frame this step published, each peer frame `link` took
    /// and each foreign struct it read that were not recorded yet, all at the
    /// step's time (the report's `wall_ns`: no second clock read).
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
        for peer in link.foreign() {
            let (Some((bytes, which)), Some(last)) =
                (peer.newest(), self.last_struct.get_mut(peer.node()))
            else {
                continue;
            };
            if *last != Some(which) {
                *last = Some(which);
                let index = peer.node() as u8; // below MAX_STRUCTS: `last_struct`'s length
                kept &= self.recorder.record(Kind::Struct, index, now, bytes);
            }
        }
        if !kept && !self.warned {
            self.warned = true;
            log::warn!(
                "recordFile `{}`: its writer falls behind; records are dropped (counted in \
                 record.dropped) rather than holding up the steps",
                self.file
            );
        }
        self.tell();
    }

    /// Tells the master's logger when writing the file begins or stops failing.
    fn tell(&mut self) {
        match self.recorder.loss_news() {
            None => {}
            Some(LossNews::Began { error }) => log::warn!(
                "recordFile `{}`: writing failed ({error}); records are lost from here on, \
                 counted in record.dropped (the steps go on)",
                self.file
            ),
            Some(LossNews::Ended { lost }) => log::warn!(
                "recordFile `{}`: writing works again; {lost} records were lost in all, \
                 counted in record.dropped (the file marks where)",
                self.file
            ),
        }
    }

    /// Removes the file of a run that never started.
    pub fn discard(self) {
        self.recorder.discard();
    }

    /// Records lost: dropped because the writer fell behind, or lost because
    /// writing the file failed.
    pub fn dropped(&self) -> u64 {
        self.recorder.dropped()
    }

    /// Writes what is queued and closes the file; an error if any record is
    /// not in it.
    pub fn finish(mut self) -> Result<(), FmiError> {
        self.tell();
        let full = self.recorder.dropped_full();
        if full > 0 {
            log::warn!(
                "recordFile `{}`: {full} records were dropped because its writer fell behind",
                self.file
            );
        }
        self.recorder
            .finish()
            .map_err(|e| error(format!("recordFile: {e}")))
    }
}
