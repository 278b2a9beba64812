//! `record` (a third-party recorder), and `show`, `export`, `plot` and `diff`:
//! what recordings hold (see `rfm_record` for
//! the format). Each frame is read back with its header checked and its signals
//! named by the descriptors in the recording's header.

mod diff;
mod export;
pub(crate) mod plot;
mod record;
mod show;

use std::io::Read;

use rfm_frames::fmi::Value;
use rfm_frames::frame::framed::{self, Header, HEADER_SIZE};
use rfm_interface::descriptor::Descriptor;
use rfm_record::{Kind, Reader, RecordError, RecordedStruct};

pub use diff::diff;
pub use export::export_csv;
pub use plot::plot;
pub use record::{record, RecordArgs};
pub use show::show;

use crate::failure::Failure;

impl From<RecordError> for Failure {
    fn from(e: RecordError) -> Failure {
        Failure::recording(e)
    }
}

/// One frame of a recording, checked.
struct Frame {
    kind: Kind,
    slot: u8,
    header: Header,
    payload: Vec<u8>,
}

/// The signals of `payload` as `node` describes them, in order, an array's
/// element by element.
fn values(node: &Descriptor, payload: &[u8]) -> Vec<Option<Value>> {
    node.element_values(payload)
}

/// One foreign struct of a recording, as its recorder read it whole.
struct Struct {
    /// Its index in the header's structs.
    index: usize,
    recorded_ns: u64,
    bytes: Vec<u8>,
    /// The step that read it: the (epoch, step, simulation time) of the
    /// frame recorded last before it, its recorder's own where it has one
    /// (an FMU's `recordFile` records a step's own frame, then the frames
    /// and structs that step read); `None` before any frame.
    at: Option<(u64, u64, f64)>,
}

/// A good record of a recording: a frame or a foreign struct.
enum Item {
    Frame(Frame),
    Struct(Struct),
}

/// What a recording's header describes: its nodes and foreign structs.
struct Described {
    nodes: Vec<Descriptor>,
    structs: Vec<RecordedStruct>,
}

/// Calls `each` with every good frame and foreign struct of the recording
/// `reader` has opened, in order (bad frames and missed counts are skipped).
fn items<R: Read>(
    mut reader: Reader<R>,
    mut each: impl FnMut(&Described, Item) -> Result<(), Failure>,
) -> Result<Described, Failure> {
    let described = Described {
        nodes: reader.header().nodes(),
        structs: reader.header().structs.clone(),
    };
    let maker = reader.header().node;
    let mut at = None;
    while let Some(record) = reader.next_record()? {
        match record.kind {
            Kind::Missed => continue,
            Kind::Struct => {
                let item = Item::Struct(Struct {
                    index: usize::from(record.slot),
                    recorded_ns: record.recorded_ns,
                    bytes: record.body,
                    at,
                });
                each(&described, item)?;
                continue;
            }
            Kind::Published | Kind::Taken => {}
        }
        let Some(len) = record.body.len().checked_sub(HEADER_SIZE) else {
            continue;
        };
        let Ok(header) = framed::check(&record.body, len) else {
            continue;
        };
        let frame = Frame {
            kind: record.kind,
            slot: record.slot,
            header,
            payload: record.body[HEADER_SIZE..].to_vec(),
        };
        // The recorder's own frame dates its step's structs; without one
        // (a third-party recorder), the frame recorded last does.
        if maker.is_none() || (frame.kind == Kind::Published && Some(frame.slot) == maker) {
            at = Some((header.epoch, header.step, header.sim_time));
        }
        each(&described, Item::Frame(frame))?;
    }
    Ok(described)
}
