//! Checks the written .fmu before it is called done: what a master will check,
//! and what would make it fail to load.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use object::{Object, ObjectSymbol};

use crate::model::Model;
use fmu_model::{Model as FmuModel, CONVENTION, PRESET_GUID, RESOURCE_INTERFACE, RESOURCE_NODE};

/// The 34 functions of the FMI 2.0 co-simulation API: the binary's first face.
pub const FMI2_CS_FUNCTIONS: [&str; 34] = [
    "fmi2GetTypesPlatform",
    "fmi2GetVersion",
    "fmi2SetDebugLogging",
    "fmi2Instantiate",
    "fmi2FreeInstance",
    "fmi2SetupExperiment",
    "fmi2EnterInitializationMode",
    "fmi2ExitInitializationMode",
    "fmi2Terminate",
    "fmi2Reset",
    "fmi2GetReal",
    "fmi2GetInteger",
    "fmi2GetBoolean",
    "fmi2GetString",
    "fmi2SetReal",
    "fmi2SetInteger",
    "fmi2SetBoolean",
    "fmi2SetString",
    "fmi2GetFMUstate",
    "fmi2SetFMUstate",
    "fmi2FreeFMUstate",
    "fmi2SerializedFMUstateSize",
    "fmi2SerializeFMUstate",
    "fmi2DeSerializeFMUstate",
    "fmi2GetDirectionalDerivative",
    "fmi2SetRealInputDerivatives",
    "fmi2GetRealOutputDerivatives",
    "fmi2DoStep",
    "fmi2CancelStep",
    "fmi2GetStatus",
    "fmi2GetRealStatus",
    "fmi2GetIntegerStatus",
    "fmi2GetBooleanStatus",
    "fmi2GetStringStatus",
];

/// The 75 functions of the FMI 3.0 API (every interface type's: the standard
/// asks a binary for all of them), in the standard's order: the binary's
/// second face.
pub const FMI3_FUNCTIONS: [&str; 75] = [
    "fmi3GetVersion",
    "fmi3SetDebugLogging",
    "fmi3InstantiateModelExchange",
    "fmi3InstantiateCoSimulation",
    "fmi3InstantiateScheduledExecution",
    "fmi3FreeInstance",
    "fmi3EnterInitializationMode",
    "fmi3ExitInitializationMode",
    "fmi3EnterEventMode",
    "fmi3Terminate",
    "fmi3Reset",
    "fmi3GetFloat32",
    "fmi3GetFloat64",
    "fmi3GetInt8",
    "fmi3GetUInt8",
    "fmi3GetInt16",
    "fmi3GetUInt16",
    "fmi3GetInt32",
    "fmi3GetUInt32",
    "fmi3GetInt64",
    "fmi3GetUInt64",
    "fmi3GetBoolean",
    "fmi3GetString",
    "fmi3GetBinary",
    "fmi3GetClock",
    "fmi3SetFloat32",
    "fmi3SetFloat64",
    "fmi3SetInt8",
    "fmi3SetUInt8",
    "fmi3SetInt16",
    "fmi3SetUInt16",
    "fmi3SetInt32",
    "fmi3SetUInt32",
    "fmi3SetInt64",
    "fmi3SetUInt64",
    "fmi3SetBoolean",
    "fmi3SetString",
    "fmi3SetBinary",
    "fmi3SetClock",
    "fmi3GetNumberOfVariableDependencies",
    "fmi3GetVariableDependencies",
    "fmi3GetFMUState",
    "fmi3SetFMUState",
    "fmi3FreeFMUState",
    "fmi3SerializedFMUStateSize",
    "fmi3SerializeFMUState",
    "fmi3DeserializeFMUState",
    "fmi3GetDirectionalDerivative",
    "fmi3GetAdjointDerivative",
    "fmi3EnterConfigurationMode",
    "fmi3ExitConfigurationMode",
    "fmi3GetIntervalDecimal",
    "fmi3GetIntervalFraction",
    "fmi3GetShiftDecimal",
    "fmi3GetShiftFraction",
    "fmi3SetIntervalDecimal",
    "fmi3SetIntervalFraction",
    "fmi3SetShiftDecimal",
    "fmi3SetShiftFraction",
    "fmi3EvaluateDiscreteStates",
    "fmi3UpdateDiscreteStates",
    "fmi3EnterContinuousTimeMode",
    "fmi3CompletedIntegratorStep",
    "fmi3SetTime",
    "fmi3SetContinuousStates",
    "fmi3GetContinuousStateDerivatives",
    "fmi3GetEventIndicators",
    "fmi3GetContinuousStates",
    "fmi3GetNominalsOfContinuousStates",
    "fmi3GetNumberOfEventIndicators",
    "fmi3GetNumberOfContinuousStates",
    "fmi3EnterStepMode",
    "fmi3GetOutputDerivatives",
    "fmi3DoStep",
    "fmi3ActivateModelPartition",
];

/// The names a shared library (ELF or PE) exports.
pub fn exports(binary: &[u8]) -> Result<BTreeSet<String>> {
    let file = object::File::parse(binary).context("not a shared library this tool can read")?;
    let mut names = BTreeSet::new();
    if file.format() == object::BinaryFormat::Elf {
        for sym in file.dynamic_symbols() {
            if sym.is_definition() && sym.is_global() {
                names.insert(sym.name()?.to_owned());
            }
        }
    } else {
        for export in file.exports()? {
            if let object::NameOrOrdinal::Name(name) = export?.name() {
                names.insert(String::from_utf8_lossy(name).into_owned());
            }
        }
    }
    Ok(names)
}

/// The binary exports exactly the 34 functions of FMI 2.0 and the 75 of FMI 3.0.
pub fn check_exports(what: &str, binary: &[u8]) -> Result<()> {
    let found = exports(binary).with_context(|| format!("{what}: cannot read its export table"))?;
    let wanted: BTreeSet<String> = (FMI2_CS_FUNCTIONS.iter().chain(&FMI3_FUNCTIONS))
        .map(|s| s.to_string())
        .collect();
    let missing: Vec<_> = wanted.difference(&found).collect();
    let extra: Vec<_> = found.difference(&wanted).collect();
    if !missing.is_empty() || !extra.is_empty() {
        bail!("{what} must export exactly the 34 FMI 2.0 co-simulation functions and the 75 of FMI 3.0: missing {missing:?}, unexpected {extra:?}");
    }
    Ok(())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Re-reads the archive at `path` and checks it against `model` and
/// `platforms`; the linux64 binary against `glibc` ([`crate::loads::check_linux`]).
pub fn check_archive(
    path: &Path,
    model: &Model,
    platforms: &[(&str, &str)],
    glibc: Option<(u32, u32)>,
) -> Result<()> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot reopen {}", path.display()))?;
    let mut archive =
        Packed(zip::ZipArchive::new(file).context("the written .fmu is not a readable zip")?);
    check_description(&mut archive, model)?;
    archive.read("documentation/index.html")?;
    for (platform, ext) in platforms {
        let name = format!("binaries/{platform}/{}.{ext}", model.model_identifier);
        let binary = archive.read(&name)?;
        check_binary(&name, &binary, platform, glibc)?;
    }
    if model.guid != PRESET_GUID {
        check_resources(&mut archive, model)?;
    }
    archive.check_paths()
}

/// The archive as written.
struct Packed(zip::ZipArchive<std::fs::File>);

impl Packed {
    /// Entry `name`'s bytes; it must be deflated, as FMUs are.
    fn read(&mut self, name: &str) -> Result<Vec<u8>> {
        let mut entry = self
            .0
            .by_name(name)
            .map_err(|_| anyhow!("the archive lacks {name}"))?;
        if entry.compression() != zip::CompressionMethod::Deflated && entry.size() > 0 {
            bail!(
                "{name} is stored with {:?}; FMUs use deflate",
                entry.compression()
            );
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data)?;
        Ok(data)
    }

    /// Entry `name` as text.
    fn text(&mut self, name: &str) -> Result<String> {
        String::from_utf8(self.read(name)?).with_context(|| format!("{name} is not UTF-8"))
    }

    /// Every entry's name is a relative forward-slash path.
    fn check_paths(&mut self) -> Result<()> {
        for i in 0..self.0.len() {
            let entry = self.0.by_index(i)?;
            let name = entry.name()?;
            if name.contains('\\') || name.starts_with("./") || name.starts_with('/') {
                bail!("archive entry `{name}` is not a relative forward-slash path");
            }
        }
        Ok(())
    }
}

/// The packed description is this build's, of `model`.
fn check_description(archive: &mut Packed, model: &Model) -> Result<()> {
    let xml = archive.text("modelDescription.xml")?;
    let packed = Model::parse(xml).context("the packed modelDescription.xml")?;
    if packed.guid != model.guid || packed.model_identifier != model.model_identifier {
        bail!(
            "the packed modelDescription.xml names GUID {} / {}, the sources {} / {}",
            packed.guid,
            packed.model_identifier,
            model.guid,
            model.model_identifier
        );
    }
    if !packed.generation_tool.contains(CONVENTION) {
        bail!(
            "the packed modelDescription.xml was written by `{}`, not by this build ({CONVENTION})",
            packed.generation_tool
        );
    }
    Ok(())
}

/// The binary `name` for `platform` exports the FMI functions, loads where it
/// should (linux64: against `glibc`), and reads variables as this release does.
fn check_binary(
    name: &str,
    binary: &[u8],
    platform: &str,
    glibc: Option<(u32, u32)>,
) -> Result<()> {
    check_exports(name, binary)?;
    match platform {
        "linux64" | "x86_64-linux" => {
            if let Some(warning) = crate::loads::check_linux(name, binary, glibc)? {
                crate::step(&warning);
            }
        }
        "win64" | "x86_64-windows" => crate::loads::check_windows(name, binary)?,
        _ => {}
    }
    if !contains(binary, CONVENTION.as_bytes()) {
        bail!("{name} is not an FMU binary of this variable convention ({CONVENTION}): it would read the description's variables otherwise; take it from an FMU of this release");
    }
    Ok(())
}

/// The GUID the FMU computes at fmi2Instantiate from its resources is the
/// description's.
fn check_resources(archive: &mut Packed, model: &Model) -> Result<()> {
    let interface_path = format!("resources/{RESOURCE_INTERFACE}");
    let node_path = format!("resources/{RESOURCE_NODE}");
    let interface = archive.text(&interface_path)?;
    let node = archive.text(&node_path)?;
    let loaded = FmuModel::from_resources(&interface_path, &interface, &node_path, &node)
        .map_err(|e| anyhow!("the packed resources give no model: {e}"))?;
    if loaded.guid != model.guid {
        bail!(
            "the packed resources give GUID {}, the modelDescription.xml {}: they come from different builds",
            loaded.guid,
            model.guid
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_have_34_and_75_distinct_functions() {
        let set: BTreeSet<_> = FMI2_CS_FUNCTIONS.iter().collect();
        assert_eq!(set.len(), 34);
        let set: BTreeSet<_> = FMI3_FUNCTIONS.iter().collect();
        assert_eq!(set.len(), 75);
    }

    #[test]
    fn a_library_that_is_not_the_fmu_is_refused_by_name() {
        let libc = std::fs::read("/lib/x86_64-linux-gnu/libc.so.6")
            .or_else(|_| std::fs::read("/usr/lib/x86_64-linux-gnu/libc.so.6"));
        let libc = libc.expect("libc.so.6 on a Debian x86-64 machine");
        let err = check_exports("libc.so.6", &libc).unwrap_err().to_string();
        assert!(
            err.contains("must export exactly the 34") && err.contains("fmi3DoStep"),
            "{err}"
        );
        assert!(exports(b"not a binary").is_err());
    }
}

#[cfg(test)]
mod archive_tests {
    use super::*;
    use crate::loads::GLIBC_FLOOR;

    fn model() -> Model {
        let xml = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../modelDescription.xml"
        ))
        .unwrap();
        Model::parse(xml).unwrap()
    }

    fn archive(name: &str, entries: &[(String, Vec<u8>)]) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("build-fmu-test-{}-{name}.fmu", std::process::id()));
        crate::archive::write(&path, entries, |_| Ok(())).unwrap();
        path
    }

    #[test]
    fn an_archive_missing_what_the_xml_implies_fails_naming_the_file() {
        let m = model();
        let path = archive(
            "missing",
            &[
                ("modelDescription.xml".into(), m.xml.clone().into_bytes()),
                ("documentation/index.html".into(), b"<html/>".to_vec()),
            ],
        );
        let err = check_archive(&path, &m, &[("linux64", "so")], Some(GLIBC_FLOOR))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("lacks binaries/linux64/rfm_attitude.so"),
            "{err}"
        );
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_binary_that_is_not_the_fmu_fails_naming_the_check() {
        let m = model();
        let libc = std::fs::read("/lib/x86_64-linux-gnu/libc.so.6")
            .expect("libc.so.6 on a Debian x86-64 machine");
        let path = archive(
            "foreign",
            &[
                ("modelDescription.xml".into(), m.xml.clone().into_bytes()),
                ("binaries/linux64/rfm_attitude.so".into(), libc),
                ("documentation/index.html".into(), b"<html/>".to_vec()),
            ],
        );
        let err = check_archive(&path, &m, &[("linux64", "so")], Some(GLIBC_FLOOR))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("binaries/linux64/rfm_attitude.so must export exactly the 34"),
            "{err}"
        );
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn an_xml_from_another_build_fails_naming_the_guids() {
        let m = model();
        let other = m
            .xml
            .replace(&m.guid, "{00000000-0000-0000-0000-000000000000}");
        let path = archive(
            "guid",
            &[("modelDescription.xml".into(), other.into_bytes())],
        );
        let err = check_archive(&path, &m, &[], Some(GLIBC_FLOOR))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("names GUID {00000000-0000-0000-0000-000000000000}"),
            "{err}"
        );
        std::fs::remove_file(path).unwrap();
    }
}
