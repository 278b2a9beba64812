//! What the packaging needs from modelDescription.xml.

use anyhow::{anyhow, Context, Result};

/// One `ScalarVariable`, for the documentation table.
#[derive(Debug, Clone)]
pub struct Variable {
    pub name: String,
    pub causality: String,
    pub kind: String,
    pub start: String,
    pub description: String,
}

impl Variable {
    /// Its type as FMI 2.0 and SSP 1.0 name it: an FMI 3.0 variable's by the
    /// C types' table (a Float64 or a UInt64 is a Real, an Int16 an
    /// Integer), so that connections and connectors of both versions agree.
    pub fn fmi2_kind(&self) -> &str {
        rfm_frames::fmi::Fmi3Type::parse(&self.kind).map_or(&self.kind, |t| t.fmi2().name())
    }
}

#[derive(Debug, Clone)]
pub struct Model {
    pub xml: String,
    pub guid: String,
    pub model_identifier: String,
    pub description: String,
    pub generation_tool: String,
    pub variables: Vec<Variable>,
}

impl Model {
    pub fn parse(xml: String) -> Result<Model> {
        let (guid, model_identifier, description, generation_tool, variables) = {
            let doc = roxmltree::Document::parse(&xml)
                .context("modelDescription.xml is not well-formed XML")?;
            let root = doc.root_element();
            let version = root.attribute("fmiVersion");
            if root.tag_name().name() != "fmiModelDescription"
                || !matches!(version, Some("2.0" | "3.0"))
            {
                return Err(anyhow!(
                    "modelDescription.xml is not an FMI 2.0 or 3.0 model description"
                ));
            }
            // FMI 3.0 calls the GUID the instantiation token.
            let guid = (root.attribute("guid"))
                .or_else(|| root.attribute("instantiationToken"))
                .ok_or_else(|| anyhow!("modelDescription.xml has no guid"))?;
            let cs = root
                .children()
                .find(|n| n.has_tag_name("CoSimulation"))
                .ok_or_else(|| anyhow!("modelDescription.xml has no CoSimulation element"))?;
            let id = cs
                .attribute("modelIdentifier")
                .ok_or_else(|| anyhow!("CoSimulation has no modelIdentifier"))?;
            let variables = match version {
                Some("3.0") => variables3(&root),
                _ => variables2(&root),
            };
            (
                guid.to_owned(),
                id.to_owned(),
                root.attribute("description").unwrap_or_default().to_owned(),
                root.attribute("generationTool")
                    .unwrap_or_default()
                    .to_owned(),
                variables,
            )
        };
        Ok(Model {
            xml,
            guid,
            model_identifier,
            description,
            generation_tool,
            variables,
        })
    }
}

/// FMI 2.0's `ScalarVariable`s, each with its type as a child element.
fn variables2(root: &roxmltree::Node) -> Vec<Variable> {
    (root.descendants())
        .filter(|n| n.has_tag_name("ScalarVariable"))
        .map(|v| {
            let ty = v.children().find(|n| n.is_element());
            Variable {
                name: v.attribute("name").unwrap_or_default().to_owned(),
                causality: v.attribute("causality").unwrap_or("local").to_owned(),
                kind: ty
                    .map(|t| t.tag_name().name().to_owned())
                    .unwrap_or_default(),
                start: (ty.and_then(|t| t.attribute("start")))
                    .unwrap_or_default()
                    .to_owned(),
                description: v.attribute("description").unwrap_or_default().to_owned(),
            }
        })
        .collect()
}

/// FMI 3.0's variables: each an element named by its type, a String's start
/// in a `Start` child.
fn variables3(root: &roxmltree::Node) -> Vec<Variable> {
    let Some(list) = root.children().find(|n| n.has_tag_name("ModelVariables")) else {
        return Vec::new();
    };
    (list.children())
        .filter(|n| n.is_element())
        .map(|v| Variable {
            name: v.attribute("name").unwrap_or_default().to_owned(),
            causality: v.attribute("causality").unwrap_or("local").to_owned(),
            kind: v.tag_name().name().to_owned(),
            start: (v.attribute("start"))
                .or_else(|| {
                    (v.children().find(|n| n.has_tag_name("Start")))
                        .and_then(|s| s.attribute("value"))
                })
                .unwrap_or_default()
                .to_owned(),
            description: v.attribute("description").unwrap_or_default().to_owned(),
        })
        .collect()
}
