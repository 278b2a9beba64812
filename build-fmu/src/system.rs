//! `--system FILE`: one simulator as its master runs it, packed as an SSP
//! archive: the node's coupling FMU beside the lab's own FMUs (a flight
//! model, an autopilot), with their parameters and the connections the
//! master carries between them.
//!
//! The file (TOML) names the node this simulator is, the other FMUs, and the
//! connections, each from an output to an input as `COMPONENT.VARIABLE`; the
//! node's coupling FMU is the component named after the node:
//!
//! ```toml
//! node = "leader"
//! connections = [
//!   ["aircraft.latitude", "leader.latitude"],
//! ]
//!
//! [[component]]
//! name = "aircraft"
//! fmu = "Aircraft.fmu"          # in the --out folder (or a path from there)
//! parameters = { latitude0 = 47.0 }
//! ```
//!
//! Every name is checked against the FMUs' own model descriptions before
//! anything is written: a component, variable or parameter that is not
//! there, a connection from an input or to an output, two connections into
//! one input, or a value of the wrong type is refused naming it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;

use crate::model::{Model, Variable};

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    node: String,
    #[serde(default)]
    component: Vec<ComponentFile>,
    #[serde(default)]
    connections: Vec<[String; 2]>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ComponentFile {
    name: String,
    fmu: PathBuf,
    #[serde(default)]
    parameters: BTreeMap<String, toml::Value>,
}

/// A parameter's value, of the FMI type of its variable.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Real(f64),
    Integer(i64),
    Boolean(bool),
    String(String),
}

impl Value {
    /// The SSV element and its value attribute.
    pub fn ssv(&self) -> (&'static str, String) {
        match self {
            Value::Real(v) => ("Real", format!("{v:?}")),
            Value::Integer(v) => ("Integer", v.to_string()),
            Value::Boolean(v) => ("Boolean", v.to_string()),
            Value::String(v) => ("String", v.clone()),
        }
    }
}

/// One FMU of the simulator besides the node's.
#[derive(Debug)]
pub struct Component {
    pub name: String,
    /// The .fmu, read whole (the SSP carries it).
    pub path: PathBuf,
    pub file_name: String,
    pub model: Model,
    pub parameters: Vec<(String, Value)>,
}

/// One end of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    pub component: String,
    pub variable: String,
    /// The variable's type as FMI 2.0 and SSP 1.0 name it (`Real`,
    /// `Integer`, `Boolean`, `String`; an FMI 3.0 variable's by
    /// [`crate::model::Variable::fmi2_kind`]): a Float64 connects to a Real.
    pub kind: String,
}

/// The simulator, checked against its FMUs.
#[derive(Debug)]
pub struct System {
    pub node: String,
    pub components: Vec<Component>,
    pub connections: Vec<(End, End)>,
}

/// Reads the system file at `path`, whose FMUs are looked up from `dir`:
/// checked against them once the node's own FMU is written
/// ([`Unchecked::check`]).
pub fn read(path: &Path, dir: &Path) -> Result<Unchecked> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file: File = toml::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    Ok(Unchecked {
        file,
        dir: dir.to_path_buf(),
        source: path.display().to_string(),
    })
}

/// A system file read, waiting for the node's own FMU to be written: its
/// variables are checked with the others'.
pub struct Unchecked {
    file: File,
    dir: PathBuf,
    source: String,
}

impl Unchecked {
    /// The node this simulator is.
    pub fn node(&self) -> &str {
        &self.file.node
    }

    /// The FMUs the file names, each one's model read from its archive.
    fn components(&self) -> Result<Vec<Component>> {
        let mut components: Vec<Component> = Vec::new();
        for c in &self.file.component {
            if c.name == self.file.node || components.iter().any(|o| o.name == c.name) {
                bail!(
                    "{}: two components are named `{}` (the node's coupling FMU is the \
                     component `{}`)",
                    self.source,
                    c.name,
                    self.file.node
                );
            }
            if c.name.is_empty() || c.name.contains(['.', '/', ' ']) {
                bail!(
                    "{}: component name `{}`: give a name without dots, slashes or spaces",
                    self.source,
                    c.name
                );
            }
            let path = self.dir.join(&c.fmu);
            let model = model_of(&path)
                .with_context(|| format!("{}: component `{}`", self.source, c.name))?;
            let mut parameters = Vec::new();
            for (name, value) in &c.parameters {
                let v = find(&model, name).ok_or_else(|| {
                    anyhow!(
                        "{}: component `{}` ({}) has no variable `{name}`",
                        self.source,
                        c.name,
                        path.display()
                    )
                })?;
                if v.causality != "parameter" {
                    bail!(
                        "{}: `{}.{name}` is a variable of causality {}, not a parameter",
                        self.source,
                        c.name,
                        v.causality
                    );
                }
                parameters.push((
                    name.clone(),
                    typed(value, v).with_context(|| {
                        format!("{}: parameter `{}.{name}`", self.source, c.name)
                    })?,
                ));
            }
            components.push(Component {
                name: c.name.clone(),
                file_name: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path,
                model,
                parameters,
            });
        }
        Ok(components)
    }

    /// Checks everything against the FMUs, the node's own at `node_fmu`.
    pub fn check(self, node_fmu: &Path) -> Result<System> {
        let components = self.components()?;
        let node_model = model_of(node_fmu)?;
        let connections = self.connections(&node_model, &components)?;
        Ok(System {
            node: self.file.node,
            components,
            connections,
        })
    }

    /// The file's connections: each from an output to an input of its type,
    /// one into each input.
    fn connections(&self, node_model: &Model, components: &[Component]) -> Result<Vec<(End, End)>> {
        let mut connections: Vec<(End, End)> = Vec::new();
        for [from, to] in &self.file.connections {
            let from = self.end(from, "output", node_model, components)?;
            let to = self.end(to, "input", node_model, components)?;
            if from.kind != to.kind {
                bail!(
                    "{}: connection {}.{} ({}) to {}.{} ({}): the types differ",
                    self.source,
                    from.component,
                    from.variable,
                    from.kind,
                    to.component,
                    to.variable,
                    to.kind
                );
            }
            if connections.iter().any(|(_, t)| *t == to) {
                bail!(
                    "{}: two connections into `{}.{}`: an input takes one",
                    self.source,
                    to.component,
                    to.variable
                );
            }
            connections.push((from, to));
        }
        Ok(connections)
    }

    /// The connection end `text` (COMPONENT.VARIABLE): a variable of that
    /// component's model, of `causality`.
    fn end(
        &self,
        text: &str,
        causality: &str,
        node_model: &Model,
        components: &[Component],
    ) -> Result<End> {
        let (component, variable) = text.split_once('.').ok_or_else(|| {
            anyhow!(
                "{}: connection end `{text}`: write it COMPONENT.VARIABLE",
                self.source
            )
        })?;
        let model = match component == self.file.node {
            true => Some(node_model),
            false => components
                .iter()
                .find(|c| c.name == component)
                .map(|c| &c.model),
        };
        let m = model.ok_or_else(|| {
            anyhow!(
                "{}: connection end `{text}`: no component `{component}` (there are `{}`{})",
                self.source,
                self.file.node,
                components
                    .iter()
                    .map(|c| format!(", `{}`", c.name))
                    .collect::<String>()
            )
        })?;
        let v = find(m, variable).ok_or_else(|| {
            anyhow!(
                "{}: connection end `{text}`: `{component}` has no variable `{variable}`",
                self.source
            )
        })?;
        if v.causality != causality {
            bail!(
                "{}: connection end `{text}` is an {}, where a connection goes from an \
                 output to an input",
                self.source,
                v.causality
            );
        }
        Ok(End {
            component: component.to_owned(),
            variable: variable.to_owned(),
            kind: v.fmi2_kind().to_owned(),
        })
    }
}

fn find<'m>(model: &'m Model, name: &str) -> Option<&'m Variable> {
    model.variables.iter().find(|v| v.name == name)
}

/// A TOML value as the FMI type of `v`.
fn typed(value: &toml::Value, v: &Variable) -> Result<Value> {
    Ok(match (v.fmi2_kind(), value) {
        ("Real", toml::Value::Float(x)) => Value::Real(*x),
        ("Real", toml::Value::Integer(x)) => Value::Real(*x as f64),
        ("Integer" | "Enumeration", toml::Value::Integer(x)) => Value::Integer(*x),
        ("Boolean", toml::Value::Boolean(x)) => Value::Boolean(*x),
        ("String", toml::Value::String(x)) => Value::String(x.clone()),
        (kind, value) => {
            let article = if kind.starts_with(['A', 'E', 'I', 'O', 'U']) {
                "an"
            } else {
                "a"
            };
            bail!(
                "{article} {kind} variable, given {} {value:?}",
                value.type_str()
            )
        }
    })
}

/// The model description inside the .fmu at `path`.
fn model_of(path: &Path) -> Result<Model> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("{} is not an FMU (not a zip archive)", path.display()))?;
    let mut xml = String::new();
    std::io::Read::read_to_string(
        &mut zip
            .by_name("modelDescription.xml")
            .with_context(|| format!("{} has no modelDescription.xml", path.display()))?,
        &mut xml,
    )?;
    Model::parse(xml).with_context(|| format!("{}", path.display()))
}
