//! Zenoh's own 128-byte lockstep ping-pong with the bridge's configuration
//! ([`crate::net`]): the floor the benchmark holds the bridged step against.
//! The pinging side waits for each answer as a coupled FMU waits for a frame
//! (spinning, then yielding), so the two measure alike.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use zenoh::sample::Locality;
use zenoh::Wait;

use crate::net::{self, Endpoints};

const PING: &str = "rfm/pingpong/ping";
const PONG: &str = "rfm/pingpong/pong";
const BYTES: usize = 128;

fn value(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1).cloned())
}

/// `pong --listen E` or `ping --connect E --count N --out FILE`.
pub fn main(args: Vec<String>) -> Result<()> {
    let endpoints = Endpoints {
        listen: value(&args, "--listen").into_iter().collect(),
        connect: value(&args, "--connect").into_iter().collect(),
    };
    let session = net::open(&endpoints)?;
    match args.first().map(String::as_str) {
        Some("pong") => pong(&session),
        Some("ping") => {
            let count: u64 = value(&args, "--count")
                .context("--count N")?
                .parse()
                .context("--count N")?;
            let out = value(&args, "--out").context("--out FILE")?;
            let samples = ping(&session, count)?;
            let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
            std::fs::write(&out, bytes).with_context(|| format!("cannot write {out}"))?;
            Ok(())
        }
        _ => bail!("usage: zenoh-pingpong pong --listen E | ping --connect E --count N --out FILE"),
    }
}

/// Answers every ping with its payload, until killed.
fn pong(session: &zenoh::Session) -> Result<()> {
    let publisher = net::publisher(session, PONG)?;
    let _sub = session
        .declare_subscriber(PING)
        .allowed_origin(Locality::Remote)
        .callback(move |s| {
            let _ = publisher.put(s.payload().clone()).wait();
        })
        .wait()
        .map_err(|e| anyhow::anyhow!("subscriber: {e}"))?;
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// `count` round trips once the pong side answers, each in ns.
fn ping(session: &zenoh::Session, count: u64) -> Result<Vec<u64>> {
    let answers = Arc::new(AtomicU64::new(0));
    let publisher = net::publisher(session, PING)?;
    let _sub = {
        let answers = answers.clone();
        session
            .declare_subscriber(PONG)
            .allowed_origin(Locality::Remote)
            .callback(move |_| {
                answers.fetch_add(1, Ordering::Release);
            })
            .wait()
            .map_err(|e| anyhow::anyhow!("subscriber: {e}"))?
    };
    let payload = vec![0u8; BYTES];
    let put = || {
        publisher
            .put(payload.clone())
            .wait()
            .map_err(|e| anyhow::anyhow!("put: {e}"))
    };
    // Until the pong side answers (its connection is up).
    let deadline = Instant::now() + Duration::from_secs(20);
    while answers.load(Ordering::Acquire) == 0 {
        if Instant::now() > deadline {
            bail!("no answer from the pong side within 20 s");
        }
        put()?;
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    let first = answers.load(Ordering::Acquire);
    let mut samples = Vec::with_capacity(count as usize);
    for seen in first..first + count {
        let t = Instant::now();
        put()?;
        let mut polls = 0u32;
        while answers.load(Ordering::Acquire) == seen {
            polls += 1;
            if polls < 2048 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        samples.push(t.elapsed().as_nanos() as u64);
    }
    Ok(samples)
}
