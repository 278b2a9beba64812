//! `module-cycles [WORKSPACE]`: fails when the modules of a crate of the
//! workspace import each other in a circle, naming every module of the circle
//! and, for each of its edges, the line that makes it; and when a crate
//! re-exports (`pub use`) another workspace crate's items, naming the line.
//!
//! A re-export lets a caller name a lower floor's item through a higher crate
//! (`rfm_core::interface` for `rfm_interface`): the caller no longer says which
//! floor it means, and the crate graph no longer shows what it stands on. With
//! none, the compiler holds every path to the crate that owns its item.
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
    let (targets, libraries) = targets(&dir)?;
    for target in targets {
        let (name, root) = (&target.name, &target.root);
        let krate =
            Crate::read(root).with_context(|| format!("reading {name} from {}", root.display()))?;
        checked += 1;
        for circle in circles(&krate) {
            clean = false;
            println!("{name}: modules import each other in a circle:");
            for (from, to, at) in circle {
                println!("  {} -> {}  ({at})", krate.name(from), krate.name(to));
            }
        }
        let others: Vec<String> = libraries
            .iter()
            .filter(|l| Some(*l) != target.library.as_ref())
            .cloned()
            .collect();
        for (m, path, at) in krate.re_exports_of(&others) {
            clean = false;
            println!(
                "{name}: {} re-exports `{path}` from another crate of the workspace ({at}): \
                 import it from its own crate where it is used",
                krate.name(m)
            );
        }
    }
    if clean {
        println!(
            "module-cycles: no import circle in the modules of {checked} targets, \
             and no crate re-exports another's items"
        );
    }
    Ok(clean)
}

/// A library or binary target of the workspace.
struct Target {
    /// `package (target)`, for messages.
    name: String,
    root: PathBuf,
    /// The name its package's library is imported by (`rfm_memory`), if it has one.
    library: Option<String>,
}

/// The library and binary targets of the workspace's members, and the names
/// the members' libraries are imported by.
fn targets(dir: &Path) -> Result<(Vec<Target>, Vec<String>)> {
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
    let mut libraries = Vec::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        let library = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| {
                t["kind"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k == "lib")
            })
            .and_then(|t| t["name"].as_str())
            .map(|n| n.replace('-', "_"));
        libraries.extend(library.clone());
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
                found.push(Target {
                    name,
                    root: PathBuf::from(target["src_path"].as_str().unwrap_or_default()),
                    library: library.clone(),
                });
            }
        }
    }
    Ok((found, libraries))
}
