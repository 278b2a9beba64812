//! `rfm-bridge DEVICE [--listen ENDPOINT]... [--connect ENDPOINT]...`: mirrors
//! this host's coupling memory to the other hosts' bridges over Zenoh, so that
//! the FMUs of PCs without cards couple as on one memory. See `--help`.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use zenoh::sample::Locality;
use zenoh::Wait;

use rfm_bridge::inbox::{Inbox, Outbox};
use rfm_bridge::local::Watcher;
use rfm_bridge::net::{self, Endpoints};
use rfm_bridge::remote::Writer;
use rfm_bridge::report::{self, Report};
use rfm_bridge::shared::{short, Shared};
use rfm_bridge::wire::{self, Message, Stamp};
use rfm_core::{Device, DeviceSpec, OpenOptions, DEFAULT_MEMORY_SIZE};

const ABOUT: &str = "\
Mirrors this host's coupling memory to other hosts over Zenoh: the areas this
host's nodes write (frames, descriptor, heartbeat) reach the other bridges,
which write them into their memories as a reflective-memory card would. FMUs
with `device = shm:NAME` on two PCs then couple as if they shared one memory.";

const AFTER: &str = "\
Example, two PCs:
  pc-a$ rfm-bridge shm:lab --listen tcp/0.0.0.0:7447
  pc-b$ rfm-bridge shm:lab --connect tcp/192.0.2.10:7447
Runs until SIGINT or SIGTERM (exit 0). Exits non-zero, naming the cause, on a
device that cannot be opened, an endpoint that cannot be parsed or bound, or a
peer whose memory has another size.";

#[derive(Parser, Debug)]
#[command(name = "rfm-bridge", about = ABOUT, after_help = AFTER)]
struct Args {
    /// This host's memory: shm:NAME (created with --memory-size if missing), or
    /// an RFM2g board (/dev/rfm2gN) to extend its ring to PCs without cards.
    device: String,
    /// A Zenoh locator to listen on, e.g. tcp/0.0.0.0:7447 (repeatable).
    #[arg(long = "listen", value_name = "ENDPOINT")]
    listen: Vec<String>,
    /// Another bridge's locator, e.g. tcp/192.0.2.10:7447 (repeatable); tried
    /// again every 100 ms to 1 s until it answers.
    #[arg(long = "connect", value_name = "ENDPOINT")]
    connect: Vec<String>,
    /// Bytes of a shm: memory this bridge creates (every host's must match).
    #[arg(long, default_value_t = DEFAULT_MEMORY_SIZE)]
    memory_size: usize,
    /// The RFM2g library for /dev/rfm2gN (default: librfm2g.so on the library path).
    #[arg(long)]
    library: Option<std::path::PathBuf>,
    /// Seconds between reports of what is mirrored (0: only changes).
    #[arg(long, default_value_t = 5.0)]
    report: f64,
}

/// How long the main loop yields between polls after a frame before it
/// sleeps: a lockstep step's round trip is well inside it, and a paused
/// coupling costs a millisecond's sleep per poll. It never spins: the
/// frames of other hosts arrive on Zenoh's threads, which a spinning loop
/// keeps off the cores (on two cores, spinning made the bridged step 2.3 ×
/// Zenoh's round trip; yielding, 1.0-1.2 ×).
const YIELD_FOR: Duration = Duration::from_millis(20);
const IDLE_SLEEP: Duration = Duration::from_millis(1);
/// How often liveness words are read (the heartbeat moves every 10 ms).
const WORDS_EVERY: Duration = Duration::from_millis(1);
/// How often, and how far, memory is scanned for new nodes (a load per area
/// boundary, every 64 bytes): host memory whole every 10 ms, so that a claim
/// is acknowledged well within the claimant's settle (`CLAIM_SETTLE`, 40 ms)
/// and two hosts' claims are decided at the claim; a card's loads cross PCIe
/// (1-3 µs each), so 64 boundaries a millisecond, at most 0.2 ms of loads, a
/// 1 MiB board in 0.26 s (a claim there may be acknowledged after its settle:
/// two hosts' simultaneous claims are then decided at the loser's first beat).
const SCAN_EVERY: Duration = Duration::from_millis(10);
const SCAN_EVERY_CARD: Duration = Duration::from_millis(1);
const SCAN_PLACES_CARD: usize = 64;
const HELLO_EVERY: Duration = Duration::from_millis(250);
/// A bridge not heard from for this long is forgotten (its return is a new
/// bridge: every session is announced to it again).
const PEER_GONE: Duration = Duration::from_secs(2);
const PING_EVERY: Duration = Duration::from_millis(500);

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rfm-bridge: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn open(args: &Args) -> Result<Device> {
    let spec = DeviceSpec::parse(&args.device)
        .with_context(|| format!("unknown device `{}`", args.device))?;
    if let DeviceSpec::Loopback { .. } = spec {
        bail!(
            "device `{}`: loopback memory exists only inside one process; a bridge couples \
             processes on other hosts through shm:NAME or an RFM2g board",
            args.device
        );
    }
    let options = OpenOptions {
        memory_size: args.memory_size,
        rfm2g_library: args.library.clone(),
        ..OpenOptions::default()
    };
    Device::open(&args.device, &options)
        .with_context(|| format!("cannot open device `{}`", args.device))
}

fn run(args: &Args) -> Result<()> {
    let endpoints = Endpoints {
        listen: args.listen.clone(),
        connect: args.connect.clone(),
    };
    endpoints.check()?;
    let device = open(args)?;
    let memory_size = device.size();
    let memory = device
        .map(0, memory_size as usize)
        .with_context(|| format!("cannot map `{}`", args.device))?;
    let card = matches!(device.spec(), DeviceSpec::Rfm2g { .. });

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .context("cannot install the SIGINT/SIGTERM handler")?;
    }
    let session = net::open(&endpoints)?;
    let zid = session.zid().to_string();
    let shared = Arc::new(Shared::default());
    let outbox = Arc::new(Outbox::new(
        net::publisher(&session, &wire::data_key(&zid))?,
        shared.clone(),
    ));
    let hello = || {
        outbox.send(&Message::Hello {
            memory_size,
            device: &args.device,
        })
    };

    let writer = Arc::new(Mutex::new(Writer::new(memory.clone())));
    let inbox = Inbox {
        own: zid.clone(),
        device: args.device.clone(),
        memory_size,
        shared: shared.clone(),
        writer: writer.clone(),
        outbox: outbox.clone(),
    };
    let _subscriber = session
        .declare_subscriber(wire::all_keys())
        .allowed_origin(Locality::Remote)
        .callback(move |sample| {
            let from = sample
                .key_expr()
                .as_str()
                .rsplit('/')
                .next()
                .unwrap_or_default();
            inbox.receive(from, &sample.payload().to_bytes());
        })
        .wait()
        .map_err(|e| anyhow::anyhow!("cannot declare the subscriber: {}", net::plain(e)))?;

    println!(
        "rfm-bridge: {} ({memory_size} bytes) as bridge {}; listening on {}; connecting to {}",
        args.device,
        short(&zid),
        list(&args.listen),
        list(&args.connect)
    );
    hello();

    let mut watcher = Watcher::new(memory);
    let mut events = Vec::new();
    let stamp = || {
        let ts = session.new_timestamp();
        Stamp {
            time: ts.get_time().as_u64(),
            id: ts.get_id().to_le_bytes(),
        }
    };
    let mut stamp = stamp;
    let (scan_every, scan_places) = if card {
        (SCAN_EVERY_CARD, SCAN_PLACES_CARD)
    } else {
        (SCAN_EVERY, usize::MAX)
    };
    let start = Instant::now();
    let (mut next_words, mut next_scan, mut next_hello, mut next_ping) =
        (start, start, start, start);
    let mut next_report = start + secs(args.report);
    let mut last_frame = start;
    let mut ping_id = 0u64;
    let mut overrun_told = 0u64;
    let mut report = Report::new(&shared.traffic, start);
    let mut sender = |m: &Message| outbox.send(m);
    while !stop.load(Ordering::Relaxed) {
        if let Some(why) = shared.fatal() {
            // The hello that tells the peer why leaves before the session closes.
            std::thread::sleep(Duration::from_millis(200));
            bail!(why);
        }
        let moved = watcher.poll_frames(&shared.traffic, &mut sender)?;
        let now = Instant::now();
        if moved {
            last_frame = now;
        }
        let overrun = shared.traffic.overrun.load(Ordering::Relaxed);
        if overrun > overrun_told {
            eprintln!(
                "rfm-bridge: warning: {} frame(s) of this host's nodes were overwritten in their \
                 rings before this bridge read them ({overrun} in all): the other hosts miss \
                 them (a lockstep coupling never laps its ring; is this host's CPU overloaded?)",
                overrun - overrun_told
            );
            overrun_told = overrun;
        }
        if now >= next_words {
            watcher.poll_words(now, &shared, &mut stamp, &mut sender, &mut events)?;
            next_words = now + WORDS_EVERY;
            for e in events.drain(..) {
                println!("rfm-bridge: {}", report::event(&e));
            }
        }
        if now >= next_scan {
            watcher.scan(now, scan_places)?;
            next_scan = now + scan_every;
        }
        if shared.resend.swap(false, Ordering::AcqRel) {
            watcher.announce_all(&shared, &mut sender)?;
        }
        if now >= next_hello {
            hello();
            shared.peers().retain(|zid, p| {
                let gone = now.duration_since(p.last_hello) > PEER_GONE;
                if gone {
                    println!(
                        "rfm-bridge: bridge {} silent for {PEER_GONE:?}: forgotten",
                        short(zid)
                    );
                }
                !gone
            });
            next_hello = now + HELLO_EVERY;
        }
        if now >= next_ping {
            ping_id += 1;
            let mut pings = shared.pings();
            pings.retain(|_, at| now.duration_since(*at) < Duration::from_secs(5));
            pings.insert(ping_id, now);
            drop(pings);
            outbox.send(&Message::Ping { id: ping_id });
            next_ping = now + PING_EVERY;
        }
        if args.report > 0.0 && now >= next_report {
            let w = writer.lock().unwrap_or_else(|e| e.into_inner());
            println!("rfm-bridge: {}", report.line(now, &watcher, &w, &shared));
            next_report = now + secs(args.report);
        }
        let idle = now.duration_since(last_frame);
        if moved {
            continue;
        }
        if idle < YIELD_FOR {
            std::thread::yield_now();
        } else {
            std::thread::sleep(IDLE_SLEEP);
        }
    }
    println!("rfm-bridge: stopped");
    Ok(())
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".into()
    } else {
        items.join(", ")
    }
}
