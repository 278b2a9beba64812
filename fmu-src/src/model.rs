//! The variables of `modelDescription.xml`, generated at build time (see build.rs).

/// Type of a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Real,
    Integer,
    Boolean,
    String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    Parameter,
    Input,
    Output,
}

/// One `ScalarVariable`.
#[derive(Debug, Clone, Copy)]
pub struct Var {
    pub name: &'static str,
    pub vr: u32,
    pub kind: Kind,
    pub causality: Causality,
    /// The start value as written in the XML.
    pub start: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/model.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_indexed_by_value_reference() {
        for (i, v) in VARIABLES.iter().enumerate() {
            assert_eq!(v.vr as usize, i, "{}", v.name);
        }
        assert_eq!(VARIABLES[vr::PEER_ROLL as usize].name, "peer.roll");
        assert_eq!(
            VARIABLES[vr::LINK_BAD_FRAMES as usize].name,
            "link.badFrames"
        );
        assert_eq!(VARIABLES[vr::DEVICE as usize].start, "/dev/rfm2g0");
        assert_eq!(MODEL_IDENTIFIER, "rfm_attitude");
    }
}
