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

use rfm_bridge::bridge::{Bridge, Config};
use rfm_bridge::inbox::{Inbox, Outbox};
use rfm_bridge::net::{self, Endpoints};
use rfm_bridge::remote::Writer;
use rfm_bridge::shared::{BridgeId, Shared};
use rfm_bridge::wire;
use rfm_memory::{Device, DeviceSpec, OpenOptions, Region, DEFAULT_MEMORY_SIZE};

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

/// How long the main loop yields between turns after a frame before it
/// sleeps: a lockstep step's round trip is well inside it, and a paused
/// coupling costs a millisecond's sleep per turn. It never spins: the
/// frames of other hosts arrive on Zenoh's threads, which a spinning loop
/// keeps off the cores (on two cores, spinning made the bridged step 2.3 ×
/// Zenoh's round trip; yielding, 1.0-1.2 ×).
const YIELD_FOR: Duration = Duration::from_millis(20);
const IDLE_SLEEP: Duration = Duration::from_millis(1);

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
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .context("cannot install the SIGINT/SIGTERM handler")?;
    }
    let config = Config {
        device: args.device.clone(),
        memory_size,
        card: matches!(device.spec(), DeviceSpec::Rfm2g { .. }),
        report: (args.report > 0.0).then(|| secs(args.report)),
    };
    let mut bridge = connect(config, &endpoints, memory)?;
    bridge.hello();
    let mut last_frame = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if let Some(why) = bridge.fatal() {
            bridge.close();
            bail!(why);
        }
        let now = Instant::now();
        if bridge.turn(now)? {
            last_frame = now;
            continue;
        }
        if now.duration_since(last_frame) < YIELD_FOR {
            std::thread::yield_now();
        } else {
            std::thread::sleep(IDLE_SLEEP);
        }
    }
    bridge.close();
    println!("rfm-bridge: stopped");
    Ok(())
}

/// The Zenoh session, its subscriber to the other bridges (Zenoh's thread
/// runs the [`Inbox`]), and the bridge of `memory` over it.
fn connect(config: Config, endpoints: &Endpoints, memory: Region) -> Result<Bridge> {
    let session = net::open(endpoints)?;
    let own = BridgeId::parse(&session.zid().to_string()).context("this bridge's own Zenoh id")?;
    let shared = Arc::new(Shared::default());
    let outbox = Arc::new(Outbox::new(
        net::publisher(&session, &wire::data_key(own.zid()))?,
        shared.clone(),
    ));
    let writer = Arc::new(Mutex::new(Writer::new(memory.clone())));
    let inbox = Inbox {
        own: own.clone(),
        device: config.device.clone(),
        memory_size: config.memory_size,
        shared: shared.clone(),
        writer: writer.clone(),
        outbox: outbox.clone(),
    };
    session
        .declare_subscriber(wire::all_keys())
        .allowed_origin(Locality::Remote)
        .callback(move |sample| {
            inbox.receive(sample.key_expr().as_str(), &sample.payload().to_bytes());
        })
        .background()
        .wait()
        .map_err(|e| anyhow::anyhow!("cannot declare the subscriber: {}", net::plain(e)))?;
    println!(
        "rfm-bridge: {} ({} bytes) as bridge {own}; listening on {}; connecting to {}",
        config.device,
        config.memory_size,
        list(&endpoints.listen),
        list(&endpoints.connect)
    );
    Ok(Bridge::new(
        config,
        session,
        memory,
        (outbox, shared, writer),
    ))
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
