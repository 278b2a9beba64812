//! `diff A B`: the first step and signal where two recordings differ, or
//! the first struct of the lab's programs and its element.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use anyhow::anyhow;
use rfm_frames::fmi::Value;
use rfm_interface::descriptor::Descriptor;
use rfm_record::Reader;

use super::{items, Described, Frame, Item, Struct};
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
    same_interface(ra.header(), rb.header())?;
    let theirs = keyed(rb)?;
    let (mut same, mut only_a) = (0u64, 0u64);
    let (mut same_structs, mut only_a_structs) = (0u64, 0u64);
    let mut seen = std::collections::HashSet::new();
    let mut sessions = Sessions::default();
    let mut nth = HashMap::<usize, usize>::new();
    items(ra, |described, item| {
        let f = match item {
            Item::Frame(f) => f,
            Item::Struct(s) => {
                // The n-th struct of a foreign node in each: each is recorded
                // once, at each move of its program.
                let n = nth.entry(s.index).or_default();
                let other = theirs.structs.get(&s.index).and_then(|v| v.get(*n));
                *n += 1;
                return match other {
                    None => {
                        only_a_structs += 1;
                        Ok(())
                    }
                    Some(o) if *o == s.bytes => {
                        same_structs += 1;
                        Ok(())
                    }
                    Some(o) => Err(struct_difference((a, b), described, &s, o, *n)),
                };
            }
        };
        let key = sessions.key(f.slot, f.header.epoch, f.header.step);
        if !seen.insert(key) {
            return Ok(());
        }
        let Some(other) = theirs.frames.get(&key) else {
            only_a += 1;
            return Ok(());
        };
        if *other == f.payload {
            same += 1;
            return Ok(());
        }
        Err(difference((a, b), &described.nodes, &f, other, key, same))
    })?;
    let only_b = theirs.frames.len() as u64 - same;
    let only_b_structs = theirs.structs.values().map(Vec::len).sum::<usize>() as u64 - same_structs;
    println!(
        "no difference: {same} frames of the same slot, session and step agree ({only_a} only \
         in {}, {only_b} only in {}); {same_structs} structs of the lab's programs agree \
         ({only_a_structs} only in the first, {only_b_structs} only in the second)",
        a.display(),
        b.display()
    );
    Ok(())
}

/// Two recordings compare only when they are of one interface.
fn same_interface(ha: &rfm_record::Header, hb: &rfm_record::Header) -> Result<(), Failure> {
    if ha.fingerprint == hb.fingerprint {
        return Ok(());
    }
    Err(Failure::check_failed(anyhow!(
        "the recordings are of different interfaces: `{}` (fingerprint {:#018x}) and `{}` \
         ({:#018x})",
        ha.interface,
        ha.fingerprint,
        hb.interface,
        hb.fingerprint
    )))
}

/// What recording `b` holds, to compare with: every frame's payload by its
/// [`Key`] (the first of a key kept), and each foreign struct's records in
/// order.
struct Theirs {
    frames: HashMap<Key, Vec<u8>>,
    structs: HashMap<usize, Vec<Vec<u8>>>,
}

/// The failure naming the first element in which the `n`-th struct `s` of
/// recording `a` differs from `other`, the `n`-th of recording `b`.
fn struct_difference(
    (a, b): (&Path, &Path),
    described: &Described,
    s: &Struct,
    other: &[u8],
    n: usize,
) -> Failure {
    let Some(of) = described.structs.get(s.index) else {
        return Failure::check_failed(anyhow!("struct {} of the recordings differs", s.index));
    };
    let shown = |v: &Option<Value>| v.as_ref().map_or("?".to_owned(), Value::to_string);
    let (mine, theirs) = (of.values(&s.bytes), of.values(other));
    let elements = of.elements();
    let what = (mine.iter().zip(&theirs).zip(&elements))
        .find(|((x, y), _)| x != y)
        .map_or(
            "they differ only between fields".to_owned(),
            |((x, y), (e, _))| {
                format!(
                    "{}.{e} is {} in {} and {} in {}",
                    of.name,
                    shown(x),
                    a.display(),
                    shown(y),
                    b.display()
                )
            },
        );
    let read = s.at.map_or(String::new(), |(_, step, time)| {
        format!(", read at step {step} (t = {time})")
    });
    Failure::check_failed(anyhow!(
        "first difference at struct {n} of foreign node `{}`{read}: {what}",
        of.name
    ))
}

/// What recording `reader` holds, for [`Theirs`].
fn keyed(reader: Reader<impl Read>) -> Result<Theirs, Failure> {
    let mut theirs = Theirs {
        frames: HashMap::new(),
        structs: HashMap::new(),
    };
    let mut sessions = Sessions::default();
    items(reader, |_, item| {
        match item {
            Item::Frame(f) => {
                let key = sessions.key(f.slot, f.header.epoch, f.header.step);
                theirs.frames.entry(key).or_insert(f.payload);
            }
            Item::Struct(s) => theirs.structs.entry(s.index).or_default().push(s.bytes),
        }
        Ok(())
    })?;
    Ok(theirs)
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
            "{}.{s} is {} in {} and {} in {}",
            node.node,
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
