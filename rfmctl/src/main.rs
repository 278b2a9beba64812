//! `rfmctl`: what the vendor's `rfm2g_util` is for a lab, for every memory the FMU
//! can couple through. See `rfmctl --help` and `rfmctl help COMMAND`.

mod board;
mod decode;
mod doctor;
mod failure;
mod foreign;
mod header;
mod memory;
mod numbers;
mod open;
mod ping;
mod recording;
mod serve;
mod stats;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use failure::Failure;

#[cfg(not(windows))]
const DEVICES: &str = "\
Devices: /dev/rfm2gN (an RFM2g board through the vendor library, or the rfm2g-sim
emulator with --library), or shm:NAME (shared memory a simulator created).
loopback: memory exists only inside the process that made it.";

#[cfg(windows)]
const DEVICES: &str = "\
Devices: \\\\.\\rfm2gN (an RFM2g board through the vendor's rfm2gdll_stdc_64.dll, found
in this program's folder or on PATH, or the rfm2g-sim emulator under that name or
with --library), or shm:NAME (shared memory a simulator created).
loopback: memory exists only inside the process that made it.";

#[cfg(not(windows))]
const LIBRARY_HELP: &str = "RFM2g library for /dev/rfm2gN devices (default: librfm2g.so on \
the library path); e.g. target/release/librfm2g.so, the rfm2g-sim emulator";

#[cfg(windows)]
const LIBRARY_HELP: &str = "RFM2g library for \\\\.\\rfm2gN devices (default: \
rfm2gdll_stdc_64.dll from this program's folder or PATH); e.g. the rfm2g-sim emulator's DLL";

const EXIT_CODES: &str = "\
Exit codes:
  0  done; the check passed
  1  the check failed: ring continuity broken, no interrupt before the timeout,
     a watched slot without a valid frame (--once), no answer to a ping, two
     recordings that differ (diff), a doctor's check that failed
  2  wrong usage: bad arguments, or a command the device does not support
     (ring-check on shm:, any command on loopback:), or a header `header`
     cannot import
  3  the device could not be opened, or refused the access (outside the memory,
     unaligned)
  4  the recording cannot be read: not a recording, a newer format, or corrupt
     (a recording cut short is read up to its last record)";

/// The devices of this platform, then the exit codes.
fn after_help() -> String {
    format!("{DEVICES}\n\n{EXIT_CODES}")
}

#[derive(Parser, Debug)]
#[command(
    name = "rfmctl",
    version,
    about = "Diagnostics for reflective memory: RFM2g boards and shared memory",
    after_help = after_help()
)]
struct Cli {
    #[arg(long, global = true, value_name = "PATH", help = LIBRARY_HELP)]
    library: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// What the device is: node and board id, memory size, library and driver
    /// (RFM2g); size, owner and mode (shm)
    #[command(
        after_help = "Example: rfmctl info shm:cockpit\n         rfmctl --library target/release/librfm2g.so info /dev/rfm2g0"
    )]
    Info { device: String },
    /// Reads one value
    #[command(after_help = "Example: rfmctl peek shm:cockpit 0x840 --width 32")]
    Peek(memory::PeekArgs),
    /// Writes one value, and reads it back
    #[command(after_help = "Example: rfmctl poke shm:cockpit 0x1000 0xdeadbeef --width 32")]
    Poke(memory::PokeArgs),
    /// Shows memory as hex and ASCII
    #[command(
        after_help = "With --decode, each part of a node's area in the range is named after the dump \
        (head, liveness, descriptor, ring entries with their signals by name), from the descriptors \
        the nodes wrote: no interface file is needed.\n\nExample: rfmctl dump shm:cockpit 0 256\n         \
        rfmctl dump shm:lab 0 0x2000 --decode"
    )]
    Dump(memory::DumpArgs),
    /// Sets a range of whole 32-bit words to one byte value
    #[command(after_help = "Example: rfmctl fill shm:cockpit 0x1000 4096 0")]
    Fill(memory::FillArgs),
    /// Live view of the frames in each slot (refreshes; --once for one look)
    #[command(after_help = watch::HELP)]
    Watch(watch::WatchArgs),
    /// A live page of the lab in a browser (and its data as JSON and a
    /// stream, for scripts)
    #[command(after_help = serve::HELP)]
    Serve(serve::ServeArgs),
    /// Round-trip latency between two slots, as the article measured it
    #[command(after_help = ping::HELP)]
    Ping(ping::PingArgs),
    /// RFM2gCheckRingCont: does a packet sent round the fibre ring come back?
    #[command(
        name = "ring-check",
        after_help = "Example: rfmctl ring-check /dev/rfm2g0"
    )]
    RingCheck { device: String },
    /// The emulator (rfm2g-sim) only: cuts a board from its ring while programs
    /// run, as an open fibre would (its stores reach no other board, theirs not
    /// it; its LCSR, ring check and events say so)
    #[command(
        after_help = "The cut outlives this command and the programs, as an open fibre does, until \
        `rfmctl mend`. The entry key link=down opens a board cut.\n\nExample: rfmctl --library \
        target/release/librfm2g.so cut /dev/rfm2g0"
    )]
    Cut { device: String },
    /// The emulator (rfm2g-sim) only: mends a board `cut` cut; it sees the ring
    /// as it is now (what it stored while cut is lost)
    #[command(
        after_help = "Example: rfmctl --library target/release/librfm2g.so mend /dev/rfm2g0"
    )]
    Mend { device: String },
    /// The driver's DMA threshold: RFM2gRead calls longer than this are DMA
    /// transfers (the FMU reads a long frame in one when it is set)
    #[command(
        name = "dma-threshold",
        after_help = "Example: rfmctl dma-threshold /dev/rfm2g0 32 (DMA above 32 bytes; `off` turns it off; no BYTES shows it)"
    )]
    DmaThreshold {
        device: String,
        /// Bytes, or `off`; without it, shows the threshold
        bytes: Option<String>,
    },
    /// Network interrupts with 32-bit data (RFM2g)
    #[command(subcommand)]
    Events(board::EventsCommand),
    /// The article's troubleshooting list as checks of a device and this PC, each
    /// with its verdict and fix
    #[command(after_help = doctor::HELP)]
    Doctor(doctor::DoctorArgs),
    /// Records a live coupling from outside (reading only): every node's frames, into a file
    #[command(
        after_help = "Frames overwritten in a node's ring before they were read are counted as missed, \
        never guessed. --interface FILE records the structs a lab's own programs write too (the \
        file's foreign nodes): each whole struct once.\n\nExample: rfmctl record shm:lab --out \
        lab.rec --seconds 60 --interface lab.toml"
    )]
    Record(recording::RecordArgs),
    /// What a recording holds: interface, nodes, steps, duration, gaps, restarts, bad frames
    #[command(after_help = "Example: rfmctl show cockpit.rec")]
    Show { file: PathBuf },
    /// A recording as CSV: one row per frame or foreign struct, one column per signal or element
    #[command(
        after_help = "Example: rfmctl export cockpit.rec --csv cockpit.csv\n         \
        rfmctl export cockpit.rec > cockpit.csv (to standard output)"
    )]
    Export {
        /// The recording to read (rfmctl record wrote it)
        #[arg(value_name = "RECORDING")]
        file: PathBuf,
        /// Write the CSV into OUT; without OUT (or without --csv), to standard
        /// output
        #[arg(long, value_name = "OUT", num_args = 0..=1)]
        csv: Option<Option<PathBuf>>,
    },
    /// Signals of a recording over simulation time, as a PNG (gaps break a line,
    /// restarts are red lines)
    #[command(
        after_help = "Example: rfmctl plot lab.rec --signals cockpit.roll,visual.frame_count --out plot.png"
    )]
    Plot {
        file: PathBuf,
        /// NODE.SIGNAL names (or STRUCT.ELEMENT of a foreign struct the
        /// recording holds), comma-separated; one panel each (default: every
        /// number of every node)
        #[arg(long, value_delimiter = ',')]
        signals: Vec<String>,
        #[arg(long, default_value = "plot.png")]
        out: PathBuf,
    },
    /// A struct of a lab's C header as a foreign node of an interface file
    #[command(after_help = header::HELP)]
    Header(header::HeaderArgs),
    /// The first step and signal where two recordings differ (exit 1), by slot, session and step
    #[command(after_help = "Example: rfmctl diff tuesday.rec today.rec")]
    Diff { a: PathBuf, b: PathBuf },
}

fn run(cli: Cli) -> Result<(), Failure> {
    let library = cli.library.as_deref();
    match cli.command {
        Command::Info { device } => board::info(&device, library),
        Command::Peek(args) => memory::peek(&args, library),
        Command::Poke(args) => memory::poke(&args, library),
        Command::Dump(args) => memory::dump(&args, library),
        Command::Fill(args) => memory::fill(&args, library),
        Command::Watch(args) => watch::run(&args, library),
        Command::Serve(args) => serve::run(&args, library),
        Command::Ping(args) => ping::run(&args, library),
        Command::RingCheck { device } => board::ring_check(&device, library),
        Command::Cut { device } => board::set_link(&device, false, library),
        Command::Mend { device } => board::set_link(&device, true, library),
        Command::Doctor(args) => doctor::run(&args, library),
        Command::DmaThreshold { device, bytes } => {
            board::dma_threshold(&device, bytes.as_deref(), library)
        }
        Command::Events(command) => board::events(&command, library),
        Command::Record(args) => recording::record(&args, library),
        Command::Show { file } => recording::show(&file),
        Command::Export { file, csv } => recording::export_csv(&file, csv.flatten().as_deref()),
        Command::Diff { a, b } => recording::diff(&a, &b),
        Command::Header(args) => header::run(&args),
        Command::Plot { file, signals, out } => recording::plot(&file, &signals, &out),
    }
}

/// Output into a closed pipe (`rfmctl export … | head`) ends the program as it
/// ends `cat`: killed by SIGPIPE, quietly, with the status shells report as
/// 141. Rust ignores SIGPIPE, which turned the reader's exit into
/// "Broken pipe (os error 32)" and a failure.
#[cfg(unix)]
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: restores the default action of one signal, before any thread
    // or output exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

#[cfg(not(unix))]
fn end_quietly_on_a_closed_pipe() {}

fn main() -> ExitCode {
    end_quietly_on_a_closed_pipe();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("rfmctl: {:#}", failure.error);
            ExitCode::from(failure.code)
        }
    }
}
