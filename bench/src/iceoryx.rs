//! The general-purpose peer a user would pick instead: iceoryx2 publish-subscribe
//! (zero-copy shared memory), two processes, the same lockstep exchange as the
//! others: each step publishes this node's 64 bytes (step number first) and
//! spins until the peer's sample of the same step arrives.

use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use iceoryx2::node::Node;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;

use crate::patience::Patience;

/// Payload: the step number, then seven words.
type Frame = [u64; 8];

/// Before the first step: "my publisher is up" and "I received yours".
const HELLO: u64 = u64::MAX;
const READY: u64 = u64::MAX - 1;

/// iceoryx2's objects in /dev/shm (`iox2_…`): it keeps a global management
/// object there after its nodes are gone, which a run must not leave behind.
pub fn objects() -> std::collections::BTreeSet<std::path::PathBuf> {
    std::fs::read_dir("/dev/shm")
        .map(|dir| {
            dir.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("iox2_"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Removes iceoryx2's objects made since `before` was taken (those of other
/// programs stay).
pub fn remove_new(before: &std::collections::BTreeSet<std::path::PathBuf>) {
    for path in objects().difference(before) {
        let _ = std::fs::remove_file(path);
    }
}

/// One node's ports: its publisher and its subscriber to the peer's service.
/// The ports are declared before the node, so they drop first.
struct Ports {
    publisher: Publisher<ipc::Service, Frame, ()>,
    subscriber: Subscriber<ipc::Service, Frame, ()>,
    _node: Node<ipc::Service>,
}

impl Ports {
    /// Node `me`'s ports on the services `prefix/0` and `prefix/1`.
    fn open(prefix: &str, me: usize) -> Result<Ports> {
        // Its defaults, given explicitly: no config file is looked for (nor warned about).
        let node = NodeBuilder::new()
            .config(&Config::default())
            .create::<ipc::Service>()
            .map_err(|e| anyhow!("iceoryx2 node: {e:?}"))?;
        let service = |n: usize| {
            let name = format!("{prefix}/{n}");
            let name: ServiceName = name
                .as_str()
                .try_into()
                .map_err(|e| anyhow!("service name {name}: {e:?}"))?;
            node.service_builder(&name)
                .publish_subscribe::<Frame>()
                .subscriber_max_buffer_size(16)
                .open_or_create()
                .map_err(|e| anyhow!("service {n}: {e:?}"))
        };
        let (own, theirs) = (service(me)?, service(1 - me)?);
        let publisher = own
            .publisher_builder()
            .create()
            .map_err(|e| anyhow!("publisher: {e:?}"))?;
        let subscriber = theirs
            .subscriber_builder()
            .buffer_size(16)
            .create()
            .map_err(|e| anyhow!("subscriber: {e:?}"))?;
        Ok(Ports {
            publisher,
            subscriber,
            _node: node,
        })
    }

    /// Publishes step `k`'s frame.
    fn send(&self, k: u64) -> Result<()> {
        let mut frame = [0u64; 8];
        frame[0] = k;
        for (i, w) in frame.iter_mut().enumerate().skip(1) {
            *w = k ^ i as u64;
        }
        self.publisher
            .loan_uninit()
            .map_err(|e| anyhow!("loan: {e:?}"))?
            .write_payload(frame)
            .send()
            .map_err(|e| anyhow!("send: {e:?}"))?;
        Ok(())
    }

    /// The step number of the peer's next sample, if one arrived.
    fn receive(&self) -> Result<Option<u64>> {
        Ok(self
            .subscriber
            .receive()
            .map_err(|e| anyhow!("receive: {e:?}"))?
            .map(|s| s.payload()[0]))
    }

    /// Waits until both nodes' samples reach the other, returning the peer's
    /// step 0 if it came first. A sample sent before the peer's subscriber is
    /// connected is lost. So: say HELLO until the peer is heard (its publisher
    /// reaches us), then READY until the peer says READY or has started (it
    /// heard us: ours reaches it).
    fn greet(&self) -> Result<Option<u64>> {
        let started = Instant::now();
        let (mut heard, mut peer_ready, mut first) = (false, false, None);
        while !(heard && peer_ready) {
            self.send(if heard { READY } else { HELLO })?;
            std::thread::sleep(std::time::Duration::from_millis(1));
            while let Some(k) = self.receive()? {
                heard = true;
                match k {
                    HELLO => {}
                    READY => peer_ready = true,
                    step => {
                        peer_ready = true;
                        first = Some(step);
                    }
                }
            }
            if started.elapsed().as_secs() > 30 {
                bail!("iceoryx2: no peer within 30 s");
            }
        }
        Ok(first)
    }
}

/// Node `me` of the pair on services under `prefix`: `steps` lockstep steps,
/// each one's time in nanoseconds.
pub fn node(prefix: &str, me: usize, steps: u64) -> Result<Vec<u64>> {
    let ports = Ports::open(prefix, me)?;
    let first = ports.greet()?;
    let mut times = Vec::with_capacity(steps as usize);
    for k in 0..steps {
        let start = Instant::now();
        ports.send(k)?;
        if first != Some(k) {
            let mut patience = Patience::default();
            loop {
                match ports.receive()? {
                    Some(j) if j == k => break,
                    Some(_) => {}
                    None => {
                        patience.poll(|| format!("iceoryx2 sample of step {k}"))?;
                        std::hint::spin_loop()
                    }
                }
            }
        }
        times.push(start.elapsed().as_nanos() as u64);
    }
    Ok(times)
}
