//! The two cards of a redundant device, watched from a thread of the link's
//! own (never the stepping thread: each look is a driver call): every
//! [`WATCH_PERIOD`], each card's LCSR (signal, sync, bad data), the own-data
//! test (a word stored through the driver must come back round the ring
//! before the next look) and its error events (enabled again after each
//! fires, as the driver switches them off). The stepping thread reads what
//! was seen, tells the master's log of a change, and reports the ring as not
//! ok.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rfm_memory::backend::rfm2g::{Lcsr, RingEvent};
use rfm_memory::Device;
use rfm_memory::Network;

/// How often each card is looked at.
pub const WATCH_PERIOD: Duration = Duration::from_millis(100);

/// One card as the watch last saw it.
#[derive(Debug, Default)]
struct Seen {
    /// The LCSR, once read.
    lcsr: AtomicU32,
    lcsr_read: AtomicBool,
    /// A probe stored through the driver did not come back by the next look.
    own_data_lost: AtomicBool,
    /// Error events the card raised, and the last one's index in
    /// [`RingEvent::ALL`].
    events: AtomicU32,
    last_event: AtomicU32,
}

/// The watch thread of a redundant device's two cards; stopped on drop.
#[derive(Debug)]
pub(crate) struct RingWatch {
    seen: Arc<[Seen; 2]>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RingWatch {
    /// Starts watching `cards` (ring A's, ring B's); the own-data probe is
    /// stored at `probe`, a word of this node's own area nobody reads.
    pub(crate) fn start(cards: [Device; 2], probe: u32) -> std::io::Result<RingWatch> {
        let seen: Arc<[Seen; 2]> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("rfm-ring-watch".into())
            .spawn({
                let (seen, stop) = (Arc::clone(&seen), Arc::clone(&stop));
                move || watch(&cards, probe, &seen, &stop)
            })?;
        Ok(RingWatch {
            seen,
            stop,
            thread: Some(thread),
        })
    }

    /// What is wrong with `ring`'s card, as the watch saw it last; `None`
    /// when nothing is. Read every step: a few loads, no allocation.
    pub(crate) fn fault(&self, ring: Network) -> Option<CardFault> {
        let seen = &self.seen[ring.index()];
        let lcsr = Lcsr(seen.lcsr.load(Ordering::Acquire));
        if seen.lcsr_read.load(Ordering::Acquire) && !lcsr.ring_ok() {
            return Some(CardFault::Register(lcsr));
        }
        seen.own_data_lost
            .load(Ordering::Acquire)
            .then_some(CardFault::OwnDataLost)
    }
}

impl RingWatch {
    /// The error events `ring`'s card raised so far, and the last one.
    pub(crate) fn events(&self, ring: Network) -> (u32, RingEvent) {
        let seen = &self.seen[ring.index()];
        let last = seen.last_event.load(Ordering::Acquire) as usize;
        (
            seen.events.load(Ordering::Acquire),
            RingEvent::ALL[last.min(RingEvent::ALL.len() - 1)],
        )
    }
}

/// What the watch found wrong with a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CardFault {
    /// Its LCSR shows no signal, lost sync or bad data.
    Register(Lcsr),
    /// The own-data test failed.
    OwnDataLost,
}

impl std::fmt::Display for CardFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CardFault::Register(lcsr) => write!(f, "its card reports {lcsr}"),
            CardFault::OwnDataLost => write!(
                f,
                "a word its card stored did not come back round the ring (the own-data test)"
            ),
        }
    }
}

impl Drop for RingWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn watch(cards: &[Device; 2], probe: u32, seen: &[Seen; 2], stop: &AtomicBool) {
    let mut probed = [false; 2];
    let mut count = 0u32;
    for card in cards {
        for event in RingEvent::ALL {
            let _ = card.enable_ring_event(event);
        }
    }
    while !stop.load(Ordering::Acquire) {
        for (i, card) in cards.iter().enumerate() {
            for (e, event) in RingEvent::ALL.into_iter().enumerate() {
                if card.ring_event_fired(event).unwrap_or(false) {
                    seen[i].last_event.store(e as u32, Ordering::Release);
                    seen[i].events.fetch_add(1, Ordering::AcqRel);
                    let _ = card.enable_ring_event(event);
                }
            }
            if let Ok(lcsr) = card.lcsr() {
                seen[i].lcsr.store(lcsr.0, Ordering::Release);
                seen[i].lcsr_read.store(true, Ordering::Release);
            }
            // The first look clears what came back before: only a probe of
            // this watch is judged.
            if let Ok(back) = card.clear_own_data() {
                if probed[i] {
                    seen[i].own_data_lost.store(!back, Ordering::Release);
                }
            }
            count = count.wrapping_add(1);
            probed[i] = card.probe(probe, count).is_ok();
        }
        // Sleeps in slices, so that a close does not wait a whole period.
        for _ in 0..10 {
            if stop.load(Ordering::Acquire) {
                return;
            }
            std::thread::sleep(WATCH_PERIOD / 10);
        }
    }
}
