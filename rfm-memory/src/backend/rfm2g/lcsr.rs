//! The local control and status register (LCSR) of a PCIE-5565, as
//! `RFM2gGetConfig` copies it: the card's own view of its ring, which is what a
//! health watch and `rfmctl doctor` read to tell a broken fibre from a quiet peer.

use std::fmt;

use super::ffi;

/// What each bit says when set, and whether being set is a fault. One table:
/// the text, the verdict and the bit never drift apart.
const BITS: &[(u32, &str, bool)] = &[
    (
        ffi::RFM2G_LCSR_OWNDATA,
        "own data came back round the ring",
        false,
    ),
    (ffi::RFM2G_LCSR_BADDATA, "bad data received", true),
    (ffi::RFM2G_LCSR_SIGDET, "receive signal detected", false),
    (ffi::RFM2G_LCSR_SNCLOST, "receive sync lost", true),
    (ffi::RFM2G_LCSR_RCVFULL, "receive FIFO full", true),
    (ffi::RFM2G_LCSR_REDUNDANT, "redundant mode", false),
    (ffi::RFM2G_LCSR_DOD, "dark-on-dark", false),
    (ffi::RFM2G_LCSR_XMTDIS, "transmitter disabled", true),
];

/// One reading of the register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lcsr(pub u32);

impl Lcsr {
    /// The card receives a signal and holds sync: its fibre in is lit.
    pub fn ring_ok(self) -> bool {
        self.0 & ffi::RFM2G_LCSR_SIGDET != 0 && self.faults().next().is_none()
    }

    /// The card sends each packet on both of its transmitters (a switch on the card).
    pub fn redundant(self) -> bool {
        self.0 & ffi::RFM2G_LCSR_REDUNDANT != 0
    }

    /// The words of the set bits that are faults, in bit order.
    pub fn faults(self) -> impl Iterator<Item = &'static str> {
        self.set()
            .filter(|(_, fault)| *fault)
            .map(|(words, _)| words)
    }

    fn set(self) -> impl Iterator<Item = (&'static str, bool)> {
        BITS.iter()
            .filter(move |(bit, _, _)| self.0 & bit != 0)
            .map(|(_, words, fault)| (*words, *fault))
    }
}

impl fmt::Display for Lcsr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LCSR {:#010x}", self.0)?;
        let words: Vec<&str> = self.set().map(|(words, _)| words).collect();
        if words.is_empty() {
            write!(f, " (no signal)")
        } else {
            write!(f, " ({})", words.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_is_ok_with_a_signal_and_no_fault_bit() {
        let lit = Lcsr(ffi::RFM2G_LCSR_SIGDET | ffi::RFM2G_LCSR_OWNDATA);
        assert!(lit.ring_ok());
        assert_eq!(
            lit.to_string(),
            "LCSR 0x00000005 (own data came back round the ring, receive signal detected)"
        );
        assert!(!Lcsr(0).ring_ok(), "dark fibre");
        let lost = Lcsr(ffi::RFM2G_LCSR_SIGDET | ffi::RFM2G_LCSR_SNCLOST);
        assert!(!lost.ring_ok());
        assert_eq!(lost.faults().collect::<Vec<_>>(), ["receive sync lost"]);
        assert!(Lcsr(ffi::RFM2G_LCSR_REDUNDANT).redundant());
    }
}
