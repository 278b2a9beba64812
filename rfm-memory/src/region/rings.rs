//! A window over the two memories of a redundant device (`A+B`): every store
//! to both rings, loads from the one the window reads now.

use std::any::Any;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::Arc;

use super::Region;

/// One of the two rings of a redundant device (`A+B`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    A,
    B,
}

impl Network {
    pub const BOTH: [Network; 2] = [Network::A, Network::B];

    #[inline]
    fn bit(self) -> u8 {
        1 << self.index()
    }

    /// 0 for A, 1 for B: the index of per-ring arrays.
    #[inline]
    pub fn index(self) -> usize {
        match self {
            Network::A => 0,
            Network::B => 1,
        }
    }

    pub fn other(self) -> Network {
        match self {
            Network::A => Network::B,
            Network::B => Network::A,
        }
    }

    /// `a` or `b`, as the outputs name it.
    pub fn name(self) -> &'static str {
        match self {
            Network::A => "a",
            Network::B => "b",
        }
    }
}

/// The second memory of a redundant window: every store goes to both, loads to
/// the one `source` names.
#[derive(Clone)]
pub(super) struct Twin {
    pub(super) base: NonNull<AtomicU32>,
    pub(super) _owner: Arc<dyn Any + Send + Sync>,
    /// The ring loads read: shared by the clones and subregions of one window,
    /// so that a peer's reader and the observer over it switch together; a
    /// window of its own gets its own ([`Region::own_source`]).
    pub(super) source: Arc<AtomicU8>,
    /// Rings this node's stores are withheld from (bits of [`Network::bit`]), for
    /// every window of the pair: a fault injected to test failover.
    pub(super) withheld: Arc<AtomicU8>,
}

impl Region {
    /// A window over two memories of the same layout (a redundant ring: the
    /// same window of two cards, or of two `shm:` objects): every store goes
    /// to both, A first; loads read A until [`Region::read_from`] says B.
    /// Block reads stay A's. `None` when the two lengths differ.
    pub fn redundant(a: Region, b: Region) -> Option<Region> {
        if a.len != b.len || a.twin.is_some() || b.twin.is_some() {
            return None;
        }
        Some(Region {
            twin: Some(Twin {
                base: b.base,
                _owner: b._owner,
                source: Arc::new(AtomicU8::new(0)),
                withheld: Arc::new(AtomicU8::new(0)),
            }),
            ..a
        })
    }

    /// Whether this window spans two memories.
    #[inline]
    pub fn is_redundant(&self) -> bool {
        self.twin.is_some()
    }

    /// This window with a read source of its own (shared by its clones): a
    /// peer's area switches rings without switching its neighbours'.
    pub fn own_source(mut self) -> Region {
        if let Some(t) = &mut self.twin {
            t.source = Arc::new(AtomicU8::new(t.source.load(Ordering::Relaxed)));
        }
        self
    }

    /// Loads from now on read `ring` (ignored on a window of one memory).
    pub fn read_from(&self, ring: Network) {
        if let Some(t) = &self.twin {
            t.source
                .store(u8::from(ring == Network::B), Ordering::Relaxed);
        }
    }

    /// The ring loads read now (A on a window of one memory).
    #[inline]
    pub fn reading(&self) -> Network {
        match &self.twin {
            Some(t) if t.source.load(Ordering::Relaxed) == 1 => Network::B,
            _ => Network::A,
        }
    }

    /// The rings this window spans: A alone, or A and B.
    pub fn rings(&self) -> &'static [Network] {
        if self.twin.is_some() {
            &Network::BOTH
        } else {
            &Network::BOTH[..1]
        }
    }

    /// This window with loads from `ring` whatever the window's own source
    /// reads, for a reader that judges each ring's copy of a word (the
    /// liveness words, the descriptors): switching the shared source instead
    /// would move a peer's frame reads under it. A window of one memory is
    /// itself, whatever `ring` says.
    pub fn on(&self, ring: Network) -> Region {
        let own = self.clone().own_source();
        own.read_from(ring);
        own
    }

    /// Loads the word at `offset` of `ring`'s memory (ring A's on a window of
    /// one memory), whichever ring the window's loads read now.
    pub fn load_u32_on(
        &self,
        ring: Network,
        offset: usize,
        order: Ordering,
    ) -> Result<u32, super::RegionError> {
        let base = match &self.twin {
            Some(t) if ring == Network::B => t.base,
            _ => self.base,
        };
        self.check(offset, super::WORD)?;
        crate::counts::pio_read(1, super::WORD);
        Ok(self.word(base, offset).load(order))
    }

    /// Withholds (or, with `false`, no longer withholds) this node's stores
    /// from `ring`, in every window of the pair: as if its transmitter into
    /// that ring had failed. A fault for tests; a window of one memory ignores it.
    pub fn withhold(&self, ring: Network, withheld: bool) {
        if let Some(t) = &self.twin {
            if withheld {
                t.withheld.fetch_or(ring.bit(), Ordering::Relaxed);
            } else {
                t.withheld.fetch_and(!ring.bit(), Ordering::Relaxed);
            }
        }
    }

    /// Where loads go.
    #[inline]
    pub(super) fn read_base(&self) -> NonNull<AtomicU32> {
        match &self.twin {
            None => self.base,
            Some(t) if t.source.load(Ordering::Relaxed) == 1 => t.base,
            Some(_) => self.base,
        }
    }

    /// Calls `store` with each memory stores go to: A, then B, less the rings
    /// withheld. A window of one memory is one direct call: every store of
    /// every step takes this path, and an iterator over the two optional
    /// memories cost the FMU's own step a sixth more instructions.
    #[inline]
    pub(super) fn each_written(&self, mut store: impl FnMut(NonNull<AtomicU32>)) {
        let Some(t) = &self.twin else {
            store(self.base);
            return;
        };
        let withheld = t.withheld.load(Ordering::Relaxed);
        if withheld & Network::A.bit() == 0 {
            store(self.base);
        }
        if withheld & Network::B.bit() == 0 {
            store(t.base);
        }
    }
}
