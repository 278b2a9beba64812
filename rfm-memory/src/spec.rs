//! The device string (a contract the FMU exposes), parsed by its forms (the
//! table in `forms`, which errors quote too):
//!
//! - a board path such as `/dev/rfm2g0` or `\\.\rfm2g1`: an RFM2g board
//!   (vendor library), or `/dev/rfm2g-sim/RING/NODE[/SIZE]` on the emulator;
//! - `shm:NAME`: shared memory on this host (POSIX, or a named file mapping on Windows);
//! - `loopback:NAME`: memory shared inside this process;
//! - two of one kind joined by `+`: redundant rings;
//! - `replay:PATH`: the peers played from a recording.
//!
//! [`DeviceSetting`] is the whole string parsed; [`DeviceSpec`] one memory.
//!
//! A path that is none of the board paths is refused here, naming the nearest
//! (`/dev/rfmg20`: did you mean `/dev/rfm2g0`?), before any library is loaded:
//! it used to reach the vendor library, and without one, earn advice to build
//! it.

use crate::backend::shm;
use crate::error::DeviceError;
use crate::forms::{board_candidates, is_board_path, DEVICE_FORMS, PREFIXES, REPLAY};
use crate::spelling::{did_you_mean, nearest};

/// Longest `loopback:` name.
const MAX_LOOPBACK_NAME_LEN: usize = 255;

/// A device string, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpec {
    Rfm2g { path: String },
    Shm { name: String },
    Loopback { name: String },
}

/// The `device` setting, parsed once, in every form it takes: what every
/// user of the string matches on instead of splitting it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSetting {
    /// One memory.
    One(DeviceSpec),
    /// Two memories of one kind joined by `+` (`/dev/rfm2g0+/dev/rfm2g1`,
    /// `shm:A+shm:B`): the same coupling over two rings, every store on both.
    Rings(DeviceSpec, DeviceSpec),
    /// `replay:PATH`: the peers played from a recording.
    Replay(std::path::PathBuf),
}

impl DeviceSetting {
    /// Parses a device string in any of its forms; the error names the forms
    /// that are accepted.
    pub fn parse(device: &str) -> Result<DeviceSetting, DeviceError> {
        if let Some(path) = device.strip_prefix(REPLAY) {
            if path.is_empty() {
                return Err(DeviceError::BadDevice {
                    device: device.escape_debug().to_string(),
                    reason: "the path after `replay:` is empty: name a recording".to_owned(),
                });
            }
            return Ok(DeviceSetting::Replay(path.into()));
        }
        let Some((a, b)) = device.split_once('+') else {
            return Ok(DeviceSetting::One(DeviceSpec::parse(device)?));
        };
        let bad = |reason: &str| DeviceError::BadDevice {
            device: device.escape_debug().to_string(),
            reason: format!(
                "{reason}; a redundant device is two memories of one kind joined by one `+`, as \
                 `/dev/rfm2g0+/dev/rfm2g1` or `shm:A+shm:B`"
            ),
        };
        if b.contains('+') {
            return Err(bad("it joins more than two memories"));
        }
        let (a, b) = (DeviceSpec::parse(a)?, DeviceSpec::parse(b)?);
        if std::mem::discriminant(&a) != std::mem::discriminant(&b) {
            return Err(bad("its two memories are of different kinds"));
        }
        if a == b {
            return Err(bad("its two memories are one"));
        }
        Ok(DeviceSetting::Rings(a, b))
    }

    /// The memories it names: one, two, or none for a replay.
    pub fn memories(&self) -> Vec<&DeviceSpec> {
        match self {
            DeviceSetting::One(a) => vec![a],
            DeviceSetting::Rings(a, b) => vec![a, b],
            DeviceSetting::Replay(_) => Vec::new(),
        }
    }
}

impl std::str::FromStr for DeviceSetting {
    type Err = DeviceError;

    fn from_str(s: &str) -> Result<DeviceSetting, DeviceError> {
        DeviceSetting::parse(s)
    }
}

/// The device string as it was written.
impl std::fmt::Display for DeviceSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSetting::One(a) => write!(f, "{a}"),
            DeviceSetting::Rings(a, b) => write!(f, "{a}+{b}"),
            DeviceSetting::Replay(path) => write!(f, "{REPLAY}{}", path.display()),
        }
    }
}

/// The device string of one memory.
impl std::fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSpec::Rfm2g { path } => f.write_str(path),
            DeviceSpec::Shm { name } => write!(f, "shm:{name}"),
            DeviceSpec::Loopback { name } => write!(f, "loopback:{name}"),
        }
    }
}

/// A board path: one of the forms, or why not (the nearest form named).
fn board(device: &str) -> Result<DeviceSpec, String> {
    if device.contains('\0') {
        return Err("it contains a NUL byte".into());
    }
    if !is_board_path(device) {
        let candidates = board_candidates(device);
        let meant = did_you_mean(device, candidates.iter().map(String::as_str));
        return Err(format!(
            "no RFM2g board path{meant}; expected {DEVICE_FORMS}"
        ));
    }
    Ok(DeviceSpec::Rfm2g {
        path: device.to_owned(),
    })
}

impl DeviceSpec {
    /// Parses a device string; the error names the forms that are accepted.
    pub fn parse(device: &str) -> Result<DeviceSpec, DeviceError> {
        if device.is_empty() {
            return Err(DeviceError::Empty);
        }
        let bad = |reason: String| DeviceError::BadDevice {
            device: device.escape_debug().to_string(),
            reason,
        };
        if let Some(name) = device.strip_prefix("shm:") {
            shm::validate_name(name).map_err(bad)?;
            return Ok(DeviceSpec::Shm {
                name: name.to_owned(),
            });
        }
        if let Some(name) = device.strip_prefix("loopback:") {
            if name.is_empty() {
                return Err(bad("the name after `loopback:` is empty".into()));
            }
            if name.len() > MAX_LOOPBACK_NAME_LEN {
                return Err(bad(format!(
                    "the name is {} bytes; at most {MAX_LOOPBACK_NAME_LEN} are allowed",
                    name.len()
                )));
            }
            return Ok(DeviceSpec::Loopback {
                name: name.to_owned(),
            });
        }
        // A shm: memory's file on Linux, given as a path: a board path would
        // send the user through the vendor library's long account of a missing
        // board.
        if let Some(name) = device.strip_prefix("/dev/shm/") {
            let hint = match shm::validate_name(name) {
                Ok(()) => format!("did you mean `shm:{name}`?"),
                Err(_) => "name it as `shm:NAME`".to_owned(),
            };
            return Err(bad(format!(
                "/dev/shm holds this host's shared memory, not RFM2g boards: {hint}"
            )));
        }
        if device.starts_with('/') || device.starts_with(r"\\.\") {
            return board(device).map_err(bad);
        }
        let meant = (device.split_once(':'))
            .and_then(|(prefix, rest)| {
                let near = nearest(&format!("{prefix}:"), PREFIXES)?;
                Some(format!(" (did you mean `{near}{rest}`?)"))
            })
            .unwrap_or_default();
        Err(DeviceError::UnknownForm {
            device: device.escape_debug().to_string(),
            meant,
        })
    }
}
