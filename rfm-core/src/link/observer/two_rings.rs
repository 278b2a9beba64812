//! A peer's frame read over the two rings of a redundant device: from ring
//! A when A holds it whole, else from B (protocol.md, "Two rings"). Out of
//! line, so that one memory's path stays the few instructions it was.

use rfm_frames::frame::framed::Header;
use rfm_frames::slot::WaitPoll;
use rfm_frames::slot::{ReadError, StepPoll};
use rfm_memory::Network;

use super::{ring_stats, Observer, Reader};

impl Observer {
    /// [`Observer::poll_step`] on a redundant device, out of line as
    /// [`Observer::read_latest_of_rings`] is.
    #[inline(never)]
    pub(super) fn poll_step_of_rings(
        &mut self,
        need: u64,
        poll: WaitPoll,
    ) -> Result<StepPoll, ReadError> {
        self.area.read_from(Network::A);
        let a = self.poll_step_here(need, poll);
        if self.wanted(&a) {
            return a;
        }
        self.area.read_from(Network::B);
        let b = self.poll_step_here(need, poll);
        if self.wanted(&b) {
            // A writer stores to A before B: a frame B holds whole that A
            // did not a moment ago may have reached A since. Taking it from A
            // then keeps a healthy ring A from counting as failed.
            self.area.read_from(Network::A);
            let again = self.poll_step_here(need, poll);
            if self.wanted(&again) {
                return again;
            }
            self.area.read_from(Network::B);
            return self.poll_step_here(need, poll);
        }
        // Neither ring holds the frame of the session looked for. Both
        // holding one other session's (a restart both rings carry) is that
        // frame; one ring's alone is what it kept from before a cut.
        if let (Ok(StepPoll::Ready(ha)), Ok(StepPoll::Ready(hb))) = (&a, &b) {
            if ha.epoch == hb.epoch {
                return b;
            }
        }
        let stale = |r: Result<StepPoll, ReadError>| match r {
            Ok(StepPoll::Ready(_)) => Ok(StepPoll::NotYet),
            r => r,
        };
        let polled = ring_stats::better(stale(a), stale(b));
        self.area.read_from(self.rings.last().unwrap_or(Network::A));
        polled
    }

    /// [`Observer::read_latest`] on a redundant device: out of line, so that
    /// one memory's path stays the few instructions it was.
    #[inline(never)]
    pub(super) fn read_latest_of_rings(&mut self) -> Result<Header, ReadError> {
        let Reader::Framed(reader) = &self.reader else {
            unreachable!("framed reader")
        };
        self.area.read_from(Network::A);
        let a = reader.read_latest(&mut self.frames[1 - self.taken]);
        self.area.read_from(Network::B);
        let b_ahead = match (&a, reader.head()) {
            // A's newest is of another session than the one looked for:
            // B's, if B holds one of it.
            (Ok(h), _) if !self.of_want(h) => true,
            (Ok(h), Ok(head)) => (head.wrapping_sub(h.step as u32) as i32) > 0,
            (Err(_), _) => true,
            (Ok(_), Err(_)) => false,
        };
        if b_ahead {
            if let Ok(h) = reader.read_latest(&mut self.frames[1 - self.taken]) {
                return Ok(h);
            }
            // B holds nothing whole either: A's answer, read again into the
            // scratch frame B's try overwrote.
            self.area.read_from(Network::A);
            return reader.read_latest(&mut self.frames[1 - self.taken]);
        }
        self.area.read_from(Network::A);
        a
    }
}
