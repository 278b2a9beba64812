//! Exact counts of what a thread does to reflective memory: the figures a cost
//! model of the card is built from (on a PCIE-5565 every PIO read is a PCIe
//! round trip, every vendor call an ioctl, every DMA transfer a fixed cost).
//!
//! Counting is compiled in only with the `counts` feature (the benchmark and
//! the tests turn it on); without it every hook below is an empty inline
//! function, so the FMU people ship pays nothing. Counts are per thread (a
//! link steps on its caller's thread), so two nodes stepping in one process
//! are counted apart, and they never move with the machine's load: the same
//! steps give the same counts, except the tries of a wait.

/// What one thread did to mapped memory since the last `Counts::take` (which
/// exists with the `counts` feature).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Loads through a mapping (each a 32-bit word: a PCIe round trip on a card).
    pub pio_reads: u64,
    pub pio_read_bytes: u64,
    /// Stores through a mapping (posted on a card).
    pub pio_writes: u64,
    pub pio_write_bytes: u64,
    /// Calls into the vendor library made while stepping: DMA reads, and
    /// the network interrupts of `waitStrategy = event`.
    pub vendor_calls: u64,
    /// Bytes moved by the vendor library's `RFM2gRead`.
    pub vendor_read_bytes: u64,
    /// `RFM2gRead` calls longer than the driver's DMA threshold: DMA transfers.
    pub dma: u64,
    /// Tries of a lockstep wait: one per peer polled for a frame not taken yet.
    pub polls: u64,
    /// The PIO loads of tries that found no frame: time spent waiting for a
    /// peer anyway, which a step's modeled cost leaves out.
    pub wait_reads: u64,
    /// Reads of a peer's liveness words (three words each), due once per
    /// watch interval, not per try. (The node's own heartbeat beats on a
    /// thread of its own: one load and one store per beat, not counted here.)
    pub watches: u64,
}

impl Counts {
    /// The bytes this thread put on the ring: every byte written reaches every
    /// other node.
    pub fn ring_bytes(&self) -> u64 {
        self.pio_write_bytes
    }
}

#[cfg(feature = "counts")]
mod on {
    use super::Counts;
    use std::cell::Cell;

    thread_local! {
        static COUNTS: Cell<Counts> = const { Cell::new(Counts {
            pio_reads: 0, pio_read_bytes: 0, pio_writes: 0, pio_write_bytes: 0,
            vendor_calls: 0, vendor_read_bytes: 0, dma: 0, polls: 0, wait_reads: 0,
            watches: 0,
        }) };
    }

    #[inline]
    pub(crate) fn add(f: impl FnOnce(&mut Counts)) {
        COUNTS.with(|c| {
            let mut now = c.get();
            f(&mut now);
            c.set(now);
        });
    }

    /// This thread's counts since the last call, which starts them again.
    pub fn take() -> Counts {
        COUNTS.with(|c| c.replace(Counts::default()))
    }

    #[inline]
    pub(crate) fn pio_reads() -> u64 {
        COUNTS.with(|c| c.get().pio_reads)
    }
}

#[cfg(feature = "counts")]
pub use on::take;

#[cfg(feature = "counts")]
use on::add;

#[cfg(not(feature = "counts"))]
#[inline(always)]
fn add(_: impl FnOnce(&mut Counts)) {}

/// The PIO loads so far, to mark where a try began ([`try_found_nothing`]).
#[inline(always)]
pub fn try_began() -> u64 {
    #[cfg(feature = "counts")]
    return on::pio_reads();
    #[cfg(not(feature = "counts"))]
    0
}

/// The try that began at `began` found no frame: its loads were waiting.
#[inline(always)]
pub fn try_found_nothing(began: u64) {
    add(|c| c.wait_reads += c.pio_reads - began);
}

/// `words` loads of `bytes` in all.
#[inline(always)]
pub(crate) fn pio_read(words: usize, bytes: usize) {
    add(|c| {
        c.pio_reads += words as u64;
        c.pio_read_bytes += bytes as u64;
    });
}

/// `words` stores of `bytes` in all.
#[inline(always)]
pub(crate) fn pio_write(words: usize, bytes: usize) {
    add(|c| {
        c.pio_writes += words as u64;
        c.pio_write_bytes += bytes as u64;
    });
}

/// A call into the vendor library that moved `read` bytes into this process,
/// `dma` when the driver did it by DMA.
#[inline(always)]
pub(crate) fn vendor_call(read: usize, dma: bool) {
    add(|c| {
        c.vendor_calls += 1;
        c.vendor_read_bytes += read as u64;
        c.dma += u64::from(dma);
    });
}

#[inline(always)]
pub fn poll() {
    add(|c| c.polls += 1);
}

#[inline(always)]
pub fn watch() {
    add(|c| c.watches += 1);
}
