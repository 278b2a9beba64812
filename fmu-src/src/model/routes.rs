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
    Input,
    /// The payload of peer `peer`'s taken frame at `offset`.
    Signal,
    /// Anything else (parameters, strings, link diagnostics): the general path.
    Other,
}

/// One value reference's route, in 8 bytes: a get or set of 1,000 signals walks
/// 8 KB of routes, not the variables (about 200 bytes each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub kind: Kind,
    pub at: At,
    /// An input with a `min` or `max` ([`Var::bounds`]), which a set checks.
    pub bounded: bool,
    pub peer: u8,
    pub offset: u32,
}

impl Route {
    fn of(var: &Var) -> Route {
        let (at, peer, offset) = match (var.kind, var.place) {
            (Kind::String, _) => (At::Other, 0, 0),
            (_, Place::Input { offset, .. }) => (At::Input, 0, offset),
            (
                _,
                Place::Output {
                    peer,
                    value: PeerValue::Signal { offset, .. },
                },
            ) => (
                At::Signal,
                u8::try_from(peer).expect("an interface has at most 256 nodes, 255 peers"),
                offset,
            ),
            _ => (At::Other, 0, 0),
        };
        Route {
            kind: var.kind,
            at,
            bounded: var.bounds != (f64::NEG_INFINITY, f64::INFINITY),
            peer,
            offset: u32::try_from(offset)
                .expect("a payload is smaller than the memory, which is < 4 GiB"),
        }
    }
}

/// The routes of `variables`, indexed by value reference.
pub fn routes(variables: &[Var]) -> Vec<Route> {
    variables.iter().map(Route::of).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_8_bytes() {
        assert_eq!(std::mem::size_of::<Route>(), 8);
    }
}
