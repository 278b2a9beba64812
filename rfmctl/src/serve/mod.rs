//! `serve`: a live page of the lab on a memory, for the people who watch it
//! run (the instructor, the engineer on call): every node and its state by
//! the ownership verdict, its own timing and its peers' latency as it
//! publishes them (its area's statistics block), the rings, the lab's
//! structs, any signal plotted over the last minute, and a timeline of what
//! happened. The same data for scripts: `/api/snapshot` (JSON) and
//! `/api/stream` (server-sent events).
//!
//! One sampler (this thread) reads the memory as `watch` does, every
//! millisecond, and takes a snapshot ten times a second; the HTTP server
//! (`tiny_http`) answers each request in a thread of its own from the last
//! snapshot. Nothing on the page writes the memory.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use clap::Args;
use serde_json::{json, Value};

use crate::failure::Failure;
use crate::numbers::parse_u64;
use crate::open::parse_wait;

mod chart;
mod history;
mod http;
mod labs;

use history::History;
use labs::Labs;

pub const HELP: &str = "\
Serves a live page of the lab on DEVICE (every device rfmctl takes, A+B
included; several DEVICEs: the memories of one lab joined by rfm-bridge, each
node shown from the memory it runs on) at http://ADDR:PORT/ (default
127.0.0.1:7365; another address only when given): every node (slot, period,
sync mode, lag, state by the ownership verdict, step, simulation time, frame
age), each node's own step and wait times and its peers' latency as the node
publishes them, the rings' state and the board a ring is open at, the
--interface file's structs, any signal or struct field plotted over the last
10-60 s, and a timeline of joins, closes, restarts, late peers, ring cuts and
mends. The page is read-only. For scripts: /api/snapshot (JSON) and
/api/stream (server-sent events, one snapshot per event, ten a second).

Example: rfmctl serve shm:lab
         rfmctl serve /dev/rfm2g0+/dev/rfm2g1 --interface lab.toml --listen 0.0.0.0:8080
         rfmctl serve shm:cockpit-pc shm:visual-pc (two hosts' memories, a bridge between)";

#[derive(Args, Debug)]
#[command(after_help = HELP)]
pub struct ServeArgs {
    /// The memory the lab runs on (as the FMUs' `device`, `A+B` included),
    /// or one per host of a lab joined by rfm-bridge
    #[arg(required = true, num_args = 1.., value_name = "DEVICE")]
    pub devices: Vec<String>,
    /// An interface file whose foreign nodes (the lab's structs) are shown
    /// too; the nodes running must be of it
    #[arg(long, value_name = "FILE")]
    pub interface: Option<PathBuf>,
    /// Where to listen
    #[arg(long, default_value = "127.0.0.1:7365", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// The FMUs' regionOffset
    #[arg(long, default_value = "0", value_parser = parse_u64)]
    pub region_offset: u64,
    /// Wait for the memory and its nodes (as `watch --wait`)
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "inf",
          value_parser = parse_wait)]
    pub wait: Option<f64>,
}

/// How often a snapshot is taken (and streamed).
const SNAPSHOT_EVERY: Duration = Duration::from_millis(100);

/// The last snapshot, for every request.
struct Snapshot {
    version: u64,
    time_ms: u64,
    value: Arc<Value>,
    text: Arc<String>,
}

/// What the sampler and the server share.
pub struct Shared {
    last: Mutex<Snapshot>,
    changed: Condvar,
    history: Mutex<History>,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            last: Mutex::new(Snapshot {
                version: 0,
                time_ms: 0,
                value: Arc::new(json!({})),
                text: Arc::new("{}".to_owned()),
            }),
            changed: Condvar::new(),
            history: Mutex::new(History::default()),
        }
    }

    /// The last snapshot and when it was taken (ms since 1970).
    fn snapshot(&self) -> (u64, Arc<Value>) {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        (last.time_ms, Arc::clone(&last.value))
    }

    /// A snapshot newer than `seen` (its version and text), waiting at most
    /// `timeout` for one.
    fn wait_newer(&self, seen: u64, timeout: Duration) -> Option<(u64, Arc<String>)> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let (last, _) = self
            .changed
            .wait_timeout_while(last, timeout, |l| l.version <= seen)
            .unwrap_or_else(|e| e.into_inner());
        (last.version > seen).then(|| (last.version, Arc::clone(&last.text)))
    }

    fn publish(&self, time_ms: u64, value: Value) {
        let text = Arc::new(value.to_string());
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        *last = Snapshot {
            version: last.version + 1,
            time_ms,
            value: Arc::new(value),
            text,
        };
        self.changed.notify_all();
    }
}

pub fn run(args: &ServeArgs, library: Option<&Path>) -> Result<(), Failure> {
    crate::recording::plot::font()?;
    // The address first: a port in use is said at once, not after --wait.
    let server = tiny_http::Server::http(args.listen).map_err(|e| {
        Failure::usage(anyhow!(
            "cannot listen on {}: {e} (another program holds the port? give --listen ADDR:PORT)",
            args.listen
        ))
    })?;
    let mut labs = Labs::open(args, library)?;
    let shared = Arc::new(Shared::new());
    {
        let (server, shared) = (Arc::new(server), Arc::clone(&shared));
        std::thread::spawn(move || http::answer(server, shared));
    }
    eprintln!(
        "rfmctl: serving http://{}/ (the lab on {})",
        args.listen,
        labs.devices()
    );
    loop {
        labs.poll_for(SNAPSHOT_EVERY);
        let time_ms = rfm_frames::wall::now_ns() / 1_000_000;
        let mut snapshot = labs.json(Instant::now());
        snapshot["time_ms"] = json!(time_ms);
        {
            let mut history = shared.history.lock().unwrap_or_else(|e| e.into_inner());
            history.add(time_ms, &snapshot);
            snapshot["events"] = history.events_json();
        }
        shared.publish(time_ms, snapshot);
    }
}
