//! modelDescription.xml of the FMI 3.0 face: the same model, variables and
//! value references as the FMI 2.0 description, each variable of the FMI 3.0
//! type that holds its values (a Real as Float64, an Integer as Int32; a
//! packed struct's element as its C type's own, a `uint64` as a UInt64), an
//! array field as one array variable at its first element's reference, the
//! settings as parameters of the same names, and the description's GUID as
//! the instantiation token.

use std::fmt::Write as _;

use rfm_frames::fmi::{Fmi3Type, Value};

use super::variables::{Causality, Var};
use super::xml::{attr, causality_and_initial, log_categories};
use super::Model;

/// The name its unit's declared type has: FMI 3.0 gives a float variable its
/// unit through a type of its own float type (see `type_definitions`).
fn declared_type(ty: Fmi3Type, unit: &str) -> String {
    match ty {
        Fmi3Type::Float32 => format!("{unit} (Float32)"),
        _ => unit.to_owned(),
    }
}

/// `v`'s start as its FMI 3.0 type writes it: a struct's 64-bit or `uint32`
/// element, a Real in FMI 2.0, is a whole number here.
fn start_text(v: &Var, ty: Fmi3Type) -> String {
    match (&v.start, ty.is_float()) {
        (Value::Real(x), false) => format!("{}", *x as i128),
        (start, _) => start.written(),
    }
}

/// Variable `v` at `index`, unless it is a later element of an array (its
/// first element's variable is the array).
fn variable(out: &mut String, index: usize, v: &Var) {
    let Some(values) = v.fmi3_values() else {
        return;
    };
    let ty = v.fmi3_type();
    let (causality, initial) = causality_and_initial(v);
    // FMI 3.0 allows `continuous` for floats only: a `uint64` field, a Real
    // in FMI 2.0, is a discrete UInt64 here.
    let variability = match v.variability() {
        "continuous" if !ty.is_float() => "discrete",
        other => other,
    };
    let element = ty.name();
    let _ = write!(
        out,
        "    <{element} name=\"{}\" valueReference=\"{index}\" causality=\"{causality}\" \
         variability=\"{variability}\"{initial}\n      description=\"{}\"",
        attr(v.fmi3_name()),
        attr(&v.description),
    );
    // An integer type's bounds are whole numbers, a Real's in FMI 2.0 or not.
    let bound = |x: Option<f64>| {
        x.map(|x| match ty.is_float() {
            true => v.bound_text(x),
            false => format!("{}", x as i128),
        })
    };
    let declared = (v.unit.as_deref())
        .filter(|_| ty.is_float())
        .map(|u| declared_type(ty, u));
    for (key, value) in [
        ("declaredType", declared),
        ("min", bound(v.min)),
        ("max", bound(v.max)),
    ] {
        if let Some(value) = value {
            let _ = write!(out, " {key}=\"{}\"", attr(&value));
        }
    }
    let start = attr(&start_text(v, ty));
    let dimension = v
        .element
        .and_then(|e| e.count)
        .map(|n| format!("      <Dimension start=\"{n}\"/>\n"));
    match (ty, dimension) {
        // A String's start is an element per value, after its dimension.
        (Fmi3Type::String, dimension) => {
            let _ = write!(out, ">\n{}", dimension.unwrap_or_default());
            for _ in 0..values {
                let _ = writeln!(out, "      <Start value=\"{start}\"/>");
            }
            let _ = writeln!(out, "    </String>");
        }
        (_, Some(dimension)) => {
            let starts = vec![start; values].join(" ");
            let _ = write!(out, " start=\"{starts}\">\n{dimension}    </{element}>\n");
        }
        (_, None) => {
            let _ = writeln!(out, " start=\"{start}\"/>");
        }
    }
}

impl Model {
    /// `<TypeDefinitions>`: a float type per unit a float variable has
    /// (named as the unit, ` (Float32)` added for a Float32's). A variable
    /// gives its unit by declaring its type, as the Reference FMUs do:
    /// importers that read FMI 3.0 strictly (the `fmi` crate) know a unit
    /// there and refuse one on the variable.
    fn type_definitions(&self, out: &mut String) {
        let mut types: Vec<(Fmi3Type, &str)> = Vec::new();
        for v in self.variables.iter().filter(|v| v.fmi3_type().is_float()) {
            let key = (v.fmi3_type(), v.unit.as_deref().unwrap_or_default());
            if v.unit.is_some() && !types.contains(&key) {
                types.push(key);
            }
        }
        if types.is_empty() {
            return;
        }
        out.push_str("\n  <TypeDefinitions>\n");
        for (ty, unit) in types {
            let _ = writeln!(
                out,
                "    <{}Type name=\"{}\" unit=\"{}\"/>",
                ty.name(),
                attr(&declared_type(ty, unit)),
                attr(unit)
            );
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
    mightReturnEarlyFromDoStep="true"
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
            if v.causality == Causality::Output && v.fmi3_values().is_some() {
                let _ = writeln!(out, "    <Output valueReference=\"{i}\"/>");
            }
        }
        out.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
        out
    }
}
