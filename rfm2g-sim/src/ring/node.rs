//! One board's state in its ring's header: its interrupt queues (an event
//! slot per type, the due time a sent event arrives at, the counts) and the
//! settings every handle of the board shares.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use super::{now_ns, EVENT_TYPES};
use crate::abi::Code;
use crate::wake;

/// Event slot word: PENDING | RESERVED | sender node << 32 | extended data.
const PENDING: u64 = 1 << 63;
/// Taken by a sender that has not stored the due time yet.
pub(super) const RESERVED: u64 = 1 << 62;

/// One board's interrupt logic and settings, shared by every handle (in any
/// process) that opened this node id.
#[derive(Debug)]
#[repr(C)]
pub struct NodeState {
    enabled: AtomicU32,
    /// Bumped after every change a waiter may be waiting for; the word waited on.
    seq: AtomicU32,
    pub led: AtomicU32,
    pub dma_swap: AtomicU32,
    pub pio_swap: AtomicU32,
    /// Processes and threads sleeping on `seq` (Windows: how many to release).
    waiters: AtomicU32,
    /// `RFM2gSetDMAThreshold`'s value, inverted: the zeroed header of a new
    /// ring then reads as the driver's default, `u32::MAX` (DMA off).
    dma_threshold_inverted: AtomicU32,
    /// The LCSR's own-data bit: set by a store of this board that went around a
    /// continuous ring, cleared by `RFM2gClearOwnData`.
    pub own_data: AtomicU32,
    /// 1 while the board is cut from its ring ([`crate::cut`]): its memory is an
    /// island of its own.
    cut: AtomicU32,
    /// Bumped after every cut and mend: each process holding the board's
    /// memory moves it when this differs from what it did last.
    cut_seq: AtomicU32,
    pub(super) slots: [AtomicU64; EVENT_TYPES],
    /// CLOCK_MONOTONIC ns before which the event in the slot has not arrived.
    due: [AtomicU64; EVENT_TYPES],
    counts: [AtomicU32; EVENT_TYPES],
}

/// Why a wait ended without an event.
pub trait WaitControl {
    /// Checked on every wake-up: `Some(code)` ends the wait with that status.
    fn interrupted(&self) -> Option<Code>;
}

impl NodeState {
    /// Whether the board is cut from its ring, and the cut's sequence number.
    pub fn cut(&self) -> (bool, u32) {
        let seq = self.cut_seq.load(Ordering::Acquire);
        (self.cut.load(Ordering::Acquire) != 0, seq)
    }

    /// Marks the board cut or mended; every process holding its memory moves
    /// it when it next looks ([`crate::cut`]).
    pub(crate) fn set_cut(&self, cut: bool) {
        self.cut.store(u32::from(cut), Ordering::Release);
        self.cut_seq.fetch_add(1, Ordering::AcqRel);
    }

    pub fn enable(&self, ty: usize) -> Result<(), Code> {
        let bit = 1 << ty;
        if self.enabled.fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            return Err(Code::ALREADY_ENABLED);
        }
        Ok(())
    }

    /// Disables the interrupt, drops a queued one, and wakes waiters (which then
    /// see it disabled).
    pub fn disable(&self, ty: usize) -> Result<(), Code> {
        let bit = 1 << ty;
        if self.enabled.fetch_and(!bit, Ordering::AcqRel) & bit == 0 {
            return Err(Code::NOT_ENABLED);
        }
        self.slots[ty].store(0, Ordering::Release);
        self.notify();
        Ok(())
    }

    /// The DMA threshold in bytes: `RFM2gRead`/`RFM2gWrite` of more than
    /// this many bytes are DMA transfers.
    pub fn dma_threshold(&self) -> u32 {
        !self.dma_threshold_inverted.load(Ordering::Relaxed)
    }

    pub fn set_dma_threshold(&self, bytes: u32) {
        self.dma_threshold_inverted.store(!bytes, Ordering::Relaxed);
    }

    pub fn is_enabled(&self, ty: usize) -> bool {
        self.enabled.load(Ordering::Acquire) & (1 << ty) != 0
    }

    /// Queues an interrupt from `from`, arriving at `due_ns`. Like the driver, a
    /// node holds one event per type: while one is queued, a new one is lost. A
    /// disabled interrupt is not latched at all. Returns whether it was queued.
    pub fn deliver(&self, ty: usize, from: u16, data: u32, due_ns: u64) -> bool {
        if !self.is_enabled(ty) {
            return false;
        }
        let word = (u64::from(from) << 32) | u64::from(data);
        if self.slots[ty]
            .compare_exchange(0, RESERVED | word, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.due[ty].store(due_ns, Ordering::Relaxed);
        self.slots[ty].store(PENDING | word, Ordering::Release);
        self.counts[ty].fetch_add(1, Ordering::Relaxed);
        self.notify();
        true
    }

    /// Drops the queued event of this type, if any, and a reservation a sender
    /// killed half-way through `deliver` would otherwise leave for ever.
    pub fn clear(&self, ty: usize) {
        let slot = &self.slots[ty];
        let v = slot.load(Ordering::Acquire);
        if v & (PENDING | RESERVED) != 0 {
            let _ = slot.compare_exchange(v, 0, Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    pub fn count(&self, ty: usize) -> u32 {
        self.counts[ty].load(Ordering::Relaxed)
    }

    /// Wakes everything waiting on this node (in every process).
    pub fn notify(&self) {
        self.seq.fetch_add(1, Ordering::Release);
        wake::wake_all(&self.seq, &self.waiters);
    }

    /// Takes the event of type `ty` once it has arrived: (sender node, data).
    /// `deadline_ns` of `None` waits forever; `Some(now)` only looks.
    pub fn wait(
        &self,
        ty: usize,
        deadline_ns: Option<u64>,
        control: &dyn WaitControl,
    ) -> Result<(u16, u32), Code> {
        loop {
            let seq = self.seq.load(Ordering::Acquire);
            if let Some(code) = control.interrupted() {
                return Err(code);
            }
            if !self.is_enabled(ty) {
                return Err(Code::NOT_ENABLED);
            }
            let now = now_ns();
            let v = self.slots[ty].load(Ordering::Acquire);
            let mut sleep_until = deadline_ns;
            if v & PENDING != 0 {
                let due = self.due[ty].load(Ordering::Relaxed);
                if due <= now {
                    if self.slots[ty]
                        .compare_exchange(v, 0, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                    {
                        return Ok(((v >> 32) as u16, v as u32));
                    }
                    continue;
                }
                if deadline_ns.is_some_and(|d| d < due) {
                    // It will not have arrived by the deadline.
                    sleep_until = deadline_ns;
                } else {
                    // In flight: arrives within the configured delay; short waits
                    // spin, as a sleep would overshoot a ~500 ns latency.
                    if due - now < 50_000 {
                        std::hint::spin_loop();
                        continue;
                    }
                    sleep_until = Some(due);
                }
            }
            match sleep_until {
                Some(until) if until <= now => return Err(Code::TIMED_OUT),
                Some(until) => wake::wait(
                    &self.seq,
                    &self.waiters,
                    seq,
                    Duration::from_nanos(until - now),
                ),
                None => wake::wait(&self.seq, &self.waiters, seq, Duration::from_secs(3600)),
            }
        }
    }
}
