//! What other bridges send, as Zenoh's receiving thread hands it over:
//! hellos (who is there, and whether their memory is this one's size),
//! pings, and the words and frames of their hosts' nodes, which the
//! [`Writer`] writes into this host's memory.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use zenoh::pubsub::Publisher;
use zenoh::Wait;

use crate::remote::Writer;
use crate::report;
use crate::shared::{BridgeId, Peer, Shared, Traffic};
use crate::wire::Message;

/// This bridge's one publisher: every message it sends, in order.
#[derive(Debug)]
pub struct Outbox {
    publisher: Publisher<'static>,
    shared: Arc<Shared>,
}

impl Outbox {
    pub fn new(publisher: Publisher<'static>, shared: Arc<Shared>) -> Outbox {
        Outbox { publisher, shared }
    }

    /// Publishes `m`: Zenoh sends it on in order with every other of this
    /// bridge's messages (the pipeline is drained when the session closes).
    pub fn send(&self, m: &Message) {
        let mut bytes = Vec::new();
        m.encode(&mut bytes);
        Traffic::add(&self.shared.traffic.bytes_out, bytes.len() as u64);
        // A put fails only once the session is closing.
        let _ = self.publisher.put(bytes).wait();
    }
}

/// The receiving side of one bridge.
#[derive(Debug)]
pub struct Inbox {
    pub own: BridgeId,
    pub device: String,
    pub memory_size: u64,
    pub shared: Arc<Shared>,
    pub writer: Arc<Mutex<Writer>>,
    pub outbox: Arc<Outbox>,
}

impl Inbox {
    /// One sample on key `key` (a bridge's: its last part is the bridge's id).
    pub fn receive(&self, key: &str, bytes: &[u8]) {
        let shared = &self.shared;
        let from = match BridgeId::parse(key.rsplit('/').next().unwrap_or_default()) {
            Ok(from) => from,
            Err(e) => {
                Traffic::add(&shared.traffic.rejected, 1);
                eprintln!("rfm-bridge: a message on key `{key}` rejected: {e}");
                return;
            }
        };
        if from == self.own || shared.refused().contains(&from) {
            return;
        }
        let from = &from;
        Traffic::add(&shared.traffic.bytes_in, bytes.len() as u64);
        let message = match Message::decode(bytes) {
            Ok(m) => m,
            Err(e) => {
                Traffic::add(&shared.traffic.rejected, 1);
                eprintln!("rfm-bridge: a message of bridge {from} rejected: {e}");
                return;
            }
        };
        match message {
            Message::Hello {
                memory_size,
                device,
            } => self.hello(from, memory_size, device),
            Message::Ping { id } => self.outbox.send(&Message::Pong {
                id,
                to: from.word(),
            }),
            Message::Pong { id, to } => {
                if to == self.own.word() {
                    let sent = shared.pings().remove(&id);
                    if let (Some(sent), Some(p)) = (sent, shared.peers().get_mut(from)) {
                        p.rtt = Some(sent.elapsed());
                    }
                }
            }
            m => {
                let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
                match w.apply(from, &m, shared) {
                    Ok(Some(d)) => println!("rfm-bridge: {}", report::describe(&d)),
                    Ok(None) => {}
                    Err(e) => {
                        Traffic::add(&shared.traffic.rejected, 1);
                        eprintln!("rfm-bridge: a message of bridge {from} not written: {e}");
                    }
                }
            }
        }
    }

    fn own_hello(&self) {
        self.outbox.send(&Message::Hello {
            memory_size: self.memory_size,
            device: &self.device,
        });
    }

    /// A bridge says it is there: a new one is told this one is too, and
    /// gets every local session again; one of another memory size is
    /// refused.
    fn hello(&self, from: &BridgeId, theirs: u64, their_device: &str) {
        let shared = &self.shared;
        if theirs != self.memory_size {
            let why = format!(
                "bridge {from} couples a memory of {theirs} bytes ({their_device}), this one {} \
                 ({}): give every host's memory the same size (--memory-size, or the boards' \
                 own)",
                self.memory_size, self.device
            );
            // Told first, so that the other side learns it too.
            self.own_hello();
            if shared.peers().is_empty() {
                // Coupled with nobody yet: this bridge is the one set up wrong.
                shared.fail(why);
            } else if shared.refused().insert(from.clone()) {
                eprintln!("rfm-bridge: ignored: {why}");
            }
            return;
        }
        let new = {
            let mut peers = shared.peers();
            let new = !peers.contains_key(from);
            let p = peers.entry(from.clone()).or_insert(Peer {
                device: their_device.to_owned(),
                last_hello: Instant::now(),
                rtt: None,
            });
            p.last_hello = Instant::now();
            new
        };
        if new {
            println!("rfm-bridge: bridge {from} ({their_device}) joined");
            self.own_hello();
            shared.resend.store(true, Ordering::Release);
        }
    }
}
