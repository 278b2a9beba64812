//! `build-fmu`: builds the `rfm_attitude` cdylib and packages it as an FMI 2.0
//! co-simulation `.fmu`, then verifies what it wrote.

mod archive;
mod cargo;
mod docs;
mod model;
mod verify;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Platform {
    /// This Linux x86-64 host.
    Linux64,
    /// Windows x86-64, cross-built with MinGW-w64 (x86_64-pc-windows-gnu).
    Win64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Profile {
    Release,
    Debug,
}

/// Builds the rfm_attitude FMU (FMI 2.0 co-simulation) and packages it as a .fmu.
///
/// The archive holds modelDescription.xml, binaries/linux64/rfm_attitude.so,
/// binaries/win64/rfm_attitude.dll (when the Windows target and MinGW-w64 are
/// installed) and documentation/index.html. Before it says done, it re-reads the
/// archive: the XML parses and matches the binaries (GUID, model identifier), each
/// binary exports exactly the 34 FMI 2.0 co-simulation functions, and every file the
/// XML implies is there.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Where to write the .fmu.
    #[arg(long, short, default_value = "target/fmu/rfm_attitude.fmu")]
    out: PathBuf,
    /// Cargo profile of the binaries.
    #[arg(long, value_enum, default_value = "release")]
    profile: Profile,
    /// Platforms to include. Default: linux64, plus win64 when it can be built here
    /// (say why it is skipped otherwise). Naming win64 makes it required.
    #[arg(long, value_enum, value_delimiter = ',')]
    platform: Vec<Platform>,
}

fn step(text: &str) {
    eprintln!("build-fmu: {text}");
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("build-fmu lives in the workspace")
        .to_path_buf()
}

fn main() -> Result<()> {
    let args = Args::parse();
    let root = workspace();
    let out = if args.out.is_absolute() {
        args.out.clone()
    } else {
        root.join(&args.out)
    };
    let release = args.profile == Profile::Release;

    let xml_path = root.join("modelDescription.xml");
    let xml = std::fs::read_to_string(&xml_path)
        .with_context(|| format!("cannot read {}", xml_path.display()))?;
    let model = model::Model::parse(xml).with_context(|| format!("in {}", xml_path.display()))?;
    step(&format!(
        "model {} (GUID {}), {} variables",
        model.model_identifier,
        model.guid,
        model.variables.len()
    ));

    let mut platforms = args.platform.clone();
    if platforms.is_empty() {
        platforms.push(Platform::Linux64);
        match cargo::win64_unavailable() {
            None => platforms.push(Platform::Win64),
            Some(why) => step(&format!(
                "skipping win64: {why}; then run build-fmu again to include it"
            )),
        }
    } else if platforms.contains(&Platform::Win64) {
        if let Some(why) = cargo::win64_unavailable() {
            bail!("win64 was asked for but cannot be built here: {why}");
        }
    }

    let id = &model.model_identifier;
    let mut entries = vec![(
        "modelDescription.xml".to_owned(),
        model.xml.clone().into_bytes(),
    )];
    let mut packed = Vec::new();
    for platform in &platforms {
        let (dir, ext, target) = match platform {
            Platform::Linux64 => ("linux64", "so", None),
            Platform::Win64 => ("win64", "dll", Some("x86_64-pc-windows-gnu")),
        };
        step(&format!(
            "building {dir} ({} profile)…",
            if release { "release" } else { "debug" }
        ));
        let lib = cargo::build_cdylib(&root, release, target)?;
        step(&format!("  built {}", lib.display()));
        let data = std::fs::read(&lib).with_context(|| format!("cannot read {}", lib.display()))?;
        entries.push((format!("binaries/{dir}/{id}.{ext}"), data));
        packed.push((dir, ext));
    }
    entries.push((
        "documentation/index.html".to_owned(),
        docs::index_html(&model).into_bytes(),
    ));

    step(&format!("writing {}", out.display()));
    archive::write(&out, &entries)?;
    step("verifying the archive…");
    verify::check_archive(&out, &model, &packed)
        .with_context(|| format!("verification of {} failed", out.display()))?;
    let size = std::fs::metadata(&out)?.len();
    let names: Vec<_> = packed.iter().map(|(d, _)| *d).collect();
    step(&format!(
        "done: {} ({} KiB) for {}; exports, GUID and contents verified",
        out.display(),
        size / 1024,
        names.join(", ")
    ));
    Ok(())
}
