//! The claims, exhaustively over a grid of timings: the attitude pair and a
//! node of another interface whose area overlaps both of the pair's, claiming
//! one memory that holds what a run of a third interface (two nodes, laid out
//! otherwise) left: nothing, its nodes closed, dead, or still live; with and
//! without a claim of another host mirrored late over the other interface's
//! area, as a bridge writes it.
//!
//! The model runs the real protocol ([`Node`], over a loopback region, with
//! Fischer's settle as between processes) in one thread; time is virtual, and
//! every session that announced a claim beats by hand every heartbeat period.
//! Each claimant starts at one of a set of offsets, and every 1 ms tick the
//! claimants are polled in one of every order. Checked for every run:
//! - **never two owners**: of the sessions that started, no two areas overlap,
//!   each still holds its owner word, and the mirrored session and the live
//!   leftover still hold theirs;
//! - **no leftover refuses a node**: without a live holder or a rival of another
//!   interface, both nodes of the pair start, whatever was left;
//! - **no live node is judged dead or foreign**: a live node (the leftover, the
//!   mirrored session, a claimant that started) is never written over, and a
//!   node of the pair is never refused as foreign by its own peer;
//! - **decided at the claim**: a refused claimant is refused by its claim
//!   (`SlotInUse`, `SlotContended`, `Foreign`), and no session that started
//!   loses its owner word afterwards.
#![cfg(not(miri))]

#[path = "../common/mod.rs"]
mod common;
mod world;

use std::sync::Arc;
use std::time::Duration;

use rfm_core::link::ownership::block::Words;
use rfm_core::link::StartError;
use rfm_frames::session::Token;
use rfm_interface::{self as interface, Interface, MemoryMap, Reserved};
use world::{Left, Session, World};

const TICK: Duration = Duration::from_millis(1);
/// Every claimant has started or been refused by then.
const DECIDED_BY: Duration = Duration::from_millis(1_500);

/// A node of interface `name` with `reals` Real signals per node, at `slots`.
fn interface(name: &str, nodes: &[(&str, u8, usize)]) -> Interface {
    let mut text = format!("name = \"{name}\"\n");
    for (node, slot, reals) in nodes {
        let signals: Vec<String> = (0..*reals)
            .map(|i| format!("{{ name = \"x{i}\", type = \"Real\" }}"))
            .collect();
        text += &format!(
            "[[node]]\nname = \"{node}\"\nslot = {slot}\nsignals = [{}]\n",
            signals.join(", ")
        );
    }
    Interface::parse("model.toml", &text, &Reserved::NONE).unwrap()
}

fn overlaps(a: &MemoryMap, i: usize, b: &MemoryMap, j: usize) -> bool {
    a.area(i).overlaps(b.area(j))
}

#[derive(Debug, Clone, Copy)]
struct Case {
    left: Left,
    rival: bool,
    mirrored: bool,
    offsets: [u64; 3],
    order: [usize; 3],
}

/// The claimants of a case: the attitude pair's two nodes, and the rival of
/// its own layout.
/// A claimant: its name, the interface its area is of, the file its link is
/// given (`None`: the attitude preset's), its slot and its peer's.
type Spec<'a> = (
    &'static str,
    &'a Arc<Interface>,
    Option<&'a Arc<Interface>>,
    u8,
    u8,
);

fn run(case: Case) -> Result<(), String> {
    let pair = Arc::new(interface::attitude(0, 1));
    // Over both of the pair's areas, and over neither's place: a layout of its own.
    let other = Arc::new(interface("other", &[("wide", 9, 120)]));
    let left = Arc::new(interface("left", &[("l0", 0, 70), ("l1", 1, 3)]));
    let mut w = World::new();
    if case.left != Left::Nothing {
        w.leave(&left, case.left);
    }
    let specs: [Spec; 3] = [
        ("slot0", &pair, None, 0, 1),
        ("slot1", &pair, None, 1, 0),
        ("wide", &other, Some(&other), 9, 9),
    ];
    let sessions = simulate(&mut w, case, &specs, &other);
    decided_at_the_claim(&sessions)?;
    // Never two owners, and nothing live written over.
    let maps = [
        pair.map().unwrap(),
        pair.map().unwrap(),
        other.map().unwrap(),
    ];
    one_owner(&w, &sessions, &maps)?;
    pair_refused_only_when_contested(case, &sessions)
}

/// Starts the case's claimants at their offsets, in its order, and polls them
/// until each is decided (started or refused) and long enough after for a late
/// loss to show, or [`DECIDED_BY`] has passed.
fn simulate(w: &mut World, case: Case, specs: &[Spec; 3], other: &Arc<Interface>) -> Vec<Session> {
    let claimants = if case.rival { 3 } else { 2 };
    let mut sessions: Vec<Option<Session>> = (0..claimants).map(|_| None).collect();
    let start = w.t;
    let mut mirrored = false;
    while w.t - start < DECIDED_BY {
        for &i in case.order.iter().filter(|&&i| i < claimants) {
            if sessions[i].is_none() && w.t - start >= Duration::from_millis(case.offsets[i]) {
                let (name, iface, file, slot, peer) = specs[i];
                sessions[i] = Some(w.session(name, iface, file, slot, peer));
            }
            if let Some(s) = &mut sessions[i] {
                w.poll(s);
            }
        }
        if case.mirrored && !mirrored && w.t - start >= Duration::from_millis(7) {
            w.mirror(other);
            mirrored = true;
        }
        w.tick(sessions.iter_mut().flatten());
        let decided = sessions
            .iter()
            .all(|s| s.as_ref().is_some_and(|s| s.started || s.error.is_some()));
        // Decided, and long enough after for a late loss to show.
        if decided && w.t - start >= Duration::from_millis(case.offsets.iter().max().unwrap() + 100)
        {
            break;
        }
    }
    sessions.into_iter().flatten().collect()
}

/// Every claimant was decided, and refused only at its claim.
fn decided_at_the_claim(sessions: &[Session]) -> Result<(), String> {
    let undecided: Vec<&str> = sessions
        .iter()
        .filter(|s| !s.started && s.error.is_none())
        .map(|s| s.name)
        .collect();
    if !undecided.is_empty() {
        return Err(format!("not decided within {DECIDED_BY:?}: {undecided:?}"));
    }
    // Decided at the claim: only claim refusals.
    for s in sessions {
        if let Some(e) = &s.error {
            let at_claim = matches!(
                e,
                StartError::SlotInUse { .. }
                    | StartError::SlotContended { .. }
                    | StartError::Foreign { .. }
            );
            if !at_claim {
                return Err(format!(
                    "{} refused otherwise than at its claim: {e}",
                    s.name
                ));
            }
        }
    }
    Ok(())
}

/// The sessions that started each hold their owner word, no two over one area,
/// and none over a protected live session's area, whose owner word stands.
fn one_owner(w: &World, sessions: &[Session], maps: &[MemoryMap; 3]) -> Result<(), String> {
    let index = [0usize, 1, 0];
    let started: Vec<usize> = (0..sessions.len())
        .filter(|&i| sessions[i].started)
        .collect();
    for &i in &started {
        let owner = Words::read(&sessions[i].own).unwrap().owner;
        if owner != Some(Token::of(sessions[i].epoch)) {
            return Err(format!(
                "{} started, and lost its owner word to {owner:?}",
                sessions[i].name
            ));
        }
        for &j in started.iter().filter(|&&j| j > i) {
            if overlaps(&maps[i], index[i], &maps[j], index[j]) {
                return Err(format!(
                    "{} and {} both started over one area",
                    sessions[i].name, sessions[j].name
                ));
            }
        }
    }
    for (area, own, token, what) in &w.protected {
        let owner = Words::read(own).unwrap().owner;
        if owner != Some(*token) {
            return Err(format!(
                "the live {what} session was written over ({owner:?})"
            ));
        }
        if let Some(s) = started
            .iter()
            .map(|&i| &sessions[i])
            .find(|s| s.area.overlaps(area))
        {
            return Err(format!(
                "{} started over the live {what} session's area",
                s.name
            ));
        }
    }
    Ok(())
}

/// No leftover refuses a node, the pair never refuses its own peer, and the
/// pair starts unless something live contested it.
fn pair_refused_only_when_contested(case: Case, sessions: &[Session]) -> Result<(), String> {
    // No leftover refuses a node, and the pair never refuses its own peer.
    for s in &sessions[..2] {
        if let Some(StartError::Foreign { holder, .. }) = &s.error {
            if holder.node.starts_with("slot") {
                return Err(format!("{} judged its own peer foreign", s.name));
            }
        }
    }
    let contested = case.left == Left::Live || case.rival || case.mirrored;
    if !(contested || sessions[0].started && sessions[1].started) {
        return Err(format!(
            "a leftover ({:?}) refused the pair: {:?} / {:?}",
            case.left,
            sessions[0].error.as_ref().map(ToString::to_string),
            sessions[1].error.as_ref().map(ToString::to_string)
        ));
    }
    Ok(())
}

#[test]
fn claims_over_leftovers_live_nodes_and_rivals_end_with_one_owner_decided_at_the_claim() {
    let offsets = [0u64, 3, 19, 40];
    let orders = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let (mut runs, mut failures) = (0, Vec::new());
    for left in [Left::Nothing, Left::Closed, Left::Dead, Left::Live] {
        for (rival, mirrored) in [(false, false), (true, false), (false, true)] {
            // A bridge never mirrors over a live session of its own host
            // announced before (the earlier announcement wins at both ends).
            if left == Left::Live && mirrored {
                continue;
            }
            for &a in &offsets {
                for &b in &offsets {
                    for &c in if rival { &offsets[..] } else { &offsets[..1] } {
                        for &order in &orders {
                            let case = Case {
                                left,
                                rival,
                                mirrored,
                                offsets: [a, b, c],
                                order,
                            };
                            runs += 1;
                            if let Err(e) = run(case) {
                                failures.push(format!("{case:?}: {e}"));
                            }
                        }
                    }
                }
            }
        }
    }
    println!("{runs} runs, {} failures", failures.len());
    assert!(
        failures.is_empty(),
        "{} of {runs} runs failed; the first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
}
