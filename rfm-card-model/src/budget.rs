//! What a coupling puts on an RFM2g ring. The ring's bandwidth (about 170
//! MB/s on a PCIE-5565 ring: its 2.12 Gbaud link, 8b/10b coded, less packet
//! overhead; the vendor's figure) is shared by every node: each write
//! crosses every hop. A node's share is what each step writes (its frame
//! between the seqlock's two sequence stores, then the ring's head word)
//! times its steps per second, plus its heartbeat.

use std::fmt;

use rfm_frames::area::{FRAME_HEADER, HEARTBEAT_PERIOD};
use rfm_interface::{Interface, MemoryMap};

/// The ring's bandwidth, bytes per second, shared by every node.
pub const RING_BYTES_PER_SECOND: f64 = 170e6;

/// Bytes a publish writes besides the frame: the sequence word twice and the
/// head word (4 bytes each; the frame's own first word is the sequence's).
const PUBLISH_EXTRA: u64 = 8;

/// One node's share.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeShare {
    pub node: usize,
    /// Bytes one step writes.
    pub per_step: u64,
    /// Bytes a second: `None` for a node without a period (its rate is its
    /// master's, unknown here).
    pub per_second: Option<f64>,
}

/// Every node's share of the ring.
#[derive(Debug, Clone, PartialEq)]
pub struct RingBudget<'a> {
    interface: &'a Interface,
    pub shares: Vec<NodeShare>,
}

/// What a coupling's share of the ring means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// At most half the ring.
    Fits,
    /// More than half: other traffic and bursts leave it little margin.
    OverHalf,
    /// More than the ring carries: it cannot run at its periods.
    Over,
}

impl<'a> RingBudget<'a> {
    pub fn of(interface: &'a Interface, map: &MemoryMap) -> RingBudget<'a> {
        let beat = 4.0 / HEARTBEAT_PERIOD.as_secs_f64();
        let shares = (0..interface.nodes.len())
            .map(|i| {
                let per_step = (FRAME_HEADER + map.area(i).payload.len) as u64 + PUBLISH_EXTRA;
                NodeShare {
                    node: i,
                    per_step,
                    per_second: interface.nodes[i]
                        .period
                        .map(|p| per_step as f64 / p.seconds() + beat),
                }
            })
            .collect();
        RingBudget { interface, shares }
    }

    /// Bytes a second of the nodes with a period.
    pub fn total(&self) -> f64 {
        // Summing no floats gives −0.0, which would print as "-0 bytes/s".
        self.shares
            .iter()
            .filter_map(|s| s.per_second)
            .fold(0.0, |sum, b| sum + b)
    }

    /// The share of the ring they take.
    pub fn fraction(&self) -> f64 {
        self.total() / RING_BYTES_PER_SECOND
    }

    pub fn verdict(&self) -> Verdict {
        match self.fraction() {
            f if f > 1.0 => Verdict::Over,
            f if f > 0.5 => Verdict::OverHalf,
            _ => Verdict::Fits,
        }
    }
}

impl fmt::Display for RingBudget<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<16} {:>10} {:>12} {:>14}",
            "node", "bytes/step", "steps/s", "ring bytes/s"
        )?;
        for s in &self.shares {
            let node = &self.interface.nodes[s.node];
            let (rate, bytes) = match (node.period, s.per_second) {
                (Some(p), Some(b)) => (format!("{:.1}", 1.0 / p.seconds()), format!("{b:.0}")),
                _ => ("-".to_owned(), "(no period)".to_owned()),
            };
            writeln!(
                f,
                "{:<16} {:>10} {:>12} {:>14}",
                node.name, s.per_step, rate, bytes
            )?;
        }
        if self.shares.iter().all(|s| s.per_second.is_none()) {
            return write!(
                f,
                "no node has a period: each steps at its master's rate, unknown here, so \
                 the ring's share is not counted (give the nodes a `period` to count it)"
            );
        }
        write!(
            f,
            "{:.0} bytes/s in all: {:.1} % of an RFM2g ring's {:.0} MB/s",
            self.total(),
            100.0 * self.fraction(),
            RING_BYTES_PER_SECOND / 1e6
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfm_interface::Reserved;

    fn lab(reals: usize, period: &str) -> Interface {
        let signals: String = (0..reals)
            .map(|i| format!("{{ name = \"x{i}\", type = \"Real\" }},"))
            .collect();
        let text = format!(
            "name = \"lab\"\nmemory_size = 67108864\nperiod = {period}\n\
             [[node]]\nname = \"a\"\nslot = 0\nsignals = [{signals}]\n\
             [[node]]\nname = \"b\"\nslot = 1\nsignals = [{signals}]\n"
        );
        Interface::parse("lab.toml", &text, &Reserved::NONE).unwrap()
    }

    // Not under Miri: parsing the files is all it would check there, slowly.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn a_nodes_share_is_its_frame_and_heartbeat_at_its_rate() {
        let budget = |period: &str| {
            let i = lab(100, period);
            let map = i.map().unwrap();
            let b = RingBudget::of(&i, &map);
            (b.shares[0].clone(), b.verdict())
        };
        // 64-byte header, 800 bytes of Reals, 8 of sequence and head.
        let (share, verdict) = budget("0.001");
        assert_eq!(share.per_step, 872);
        assert_eq!(share.per_second, Some(872.0 * 1000.0 + 400.0));
        assert_eq!(verdict, Verdict::Fits);
        // Two nodes at 50 kHz: 87 MB/s; at 200 kHz: 349 MB/s.
        assert_eq!(budget("0.00002").1, Verdict::OverHalf);
        assert_eq!(budget("0.000005").1, Verdict::Over);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn a_file_without_periods_counts_nothing_and_says_why() {
        let i = Interface::parse(
            "quick.toml",
            "name = \"quick\"\n[[node]]\nname = \"a\"\nslot = 0\nsignals = [{ name = \"x\", type = \"Real\" }]\n",
            &Reserved::NONE,
        )
        .unwrap();
        let budget = RingBudget::of(&i, &i.map().unwrap());
        assert_eq!(budget.total().to_string(), "0");
        assert_eq!(budget.verdict(), Verdict::Fits);
        let text = budget.to_string();
        assert!(!text.contains("-0"), "{text}");
        assert!(
            text.ends_with("(give the nodes a `period` to count it)"),
            "{text}"
        );
    }
}
