//! The packed binaries carry no debug information (it was about 10 MB of
//! each): it goes into a separate file that `--keep-debug` keeps beside the
//! .fmu, which the stripped binary names in its `.gnu_debuglink` (gdb and
//! WinDbg-for-MinGW find it there). binutils' objcopy does the split, for
//! ELF and for PE alike.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::Platform;

fn objcopy(platform: Platform) -> &'static str {
    match platform {
        Platform::Linux64 => "objcopy",
        Platform::Win64 => "x86_64-w64-mingw32-objcopy",
    }
}

fn run(tool: &str, args: &[&std::ffi::OsStr]) -> Result<()> {
    let out = Command::new(tool).args(args).output().with_context(|| {
        format!(
            "cannot run {tool}, which takes the debug information out of the binary: install \
             it (Debian: apt-get install {})",
            if tool == "objcopy" {
                "binutils"
            } else {
                "binutils-mingw-w64-x86-64"
            }
        )
    })?;
    if !out.status.success() {
        bail!(
            "{tool} {:?} failed ({}): {}",
            args,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// The bytes of `lib` without its debug information; that goes to `debug`
/// when given (and the stripped binary links to it by name).
pub fn split_debug(platform: Platform, lib: &Path, debug: Option<&Path>) -> Result<Vec<u8>> {
    let tool = objcopy(platform);
    let scratch = tempfile::tempdir().context("cannot make a temporary folder")?;
    let stripped = scratch.path().join("stripped");
    match debug {
        Some(debug) => {
            run(
                tool,
                &[
                    "--only-keep-debug".as_ref(),
                    lib.as_os_str(),
                    debug.as_os_str(),
                ],
            )?;
            let link = format!("--add-gnu-debuglink={}", debug.display());
            run(
                tool,
                &[
                    "--strip-debug".as_ref(),
                    link.as_ref(),
                    lib.as_os_str(),
                    stripped.as_os_str(),
                ],
            )?;
            crate::step(&format!("  its debug information: {}", debug.display()));
        }
        None => run(
            tool,
            &[
                "--strip-debug".as_ref(),
                lib.as_os_str(),
                stripped.as_os_str(),
            ],
        )?,
    }
    std::fs::read(&stripped).with_context(|| format!("cannot read {}", stripped.display()))
}
