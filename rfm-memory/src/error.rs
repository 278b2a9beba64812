//! Why a device could not be opened or mapped: one error for the device
//! string, the window and every backend, whose messages are this error's.

use crate::backend::loopback::LoopbackError;
use crate::backend::rfm2g::BoardError;
use crate::backend::shm::ShmError;
use crate::forms::DEVICE_FORMS;
use crate::region::{OutsideMemory, MAX_MEMORY_SIZE, WORD};
use rfm2g_sys::Rfm2gError;

/// Why a device could not be opened or mapped: the device string, the window
/// asked for, or what its backend said (each backend has its own error, kept
/// whole here; its message is this error's message).
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("device string is empty; expected {DEVICE_FORMS}")]
    Empty,
    #[error("device `{device}` is not a form this FMU knows{meant}; expected {DEVICE_FORMS}")]
    UnknownForm {
        device: String,
        /// ` (did you mean …?)`, or empty.
        meant: String,
    },
    #[error("device `{device}`: {reason}")]
    BadDevice { device: String, reason: String },
    #[error("device `{device}`: a size of {size} bytes cannot be used")]
    BadSize { device: String, size: u64 },
    #[error(
        "device `{device}`: memory_size {size} is more than {MAX_MEMORY_SIZE} bytes (256 MiB, \
         the largest RFM2g board): give the interface a memory_size the coupling needs"
    )]
    TooLarge { device: String, size: u64 },
    #[error(
        "device `{device}` is not an RFM2g board: {what} needs one (`/dev/rfm2gN` through the \
         vendor library or the rfm2g-sim emulator)"
    )]
    NotRfm2g { device: String, what: &'static str },
    #[error(transparent)]
    WindowOutOfRange(OutsideMemory),
    #[error("device `{device}`: offset {offset} is not a multiple of {WORD} bytes")]
    UnalignedWindow { device: String, offset: u64 },
    #[error(transparent)]
    Shm(#[from] ShmError),
    #[error(transparent)]
    Loopback(#[from] LoopbackError),
    /// The RFM2g library could not be used (a failed vendor call is [`DeviceError::Rfm2g`]).
    #[error(transparent)]
    Board(BoardError),
    /// A vendor call failed: which, on which device, and the library's words.
    #[error(transparent)]
    Rfm2g(#[from] Rfm2gError),
}

/// A failed vendor call is always [`DeviceError::Rfm2g`], whichever operation
/// made it; the board's other failures are [`DeviceError::Board`].
impl From<BoardError> for DeviceError {
    fn from(e: BoardError) -> DeviceError {
        match e {
            BoardError::Call(call) => DeviceError::Rfm2g(call),
            other => DeviceError::Board(other),
        }
    }
}
