//! How long a spinning benchmark loop waits for its peer: a peer process that
//! died must end the run with an error, not leave its partner spinning forever
//! (and `scripts/test.sh` with it).

use std::time::{Duration, Instant};

use anyhow::{bail, Result};

/// As long as the blocking UDP case waits in the kernel (its read timeout).
pub const PEER_TIMEOUT: Duration = Duration::from_secs(5);

/// Polls between two clock reads: a read per poll would slow the very polling
/// that is measured.
const POLLS_PER_READ: u32 = 1024;

/// One wait's patience. Made fresh for each wait; reads no clock until the wait
/// has lasted `POLLS_PER_READ` polls.
#[derive(Debug, Default)]
pub struct Patience {
    polls: u32,
    since: Option<Instant>,
}

impl Patience {
    /// Counts one fruitless poll; an error naming `what` was awaited once
    /// [`PEER_TIMEOUT`] has passed.
    pub fn poll(&mut self, what: impl FnOnce() -> String) -> Result<()> {
        self.polls += 1;
        if !self.polls.is_multiple_of(POLLS_PER_READ) {
            return Ok(());
        }
        let since = *self.since.get_or_insert_with(Instant::now);
        if since.elapsed() > PEER_TIMEOUT {
            bail!(
                "no {} within {PEER_TIMEOUT:?}: the peer process died or stalled",
                what()
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_up_only_after_the_timeout() {
        let mut p = Patience::default();
        for _ in 0..POLLS_PER_READ * 4 {
            p.poll(|| "frame".into()).unwrap();
        }
        // As if the wait had begun long ago.
        p.since = Some(Instant::now() - PEER_TIMEOUT * 2);
        let err = (0..POLLS_PER_READ)
            .map(|_| p.poll(|| "frame 7".into()))
            .find_map(Result::err)
            .expect("an error once the timeout has passed");
        assert!(err.to_string().contains("no frame 7 within 5s"), "{err}");
    }
}
