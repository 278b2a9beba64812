//! What an FMU is: the interface and the node it plays, and the variables that
//! follow from them. One list ([`Model::variables`]) serves both sides: the
//! instance looks variables up in it, and build-fmu writes modelDescription.xml
//! from it ([`Model::xml`]), so code and description cannot drift apart.
//!
//! One binary serves every interface. The attitude FMU (`rfm_attitude`) is the
//! preset, recognised by its GUID; any other FMU carries its interface file and
//! node name in `resources/`, read at `fmi2Instantiate`, and its GUID is a digest
//! of the variables they give, so a description and resources that do not belong
//! together are refused.
//!
//! A crate of its own so that build-fmu, the benchmarks and the fuzz targets use
//! the model without depending on the FMU's cdylib crate.

mod category;
pub mod fmi2;
pub mod fmi3;
mod params;
mod routes;
mod units;
mod variables;
mod xml;
mod xml3;
pub use xml::attr as xml_attr;

use std::path::Path;
use std::sync::Arc;

use rfm_interface::{self as interface, Interface, InterfaceError};

pub use category::Category;
pub use params::{
    fmu_params, of_setting, spec, Param, ParamSpec, ParamValues, PARAMETER_NAMES, PARAMS,
};
pub use routes::{Reach, Route};
pub use variables::{Causality, Element, Fmi3Shape, LinkField, PeerValue, Place, RingField, Var};
pub use variables::{ForeignLink, ForeignValue};

/// The names an FMU's variables take beyond an interface's signals, which the
/// interface parser therefore refuses as signal or node names: every peer's
/// `<node>.time`, `<node>.step` and `<node>.link.*` outputs, the parameters, the
/// prefixes of the FMU's own outputs (`record.dropped`, `pace.behind`), and what
/// a foreign node's fields may not be named (`<node>.age`, `<node>.link.*`).
pub const RESERVED: interface::Reserved = interface::Reserved {
    outputs: &["time", "step", "link"],
    parameters: &PARAMETER_NAMES,
    prefixes: &variables::OWN_PREFIXES,
    foreign_outputs: &variables::FOREIGN_ROOTS,
};

/// The attitude FMU's GUID.
pub const PRESET_GUID: &str = "{83919148-a4e5-4e56-ae64-fbf2790957b0}";

/// The variable convention of this build, written into every description's
/// `generationTool` and present in the binary: build-fmu refuses to pack a
/// description next to a binary of another convention. Change it whenever the
/// variables an interface gives, or what they mean, change: FMUs built by one
/// release's build-fmu from another release's binaries rely on it.
pub const CONVENTION: &str = "rfm-fmu variables 3";

/// The interface file in `resources/`, verbatim as the user wrote it (its errors
/// then point at the user's lines).
pub const RESOURCE_INTERFACE: &str = "interface.toml";
/// The name of the node this FMU plays, in `resources/`.
pub const RESOURCE_NODE: &str = "node.txt";

/// Why an FMU's resources give no model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: String, reason: String },
    #[error(transparent)]
    Interface(#[from] InterfaceError),
    #[error(
        "{path} names node `{node}`, which interface `{interface}` does not have (it has {nodes})"
    )]
    NoSuchNode {
        path: String,
        node: String,
        interface: String,
        nodes: String,
    },
}

/// Which FMU a model is: what names its outputs and which parameters it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmuKind {
    /// The attitude FMU: its interface follows the slot parameters, its
    /// outputs are `peer.*` and `link.*`.
    Attitude,
    /// A node of an interface file: its outputs are named by the peers'.
    Node,
}

/// One FMU's model.
#[derive(Debug, Clone)]
pub struct Model {
    pub interface: Arc<Interface>,
    /// This node's index in the interface.
    pub node: usize,
    pub kind: FmuKind,
    pub model_identifier: String,
    pub guid: String,
    /// Other nodes, in interface order: the peers whose outputs the FMU has
    /// (`Place::Output::peer` indexes this).
    pub peers: Vec<usize>,
    /// Indexed by value reference.
    pub variables: Vec<Var>,
    /// [`Model::variables`] as the per-step calls need them, by value reference.
    pub routes: Vec<Route>,
    /// By value reference: how many references from it on are one run
    /// (see `routes::runs`).
    pub runs: Vec<u32>,
    /// [`Model::variables`] as the FMI 3.0 face's accessors check them, by
    /// value reference.
    pub fmi3: Vec<Fmi3Shape>,
    /// The start values of this FMU's parameters: its interface file's
    /// settings for this node, else the parameter table's. Made once here,
    /// because every instantiation and reset starts from them.
    pub param_starts: ParamValues,
}

impl Model {
    /// The attitude FMU. Its variables are those of slots 0 and 1; the payload
    /// layout, and so every variable, is the same for any pair of slots.
    pub fn attitude() -> Model {
        let mut model = Model::build(Arc::new(interface::attitude(0, 1)), 0, FmuKind::Attitude);
        model.model_identifier = interface::ATTITUDE_NAME.to_owned();
        model.guid = PRESET_GUID.to_owned();
        model
    }

    /// The FMU of node `node` of `interface`, named `<interface>_<node>`.
    pub fn of_node(interface: Arc<Interface>, node: usize) -> Model {
        let mut model = Model::build(interface, node, FmuKind::Node);
        model.guid = model.digest();
        model
    }

    fn build(interface: Arc<Interface>, node: usize, kind: FmuKind) -> Model {
        let peers: Vec<usize> = (0..interface.nodes.len()).filter(|&i| i != node).collect();
        let param_starts = variables::param_starts(&interface, node);
        let variables = variables::variables(&interface, node, &peers, kind, &param_starts);
        let routes = routes::routes(&variables);
        Model {
            param_starts,
            fmi3: variables.iter().map(Var::fmi3_shape).collect(),
            runs: routes::runs(&routes),
            routes,
            model_identifier: format!("{}_{}", interface.name, interface.nodes[node].name),
            guid: String::new(),
            interface,
            node,
            kind,
            peers,
            variables,
        }
    }

    /// The model an FMU's `resources/` directory gives.
    pub fn load(resources: &Path) -> Result<Model, ModelError> {
        let read = |name: &str| {
            let path = resources.join(name);
            std::fs::read_to_string(&path).map_err(|e| ModelError::Unreadable {
                path: path.display().to_string(),
                reason: e.to_string(),
            })
        };
        let file = resources.join(RESOURCE_INTERFACE).display().to_string();
        let node_file = resources.join(RESOURCE_NODE).display().to_string();
        Model::from_resources(
            &file,
            &read(RESOURCE_INTERFACE)?,
            &node_file,
            &read(RESOURCE_NODE)?,
        )
    }

    /// The model of the resource texts: the interface file `interface` (named
    /// `file` in messages) and the node name `node` (from `node_file`).
    pub fn from_resources(
        file: &str,
        interface: &str,
        node_file: &str,
        node: &str,
    ) -> Result<Model, ModelError> {
        let interface = Interface::parse(file, interface, &RESERVED)?;
        let name = node.trim();
        let node = interface
            .nodes
            .iter()
            .position(|n| n.name == name)
            .ok_or_else(|| ModelError::NoSuchNode {
                path: node_file.to_owned(),
                node: name.to_owned(),
                interface: interface.name.clone(),
                nodes: interface
                    .nodes
                    .iter()
                    .map(|n| format!("`{}`", n.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Ok(Model::of_node(Arc::new(interface), node))
    }

    /// The model description.
    pub fn xml(&self) -> String {
        self.xml_with_guid(&self.guid)
    }

    /// The description's `description` attribute.
    pub fn description(&self) -> String {
        if self.kind == FmuKind::Attitude {
            return "Exchanges aircraft attitude with a peer simulator through reflective memory \
                    (RFM2g), POSIX shared memory or an in-process loopback, at every communication \
                    step"
                .to_owned();
        }
        let i = &self.interface;
        let me = &i.nodes[self.node];
        let others: Vec<String> = self
            .peers
            .iter()
            .map(|&p| format!("`{}`", i.nodes[p].name))
            .collect();
        format!(
            "Node `{}` (slot {}) of interface `{}`: publishes its {} signals and reads those of \
             {} through reflective memory (RFM2g), POSIX shared memory or an in-process \
             loopback, at every communication step",
            me.name,
            me.slot,
            i.name,
            me.signals.len(),
            if others.is_empty() {
                "no other node".to_owned()
            } else {
                others.join(", ")
            }
        )
    }

    /// This node's period, when its interface gives one: its FMU steps by
    /// exactly it.
    pub fn period(&self) -> Option<rfm_interface::Period> {
        self.interface.nodes[self.node].period
    }

    /// The variable called `name`.
    pub fn variable(&self, name: &str) -> Option<(u32, &Var)> {
        self.variables
            .iter()
            .enumerate()
            .find(|(_, v)| v.name == name)
            .map(|(i, v)| (i as u32, v))
    }
}

impl Model {
    /// A GUID-shaped digest of what a master and the binary must agree on: the
    /// convention, the model identifier and every variable's name, type,
    /// causality, start, unit and bounds, in value-reference order. Descriptions
    /// and the release version are left out, so that a newer build-fmu can pack
    /// an older binary of the same convention (FNV-1a with two seeds: stable
    /// across builds and platforms).
    fn digest(&self) -> String {
        let mut text = format!("{CONVENTION}\n{}\n", self.model_identifier);
        for v in &self.variables {
            text.push_str(&format!(
                "{}|{}|{:?}|{}|{:?}|{:?}|{:?}\n",
                v.name,
                v.kind.name(),
                v.causality,
                v.start.written(),
                v.unit,
                v.min.map(|x| v.bound_text(x)),
                v.max.map(|x| v.bound_text(x))
            ));
        }
        guid_of(&text)
    }
}

/// A GUID-shaped digest of `text`.
fn guid_of(text: &str) -> String {
    let fnv = |seed: u64| {
        text.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    };
    let (a, b) = (fnv(0xcbf2_9ce4_8422_2325), fnv(0x6c62_272e_07bb_0142));
    format!(
        "{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attitude FMU's GUID is fixed, not a digest: masters that cached its
    /// description must see a new GUID when its variables change.
    #[test]
    fn the_attitude_guid_changes_with_its_variables() {
        assert_eq!(
            Model::attitude().digest(),
            "{09906692-2a03-8eda-ad94-7ffc36daf8f1}",
            "the attitude FMU's variables changed: give it a new PRESET_GUID, then put \
             this digest here"
        );
    }

    #[test]
    fn the_attitude_model_keeps_its_value_references() {
        let m = Model::attitude();
        let names: Vec<&str> = m.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names.len(), 46);
        assert_eq!(&names[..3], ["device", "rfm2gLibrary", "regionOffset"]);
        assert_eq!(names[11], "idleTimeout");
        assert_eq!(names[12], "realTimeFactor");
        assert_eq!(names[13], "recordFile");
        assert_eq!(names[14], "recordOverwrite");
        assert_eq!(names[15], "rfm2gReadThreshold");
        assert_eq!(names[16], "cpuAffinity");
        assert_eq!(names[17], "realtimePriority");
        assert_eq!(names[18], "lockMemory");
        assert_eq!(names[19], "roll");
        assert_eq!(names[24], "peer.roll");
        assert_eq!(names[30], "peer.step");
        assert_eq!(names[31], "link.ok");
        assert_eq!(names[36], "link.wait");
        assert_eq!(names[37], "record.dropped");
        assert_eq!(names[38], "replay.divergence");
        assert_eq!(names[39], "pace.behind");
        assert_eq!(names[40], "cpu.offCore");
        assert_eq!(names[41..43], ["ring.a.ok", "ring.b.ok"]);
        assert_eq!(names[45], "ring.failovers");
        assert_eq!(m.model_identifier, "rfm_attitude");
    }

    /// modelDescription.xml at the repository root is the attitude FMU's
    /// description, as this code writes it: editing one without the other fails.
    #[test]
    fn the_committed_description_is_the_one_the_code_writes() {
        let committed = include_str!("../../modelDescription.xml");
        let written = Model::attitude().xml();
        if committed != written {
            let line = committed
                .lines()
                .zip(written.lines())
                .position(|(a, b)| a != b)
                .map_or(
                    committed.lines().count().min(written.lines().count()),
                    |i| i,
                );
            panic!(
                "modelDescription.xml differs from what the code writes from line {}: \
                 regenerate it with `cargo run -p build-fmu -- --write-description` \
                 (committed: {:?}, written: {:?})",
                line + 1,
                committed.lines().nth(line),
                written.lines().nth(line)
            );
        }
    }
}
