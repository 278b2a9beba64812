//! What a lockstep step does to an RFM2g card, counted exactly (issue 27):
//! each try of the wait loads one word, a frame is taken with one read of its
//! words (or one `RFM2gRead`, a DMA transfer, when the driver's threshold lets
//! it) between the seqlock's two loads, and a publish writes the frame, the
//! sequence twice and the head word. A change that adds a load to any of
//! these fails here. Over the emulated vendor library, two boards of one
//! ring, a node per thread (counts are per thread).
#![cfg(not(miri))]

mod common;

use rfm_interface::settings::LinkSettings;
use std::sync::Arc;
use std::time::Duration;

use rfm_core::link::{CardReads, Link, LinkConfig};
use rfm_frames::area::FRAME_HEADER;
use rfm_frames::frame::framed::FrameBuf;
use rfm_frames::slot::WaitPoll;
use rfm_frames::wait::WaitStrategy;
use rfm_interface::{Interface, Reserved};
use rfm_memory::counts::{self, Counts};
use rfm_memory::{Device, OpenOptions, WORD};

const STEPS: u64 = 2_000;

/// The interface of two nodes of `n` Reals each (as `scripts/reals_interface.py`).
fn reals(n: usize) -> Arc<Interface> {
    let mut text = format!("name = \"reals{n}\"\n");
    for (slot, node) in ["a", "b"].iter().enumerate() {
        text += &format!("[[node]]\nname = \"{node}\"\nslot = {slot}\nsignals = [\n");
        for i in 0..n {
            text += &format!("  {{ name = \"x{i}\", type = \"Real\" }},\n");
        }
        text += "]\n";
    }
    Arc::new(Interface::parse("reals.toml", &text, &Reserved::NONE).unwrap())
}

/// What node 0 did in `STEPS` lockstep steps at lag 0 against node 1, each
/// on its own emulated board whose driver's DMA threshold is `dma` (`None`:
/// the default, off), and the bytes of its peer's frame.
fn counted(
    interface: Option<Arc<Interface>>,
    card: CardReads,
    dma: Option<u32>,
) -> (Counts, usize) {
    let ring = common::unique("counts");
    let _ring = common::RingGuard(ring.clone());
    let library = common::sim_library();
    let device = |node: usize| format!("/dev/rfm2g-sim/{ring}/{}/1M", node + 1);
    let boards: Vec<Device> = (0..2)
        .map(|node| {
            let options = OpenOptions {
                rfm2g_library: Some(library.clone()),
                ..OpenOptions::default()
            };
            let board = Device::open(&device(node), &options).unwrap();
            if let Some(threshold) = dma {
                board.set_dma_threshold(threshold).unwrap();
            }
            board
        })
        .collect();
    let config = |node: usize| LinkConfig {
        interface: interface.clone(),
        card,
        settings: LinkSettings {
            device: device(node).parse().expect("a device string"),
            rfm2g_library: Some(library.clone()),
            ..config(node).settings
        },
        ..config(node)
    };
    let counted = pair(config(0), config(1));
    drop(boards);
    counted
}

/// Node `node` of the pair, lockstep at lag 0, spinning.
fn config(node: usize) -> LinkConfig {
    LinkConfig {
        node_slot: node as u8,
        peer_slot: 1 - node as u8,
        settings: LinkSettings {
            wait: WaitStrategy::Spin,
            timeout: Duration::from_secs(10),
            startup_timeout: Duration::from_secs(10),
            ..Default::default()
        },
        ..LinkConfig::default()
    }
}

/// What the first of two links did in `STEPS` steps against the second (each
/// in a thread of its own), and the bytes of its peer's frame.
fn pair(a: LinkConfig, b: LinkConfig) -> (Counts, usize) {
    let run = |config: LinkConfig| {
        std::thread::spawn(move || {
            let node = config.node_slot;
            let mut link = Link::open(config).unwrap();
            let mut frame = FrameBuf::new(link.payload_len());
            link.start(0.0, &mut frame).unwrap();
            let peer_frame = FRAME_HEADER + link.peers()[0].observed().geometry().payload.len;
            // Until the peer's heartbeat proves it live (a few of its 10 ms
            // beats), a try reads its frame and cannot take it: the handshake,
            // not the steady step this counts.
            let warm = 500;
            for k in 0..warm + STEPS {
                if k == warm {
                    counts::take();
                }
                frame.payload_mut()[..8].copy_from_slice(&(k as f64).to_le_bytes());
                link.step(k, k as f64 * 1e-3, &mut frame).unwrap();
                let got = &link.peers()[0].observed().payload()[..8];
                assert_eq!(got, (k as f64).to_le_bytes(), "node {node} at step {k}");
            }
            let counted = counts::take();
            link.close().unwrap();
            (counted, peer_frame)
        })
    };
    let (a, b) = (run(a), run(b));
    let counted = a.join().unwrap();
    b.join().unwrap();
    counted
}

/// The loads of `STEPS` taken frames of `frame` bytes: per step, the try that
/// found it (`poll` words) and the seqlock's two loads around `body` loads of
/// the frame; plus the liveness watches (three words each).
fn expected_reads(c: &Counts, poll: u64, body: u64) -> u64 {
    c.wait_reads + STEPS * (poll + 2 + body) + 3 * c.watches
}

fn check_writes(c: &Counts, frame: usize) {
    // The frame after its sequence word, the sequence twice, the head word:
    // the ring budget's bytes per step.
    let words = (frame / WORD - 1) as u64 + 3;
    assert_eq!(c.pio_writes, STEPS * words, "{c:?}");
    assert_eq!(c.pio_write_bytes, STEPS * (frame as u64 + 8), "{c:?}");
}

fn word_by_word(c: &Counts, frame: usize) {
    let body = (frame / WORD - 1) as u64;
    assert_eq!(c.pio_reads, expected_reads(c, 1, body), "{c:?}");
    assert_eq!(
        c.wait_reads,
        c.polls - STEPS,
        "a try that finds nothing loads one word: {c:?}"
    );
    assert_eq!((c.vendor_calls, c.dma), (0, 0), "{c:?}");
    check_writes(c, frame);
}

fn by_dma(c: &Counts, frame: usize) {
    assert_eq!(c.pio_reads, expected_reads(c, 1, 0), "{c:?}");
    assert_eq!(c.wait_reads, c.polls - STEPS, "{c:?}");
    assert_eq!((c.vendor_calls, c.dma), (STEPS, STEPS), "{c:?}");
    assert_eq!(c.vendor_read_bytes, STEPS * (frame - WORD) as u64, "{c:?}");
    check_writes(c, frame);
}

#[test]
fn an_attitude_step_loads_one_word_a_try_and_its_frame_once() {
    let (c, frame) = counted(None, CardReads::default(), None);
    assert_eq!(frame, 128);
    word_by_word(&c, frame);
}

#[test]
fn an_attitude_step_reads_its_frame_by_dma_when_the_driver_lets_it() {
    let (c, frame) = counted(None, CardReads::default(), Some(0));
    by_dma(&c, frame);
}

#[test]
fn a_thousand_real_step_reads_its_frame_in_one_dma_transfer() {
    let (c, frame) = counted(Some(reals(1000)), CardReads::default(), Some(0));
    assert_eq!(frame, FRAME_HEADER + 8000);
    by_dma(&c, frame);
    // Without DMA: one load a word, 2,000 round trips of a PCIe read.
    let (c, frame) = counted(Some(reals(1000)), CardReads::default(), None);
    word_by_word(&c, frame);
}

#[test]
fn below_the_threshold_frames_are_read_word_by_word_even_with_dma() {
    let card = CardReads {
        dma_from: Some(129),
        ..CardReads::default()
    };
    let (c, frame) = counted(None, card, Some(0));
    word_by_word(&c, frame);
}

/// The driver makes DMA of reads longer than its threshold (the vendor's
/// words): a frame body of exactly the threshold is read word by word.
#[test]
fn only_reads_longer_than_the_drivers_threshold_are_dma_reads() {
    let body = 128 - WORD as u32;
    let (c, frame) = counted(None, CardReads::default(), Some(body));
    word_by_word(&c, frame);
    let (c, frame) = counted(None, CardReads::default(), Some(body - 1));
    by_dma(&c, frame);
}

/// The path before the card's costs were counted: three words a try.
#[test]
fn the_old_poll_loads_three_words_a_try() {
    let card = CardReads {
        dma_from: None,
        poll: Some(WaitPoll::Entry),
    };
    let (c, frame) = counted(None, card, Some(0));
    let body = (frame / WORD - 1) as u64;
    // At least: a try that saw the entry's step before its writer had closed
    // the seqlock reads the frame again (the head word is stored after it).
    assert!(c.pio_reads >= expected_reads(&c, 3, body), "{c:?}");
    assert!(c.wait_reads <= 3 * (c.polls - STEPS), "{c:?}");
    assert_eq!(c.vendor_calls, 0);
}

/// In host memory a try loads the entry's sequence and step, which share the
/// cache line the frame is then copied from: the unit of cost there is the
/// line, not the load.
#[test]
fn host_memory_polls_the_entry_whose_line_the_frame_is_copied_from() {
    let device = format!("loopback:{}", common::unique("counts"));
    let on = |node| LinkConfig {
        settings: LinkSettings {
            device: device.clone().parse().expect("a device string"),
            ..config(node).settings
        },
        ..config(node)
    };
    let (c, frame) = pair(on(0), on(1));
    let body = (frame / WORD - 1) as u64;
    assert!(c.pio_reads >= expected_reads(&c, 3, body), "{c:?}");
    assert_eq!((c.vendor_calls, c.dma), (0, 0), "{c:?}");
}
