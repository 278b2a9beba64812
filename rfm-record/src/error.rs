//! Why a recording could not be made or finished: the writer's and the
//! file's failures, one type (the FMU and rfmctl tell them by variant).

use std::io;
use std::path::PathBuf;

/// Why a recording could not be made or finished.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error("cannot create the recording `{path}`: {cause}")]
    Create { path: PathBuf, cause: io::Error },
    #[error("`{path}` exists, and a recording does not replace a file unless asked to")]
    Exists { path: PathBuf },
    #[error("`{path}` is being recorded into by {writer}: two recorders cannot write one file")]
    InUse { path: PathBuf, writer: String },
    #[error("the recording `{path}` cannot hold {what}: at most {limit} bytes")]
    TooLarge {
        path: PathBuf,
        what: String,
        limit: usize,
    },
    #[error(
        "writing the recording `{path}` failed: {cause}; {lost} records are lost (the file holds \
         every record before them)"
    )]
    Write {
        path: PathBuf,
        cause: String,
        lost: u64,
    },
    #[error("the recording `{path}`'s writer thread could not start: {cause}")]
    Thread { path: PathBuf, cause: io::Error },
}
