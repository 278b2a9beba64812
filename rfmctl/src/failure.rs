//! How a command ends when it does not succeed: a message and an exit code a
//! script can rely on (see `EXIT_CODES` in main.rs).

use rfm_memory::DeviceError;

pub const CHECK_FAILED: u8 = 1;
pub const USAGE: u8 = 2;
pub const DEVICE: u8 = 3;
pub const RECORDING: u8 = 4;

#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
    /// What is missing may come: a memory no program has created yet, a node
    /// that has not described itself yet (`--wait` waits for it).
    pub not_yet: bool,
}

impl Failure {
    pub fn check_failed(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: CHECK_FAILED,
            error: error.into(),
            not_yet: false,
        }
    }

    pub fn usage(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: USAGE,
            error: error.into(),
            not_yet: false,
        }
    }

    pub fn device(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: DEVICE,
            error: error.into(),
            not_yet: false,
        }
    }

    /// A failure that `--wait` waits out: what is missing may yet come.
    pub fn not_yet(mut self) -> Failure {
        self.not_yet = true;
        self
    }

    pub fn recording(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: RECORDING,
            error: error.into(),
            not_yet: false,
        }
    }
}

/// A device error is the device's failure, except asking a device for what its
/// kind does not have, which is the caller's.
impl From<DeviceError> for Failure {
    fn from(e: DeviceError) -> Failure {
        match e {
            DeviceError::NotRfm2g { .. } => Failure::usage(e),
            _ => Failure::device(e),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure::device(error)
    }
}
