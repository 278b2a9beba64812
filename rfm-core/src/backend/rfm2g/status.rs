//! `RFM2G_STATUS` codes as typed errors carrying the vendor's code, name and text.

use std::fmt;

pub use rfm2g_sys::status_name;

/// A failed RFM2g call: which call, on which device, and what the library said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rfm2gError {
    /// The vendor function that failed, e.g. `RFM2gOpen`.
    pub call: &'static str,
    pub device: String,
    /// The raw `RFM2G_STATUS`.
    pub code: i32,
    /// The status name from the vendor header, e.g. `RFM2G_NO_RFM2G_BOARD`.
    pub name: &'static str,
    /// `RFM2gErrorMsg(code)` as the loaded library words it.
    pub message: String,
}

impl fmt::Display for Rfm2gError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on `{}` failed with {} ({}): {}",
            self.call, self.device, self.name, self.code, self.message
        )?;
        if let Some(hint) = hint(self.code) {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Rfm2gError {}

/// What a user can do about the statuses they meet when setting up.
fn hint(code: i32) -> Option<&'static str> {
    match code {
        10 => Some("check the device path (e.g. /dev/rfm2g0 on Linux, \\\\.\\rfm2g1 on Windows) and that the driver is loaded"),
        9 => Some("the device exists but could not be opened: check the driver and the node's permissions"),
        5 | 24 => Some("the mapped offset must be a multiple of the 4096-byte page"),
        20 => Some("regionOffset plus the slots used must fit in the board memory"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_call_device_code_name_message_and_hint() {
        let e = Rfm2gError {
            call: "RFM2gOpen",
            device: "/dev/rfm2g7".into(),
            code: 10,
            name: status_name(10),
            message: "No board".into(),
        };
        let text = e.to_string();
        assert!(text.starts_with("RFM2gOpen on `/dev/rfm2g7` failed with RFM2G_NO_RFM2G_BOARD (10): No board; check the device path"), "{text}");
    }
}
