//! The per-step view of the variable list: for each value reference, only what
//! a plain `fmi2Set*`/`fmi2Get*` needs (its kind, where its bytes are, its
//! bounds), packed so that the references of one call sit in a few cache lines.
//! Derived from [`Var::place`], never written by hand: the variable list stays
//! the one source.

use super::variables::{Kind, PeerValue, Place, Var};

/// Where a variable's bytes are, when a set or get is a plain store or load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// This node's payload at `offset`.
    Input { offset: u32 },
    /// The payload of peer `peer`'s taken frame at `offset`.
    Signal { peer: u16, offset: u32 },
    /// Anything else (parameters, strings, link diagnostics): the general path.
    Other,
}

/// One value reference's route.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Route {
    pub kind: Kind,
    pub at: At,
    /// The values an input may be set to (see [`Var::bounds`]).
    pub lo: f64,
    pub hi: f64,
}

impl Route {
    fn of(var: &Var) -> Route {
        let at = match (var.kind, var.place) {
            (Kind::String, _) => At::Other,
            (_, Place::Input { offset, .. }) => At::Input {
                offset: to_u32(offset),
            },
            (
                _,
                Place::Output {
                    peer,
                    value: PeerValue::Signal { offset, .. },
                },
            ) => At::Signal {
                peer: u16::try_from(peer).expect("an interface has at most 256 nodes"),
                offset: to_u32(offset),
            },
            _ => At::Other,
        };
        Route {
            kind: var.kind,
            at,
            lo: var.bounds.0,
            hi: var.bounds.1,
        }
    }
}

fn to_u32(offset: usize) -> u32 {
    u32::try_from(offset).expect("a payload is smaller than the memory, which is < 4 GiB")
}

/// The routes of `variables`, indexed by value reference.
pub fn routes(variables: &[Var]) -> Vec<Route> {
    variables.iter().map(Route::of).collect()
}
