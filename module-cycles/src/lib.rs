//! The module graph of a crate and its circles; `src/main.rs` runs it over a
//! workspace (see there for what counts as an edge).

mod tree;

use std::collections::BTreeMap;

use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;

pub use tree::{Crate, ModId};

/// Every circle of `krate`'s module graph, as its edges with the place of one
/// path that makes each.
pub fn circles(krate: &Crate) -> Vec<Vec<(ModId, ModId, String)>> {
    let mut graph = DiGraphMap::<ModId, ()>::new();
    let mut places: BTreeMap<(ModId, ModId), String> = BTreeMap::new();
    for (from, to, at) in krate.edges() {
        graph.add_edge(from, to, ());
        places.entry((from, to)).or_insert(at);
    }
    tarjan_scc(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut edges: Vec<_> = places
                .iter()
                .filter(|((a, b), _)| component.contains(a) && component.contains(b))
                .map(|(&(a, b), at)| (a, b, at.clone()))
                .collect();
            edges.sort();
            edges
        })
        .collect()
}
