//! Nothing inside the FMU writes to stdout or stderr: a master's console is not
//! ours, and everything the FMU has to say goes to the master's logger. The FMU
//! is fmu-src and every workspace crate it depends on (found here from the
//! manifests' `[dependencies]`, so a crate split off later is checked too), so
//! none's library source may print, even from a `Drop` that has no caller to
//! return an error to.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files of the unit-test modules `file` declares as `#[cfg(test)]` then
/// `mod NAME;` (`NAME.rs`, or the folder `NAME/` whole, its children
/// included): they are not in the FMU, and may print.
fn test_modules(file: &Path, text: &str) -> Vec<PathBuf> {
    let lines: Vec<&str> = text.lines().collect();
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let dir = match stem {
        "mod" | "lib" | "main" => file.parent().unwrap().to_path_buf(),
        _ => file.parent().unwrap().join(stem),
    };
    lines
        .windows(2)
        .filter(|w| w[0].trim() == "#[cfg(test)]")
        .filter_map(|w| w[1].trim().strip_prefix("mod ")?.strip_suffix(';'))
        .flat_map(|name| [dir.join(format!("{name}.rs")), dir.join(name)])
        .collect()
}

fn printing_lines(dir: &Path, out: &mut Vec<String>) {
    let mut files = Vec::new();
    sources(dir, &mut files);
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let tests: Vec<PathBuf> = (files.iter().zip(&texts))
        .flat_map(|(f, t)| test_modules(f, t))
        .collect();
    for (path, text) in files.iter().zip(&texts) {
        if tests.iter().any(|t| path.starts_with(t)) {
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            // A file's unit tests come last, in a top-level
            // `#[cfg(test)]` module the FMU does not hold: they may print.
            if line == "#[cfg(test)]" {
                break;
            }
            let code = line.split("//").next().unwrap_or("");
            if [
                "eprintln!",
                "println!",
                "eprint!",
                "print!(",
                "io::stderr",
                "io::stdout",
                "dbg!",
            ]
            .iter()
            .any(|p| code.contains(p))
            {
                out.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
}

/// The workspace crates `crate_dir`'s library links, itself included: the
/// `path` dependencies of its manifest's `[dependencies]`, followed.
fn linked_crates(root: &Path, crate_dir: &str, found: &mut Vec<String>) {
    if found.iter().any(|c| c == crate_dir) {
        return;
    }
    found.push(crate_dir.to_owned());
    let manifest = std::fs::read_to_string(root.join(crate_dir).join("Cargo.toml")).unwrap();
    let mut in_dependencies = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if !in_dependencies {
            continue;
        }
        if let Some(rest) = line.split("path = \"../").nth(1) {
            let dep = rest.split('"').next().unwrap();
            linked_crates(root, dep, found);
        }
    }
}

#[test]
fn nothing_in_the_fmu_or_a_crate_it_links_prints_to_the_console() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates = Vec::new();
    linked_crates(&root, "fmu-src", &mut crates);
    // The crates split off rfm-core are there: a test that looked only at
    // fmu-src and rfm-core could no longer fail where it matters.
    for c in [
        "rfm-core",
        "rfm-memory",
        "rfm-frames",
        "rfm-interface",
        "rfm-thread",
        "rfm-record",
    ] {
        assert!(crates.iter().any(|x| x == c), "{c} not found in {crates:?}");
    }
    let mut found = Vec::new();
    for c in &crates {
        printing_lines(&root.join(c).join("src"), &mut found);
    }
    assert!(
        found.is_empty(),
        "prints from inside the FMU ({}):\n{}",
        crates.join(", "),
        found.join("\n")
    );
}
