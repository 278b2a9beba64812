//! modelDescription.xml, written from the model: the only writer of it.

use std::fmt::Write as _;

use super::variables::{Causality, Var};
use super::Model;
use crate::category::Category;

/// `text` as an XML attribute value (also for the SSP files build-fmu writes).
pub fn attr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

/// A variable's `causality` and its `initial` attribute (none for an input),
/// as both versions of the description write them.
pub(super) fn causality_and_initial(v: &Var) -> (&'static str, &'static str) {
    match v.causality {
        Causality::Parameter => ("parameter", " initial=\"exact\""),
        Causality::Input => ("input", ""),
        Causality::Output => ("output", " initial=\"exact\""),
    }
}

fn variable(out: &mut String, index: usize, v: &Var) {
    let (causality, initial) = causality_and_initial(v);
    let mut ty = format!("<{} start=\"{}\"", v.kind.name(), attr(&v.start.written()));
    let bound = |x: Option<f64>| x.map(|x| v.bound_text(x));
    for (key, value) in [
        ("unit", v.unit.clone()),
        ("min", bound(v.min)),
        ("max", bound(v.max)),
    ] {
        if let Some(value) = value {
            let _ = write!(ty, " {key}=\"{}\"", attr(&value));
        }
    }
    let _ = write!(
        out,
        "    <!-- {} --> <ScalarVariable name=\"{}\" valueReference=\"{index}\" causality=\"{causality}\" variability=\"{}\"{initial}\n      description=\"{}\">\n      {ty}/></ScalarVariable>\n",
        index + 1,
        attr(&v.name),
        v.variability(),
        attr(&v.description),
    );
}

impl Model {
    /// The model description, with `guid` as its GUID.
    pub(super) fn xml_with_guid(&self, guid: &str) -> String {
        let mut out = String::with_capacity(512 + 400 * self.variables.len());
        let _ = write!(
            out,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription
  fmiVersion="2.0"
  modelName="{id}"
  guid="{guid}"
  description="{description}"
  author="rfm-couple"
  version="{version}"
  generationTool="rfm-couple build-fmu ({convention})"
  variableNamingConvention="structured"
  numberOfEventIndicators="0">

  <CoSimulation
    modelIdentifier="{id}"
    canHandleVariableCommunicationStepSize="true"
    canInterpolateInputs="false"
    canRunAsynchronuously="false"
    canBeInstantiatedOnlyOncePerProcess="false"
    canNotUseMemoryManagementFunctions="true"
    canGetAndSetFMUstate="false"
    canSerializeFMUstate="false"
    providesDirectionalDerivative="false"/>
"#,
            id = attr(&self.model_identifier),
            description = attr(&self.description()),
            version = env!("CARGO_PKG_VERSION"),
            convention = super::CONVENTION,
        );
        self.unit_definitions(&mut out);
        log_categories(&mut out);
        self.default_experiment(&mut out);
        self.variables_and_structure(&mut out);
        out.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
        out
    }

    /// `<DefaultExperiment>`: ten seconds of the node's own period (1 ms
    /// without one).
    pub(super) fn default_experiment(&self, out: &mut String) {
        let step = self.period().map_or(0.001, |p| p.seconds());
        let _ = writeln!(
            out,
            "  <DefaultExperiment startTime=\"0\" stopTime=\"10\" stepSize=\"{step}\"/>\n"
        );
    }

    /// `<UnitDefinitions>`: each unit the variables use, once, with its SI base
    /// units where they are known.
    pub(super) fn unit_definitions(&self, out: &mut String) {
        let mut units: Vec<&str> = Vec::new();
        for v in &self.variables {
            if let Some(u) = v.unit.as_deref() {
                if !units.contains(&u) {
                    units.push(u);
                }
            }
        }
        if !units.is_empty() {
            out.push_str("\n  <UnitDefinitions>\n");
            for u in units {
                let _ = match super::units::base_unit(u) {
                    Some(base) => {
                        writeln!(out, "    <Unit name=\"{}\">{}</Unit>", attr(u), base.xml())
                    }
                    None => writeln!(out, "    <Unit name=\"{}\"/>", attr(u)),
                };
            }
            out.push_str("  </UnitDefinitions>\n");
        }
    }

    /// `<ModelVariables>` and `<ModelStructure>` (the outputs, by index).
    fn variables_and_structure(&self, out: &mut String) {
        out.push_str("  <ModelVariables>\n");
        for (i, v) in self.variables.iter().enumerate() {
            variable(out, i, v);
        }
        out.push_str("  </ModelVariables>\n\n  <ModelStructure>\n");
        let outputs: Vec<usize> = (0..self.variables.len())
            .filter(|&i| self.variables[i].causality == Causality::Output)
            .collect();
        if !outputs.is_empty() {
            out.push_str("    <Outputs>\n");
            for i in outputs {
                let _ = writeln!(out, "      <Unknown index=\"{}\"/>", i + 1);
            }
            out.push_str("    </Outputs>\n");
        }
    }
}

/// `<LogCategories>`: every category the FMU logs under.
pub(super) fn log_categories(out: &mut String) {
    out.push_str("\n  <LogCategories>\n");
    for c in Category::ALL {
        let _ = writeln!(
            out,
            "    <Category name=\"{}\" description=\"{}\"/>",
            c.name(),
            attr(c.description())
        );
    }
    out.push_str("  </LogCategories>\n\n");
}
