//! `rfmctl header`: a struct of a lab's C header as a foreign node of an
//! interface file, at the offsets the C compiler gives (rfm-header, libclang).

use std::path::PathBuf;

use anyhow::Context;

use crate::failure::Failure;
use crate::numbers::parse_u64;

pub const HELP: &str = "Prints a [[node]] to paste into the interface file: every field of the \
struct (nested structs' members by their path, pos.x; arrays of them by index, wheels[1].brake; \
enums as their integer type) at the offset the C compiler gives, and the struct's sizeof. \
Bitfields, unions and pointers are refused with their line. State the handshake its writer \
uses before building FMUs.\n\nExample: rfmctl header lab.h FlightState --node flight --offset 0x1000\n         \
rfmctl header lab.h EyePoint -- -I include -DLAB_VME";

#[derive(clap::Args, Debug)]
pub struct HeaderArgs {
    /// The C header
    pub file: PathBuf,
    /// The struct's name: its tag (struct NAME) or its typedef
    pub name: String,
    /// The foreign node's name (default: the struct's)
    #[arg(long)]
    pub node: Option<String>,
    /// Where the lab's program writes the struct, in bytes from regionOffset
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    pub offset: u64,
    /// Arguments for the C compiler's front end (include paths, defines), after --
    #[arg(last = true)]
    pub clang: Vec<String>,
}

pub fn run(args: &HeaderArgs) -> Result<(), Failure> {
    let file = args.file.display().to_string();
    // libclang says only "an unknown error occurred" of a file it cannot read.
    std::fs::File::open(&args.file)
        .with_context(|| format!("reading the header {file}"))
        .map_err(Failure::usage)?;
    let imported = rfm_header::import(&args.file, &args.name, &args.clang)
        .with_context(|| format!("importing `{}` from {file}", args.name))
        .map_err(Failure::usage)?;
    let node = args.node.clone().unwrap_or_else(|| args.name.clone());
    print!("{}", imported.node_toml(&node, args.offset, &file));
    Ok(())
}
