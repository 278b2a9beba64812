//! `diff A B`: the first step and signal where two recordings differ.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use anyhow::anyhow;
use rfm_frames::value::Value;
use rfm_interface::descriptor::Descriptor;
use rfm_record::Reader;

use super::{frames, Frame};
use crate::failure::Failure;

/// Which frame of a recording a frame is, to find the same one in another: its
/// writer's slot, the writer's session (0 for its first in the recording, 1 after
/// its first restart, …) and its step. Epochs are not compared: two runs of the
/// same coupling (yesterday's and today's) have different ones, and a restarted
/// writer repeats steps that only the session tells apart.
type Key = (u8, u32, u64);

/// Gives each frame its [`Key`], counting each writer's sessions as they come.
#[derive(Default)]
struct Sessions(HashMap<u8, (u64, u32)>);

impl Sessions {
    fn key(&mut self, slot: u8, epoch: u64, step: u64) -> Key {
        let session = match self.0.get_mut(&slot) {
            Some((last, n)) if *last != epoch => {
                (*last, *n) = (epoch, *n + 1);
                *n
            }
            Some((_, n)) => *n,
            None => {
                self.0.insert(slot, (epoch, 0));
                0
            }
        };
        (slot, session, step)
    }
}

/// Compares the frames of `a` and `b` by writer, session and step ([`Key`]), in
/// `a`'s order: prints the first signal that differs and fails (exit 1), or
/// says how many frames agree. Frames only one recording has are counted, not
/// compared.
pub fn diff(a: &Path, b: &Path) -> Result<(), Failure> {
    let (ra, rb) = (Reader::open(a)?, Reader::open(b)?);
    let (ha, hb) = (ra.header(), rb.header());
    if ha.fingerprint != hb.fingerprint {
        return Err(Failure::check_failed(anyhow!(
            "the recordings are of different interfaces: `{}` (fingerprint {:#018x}) and `{}` \
             ({:#018x})",
            ha.interface,
            ha.fingerprint,
            hb.interface,
            hb.fingerprint
        )));
    }
    let theirs = keyed(rb)?;
    let (mut same, mut only_a) = (0u64, 0u64);
    let mut seen = std::collections::HashSet::new();
    let mut sessions = Sessions::default();
    frames(ra, |nodes, f| {
        let key = sessions.key(f.slot, f.header.epoch, f.header.step);
        if !seen.insert(key) {
            return Ok(());
        }
        let Some(other) = theirs.get(&key) else {
            only_a += 1;
            return Ok(());
        };
        if *other == f.payload {
            same += 1;
            return Ok(());
        }
        Err(difference((a, b), nodes, &f, other, key, same))
    })?;
    let only_b = theirs.len() as u64 - same;
    println!(
        "no difference: {same} frames of the same slot, session and step agree ({only_a} only \
         in {}, {only_b} only in {})",
        a.display(),
        b.display()
    );
    Ok(())
}

/// Every frame's payload by its [`Key`] (the first of a key kept).
fn keyed(reader: Reader<impl Read>) -> Result<HashMap<Key, Vec<u8>>, Failure> {
    let mut payloads: HashMap<Key, Vec<u8>> = HashMap::new();
    let mut sessions = Sessions::default();
    frames(reader, |_, f| {
        let key = sessions.key(f.slot, f.header.epoch, f.header.step);
        payloads.entry(key).or_insert(f.payload);
        Ok(())
    })?;
    Ok(payloads)
}

/// The failure naming the first signal in which frame `f` of recording `a`
/// differs from `other`, the same frame of recording `b`.
fn difference(
    (a, b): (&Path, &Path),
    nodes: &[Descriptor],
    f: &Frame,
    other: &[u8],
    key: Key,
    same: u64,
) -> Failure {
    let Some(node) = nodes.iter().find(|n| n.slot == f.slot) else {
        return Failure::check_failed(anyhow!(
            "step {}: the frames of slot {} differ (no node of that slot is described)",
            f.header.writer_step(),
            f.slot
        ));
    };
    let shown = |v: Option<Value>| v.map_or("?".to_owned(), |v| v.to_string());
    let what = match node.first_changed(&f.payload, other) {
        Some((s, va, vb)) => format!(
            "{}.{} is {} in {} and {} in {}",
            node.node,
            s.name,
            shown(va),
            a.display(),
            shown(vb),
            b.display()
        ),
        // Bytes no signal covers (padding, a String's bytes after its end).
        None => "the frames differ only between signals".to_owned(),
    };
    let session = match key.1 {
        0 => String::new(),
        n => format!(" after its restart {n}"),
    };
    Failure::check_failed(anyhow!(
        "first difference at step {} of node `{}` (slot {}){session}: {what} ({same} frames \
         before it agree)",
        f.header.writer_step(),
        node.node,
        f.slot,
    ))
}
