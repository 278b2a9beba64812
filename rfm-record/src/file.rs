//! The file a recording goes into: named once for every run (a placeholder
//! for the start time), never replaced unless asked, and never written by two
//! recorders at once (an exclusive lock on the file while it is written).

use std::collections::HashMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, UNIX_EPOCH};

use super::error::RecorderError;
use super::Reader;

/// In a recording's file name: the start time, UTC, as `20261201T154632Z`
/// (letters and digits only, so the name is valid on every file system).
pub const START_PLACEHOLDER: &str = "{start}";

/// `template` with [`START_PLACEHOLDER`] replaced by the time `started_ns`
/// (ns since 1970).
pub fn expand_file_name(template: &str, started_ns: u64) -> String {
    if !template.contains(START_PLACEHOLDER) {
        return template.to_owned();
    }
    let at = UNIX_EPOCH + Duration::from_nanos(started_ns);
    let stamp: String = humantime::format_rfc3339_seconds(at)
        .to_string()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    template.replace(START_PLACEHOLDER, &stamp)
}

/// Who writes each recording this process has open (canonical path → the
/// recorder's description): names the first when a second is refused.
static WRITERS: Mutex<Option<HashMap<PathBuf, String>>> = Mutex::new(None);

/// A recording's file, locked and registered while it is written.
#[derive(Debug)]
pub(crate) struct Locked {
    pub file: File,
    registered: Option<PathBuf>,
}

impl Drop for Locked {
    fn drop(&mut self) {
        if let Some(path) = self.registered.take() {
            let mut writers = WRITERS.lock().unwrap_or_else(PoisonError::into_inner);
            writers.get_or_insert_with(HashMap::new).remove(&path);
        }
    }
}

/// Creates the recording at `path` for the recorder `by` describes. An
/// existing file is replaced only with `overwrite`; one another recorder is
/// writing never is.
pub(crate) fn create(path: &Path, overwrite: bool, by: &str) -> Result<Locked, RecorderError> {
    let failed = |cause| RecorderError::Create {
        path: path.to_owned(),
        cause,
    };
    let opened = OpenOptions::new()
        .read(true)
        .write(true)
        .create(overwrite)
        .create_new(!overwrite)
        .truncate(false)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(match in_use(path) {
                Some(writer) => RecorderError::InUse {
                    path: path.to_owned(),
                    writer,
                },
                None => RecorderError::Exists {
                    path: path.to_owned(),
                },
            })
        }
        Err(e) => return Err(failed(e)),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            return Err(RecorderError::InUse {
                path: path.to_owned(),
                writer: writer_of(path),
            })
        }
        // A file system without locks (some network ones): written unlocked.
        Err(TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => {}
        Err(TryLockError::Error(e)) => return Err(failed(e)),
    }
    file.set_len(0).map_err(failed)?;
    let registered = std::fs::canonicalize(path).ok();
    if let Some(at) = &registered {
        let mut writers = WRITERS.lock().unwrap_or_else(PoisonError::into_inner);
        writers
            .get_or_insert_with(HashMap::new)
            .insert(at.clone(), by.to_owned());
    }
    Ok(Locked { file, registered })
}

/// Whether a recorder is writing the existing file at `path`, and which.
fn in_use(path: &Path) -> Option<String> {
    let file = File::open(path).ok()?;
    match file.try_lock_shared() {
        Err(TryLockError::WouldBlock) => Some(writer_of(path)),
        _ => None,
    }
}

/// The recorder writing `path`: this process's own, or what the file's
/// header says of it (where the lock lets the header be read).
fn writer_of(path: &Path) -> String {
    let ours = std::fs::canonicalize(path).ok().and_then(|at| {
        let writers = WRITERS.lock().unwrap_or_else(PoisonError::into_inner);
        writers.as_ref()?.get(&at).cloned()
    });
    if let Some(by) = ours {
        return by;
    }
    let Ok(reader) = Reader::open(path) else {
        return "another process".to_owned();
    };
    let h = reader.header();
    let instance = h
        .parameters
        .lines()
        .find_map(|l| l.strip_prefix("instanceName="));
    match (instance, h.node) {
        (Some(name), Some(slot)) => format!("instance `{name}` (slot {slot}) of another process"),
        (_, None) => "a recorder of another process (rfmctl record)".to_owned(),
        (None, Some(slot)) => format!("the node in slot {slot} of another process"),
    }
}
