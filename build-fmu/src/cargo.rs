//! Builds the FMU's cdylib with cargo and finds it in cargo's JSON messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{anyhow, bail, Context, Result};

/// The Rust target of the linux64 binary against glibc `version`
/// (cargo-zigbuild links against that version's symbols).
pub fn linux_target((major, minor): (u32, u32)) -> String {
    format!("x86_64-unknown-linux-gnu.{major}.{minor}")
}

/// cargo-zigbuild, if it is here: in the project's build venv
/// (`scripts/setup.sh` makes it), or on the PATH.
pub fn zigbuild(workspace: &Path) -> Option<PathBuf> {
    let venv = workspace.join(".venv-build/bin/cargo-zigbuild");
    if venv.is_file() {
        return Some(venv);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("cargo-zigbuild"))
        .find(|p| p.is_file())
}

/// How a cdylib is built.
pub enum Build<'a> {
    /// `cargo build` for a Rust target (None: this host).
    Cargo(Option<&'a str>),
    /// `cargo-zigbuild` for [`linux_target`] of a glibc version; its folder
    /// holds the Python with the `ziglang` package it runs zig from.
    Zig(&'a Path, (u32, u32)),
}

/// `cargo build -p fmu-src --lib` as `how` says; returns the cdylib.
pub fn build_cdylib(workspace: &Path, release: bool, how: Build<'_>) -> Result<PathBuf> {
    let (mut cmd, target) = command(how)?;
    cmd.current_dir(workspace)
        .args([
            "-p",
            "fmu-src",
            "--lib",
            "--message-format=json-render-diagnostics",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if release {
        // The workspace's `release-fmu` profile: release with fat LTO (Cargo.toml);
        // its artefacts go to target/release-fmu, not target/fmu (the packed FMUs).
        cmd.args(["--profile", "release-fmu"]);
    }
    if let Some(t) = &target {
        cmd.args(["--target", t]);
    }
    let target = target
        .as_deref()
        .map(|t| t.split_once(".2.").map_or(t, |(t, _)| t));
    let out = cmd.output().context("could not run cargo")?;
    if !out.status.success() {
        bail!(
            "cargo build of fmu-src failed ({}); its errors are above",
            out.status
        );
    }
    let wanted = if target.is_some_and(|t| t.contains("windows")) {
        ".dll"
    } else {
        ".so"
    };
    cdylib_in(&String::from_utf8_lossy(&out.stdout), wanted)
        .ok_or_else(|| anyhow!("cargo built fmu-src but reported no cdylib ending in {wanted}"))
}

/// The cargo (or cargo-zigbuild) command `how` runs, and its `--target`.
fn command(how: Build<'_>) -> Result<(Command, Option<String>)> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Ok(match how {
        Build::Cargo(target) => {
            let mut cmd = Command::new(cargo);
            cmd.arg("build");
            (cmd, target.map(str::to_owned))
        }
        Build::Zig(zigbuild, glibc) => {
            let mut cmd = Command::new(zigbuild);
            cmd.arg("zigbuild");
            // Its `python3 -m ziglang` must be the venv's.
            if let Some(dir) = zigbuild.parent() {
                let path = std::env::var_os("PATH").unwrap_or_default();
                let paths = std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&path));
                cmd.env("PATH", std::env::join_paths(paths)?);
            }
            cmd.env("CARGO", cargo);
            (cmd, Some(linux_target(glibc)))
        }
    })
}

/// The cdylib file ending in `wanted` among cargo's JSON messages.
fn cdylib_in(messages: &str, wanted: &str) -> Option<PathBuf> {
    for line in messages.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let is_cdylib = msg["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"));
        if !is_cdylib {
            continue;
        }
        let files = msg["filenames"].as_array().into_iter().flatten();
        if let Some(file) = files
            .filter_map(|f| f.as_str())
            .find(|f| f.ends_with(wanted))
        {
            return Some(PathBuf::from(file));
        }
    }
    None
}

/// Why the win64 binary cannot be built here, if it cannot.
pub fn win64_unavailable() -> Option<String> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("x86_64-pc-windows-gnu"))
        .unwrap_or(false);
    if !installed {
        return Some("the Rust target x86_64-pc-windows-gnu is not installed (rustup target add x86_64-pc-windows-gnu)".into());
    }
    let mingw = Command::new("x86_64-w64-mingw32-gcc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !mingw {
        return Some(
            "the MinGW-w64 linker is missing (apt-get install gcc-mingw-w64-x86-64)".into(),
        );
    }
    None
}
