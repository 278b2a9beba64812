//! `shm:NAME`: memory shared by the simulators of one host.
//!
//! The object is created on first open, closed to other users, with the size
//! asked for; later opens must ask for the same size (a different one is an
//! error, never a silent remap). An object owned by another user, or open to
//! others, is refused: a stranger could otherwise feed us frames.
//!
//! - Linux and other Unix (`unix.rs`): the POSIX object `/NAME`, mode 600.
//! - Windows (`windows.rs`): the named file mapping `Local\rfm-NAME` in the
//!   session's namespace, backed by the paging file, whose only access rule
//!   grants this user.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

/// Longest NAME accepted (Linux allows 255 bytes for the whole `/NAME`; Windows
/// 260 characters for `Local\\rfm-NAME`).
pub const MAX_NAME_LEN: usize = 200;

/// Checks NAME: 1..=200 bytes of `[A-Za-z0-9._-]`, not `.` or `..`.
pub fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name after `shm:` is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "the name is {} bytes; at most {MAX_NAME_LEN} are allowed",
            name.len()
        ));
    }
    if name == "." || name == ".." {
        return Err(format!("`{name}` is not a usable name"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "character {c:?} is not allowed; use letters, digits, `.`, `_` and `-` (no `/`)"
        ));
    }
    Ok(())
}

/// Where the object of `shm:NAME` lives, for messages.
pub fn object_path(name: &str) -> String {
    if cfg!(windows) {
        format!("the file mapping Local\\rfm-{name} (it lives while a program has it open)")
    } else {
        format!("/dev/shm/{name}")
    }
}

/// What to do about an object of another size.
pub const STALE_HINT: &str = if cfg!(windows) {
    "or close the programs that still have the old one open: a mapping goes with its last handle"
} else {
    "or remove the stale object, e.g. `rm /dev/shm/NAME`"
};

/// What could not back the memory, and what to do about it.
pub const NO_ROOM: &str = if cfg!(windows) {
    "the paging file cannot commit"
} else {
    "the shared-memory file system (/dev/shm) has no room for"
};
pub const NO_ROOM_HINT: &str = if cfg!(windows) {
    "enlarge the paging file, close programs that use much memory,"
} else {
    "free space there (`df -h /dev/shm`, remove stale objects with `rm /dev/shm/NAME`)"
};
