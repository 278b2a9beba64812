//! modelDescription.xml of the FMI 3.0 face: the same model, variables and
//! value references as the FMI 2.0 description, each variable of the FMI 3.0
//! type that holds its values (a Real as Float64, an Integer as Int32), the
//! settings as parameters of the same names, and the description's GUID as
//! the instantiation token.

use std::fmt::Write as _;

use super::variables::{Causality, Var};
use super::xml::{attr, causality_and_initial, log_categories};
use super::Model;

fn variable(out: &mut String, index: usize, v: &Var) {
    let (causality, initial) = causality_and_initial(v);
    let element = v.kind.fmi3_name();
    let _ = write!(
        out,
        "    <{element} name=\"{}\" valueReference=\"{index}\" causality=\"{causality}\" \
         variability=\"{}\"{initial}\n      description=\"{}\"",
        attr(&v.name),
        v.variability(),
        attr(&v.description),
    );
    let bound = |x: Option<f64>| x.map(|x| v.bound_text(x));
    // A Float64's unit through its declared type (see `type_definitions`);
    // FMI 3.0's integers have none.
    let declared = v.unit.clone().filter(|_| element == "Float64");
    for (key, value) in [
        ("declaredType", declared),
        ("min", bound(v.min)),
        ("max", bound(v.max)),
    ] {
        if let Some(value) = value {
            let _ = write!(out, " {key}=\"{}\"", attr(&value));
        }
    }
    let start = attr(&v.start.written());
    if element == "String" {
        // FMI 3.0 gives a String its start as an element (an array has several).
        let _ = writeln!(out, ">\n      <Start value=\"{start}\"/>\n    </String>");
    } else {
        let _ = writeln!(out, " start=\"{start}\"/>");
    }
}

impl Model {
    /// `<TypeDefinitions>`: a `Float64Type` per unit a Float64 variable has,
    /// named as the unit. A variable gives its unit by declaring its type,
    /// as the Reference FMUs do: importers that read FMI 3.0 strictly (the
    /// `fmi` crate) know a unit there and refuse one on the variable.
    fn type_definitions(&self, out: &mut String) {
        let mut units: Vec<&str> = Vec::new();
        for v in (self.variables.iter()).filter(|v| v.kind.fmi3_name() == "Float64") {
            if let Some(u) = v.unit.as_deref().filter(|u| !units.contains(u)) {
                units.push(u);
            }
        }
        if units.is_empty() {
            return;
        }
        out.push_str("\n  <TypeDefinitions>\n");
        for u in units {
            let _ = writeln!(out, "    <Float64Type name=\"{0}\" unit=\"{0}\"/>", attr(u));
        }
        out.push_str("  </TypeDefinitions>\n");
    }

    /// The FMI 3.0 model description.
    pub fn xml3(&self) -> String {
        let mut out = String::with_capacity(512 + 400 * self.variables.len());
        let _ = write!(
            out,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription
  fmiVersion="3.0"
  modelName="{id}"
  instantiationToken="{token}"
  description="{description}"
  author="rfm-couple"
  version="{version}"
  generationTool="rfm-couple build-fmu ({convention})"
  variableNamingConvention="structured">

  <CoSimulation
    modelIdentifier="{id}"
    canHandleVariableCommunicationStepSize="true"
    canBeInstantiatedOnlyOncePerProcess="false"
    canGetAndSetFMUState="false"
    canSerializeFMUState="false"
    providesDirectionalDerivatives="false"
    providesAdjointDerivatives="false"
    hasEventMode="false"
    canReturnEarlyAfterIntermediateUpdate="false"
    providesIntermediateUpdate="false"/>
"#,
            id = attr(&self.model_identifier),
            token = attr(&self.guid),
            description = attr(&self.description()),
            version = env!("CARGO_PKG_VERSION"),
            convention = super::CONVENTION,
        );
        self.unit_definitions(&mut out);
        self.type_definitions(&mut out);
        log_categories(&mut out);
        self.default_experiment(&mut out);
        let _ = writeln!(
            out,
            "  <ModelVariables>\n    <Float64 name=\"time\" valueReference=\"{}\" \
             causality=\"independent\" variability=\"continuous\"\n      \
             description=\"the simulation time\"/>",
            super::fmi3::TIME_VALUE_REFERENCE
        );
        for (i, v) in self.variables.iter().enumerate() {
            variable(&mut out, i, v);
        }
        out.push_str("  </ModelVariables>\n\n  <ModelStructure>\n");
        for (i, v) in self.variables.iter().enumerate() {
            if v.causality == Causality::Output {
                let _ = writeln!(out, "    <Output valueReference=\"{i}\"/>");
            }
        }
        out.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
        out
    }
}
