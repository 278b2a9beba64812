//! `build-fmu`: packages FMI 2.0 co-simulation `.fmu`s: the attitude FMU, or the
//! FMU of any node of an interface file, then verifies what it wrote.

mod archive;
mod binaries;
mod cargo;
mod docs;
mod loads;
mod model;
mod ssp;
mod strip;
mod system;
mod targets;
mod verify;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use fmu_model::Model as FmuModel;

use targets::{attitude, of_interface, Target};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Platform {
    /// This Linux x86-64 host.
    Linux64,
    /// Windows x86-64, cross-built with MinGW-w64 (x86_64-pc-windows-gnu).
    Win64,
}

/// The FMI version of the description packed: the binary has both faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Fmi {
    /// FMI 2.0 (the default)
    #[value(name = "2")]
    V2,
    /// FMI 3.0: the same node, its variables of FMI 3.0's types
    #[value(name = "3")]
    V3,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Profile {
    Release,
    Debug,
}

/// Packages FMI 2.0 (or, with --fmi 3, FMI 3.0) co-simulation FMUs that couple
/// simulators through reflective memory.
///
/// Without --interface: the attitude FMU (rfm_attitude.fmu). With --interface FILE
/// --node NAME: the FMU of that node of the interface file, named NAME_NODE.fmu,
/// whose inputs are the node's signals and whose outputs are every other node's;
/// --node all writes one per node. The binary is the same for every FMU: with
/// --from FMU it is taken from an existing .fmu and nothing is compiled.
///
/// The archive holds modelDescription.xml, binaries/linux64/ID.so,
/// binaries/win64/ID.dll (when the Windows target and MinGW-w64 are installed,
/// or the --from FMU has it), documentation/index.html and, for an interface,
/// resources/interface.toml and resources/node.txt. Before it says done, it
/// re-reads the archive: the XML parses and matches the resources (GUID), each
/// binary exports exactly the 34 FMI 2.0 co-simulation functions and the 75 of
/// FMI 3.0 (one binary has both faces; --fmi picks the description) and is of this
/// variable convention, the linux64 binary needs no glibc newer than --glibc
/// (without it: a warning naming the systems a newer one will not load on), the
/// win64 one imports only Windows 10's DLLs, and every file the XML implies is
/// there; only then is it renamed over --out. Binaries built here are linked
/// against glibc 2.28 (or --glibc) with cargo-zigbuild where it is found
/// (.venv-build, made by scripts/setup.sh, or the PATH), else against this
/// machine's, and stripped of their debug information (--keep-debug keeps it
/// beside the .fmu). A bad interface file is reported with
/// its line and column, and nothing is written.
///
/// Example: build-fmu --interface lab.toml --node all --from rfm_attitude.fmu
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Where to write the .fmu (with --node all: the folder for them).
    /// Default: target/fmu/ID.fmu (ID: the model identifier)
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// An interface file (TOML): package the FMU of one of its nodes.
    #[arg(long)]
    interface: Option<PathBuf>,
    /// With --interface: the node whose FMU to write, or `all`.
    #[arg(long, requires = "interface", conflicts_with = "system")]
    node: Option<String>,
    /// With --interface and --ssp: one simulator as its master runs it (a
    /// TOML file: its node, the other FMUs it runs, their parameters, the
    /// connections between them; docs/src/reference/system-file.md): the
    /// node's FMU is written into --out, where the other FMUs are found,
    /// and the SSP holds them all
    #[arg(long, requires_all = ["interface", "ssp"], value_name = "FILE")]
    system: Option<PathBuf>,
    /// Take the binaries from this .fmu instead of building them (no compiler needed).
    #[arg(long)]
    from: Option<PathBuf>,
    /// Cargo profile of the binaries built (release: the workspace's `release-fmu`
    /// profile, release with fat LTO).
    #[arg(long, value_enum, default_value = "release")]
    profile: Profile,
    /// Platforms to include. Default: linux64, plus win64 when it can be built here
    /// (say why it is skipped otherwise), or every platform of the --from FMU.
    /// Naming win64 makes it required.
    #[arg(long, value_enum, value_delimiter = ',')]
    platform: Vec<Platform>,
    /// Keep the binaries' debug information beside the .fmu (rfm-fmu-linux64.so.debug,
    /// rfm-fmu-win64.dll.debug; the packed binaries name them), instead of
    /// dropping it. Only for binaries built here.
    #[arg(long, conflicts_with = "from")]
    keep_debug: bool,
    /// With --interface: the coupling runs on shared memory only (`shm:`,
    /// `loopback:`), never on an RFM2g ring, so the ring's budget is printed
    /// but does not refuse it (host memory carries GB/s, a ring 170 MB/s).
    #[arg(long, requires = "interface")]
    shm_only: bool,
    /// The glibc the linux64 binary must load on (X.Y; the scripts pass 2.28):
    /// built against it with cargo-zigbuild, and refused if it needs a newer
    /// one. Without it a binary built for this machine's glibc (no
    /// cargo-zigbuild here) is packed with a warning naming the systems it
    /// will not load on
    #[arg(long, value_name = "X.Y", value_parser = loads::parse_glibc)]
    glibc: Option<(u32, u32)>,
    /// With --interface and --node all: also write the whole lab as an SSP 1.0
    /// archive (SystemStructure.ssd, every node's .fmu and its parameter set),
    /// for masters that run a system from one file
    #[arg(long, requires = "interface", value_name = "OUT.ssp")]
    ssp: Option<PathBuf>,
    /// The FMI version of the FMU: 2 (FMI 2.0), or 3 (FMI 3.0, its variables
    /// of FMI 3.0's types: Real as Float64, Integer as Int32). The binary is
    /// the same: it exports both faces
    #[arg(long, value_enum, default_value = "2")]
    fmi: Fmi,
    /// Rewrite the repository's modelDescription.xml (the attitude FMU's) from the
    /// code, and write nothing else.
    #[arg(long, conflicts_with_all = ["interface", "from"])]
    write_description: bool,
}

pub fn step(text: &str) {
    eprintln!("build-fmu: {text}");
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("build-fmu lives in the workspace")
        .to_path_buf()
}

fn platforms(asked: &[Platform]) -> Result<Vec<Platform>> {
    let mut platforms = asked.to_vec();
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
    Ok(platforms)
}

fn absolute(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

/// A user's mistake (a bad file, a missing FMU) is not a crash: it is printed
/// as its message and causes on one line, never with the backtrace that
/// `main` returning an error prints under `RUST_BACKTRACE=1`. A panic still
/// prints its own.
fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("build-fmu: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<()> {
    let root = workspace();
    // Relative paths are the user's, from where build-fmu was started (cargo run
    // starts it there too).
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let out = args.out.as_deref().map(|p| absolute(&cwd, p));
    if args.write_description {
        let path = root.join("modelDescription.xml");
        std::fs::write(&path, FmuModel::attitude().xml())
            .with_context(|| format!("cannot write {}", path.display()))?;
        step(&format!("wrote {}", path.display()));
        return Ok(());
    }
    if args.ssp.is_some() && args.system.is_none() && args.node.as_deref() != Some("all") {
        bail!(
            "--ssp packs the whole lab (give --node all with it) or one simulator (give \
             --system FILE with it)"
        );
    }
    // A simulator's file names its node; its FMUs are found in --out.
    let system = match &args.system {
        Some(file) => {
            let dir = out.clone().unwrap_or_else(|| root.join("target/fmu"));
            Some(system::read(&absolute(&cwd, file), &dir)?)
        }
        None => None,
    };
    // Everything that can be wrong is found before anything is written.
    let targets = targets_asked(&args, &root, &cwd, out, system.as_ref())?;
    let binaries = binaries_for(&args, &root, &cwd, &targets)?;
    for target in &targets {
        write(target, &binaries, args.glibc, args.fmi)?;
    }
    match (&args.ssp, system) {
        (Some(ssp), Some(system)) => write_simulator_ssp(&absolute(&cwd, ssp), &targets, system),
        (Some(ssp), None) => write_lab_ssp(&absolute(&cwd, ssp), &targets),
        (None, _) => Ok(()),
    }
}

/// The FMUs the arguments ask for: the attitude FMU, one node's, every
/// node's, or a simulator file's node's.
fn targets_asked(
    args: &Args,
    root: &Path,
    cwd: &Path,
    out: Option<PathBuf>,
    system: Option<&system::Unchecked>,
) -> Result<Vec<Target>> {
    Ok(match (&args.interface, &args.node, system) {
        (Some(file), Some(node), _) => {
            of_interface(root, &absolute(cwd, file), node, out, false, args.shm_only)?
        }
        (Some(file), None, Some(system)) => of_interface(
            root,
            &absolute(cwd, file),
            system.node(),
            out,
            true,
            args.shm_only,
        )?,
        (Some(_), None, None) => bail!(
            "--interface needs --node NODE (or --node all) for the FMUs to write, or \
             --system FILE with --ssp"
        ),
        _ => vec![attitude(root, out)?],
    })
}

/// The binaries every target shares: taken from --from's FMU, or built.
fn binaries_for(
    args: &Args,
    root: &Path,
    cwd: &Path,
    targets: &[Target],
) -> Result<Vec<binaries::Binary>> {
    if let Some(fmu) = &args.from {
        return binaries::from_fmu(&absolute(cwd, fmu), &args.platform);
    }
    let beside = targets
        .first()
        .and_then(|t| t.out.parent())
        .map(Path::to_path_buf);
    if let Some(dir) = beside.as_deref().filter(|_| args.keep_debug) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    binaries::build(
        root,
        args.profile == Profile::Release,
        args.glibc,
        &platforms(&args.platform)?,
        beside.as_deref().filter(|_| args.keep_debug),
    )
}

/// One simulator's SSP: its node's FMU wired to the simulator's own
/// components by the file's connections.
fn write_simulator_ssp(out: &Path, targets: &[Target], system: system::Unchecked) -> Result<()> {
    let target = &targets[0];
    let system = system.check(&target.out)?;
    let interface = &target.model.interface;
    let node = interface
        .position(&system.node)
        .expect("the targets are the system's node");
    ssp::write_simulator(interface, node, &target.out, &system, out)
        .with_context(|| format!("writing the SSP {}", out.display()))?;
    step(&format!(
        "wrote {} (node `{}` and {} component(s), {} connection(s))",
        out.display(),
        system.node,
        system.components.len(),
        system.connections.len()
    ));
    Ok(())
}

/// The whole lab's SSP: every node's FMU and its parameter set.
fn write_lab_ssp(out: &Path, targets: &[Target]) -> Result<()> {
    let fmus: Vec<&Path> = targets.iter().map(|t| t.out.as_path()).collect();
    ssp::write(&targets[0].model.interface, &fmus, out)
        .with_context(|| format!("writing the SSP {}", out.display()))?;
    step(&format!(
        "wrote {} ({} nodes: SystemStructure.ssd, their .fmu and parameter sets)",
        out.display(),
        targets.len()
    ));
    Ok(())
}

/// Writes and verifies one .fmu.
fn write(
    target: &Target,
    binaries: &[binaries::Binary],
    glibc: Option<(u32, u32)>,
    fmi: Fmi,
) -> Result<()> {
    let xml = match fmi {
        Fmi::V2 => target.model.xml(),
        Fmi::V3 => target.model.xml3(),
    };
    let model = model::Model::parse(xml).context("the written modelDescription.xml")?;
    step(&format!(
        "model {} (GUID {}), {} variables",
        model.model_identifier,
        model.guid,
        model.variables.len()
    ));
    let id = &model.model_identifier;
    let mut entries = vec![(
        "modelDescription.xml".to_owned(),
        model.xml.clone().into_bytes(),
    )];
    let mut packed = Vec::new();
    for b in binaries {
        let (dir, ext) = (b.platform.dir(fmi), b.platform.ext());
        entries.push((format!("binaries/{dir}/{id}.{ext}"), b.data.clone()));
        packed.push((dir, ext));
    }
    entries.push((
        "documentation/index.html".to_owned(),
        docs::index_html(&model, &target.model).into_bytes(),
    ));
    entries.extend(target.resources.iter().cloned());
    let out = &target.out;
    step(&format!("writing {}", out.display()));
    archive::write(out, &entries, |written| {
        step("verifying the archive…");
        verify::check_archive(written, &model, &packed, glibc).with_context(|| {
            format!(
                "verification of {} failed (the file there is left as it was)",
                out.display()
            )
        })
    })?;
    let size = std::fs::metadata(out)?.len();
    let names: Vec<_> = packed.iter().map(|(d, _)| *d).collect();
    step(&format!(
        "done: {} ({} KiB) for {}; exports, GUID and contents verified",
        out.display(),
        size / 1024,
        names.join(", ")
    ));
    Ok(())
}
