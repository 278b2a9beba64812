//! A cost model of a PCIE-5565 step: what the [`rfm_memory::counts`] of a step
//! would cost on the card, where host RAM (`shm:`, the emulator) costs almost
//! nothing. Each figure is a published one; the book's "The card's costs" gives
//! the sources. The PIO read round trip is not published for RFM2g, so it is
//! the model's parameter: reported at 1 µs and 3 µs (uncached PCIe reads of
//! other devices measure 1-5 µs). [`budget`] is the ring's share of a
//! coupling, which `build-fmu` checks before it packages one.

pub mod budget;

use budget::RING_BYTES_PER_SECOND;
use rfm_memory::counts::Counts;

/// The round trips the model is reported at, in ns.
pub const READ_ROUND_TRIPS_NS: [(&str, f64); 2] = [("read_1us", 1_000.0), ("read_3us", 3_000.0)];

/// One vendor call that moves no block (an `RFM2gSendEvent`, a wait): the RFM2g
/// API manual's `performancetest` makes 277,760 four-byte `RFM2gRead` calls a
/// second, 3.6 µs each, an ioctl on Linux.
pub const CALL_NS: f64 = 1e9 / 277_760.0;

/// The fixed cost of one DMA transfer, call included: about 14.5 µs on a
/// VMIPCI-5565 PC (BESSY's orbit-feedback measurements).
pub const DMA_FIXED_NS: f64 = 14_500.0;

/// DMA reads move about 376 MB/s once started (BESSY).
pub const DMA_READ_BYTES_PER_SECOND: f64 = 376e6;

/// A frame's way to the next node: about 0.5 µs a hop (the article measured
/// 400-600 ns), plus its bytes at the ring's rate.
pub const HOP_NS: f64 = 500.0;

/// The modeled time of one step, by term, in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepCost {
    /// PIO loads: each a non-posted PCIe read, the CPU stalls for its completion.
    pub reads: f64,
    /// Vendor calls that move no block.
    pub calls: f64,
    /// DMA transfers: the fixed cost and the bytes.
    pub dma: f64,
    /// The step's writes on the ring (posted: the CPU does not wait for them,
    /// but a lockstep peer waits for the frame they carry): one hop plus the
    /// bytes at the ring's rate.
    pub ring: f64,
}

impl StepCost {
    /// The cost of `steps` steps that did `counts`, per step, at `read_ns` a
    /// PIO load.
    pub fn of(counts: &Counts, steps: u64, read_ns: f64) -> StepCost {
        let per = |n: u64| n as f64 / steps.max(1) as f64;
        let dma_bytes = if counts.dma > 0 {
            counts.vendor_read_bytes
        } else {
            0
        };
        StepCost {
            reads: per(counts.pio_reads) * read_ns,
            calls: per(counts.vendor_calls - counts.dma) * CALL_NS,
            dma: per(counts.dma) * DMA_FIXED_NS + per(dma_bytes) * 1e9 / DMA_READ_BYTES_PER_SECOND,
            ring: if counts.ring_bytes() > 0 {
                HOP_NS + per(counts.ring_bytes()) * 1e9 / RING_BYTES_PER_SECOND
            } else {
                0.0
            },
        }
    }

    pub fn total(&self) -> f64 {
        self.reads + self.calls + self.dma + self.ring
    }

    /// The term that costs most.
    pub fn dominant(&self) -> &'static str {
        [
            (self.reads, "pio_reads"),
            (self.calls, "vendor_calls"),
            (self.dma, "dma"),
            (self.ring, "ring"),
        ]
        .into_iter()
        .fold(
            (f64::MIN, "none"),
            |best, t| if t.0 > best.0 { t } else { best },
        )
        .1
    }
}

/// Whether reading a block of `bytes` costs less as one DMA transfer than as
/// word loads, each a round trip of `round_trip_ns`: where a link's block
/// reads should start (`rfm_core::link::DMA_READ_FROM` is chosen by it).
pub fn dma_pays(bytes: u64, round_trip_ns: f64) -> bool {
    let cost = |c: &Counts| StepCost::of(c, 1, round_trip_ns).total();
    cost(&dma(bytes)) < cost(&pio(bytes))
}

/// A block of `bytes` read as word loads.
fn pio(bytes: u64) -> Counts {
    Counts {
        pio_reads: bytes / 4,
        pio_read_bytes: bytes,
        ..Counts::default()
    }
}

/// A block of `bytes` read as one DMA transfer.
fn dma(bytes: u64) -> Counts {
    Counts {
        vendor_calls: 1,
        vendor_read_bytes: bytes,
        dma: 1,
        ..Counts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dma_pays_for_long_blocks_and_not_for_a_word() {
        assert!(!dma_pays(4, 3_000.0));
        assert!(dma_pays(4096, 1_000.0));
        let at_3us = (4..4096).step_by(4).find(|&b| dma_pays(b, 3_000.0));
        let at_1us = (4..4096).step_by(4).find(|&b| dma_pays(b, 1_000.0));
        assert!(at_3us < at_1us, "{at_3us:?} {at_1us:?}");
    }

    #[test]
    fn the_dominant_term_is_the_largest() {
        let c = StepCost::of(&pio(8000), 1, 3_000.0);
        assert_eq!((c.reads, c.dominant()), (6e6, "pio_reads"));
        assert_eq!(StepCost::of(&dma(8000), 1, 3_000.0).dominant(), "dma");
    }
}
