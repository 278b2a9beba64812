//! Elsewhere: every request is refused as unsupported.

use super::CpuList;
use std::io;

fn unsupported() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, "not on this operating system")
}

#[derive(Debug)]
pub struct Saved;

impl Saved {
    pub fn of_current() -> Saved {
        Saved
    }
    pub fn set_affinity(&mut self, _: &CpuList) -> io::Result<()> {
        Err(unsupported())
    }
    pub fn set_priority(&mut self, _: u8) -> io::Result<()> {
        Err(unsupported())
    }
    pub fn restore(&mut self) {}
}

pub fn memory_locked() -> bool {
    false
}
pub fn lock_memory() -> io::Result<()> {
    Err(unsupported())
}
pub fn unlock_memory() {}
pub fn current_cpu() -> Option<usize> {
    None
}
pub fn current_thread() -> io::Result<(CpuList, u8)> {
    Err(unsupported())
}
