//! `peek`, `poke`, `dump`, `fill`: memory as a person at a console sees it. Every
//! access is checked against the memory's size and the access rules before the
//! device is touched, and the error names the offset, the size and the rule.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;
use rfm_memory::{Device, Region};

use crate::failure::Failure;
use crate::numbers::parse_u64;
use crate::open::open;

#[derive(Args, Debug)]
pub struct PeekArgs {
    pub device: String,
    /// Byte offset (4096, 0x1000, 4K)
    #[arg(value_parser = parse_u64)]
    pub offset: u64,
    /// Access width in bits; the offset must be a multiple of width/8
    #[arg(long, default_value = "32", value_parser = ["8", "16", "32", "64"])]
    pub width: String,
}

#[derive(Args, Debug)]
pub struct PokeArgs {
    pub device: String,
    #[arg(value_parser = parse_u64)]
    pub offset: u64,
    /// The value (decimal or 0x hex); it must fit in the width
    #[arg(value_parser = parse_u64)]
    pub value: u64,
    #[arg(long, default_value = "32", value_parser = ["8", "16", "32", "64"])]
    pub width: String,
}

#[derive(Args, Debug)]
pub struct DumpArgs {
    pub device: String,
    #[arg(value_parser = parse_u64)]
    pub offset: u64,
    /// Bytes to show
    #[arg(value_parser = parse_u64)]
    pub len: u64,
    /// Name what the bytes are, by the descriptors the nodes wrote
    #[arg(long)]
    pub decode: bool,
    /// With --decode: the nodes' regionOffset (where their areas start)
    #[arg(long, default_value = "0", value_parser = parse_u64, requires = "decode")]
    pub region_offset: u64,
    /// With --decode: an interface file whose foreign nodes (the structs a
    /// lab's own programs write) are named too, field by field
    #[arg(long, value_name = "FILE", requires = "decode")]
    pub interface: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct FillArgs {
    pub device: String,
    /// A multiple of 4
    #[arg(value_parser = parse_u64)]
    pub offset: u64,
    /// A multiple of 4
    #[arg(value_parser = parse_u64)]
    pub len: u64,
    /// The byte every byte of the range is set to
    #[arg(value_parser = parse_u64)]
    pub byte: u64,
}

fn bytes_of(width: &str) -> usize {
    width
        .parse::<usize>()
        .expect("clap allows 8, 16, 32, 64 only")
        / 8
}

/// A region covering `[offset, offset + len)`, mapped from an 8-byte boundary so
/// that alignment inside it is the same as in the memory; and where `offset` lies
/// in it.
fn window(device: &Device, offset: u64, len: u64) -> Result<(Region, usize), Failure> {
    let size = device.size();
    let end = offset
        .checked_add(len)
        .filter(|end| *end <= size)
        .ok_or_else(|| {
            Failure::device(anyhow!(
                "{len} bytes at offset {offset:#x} are outside the {size}-byte memory of `{}` \
             (offsets 0 to {:#x})",
                device.name(),
                size.saturating_sub(1)
            ))
        })?;
    let start = offset - offset % 8;
    let stop = end.next_multiple_of(4).min(size);
    let region = device.map(start, (stop - start) as usize)?;
    Ok((region, (offset - start) as usize))
}

fn aligned(device: &Device, offset: u64, width: usize) -> Result<(), Failure> {
    if offset.is_multiple_of(width as u64) {
        return Ok(());
    }
    Err(Failure::device(anyhow!(
        "offset {offset:#x} of `{}` is not a multiple of {width}: a {}-bit access must be aligned \
         to {width} bytes",
        device.name(),
        width * 8
    )))
}

fn show(offset: u64, width: usize, value: u64) -> String {
    format!("{offset:#010x}: {value:#0w$x} ({value})", w = 2 + 2 * width)
}

pub fn peek(args: &PeekArgs, library: Option<&Path>) -> Result<(), Failure> {
    let device = open(&args.device, library)?;
    let width = bytes_of(&args.width);
    aligned(&device, args.offset, width)?;
    let (region, at) = window(&device, args.offset, width as u64)?;
    let value = region.peek(at, width).map_err(Failure::device)?;
    println!("{}", show(args.offset, width, value));
    Ok(())
}

pub fn poke(args: &PokeArgs, library: Option<&Path>) -> Result<(), Failure> {
    let width = bytes_of(&args.width);
    if width < 8 && args.value >> (width * 8) != 0 {
        return Err(Failure::usage(anyhow!(
            "value {:#x} does not fit in {} bits",
            args.value,
            width * 8
        )));
    }
    let device = open(&args.device, library)?;
    aligned(&device, args.offset, width)?;
    let (region, at) = window(&device, args.offset, width as u64)?;
    region
        .poke(at, width, args.value)
        .map_err(Failure::device)?;
    let back = region.peek(at, width).map_err(Failure::device)?;
    println!(
        "{} (written {:#x})",
        show(args.offset, width, back),
        args.value
    );
    Ok(())
}

pub fn dump(args: &DumpArgs, library: Option<&Path>) -> Result<(), Failure> {
    let device = open(&args.device, library)?;
    if args.len == 0 {
        return Ok(());
    }
    let (region, at) = window(&device, args.offset, args.len)?;
    let mut bytes = vec![0u8; region.len()];
    region.read(0, &mut bytes).map_err(Failure::device)?;
    print!(
        "{}",
        hexdump(args.offset, &bytes[at..at + args.len as usize])
    );
    if args.decode {
        let base = args.region_offset;
        let whole = device
            .map(base, device.size().saturating_sub(base) as usize)
            .map_err(Failure::device)?;
        let found = rfm_interface::discover(&whole).map_err(Failure::device)?;
        let from = args.offset.saturating_sub(base);
        let to = from.saturating_add(args.len);
        let mut lines = crate::decode::describe(&whole, &found, from, to);
        if let Some(file) = &args.interface {
            let interface = crate::foreign::load(file)?;
            lines.extend(crate::decode::describe_foreign(
                &whole,
                &interface.foreign,
                from,
                to,
            ));
            lines.sort_by_key(|l| l.0);
        }
        if lines.is_empty() {
            println!(
                "(no node's area described in this range: {} nodes describe themselves in this memory \
                 from regionOffset {base:#x}{})",
                found.len(),
                match &args.interface {
                    Some(file) => format!(", and no foreign node of {} lies in it", file.display()),
                    None => String::new(),
                }
            );
        }
        for (first, last, text) in lines {
            // Offsets in the memory, as the dump shows them.
            println!("{:#010x}-{:#010x}  {text}", first + base, last + base);
        }
    }
    Ok(())
}

/// `hexdump -C` style: offset, 16 bytes in two groups of 8, the printable ASCII.
pub fn hexdump(offset: u64, bytes: &[u8]) -> String {
    let mut out = String::new();
    for (i, line) in bytes.chunks(16).enumerate() {
        let mut hex = String::new();
        for j in 0..16 {
            if j == 8 {
                hex.push(' ');
            }
            match line.get(j) {
                Some(b) => hex.push_str(&format!("{b:02x} ")),
                None => hex.push_str("   "),
            }
        }
        let ascii: String = line
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() || b == b' ' {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        out.push_str(&format!(
            "{:08x}  {hex} |{ascii}|\n",
            offset + 16 * i as u64
        ));
    }
    out
}

pub fn fill(args: &FillArgs, library: Option<&Path>) -> Result<(), Failure> {
    let byte = u8::try_from(args.byte).map_err(|_| {
        Failure::usage(anyhow!("fill byte {:#x} does not fit in 8 bits", args.byte))
    })?;
    if !args.offset.is_multiple_of(4) || !args.len.is_multiple_of(4) {
        return Err(Failure::device(anyhow!(
            "fill works in whole 32-bit words, as reflective memory is written: offset {:#x} and \
             length {} must be multiples of 4",
            args.offset,
            args.len
        )));
    }
    let device = open(&args.device, library)?;
    let (region, at) = window(&device, args.offset, args.len)?;
    region
        .fill(at, args.len as usize, byte)
        .map_err(Failure::device)?;
    println!(
        "filled {} bytes at {:#010x} with {byte:#04x}",
        args.len, args.offset
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::hexdump;

    #[test]
    fn dumps_like_hexdump_c() {
        let text = hexdump(0x100, b"Hello RFM\x00\x01\xffabcdefgh!");
        assert_eq!(
            text,
            "00000100  48 65 6c 6c 6f 20 52 46  4d 00 01 ff 61 62 63 64  |Hello RFM...abcd|\n\
             00000110  65 66 67 68 21                                    |efgh!|\n"
        );
    }
}
