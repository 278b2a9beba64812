//! `module-cycles [WORKSPACE]`: fails when the modules of a crate of the
//! workspace import each other in a circle, naming every module of the circle
//! and, for each of its edges, the line that makes it.
//!
//! An edge A → B is a path in module A (a `use`, a type, a call) that names an
//! item defined in module B. Paths are followed through `use` declarations and
//! re-exports to the module that defines the item, so a sibling's type reached as
//! `super::Type` counts as the sibling's. Edges to a module's own ancestors are
//! not counted: a child naming its parent's items is how Rust nests modules
//! (and the parent declares, and usually re-exports, the child), so such a
//! circle is structure, not coupling. An edge into or out of a child is also
//! an edge of the modules that hold it, up to the one both sides share: a
//! circle that passes through a child module is a circle of its holders.
//! Test modules (`#[cfg(test)]`) are left out.
//!
//! `cargo modules dependencies --acyclic` was tried first: it checks items, not
//! modules, and reports a type and its own constructor (`Logger`,
//! `Logger::new`) as a circle, so no crate passes it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

use module_cycles::{circles, Crate};

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("module-cycles: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Checks every library and binary target of the workspace; false if a
/// circle was found.
fn run() -> Result<bool> {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let mut clean = true;
    let mut checked = 0;
    for (name, root) in targets(&dir)? {
        let krate = Crate::read(&root)
            .with_context(|| format!("reading {name} from {}", root.display()))?;
        checked += 1;
        for circle in circles(&krate) {
            clean = false;
            println!("{name}: modules import each other in a circle:");
            for (from, to, at) in circle {
                println!("  {} -> {}  ({at})", krate.name(from), krate.name(to));
            }
        }
    }
    if clean {
        println!("module-cycles: no import circle in the modules of {checked} targets");
    }
    Ok(clean)
}

/// The library and binary targets of the workspace's members: (name, root file).
fn targets(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(dir)
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("cargo metadata's JSON")?;
    let mut found = Vec::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        for target in package["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
                .collect();
            if kinds
                .iter()
                .any(|k| matches!(*k, "lib" | "cdylib" | "rlib" | "bin"))
            {
                let name = format!(
                    "{} ({})",
                    package["name"].as_str().unwrap_or("?"),
                    target["name"].as_str().unwrap_or("?")
                );
                found.push((
                    name,
                    PathBuf::from(target["src_path"].as_str().unwrap_or_default()),
                ));
            }
        }
    }
    Ok(found)
}
