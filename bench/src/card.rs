//! The card's costs (issue 27): what a lockstep step does to a PCIE-5565,
//! counted exactly on emulated RFM2g boards, and its modeled time on the card
//! ([`rfm_card_model`]). A node is a process running the link the FMU steps
//! (`rfm_core::link::Link`, built here with the `counts` feature; the FMU
//! ships without it), on its own board of one emulated ring.

use rfm_interface::settings::LinkSettings;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rfm_card_model::{StepCost, READ_ROUND_TRIPS_NS};
use rfm_core::link::{CardReads, Link, LinkConfig, DMA_READ_FROM};
use rfm_frames::frame::framed::FrameBuf;
use rfm_frames::slot::WaitPoll;
use rfm_frames::wait::WaitStrategy;
use rfm_interface::{Interface, Reserved};
use rfm_memory::counts::{self, Counts};
use rfm_memory::{Device, OpenOptions, WORD};
use serde_json::{json, Value};

/// The read paths compared in one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPath {
    /// Before issue 27: each try loads the entry's sequence and step, frames
    /// word by word.
    Today,
    /// One word a try; frames from 64 bytes on by one `RFM2gRead`, with the
    /// driver's DMA threshold set (what a lab sets).
    New,
    /// The new poll with the driver's DMA threshold off (the driver's default):
    /// frames word by word.
    NewWithoutDma,
}

impl ReadPath {
    pub const ALL: [ReadPath; 3] = [ReadPath::Today, ReadPath::New, ReadPath::NewWithoutDma];

    pub fn name(self) -> &'static str {
        match self {
            ReadPath::Today => "today",
            ReadPath::New => "new",
            ReadPath::NewWithoutDma => "new_without_dma",
        }
    }

    pub fn parse(s: &str) -> Result<ReadPath> {
        ReadPath::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .with_context(|| format!("unknown read path {s}"))
    }

    fn card(self) -> CardReads {
        match self {
            ReadPath::Today => CardReads {
                dma_from: None,
                poll: Some(WaitPoll::Entry),
            },
            ReadPath::New | ReadPath::NewWithoutDma => CardReads::default(),
        }
    }

    fn dma(self) -> bool {
        self == ReadPath::New
    }
}

/// Steps before counting: the handshake (a peer is taken once its heartbeat
/// proves it live) is not the steady step.
const WARM_UP: u64 = 500;

/// A counted case: `interface` is `attitude` (the preset) or an interface
/// file; `nodes` of it step in lockstep at lag 0, waiting by `wait`, each on
/// its own board of emulated ring `ring` (the emulator `library`).
#[derive(Debug, Clone, Copy)]
pub struct Case<'a> {
    pub library: &'a Path,
    pub ring: &'a str,
    pub interface: &'a str,
    pub nodes: usize,
    pub path: ReadPath,
    pub wait: WaitStrategy,
    /// Two boards on two rings (`A+B`, a redundant device): every store on
    /// both.
    pub redundant: bool,
}

/// Node `node` of `case` for `steps` counted steps. Returns the steps
/// counted, this node's counts and the bytes of each peer's frame, as the
/// samples file's words ([`counts_of`]).
pub fn node(case: &Case, node: usize, steps: u64) -> Result<Vec<u64>> {
    let interface = interface_of(case)?;
    let slot = match &interface {
        Some(i) => i.nodes[node].slot,
        None => node as u8,
    };
    // Open for the whole run, as the original single board was.
    let (boards, device) = open_boards(case, node)?;
    let mut link = Link::open(LinkConfig {
        interface,
        node_slot: slot,
        peer_slot: if case.nodes == 2 { 1 - slot } else { slot },
        card: case.path.card(),
        settings: LinkSettings {
            device: device.parse().expect("a device string"),
            rfm2g_library: Some(case.library.to_path_buf()),
            wait: case.wait,
            timeout: Duration::from_secs(10),
            startup_timeout: Duration::from_secs(60),
            ..Default::default()
        },
        ..LinkConfig::default()
    })?;
    let mut frame = FrameBuf::new(link.payload_len());
    link.start(0.0, &mut frame)?;
    for k in 0..WARM_UP + steps {
        if k == WARM_UP {
            counts::take();
        }
        link.step(k, k as f64 * 1e-3, &mut frame)?;
    }
    let c = counts::take();
    let peer_frames = link
        .peers()
        .iter()
        .map(|p| p.observed().geometry().frame_len() as u64);
    let mut words = vec![
        steps,
        c.pio_reads,
        c.pio_read_bytes,
        c.pio_writes,
        c.pio_write_bytes,
        c.vendor_calls,
        c.vendor_read_bytes,
        c.dma,
        c.polls,
        c.wait_reads,
        c.watches,
    ];
    words.extend(peer_frames);
    link.close()?;
    drop(boards);
    Ok(words)
}

/// The case's interface file, parsed (`None`: the attitude pair).
fn interface_of(case: &Case) -> Result<Option<Arc<Interface>>> {
    Ok(match case.interface {
        "attitude" => None,
        file => {
            let text = std::fs::read_to_string(file).with_context(|| format!("read {file}"))?;
            Some(Arc::new(Interface::parse(file, &text, &Reserved::NONE)?))
        }
    })
}

/// Node `node`'s emulated boards, one per ring (two on a redundant device),
/// with the DMA threshold the case's read path wants, and the device string
/// that names them.
fn open_boards(case: &Case, node: usize) -> Result<(Vec<Device>, String)> {
    let path_of = |ring: &str| format!("/dev/rfm2g-sim/{ring}/{}/1M", node + 1);
    let paths = if case.redundant {
        let ring = case.ring;
        vec![path_of(&format!("{ring}-a")), path_of(&format!("{ring}-b"))]
    } else {
        vec![path_of(case.ring)]
    };
    let mut boards = Vec::new();
    for board in &paths {
        let board = Device::open(
            board,
            &OpenOptions {
                rfm2g_library: Some(case.library.to_path_buf()),
                ..OpenOptions::default()
            },
        )?;
        board.set_dma_threshold(if case.path.dma() { 0 } else { u32::MAX })?;
        boards.push(board);
    }
    Ok((boards, paths.join("+")))
}

/// What a node wrote ([`node`]'s words): steps, counts, its peers' frames.
pub fn counts_of(words: &[u64]) -> Result<(u64, Counts, Vec<usize>)> {
    let &[steps, pio_reads, pio_read_bytes, pio_writes, pio_write_bytes, vendor_calls, vendor_read_bytes, dma, polls, wait_reads, watches, ref peers @ ..] =
        words
    else {
        bail!(
            "a counted node wrote {} words, not 11 and its peers'",
            words.len()
        )
    };
    Ok((
        steps,
        Counts {
            pio_reads,
            pio_read_bytes,
            pio_writes,
            pio_write_bytes,
            vendor_calls,
            vendor_read_bytes,
            dma,
            polls,
            wait_reads,
            watches,
        },
        peers.iter().map(|&f| f as usize).collect(),
    ))
}

/// One case on one path, for the JSON: the counts per step, the modeled
/// step on the card at each round trip, and whether the reads are within
/// the bound (one word a try, the frame's words once, two for the
/// seqlock, per step). `peer_frames` are the bytes of each peer's frame.
pub fn report(path: ReadPath, steps: u64, c: &Counts, peer_frames: &[usize]) -> Value {
    let per = |n: u64| (n as f64 / steps as f64 * 1000.0).round() / 1000.0;
    // The tries that found nothing were waiting for a peer, on the card as
    // here: the modeled step leaves their loads out.
    let taken = Counts {
        pio_reads: c.pio_reads - c.wait_reads,
        ..*c
    };
    let mut modeled = serde_json::Map::new();
    let mut dominant = serde_json::Map::new();
    for (key, read_ns) in READ_ROUND_TRIPS_NS {
        let cost = StepCost::of(&taken, steps, read_ns);
        modeled.insert(key.into(), json!(cost.total().round()));
        dominant.insert(key.into(), json!(cost.dominant()));
    }
    let dma_read = |frame: usize| path == ReadPath::New && frame - WORD >= DMA_READ_FROM as usize;
    let frame_words: u64 = peer_frames
        .iter()
        .map(|&f| {
            if dma_read(f) {
                0
            } else {
                (f / WORD - 1) as u64
            }
        })
        .sum();
    let bound = c.polls + steps * (frame_words + 2 * peer_frames.len() as u64);
    let reads = c.pio_reads - 3 * c.watches;
    json!({
        "pio_reads_per_step": per(c.pio_reads),
        "pio_read_bytes_per_step": per(c.pio_read_bytes),
        "polls_per_step": per(c.polls),
        "pio_writes_per_step": per(c.pio_writes),
        "pio_write_bytes_per_step": per(c.pio_write_bytes),
        "vendor_calls_per_step": per(c.vendor_calls),
        "dma_per_step": per(c.dma),
        "ring_bytes_per_step": per(c.ring_bytes()),
        "wait_reads_per_step": per(c.wait_reads),
        "watch_reads_per_step": per(3 * c.watches),
        "modeled_card_ns": modeled,
        "dominant_term": dominant,
        // The bound: one word a try, then per step each peer's frame
        // words once (none when one RFM2gRead takes it) and two for its seqlock.
        "reads_within_bound": {
            "value": per(reads),
            "target": format!(
                "<= {} (polls_per_step + {} per step)",
                per(bound),
                frame_words + 2 * peer_frames.len() as u64
            ),
            "met": reads <= bound,
        },
    })
}
