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
            if root.tag_name().name() != "fmiModelDescription"
                || root.attribute("fmiVersion") != Some("2.0")
            {
                return Err(anyhow!(
                    "modelDescription.xml is not an FMI 2.0 model description"
                ));
            }
            let guid = root
                .attribute("guid")
                .ok_or_else(|| anyhow!("modelDescription.xml has no guid"))?;
            let cs = root
                .children()
                .find(|n| n.has_tag_name("CoSimulation"))
                .ok_or_else(|| anyhow!("modelDescription.xml has no CoSimulation element"))?;
            let id = cs
                .attribute("modelIdentifier")
                .ok_or_else(|| anyhow!("CoSimulation has no modelIdentifier"))?;
            let variables = root
                .descendants()
                .filter(|n| n.has_tag_name("ScalarVariable"))
                .map(|v| {
                    let ty = v.children().find(|n| n.is_element());
                    Variable {
                        name: v.attribute("name").unwrap_or_default().to_owned(),
                        causality: v.attribute("causality").unwrap_or("local").to_owned(),
                        kind: ty
                            .map(|t| t.tag_name().name().to_owned())
                            .unwrap_or_default(),
                        start: ty
                            .and_then(|t| t.attribute("start"))
                            .unwrap_or_default()
                            .to_owned(),
                        description: v.attribute("description").unwrap_or_default().to_owned(),
                    }
                })
                .collect();
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
