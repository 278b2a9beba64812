//! Where the packaged binaries come from: built here with cargo, or taken from a
//! released .fmu (then nothing is compiled: one binary serves every interface).

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::cargo;
use crate::{Fmi, Platform};

/// One platform's binary.
pub struct Binary {
    pub platform: Platform,
    pub data: Vec<u8>,
}

impl Platform {
    /// The platform's folder under `binaries/` in an FMI 2.0 FMU and its
    /// library extension.
    pub fn dir_ext(self) -> (&'static str, &'static str) {
        (self.dir(Fmi::V2), self.ext())
    }

    /// The platform's folder under `binaries/` in an FMU of `fmi`: FMI 3.0
    /// names it by its platform tuple.
    pub fn dir(self, fmi: Fmi) -> &'static str {
        match (self, fmi) {
            (Platform::Linux64, Fmi::V2) => "linux64",
            (Platform::Win64, Fmi::V2) => "win64",
            (Platform::Linux64, Fmi::V3) => "x86_64-linux",
            (Platform::Win64, Fmi::V3) => "x86_64-windows",
        }
    }

    pub fn ext(self) -> &'static str {
        match self {
            Platform::Linux64 => "so",
            Platform::Win64 => "dll",
        }
    }
}

/// Builds the binary of each of `platforms` with cargo (linux64 with
/// cargo-zigbuild against `glibc`, default 2.28, where it is here), and takes
/// its debug information out of it: into `debug_dir` when given, else nowhere.
pub fn build(
    root: &Path,
    release: bool,
    glibc: Option<(u32, u32)>,
    platforms: &[Platform],
    debug_dir: Option<&Path>,
) -> Result<Vec<Binary>> {
    let version = glibc.unwrap_or(crate::loads::GLIBC_FLOOR);
    let zig = cargo::zigbuild(root);
    platforms
        .iter()
        .map(|&platform| {
            let (dir, ext) = platform.dir_ext();
            let how = match (platform, &zig) {
                (Platform::Win64, _) => cargo::Build::Cargo(Some("x86_64-pc-windows-gnu")),
                (Platform::Linux64, Some(zig)) => cargo::Build::Zig(zig, version),
                (Platform::Linux64, None) => {
                    crate::step(
                        "  cargo-zigbuild is not here (scripts/setup.sh installs it): linux64 is \
                         built against this machine's glibc; the verification says which \
                         systems it will not load on (with --glibc, refuses it)",
                    );
                    cargo::Build::Cargo(None)
                }
            };
            crate::step(&format!(
                "building {dir} ({} profile{})…",
                if release { "release-fmu" } else { "debug" },
                match how {
                    cargo::Build::Zig(_, v) =>
                        format!(", {} with cargo-zigbuild", cargo::linux_target(v)),
                    cargo::Build::Cargo(_) => String::new(),
                }
            ));
            let lib = cargo::build_cdylib(root, release, how)?;
            crate::step(&format!("  built {}", lib.display()));
            let debug = debug_dir.map(|d| d.join(format!("rfm-fmu-{dir}.{ext}.debug")));
            let data = crate::strip::split_debug(platform, &lib, debug.as_deref())?;
            Ok(Binary { platform, data })
        })
        .collect()
}

/// The binaries packed in the .fmu at `fmu` (every platform it has, or those of
/// `platforms` if given, each of which it must have).
pub fn from_fmu(fmu: &Path, platforms: &[Platform]) -> Result<Vec<Binary>> {
    let file =
        std::fs::File::open(fmu).with_context(|| format!("cannot open {}", fmu.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("{} is not a readable .fmu (zip)", fmu.display()))?;
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .collect();
    let mut found = Vec::new();
    for platform in [Platform::Linux64, Platform::Win64] {
        if !platforms.is_empty() && !platforms.contains(&platform) {
            continue;
        }
        let (dir, ext) = platform.dir_ext();
        // Either face's folder: the binary is the same.
        let name = names.iter().find(|name| {
            [Fmi::V2, Fmi::V3].iter().any(|&fmi| {
                name.strip_prefix(&format!("binaries/{}/", platform.dir(fmi)))
                    .is_some_and(|rest| !rest.contains('/') && rest.ends_with(&format!(".{ext}")))
            })
        });
        let Some(name) = name else {
            if platforms.contains(&platform) {
                bail!(
                    "{} has no {dir} binary (binaries/{dir}/*.{ext}), and --platform asks for it",
                    fmu.display()
                );
            }
            continue;
        };
        let mut data = Vec::new();
        zip.by_name(name)?
            .read_to_end(&mut data)
            .with_context(|| format!("cannot read {name} from {}", fmu.display()))?;
        crate::step(&format!("  taking {name} from {}", fmu.display()));
        found.push(Binary { platform, data });
    }
    if found.is_empty() {
        bail!(
            "{} holds no FMU binary (binaries/linux64/*.so or binaries/win64/*.dll)",
            fmu.display()
        );
    }
    Ok(found)
}
