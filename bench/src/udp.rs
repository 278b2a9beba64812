//! Case 4, the network alternative: the same exchange over UDP on 127.0.0.1: each
//! step sends this node's 64 bytes and waits for the peer's, blocking in the
//! kernel (4a), or busy-polling a non-blocking socket (4b, the best a network path
//! does: no sleep and wake-up per packet).

use std::net::UdpSocket;
use std::time::Instant;

use anyhow::Result;

use crate::patience::{Patience, PEER_TIMEOUT};

pub fn node(port: u16, peer_port: u16, steps: u64, busy_poll: bool) -> Result<Vec<u64>> {
    let socket = UdpSocket::bind(("127.0.0.1", port))?;
    socket.connect(("127.0.0.1", peer_port))?;
    socket.set_read_timeout(Some(PEER_TIMEOUT))?;
    socket.set_nonblocking(busy_poll)?;
    let mut times = Vec::with_capacity(steps as usize);
    let mut frame = [0u8; 64];
    let mut got = [0u8; 64];
    for k in 0..steps {
        let start = Instant::now();
        frame[..8].copy_from_slice(&k.to_le_bytes());
        // The peer may not be bound yet on the first steps: resend until it answers.
        let mut patience = Patience::default();
        loop {
            match socket.send(&frame) {
                Ok(_) => break,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::WouldBlock
                    ) =>
                {
                    patience.poll(|| format!("room to send step {k}"))?;
                    std::thread::yield_now()
                }
                Err(e) => return Err(e.into()),
            }
        }
        let mut patience = Patience::default();
        loop {
            match socket.recv(&mut got) {
                Ok(64) if u64::from_le_bytes(got[..8].try_into()?) >= k => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    patience.poll(|| format!("peer bound to answer step {k}"))?;
                    let _ = socket.send(&frame);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    patience.poll(|| format!("datagram of step {k}"))?;
                    std::hint::spin_loop()
                }
                Err(e) => return Err(e.into()),
            }
        }
        times.push(start.elapsed().as_nanos() as u64);
    }
    Ok(times)
}
