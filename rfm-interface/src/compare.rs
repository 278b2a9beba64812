//! What peers must agree on: an interface's fingerprint, which every frame
//! carries, and the first difference between two interfaces, named for the
//! message that refuses a peer built from another file.

use super::*;

impl Interface {
    /// A 64-bit fingerprint of what peers must agree on: the interface name,
    /// each node's name, slot and signals (name, type, size, unit), and each
    /// foreign node's declaration ([`super::declared::Declared::facts`]). Start values,
    /// units of fields and descriptions are each node's own business and are
    /// left out.
    pub fn fingerprint(&self) -> u64 {
        // FNV-1a: stable across builds and platforms (unlike std's hasher).
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes.iter().chain(&[0xff]) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        };
        eat(self.name.as_bytes());
        let mut nodes: Vec<&NodeSpec> = self.nodes.iter().collect();
        nodes.sort_by_key(|n| n.slot);
        for n in nodes {
            eat(n.name.as_bytes());
            eat(&[n.slot]);
            if let Some(offset) = n.offset {
                eat(&offset.to_le_bytes());
            }
            for s in &n.signals {
                eat(s.name.as_bytes());
                eat(s.kind.to_string().as_bytes());
                eat(s.unit.as_deref().unwrap_or("").as_bytes());
            }
            // Rates place the rings and decide who waits: peers must agree on
            // them. A file without them keeps the fingerprint it always had.
            if let Some(p) = n.period {
                eat(b"period");
                eat(&p.num().to_le_bytes());
                eat(&p.den().to_le_bytes());
            }
            for &f in &n.free {
                eat(b"free");
                eat(self.nodes[f].name.as_bytes());
            }
        }
        if self.max_lag != DEFAULT_MAX_LAG {
            eat(b"max_lag");
            eat(&[self.max_lag]);
        }
        // A file without foreign nodes keeps the fingerprint it always had;
        // their order in the file is not a difference.
        let mut declared = self.declared();
        declared.sort_by(|a, b| a.name.cmp(&b.name));
        for d in declared {
            eat(b"foreign");
            eat(d.name.as_bytes());
            for (what, value) in &d.facts() {
                eat(what.as_bytes());
                eat(value.as_bytes());
            }
        }
        h
    }

    /// The first thing two interfaces disagree on, as a sentence naming the
    /// signal and both nodes' views, or `None` when they agree on everything the
    /// fingerprint covers.
    pub fn first_difference(&self, theirs: &Interface) -> Option<String> {
        if self.name != theirs.name {
            return Some(format!(
                "the interfaces are named `{}` here and `{}` there",
                self.name, theirs.name
            ));
        }
        for mine in &self.nodes {
            let Some(other) = theirs.node(&mine.name) else {
                return Some(format!("node `{}` is missing there", mine.name));
            };
            let (here, there) = (node_facts(self, mine), node_facts(theirs, other));
            for ((what, here), (_, there)) in here.into_iter().zip(there) {
                if here != there {
                    return Some(format!(
                        "node `{}` {what} {here} here and {there} there",
                        mine.name
                    ));
                }
            }
            if let Some(difference) = signals_difference(mine, other) {
                return Some(difference);
            }
        }
        if let Some(n) = theirs.nodes.iter().find(|n| self.node(&n.name).is_none()) {
            return Some(format!("node `{}` is missing here", n.name));
        }
        if self.max_lag != theirs.max_lag {
            return Some(format!(
                "max_lag is {} here and {} there",
                self.max_lag, theirs.max_lag
            ));
        }
        super::declared::first_difference(&self.declared(), &theirs.declared())
    }
}

/// The first difference between the signals of one node as `mine` and
/// `other` declare it.
fn signals_difference(mine: &NodeSpec, other: &NodeSpec) -> Option<String> {
    let node = &mine.name;
    for (i, s) in mine.signals.iter().enumerate() {
        match other.signals.get(i) {
            None => return Some(format!("signal `{node}.{}` is missing there", s.name)),
            Some(o) if o.name != s.name => {
                return Some(format!(
                    "signal {} of node `{node}` is `{}` here and `{}` there",
                    i + 1,
                    s.name,
                    o.name
                ))
            }
            Some(o) if o.kind != s.kind => {
                return Some(format!(
                    "signal `{node}.{}` is {} here and {} there",
                    s.name,
                    s.kind.with_article(),
                    o.kind.with_article()
                ))
            }
            Some(o) if o.unit != s.unit => {
                return Some(format!(
                    "signal `{node}.{}` has unit {:?} here and {:?} there",
                    s.name, s.unit, o.unit
                ))
            }
            Some(_) => {}
        }
    }
    (other.signals.get(mine.signals.len()))
        .map(|extra| format!("signal `{node}.{}` is missing here", extra.name))
}

/// What peers must agree on about a node besides its signals, each as the
/// sentence of a difference words it: "node `visual` writes slot 1 here …".
fn node_facts(interface: &Interface, n: &NodeSpec) -> [(&'static str, String); 4] {
    let free: Vec<&str> = n
        .free
        .iter()
        .map(|&f| interface.nodes[f].name.as_str())
        .collect();
    [
        ("writes", format!("slot {}", n.slot)),
        (
            "has",
            n.offset
                .map_or("no offset".to_owned(), |o| format!("offset {o}")),
        ),
        (
            "has period",
            n.period.map_or("none".to_owned(), |p| format!("{p} s")),
        ),
        ("is free", format!("of {free:?}")),
    ]
}
