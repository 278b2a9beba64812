//! Why an RFM2g board could not be opened, mapped or used: the vendor library
//! missing or incomplete, or a call into it that failed.

use super::{Rfm2gError, BUILD_HINT};
use crate::region::OutsideMemory;

/// Why an RFM2g board operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("could not load the RFM2g library `{library}`: {reason}; {BUILD_HINT}")]
    LibraryNotLoaded { library: String, reason: String },
    #[error(
        "the RFM2g library `{library}` has no symbol `{symbol}`: it is not an RFM2g API \
         library, or too old; {BUILD_HINT}"
    )]
    SymbolMissing {
        library: String,
        symbol: &'static str,
    },
    #[error("device `{device}`: {reason}")]
    BadPath { device: String, reason: String },
    #[error(
        "the RFM2g library `{library}` is not the emulator rfm2g-sim: only it can cut a board \
         from its ring (on cards, open the fibre); give its path with --library"
    )]
    NotEmulator { library: String },
    #[error(transparent)]
    WindowOutOfRange(OutsideMemory),
    /// A vendor call returned a failure status.
    #[error(transparent)]
    Call(#[from] Rfm2gError),
}
