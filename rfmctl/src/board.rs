//! `info`, `ring-check` and `events`: what the device is, and the RFM2g network.

use std::path::Path;
use std::time::Instant;

use anyhow::anyhow;
use clap::{Args, Subcommand};
use rfm_memory::backend::rfm2g::BoardError;
use rfm_memory::{backend::rfm2g::Interrupt, DeviceError, DeviceSpec};

use crate::failure::Failure;
use crate::numbers::parse_u32;
use crate::open::open;

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

pub fn info(device: &str, library: Option<&Path>) -> Result<(), Failure> {
    let dev = open(device, library)?;
    let info = dev.info();
    println!("device      {device}");
    match dev.spec() {
        DeviceSpec::Shm { name } => shm_info(device, name, info.size)?,
        _ => {
            println!("kind        RFM2g board");
            println!("library     {}", info.library.unwrap_or_default());
            println!(
                "node id     {}",
                info.node_id.map_or("?".into(), |n| n.to_string())
            );
            println!(
                "board id    {}",
                info.board_id
                    .map_or("unknown (no RFM2gBoardID)".into(), |b| format!("{b:#04x}"))
            );
            println!("memory      {} bytes ({})", info.size, human(info.size));
            println!(
                "driver      {}",
                dev.driver_version()?.unwrap_or_else(|| if cfg!(windows) {
                    "unknown (see the RFM2g driver in Device Manager)".into()
                } else {
                    "unknown (no /sys/module/rfm2g/version; see `modinfo rfm2g`)".into()
                })
            );
        }
    }
    Ok(())
}

#[cfg(unix)]
fn shm_info(device: &str, name: &str, size: u64) -> Result<(), Failure> {
    let stat = rfm_memory::backend::shm::stat(name)
        .map_err(|e| Failure::device(anyhow!("`{device}`: {e}")))?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    println!("kind        POSIX shared memory /dev/shm/{name}");
    println!("memory      {size} bytes ({})", human(size));
    println!(
        "owner       uid {}{}, mode {:o}",
        stat.uid,
        if stat.uid == me { " (you)" } else { "" },
        stat.mode
    );
    Ok(())
}

/// The open has checked the mapping: owned by this user, granting no one else.
#[cfg(windows)]
fn shm_info(_device: &str, name: &str, size: u64) -> Result<(), Failure> {
    println!("kind        named file mapping Local\\rfm-{name} (this logon session)");
    println!("memory      {size} bytes ({})", human(size));
    println!("owner       you, and no access for anyone else");
    Ok(())
}

pub fn ring_check(device: &str, library: Option<&Path>) -> Result<(), Failure> {
    let dev = open(device, library)?;
    let started = Instant::now();
    match dev.check_ring() {
        Ok(()) => {
            println!(
                "ring continuity OK: a packet from node {} came back ({} µs)",
                dev.info().node_id.unwrap_or_default(),
                started.elapsed().as_micros()
            );
            Ok(())
        }
        Err(DeviceError::Rfm2g(e)) if e.name == "RFM2G_LINK_TEST_FAIL" => Err(Failure::check_failed(
            anyhow!("ring continuity FAILED on `{device}`: {e}; check the fibre and that every node is powered"),
        )),
        Err(e) => Err(e.into()),
    }
}

/// `cut` and `mend`: the emulator's ring fault on the board `device` opens.
/// Every program holding the board's memory sees it within a few
/// milliseconds (see rfm2g-sim's `cut`).
pub fn set_link(device: &str, up: bool, library: Option<&Path>) -> Result<(), Failure> {
    if !matches!(DeviceSpec::parse(device), Ok(DeviceSpec::Rfm2g { .. })) {
        return Err(Failure::usage(anyhow!(
            "`{device}` is not an RFM2g device: only a board of the emulator rfm2g-sim can be cut \
             from its ring"
        )));
    }
    use rfm_memory::backend::rfm2g::emulated;
    match emulated::set_link(library, device, up) {
        Ok(()) => {
            let board = match emulated::board_of(library, device) {
                Some(board) => format!("`{device}` ({board})"),
                None => format!("`{device}`"),
            };
            if up {
                println!("{board} mended: it sees the ring's memory again and its stores reach the other boards");
            } else {
                println!("{board} cut from its ring: its stores reach no other board and theirs do not reach it, until `rfmctl mend {device}`");
            }
            Ok(())
        }
        Err(e @ BoardError::NotEmulator { .. }) => Err(Failure::usage(e)),
        Err(e) => Err(Failure::device(anyhow::Error::new(e).context(format!(
            "{} `{device}`",
            if up { "mending" } else { "cutting" }
        )))),
    }
}

/// Shows the driver's DMA threshold, or sets it to `bytes` (`off`: `u32::MAX`,
/// the driver's default).
pub fn dma_threshold(
    device: &str,
    bytes: Option<&str>,
    library: Option<&Path>,
) -> Result<(), Failure> {
    let dev = open(device, library)?;
    let show = |threshold: u32| match threshold {
        u32::MAX => "off (every RFM2gRead is PIO in the driver)".to_owned(),
        n => format!("{n} bytes (RFM2gRead calls longer than this are DMA transfers)"),
    };
    if let Some(bytes) = bytes {
        let threshold = match bytes {
            "off" => u32::MAX,
            n => n.parse().map_err(|_| {
                Failure::usage(anyhow!(
                    "`{n}` is not a DMA threshold: give bytes (0..4294967294) or `off`"
                ))
            })?,
        };
        dev.set_dma_threshold(threshold)?;
    }
    println!(
        "DMA threshold of `{device}`: {}",
        show(dev.dma_threshold()?)
    );
    Ok(())
}

#[derive(Subcommand, Debug)]
pub enum EventsCommand {
    /// Sends a network interrupt with 32-bit data to one node or to all others
    #[command(
        after_help = "Example: rfmctl events send /dev/rfm2g0 --to all --type intr2 --data 0x2a"
    )]
    Send(SendArgs),
    /// Waits for network interrupts and prints the sender and data of each
    #[command(
        after_help = "Example: rfmctl events wait /dev/rfm2g0 --type intr2 --timeout-ms 5000"
    )]
    Wait(WaitArgs),
}

#[derive(Args, Debug)]
pub struct SendArgs {
    pub device: String,
    /// Node id 0..255, or `all` (every other node)
    #[arg(long, default_value = "all")]
    pub to: String,
    /// reset, intr1, intr2, intr3 or intr4 (simulators coupled with
    /// waitStrategy=event use intr1)
    #[arg(long = "type", default_value = "intr1")]
    pub kind: Interrupt,
    /// 32-bit data carried with the interrupt
    #[arg(long, default_value = "0", value_parser = parse_u32)]
    pub data: u32,
}

#[derive(Args, Debug)]
pub struct WaitArgs {
    pub device: String,
    #[arg(long = "type", default_value = "intr1")]
    pub kind: Interrupt,
    /// How long to wait for each interrupt
    #[arg(long, default_value = "1000", value_parser = parse_u32)]
    pub timeout_ms: u32,
    /// How many interrupts to wait for
    #[arg(long, default_value = "1")]
    pub count: u32,
}

fn node(to: &str) -> Result<Option<u16>, Failure> {
    if to.eq_ignore_ascii_case("all") {
        return Ok(None);
    }
    to.parse::<u16>()
        .ok()
        .filter(|n| *n <= 255)
        .map(Some)
        .ok_or_else(|| Failure::usage(anyhow!("--to `{to}` is not a node id 0..255 or `all`")))
}

pub fn events(command: &EventsCommand, library: Option<&Path>) -> Result<(), Failure> {
    match command {
        EventsCommand::Send(args) => {
            let to = node(&args.to)?;
            let dev = open(&args.device, library)?;
            dev.send_interrupt(to, args.kind, args.data)?;
            println!(
                "sent {} with data {:#010x} from node {} to {}",
                args.kind,
                args.data,
                dev.info().node_id.unwrap_or_default(),
                to.map_or("all other nodes".into(), |n| format!("node {n}"))
            );
            Ok(())
        }
        EventsCommand::Wait(args) => {
            let dev = open(&args.device, library)?;
            let events = dev.interrupts(args.kind)?.ok_or_else(|| match dev.spec() {
                DeviceSpec::Rfm2g { .. } => Failure::device(anyhow!(
                    "the RFM2g library of `{}` has no event functions",
                    args.device
                )),
                _ => Failure::usage(DeviceError::NotRfm2g {
                    device: args.device.clone(),
                    what: "waiting for a network interrupt",
                }),
            })?;
            // Enabled: what a script (or a test) starting the senders waits for.
            eprintln!(
                "rfmctl: waiting for {} {} on `{}`",
                args.count, args.kind, args.device
            );
            for _ in 0..args.count {
                match events.wait(args.timeout_ms).map_err(Failure::device)? {
                    Some((from, data)) => {
                        println!("{} from node {from}, data {data:#010x} ({data})", args.kind)
                    }
                    None => {
                        return Err(Failure::check_failed(anyhow!(
                            "no {} reached `{}` within {} ms",
                            args.kind,
                            args.device,
                            args.timeout_ms
                        )))
                    }
                }
            }
            Ok(())
        }
    }
}
