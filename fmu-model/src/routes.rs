//! The per-step view of the variable list: for each value reference, only what
//! a plain `fmi2Set*`/`fmi2Get*` needs (its kind, where its bytes are, its
//! bounds), packed so that the references of one call sit in a few cache lines.
//! Derived from [`Var::place`], never written by hand: the variable list stays
//! the one source.

use rfm_frames::fmi::FmiType;
use rfm_frames::packed::CType;

use super::variables::{PeerValue, Place, Var};

/// How a get or set reaches a variable's bytes: a plain store or load of a
/// payload, or the general path (where the value lives is [`Place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
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
    pub kind: FmiType,
    pub reach: Reach,
    /// An input with a `min` or `max` ([`Var::bounds`]), which a set checks.
    pub bounded: bool,
    pub peer: u8,
    pub offset: u32,
}

impl Route {
    fn of(var: &Var) -> Route {
        let (reach, peer, offset) = match (var.kind, var.place) {
            (FmiType::String, _) => (Reach::Other, 0, 0),
            _ if !plain_bytes(var) => (Reach::Other, 0, 0),
            (_, Place::Input { offset, .. }) => (Reach::Input, 0, offset),
            (
                _,
                Place::Output {
                    peer,
                    value: PeerValue::Signal { offset, .. },
                },
            ) => (
                Reach::Signal,
                u8::try_from(peer).expect("an interface has at most 256 nodes, 255 peers"),
                offset,
            ),
            _ => (Reach::Other, 0, 0),
        };
        Route {
            kind: var.kind,
            reach,
            bounded: var.bounds() != (f64::NEG_INFINITY, f64::INFINITY),
            peer,
            offset: u32::try_from(offset)
                .expect("a payload is smaller than the memory, which is < 4 GiB"),
        }
    }
}

/// Whether the payload holds `var` as FMI 2.0's plain path stores it (a
/// `double`, an `int32_t`, a byte 0 or 1): not a signal of another C type (a
/// `float` or a `uint16` takes the general path, which converts it).
fn plain_bytes(var: &Var) -> bool {
    var.element
        .is_none_or(|e| matches!(e.ctype, CType::Double | CType::Int32 | CType::Bool))
}

/// The routes of `variables`, indexed by value reference.
pub fn routes(variables: &[Var]) -> Vec<Route> {
    variables.iter().map(Route::of).collect()
}

/// The payload bytes of a number whose payload bytes are the master's array
/// bytes (little-endian `double` and `int32_t`), so that a run of them is
/// copied at once. A Boolean is one byte in the payload and an `int` in the
/// master's array: it is not.
fn run_width(kind: FmiType) -> Option<u32> {
    match kind {
        FmiType::Real => Some(8),
        FmiType::Integer => Some(4),
        FmiType::Boolean | FmiType::String => None,
    }
}

/// Whether the signal of route `b` follows that of `a` in the same payload,
/// with nothing in between: both numbers of one kind, inputs without bounds
/// to check, or signals of one peer.
fn continues(a: &Route, b: &Route) -> bool {
    let same_payload = match (a.reach, b.reach) {
        (Reach::Input, Reach::Input) => !a.bounded && !b.bounded,
        (Reach::Signal, Reach::Signal) => a.peer == b.peer,
        _ => false,
    };
    match run_width(a.kind) {
        Some(width) => same_payload && a.kind == b.kind && b.offset == a.offset + width,
        None => false,
    }
}

/// For each value reference, how many value references from it on are one
/// run: consecutive numbers of one kind, side by side in one payload. A master
/// that sets or gets a run in order (1,000 Reals, say) is served by one checked
/// copy instead of 1,000 lookups.
pub fn runs(routes: &[Route]) -> Vec<u32> {
    let mut runs = vec![1; routes.len()];
    for i in (0..routes.len().saturating_sub(1)).rev() {
        if continues(&routes[i], &routes[i + 1]) {
            runs[i] = runs[i + 1] + 1;
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_8_bytes() {
        assert_eq!(std::mem::size_of::<Route>(), 8);
    }

    fn route(kind: FmiType, reach: Reach, bounded: bool, peer: u8, offset: u32) -> Route {
        Route {
            kind,
            reach,
            bounded,
            peer,
            offset,
        }
    }

    #[test]
    fn a_run_is_numbers_of_one_kind_side_by_side_in_one_payload() {
        use FmiType::*;
        use Reach::*;
        let routes = [
            route(Real, Input, false, 0, 0),
            route(Real, Input, false, 0, 8),
            route(Real, Input, false, 0, 16),
            // bounded: checked one by one
            route(Real, Input, true, 0, 24),
            route(Real, Input, false, 0, 32),
            // a gap of 8 bytes
            route(Real, Input, false, 0, 48),
            // another kind right after
            route(Integer, Input, false, 0, 56),
            route(Integer, Input, false, 0, 60),
            // peer 0's signals, then peer 1's at the same offsets
            route(Real, Signal, false, 0, 0),
            route(Real, Signal, false, 0, 8),
            route(Real, Signal, false, 1, 16),
            // Booleans are never a run
            route(Boolean, Input, false, 0, 64),
            route(Boolean, Input, false, 0, 65),
            route(Real, Other, false, 0, 0),
            route(Real, Other, false, 0, 8),
        ];
        assert_eq!(runs(&routes), [3, 2, 1, 1, 1, 1, 2, 1, 2, 1, 1, 1, 1, 1, 1]);
    }
}
