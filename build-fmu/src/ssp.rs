//! `--ssp`: the whole lab as one SSP 1.0 archive, for the masters that run a
//! system from one file (libcosim's `from_ssp_file`, OMSimulator, FMPy's
//! `simulate_ssp`).
//!
//! The archive holds `SystemStructure.ssd` (one component per node, no
//! connections: the nodes couple through memory, not through the master),
//! each node's `.fmu` in `resources/`, and one parameter set per node
//! (`resources/NODE.ssv`) with its settings: the file's, and `device =
//! loopback:INTERFACE` unless the file names a device, so that the lab runs in
//! the one process the master is. The default experiment's base step is the
//! fastest node's period when that is a whole number of nanoseconds (the
//! clock libcosim counts in), else 1 ms; libcosim's annotations give it and
//! one worker thread a node (so that lockstep at lag 0 can be met: every node
//! steps while the others do), and each node's period as its step-size hint
//! where that too is whole nanoseconds. A node steps on its own grid whatever
//! step the master gives it.

use std::path::Path;

use anyhow::{Context, Result};
use fmu_model::xml_attr as attr;
use rfm_core::interface::{Interface, Period, Value};

/// The namespaces of SSP 1.0, and the Open Simulation Platform's annotations.
const SSD_NS: &str = "http://ssp-standard.org/SSP1/SystemStructureDescription";
const SSC_NS: &str = "http://ssp-standard.org/SSP1/SystemStructureCommon";
const SSV_NS: &str = "http://ssp-standard.org/SSP1/SystemStructureParameterValues";
const OSP_NS: &str = "http://opensimulationplatform.com/SSP/OSPAnnotations";
const OSP: &str = "com.opensimulationplatform";

/// The base step when the fastest period is no whole number of nanoseconds.
const FALLBACK_STEP: &str = "0.001";

/// `period` in seconds as a decimal, if it is a whole number of nanoseconds.
fn whole_nanoseconds(period: Period) -> Option<String> {
    let ns = u128::from(period.num()) * 1_000_000_000;
    (ns % u128::from(period.den()) == 0).then(|| period.to_string())
}

/// One node's parameter set: its settings, with a loopback device unless the
/// file gives one.
fn ssv(interface: &Interface, node: usize) -> String {
    let mut settings: Vec<(String, Value)> = interface
        .settings_of(node)
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    if !settings.iter().any(|(k, _)| k == "device") {
        settings.insert(
            0,
            (
                "device".into(),
                Value::String(format!("loopback:{}", interface.name)),
            ),
        );
    }
    // Every node's set has one name, the interface's: a master that applies
    // a set by name to every component (ecos: `init(parameter_set = "lab")`)
    // configures the whole lab with it; libcosim takes each component's first.
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ssv:ParameterSet xmlns:ssv=\"{SSV_NS}\" \
         version=\"1.0\" name=\"{}\">\n  <ssv:Parameters>\n",
        attr(&interface.name)
    );
    for (name, value) in settings {
        let (kind, text) = (value.fmi_type().name(), value.written());
        out.push_str(&format!(
            "    <ssv:Parameter name=\"{}\"><ssv:{kind} value=\"{}\"/></ssv:Parameter>\n",
            attr(&name),
            attr(&text)
        ));
    }
    out.push_str("  </ssv:Parameters>\n</ssv:ParameterSet>\n");
    out
}

/// The system: `fmus[i]` is node i's archive name under `resources/`.
fn ssd(interface: &Interface, fmus: &[String]) -> String {
    let fastest = interface
        .nodes
        .iter()
        .filter_map(|n| n.period)
        .min_by(|a, b| a.seconds().total_cmp(&b.seconds()));
    let base = fastest
        .and_then(whole_nanoseconds)
        .unwrap_or_else(|| FALLBACK_STEP.to_owned());
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <ssd:SystemStructureDescription xmlns:ssd=\"{SSD_NS}\" xmlns:ssc=\"{SSC_NS}\" \
         xmlns:osp=\"{OSP_NS}\" version=\"1.0\" name=\"{name}\">\n\
         \x20 <ssd:System name=\"{name}\" description=\"the nodes of interface `{name}`, coupled \
         through reflective memory (the device parameter), not through the master\">\n\
         \x20   <ssd:Elements>\n",
        name = attr(&interface.name)
    );
    for (node, fmu) in interface.nodes.iter().zip(fmus) {
        let hint = node
            .period
            .and_then(whole_nanoseconds)
            .map(|p| {
                format!(
                    "        <ssd:Annotations>\n          <ssc:Annotation type=\"{OSP}\">\
                     <osp:StepSizeHint value=\"{p}\"/></ssc:Annotation>\n        \
                     </ssd:Annotations>\n"
                )
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "      <ssd:Component name=\"{n}\" type=\"application/x-fmu-sharedlibrary\" \
             source=\"resources/{fmu}\">\n        <ssd:ParameterBindings>\n          \
             <ssd:ParameterBinding type=\"application/x-ssp-parameter-set\" \
             source=\"resources/{n}.ssv\"/>\n        </ssd:ParameterBindings>\n{hint}      \
             </ssd:Component>\n",
            n = attr(&node.name),
            fmu = attr(fmu)
        ));
    }
    out.push_str(&format!(
        "    </ssd:Elements>\n  </ssd:System>\n  <ssd:DefaultExperiment startTime=\"0\">\n    \
         <ssd:Annotations>\n      <ssc:Annotation type=\"{OSP}\">\n        <osp:Algorithm>\
         <osp:FixedStepAlgorithm baseStepSize=\"{base}\" numWorkerThreads=\"{}\"/>\
         </osp:Algorithm>\n      </ssc:Annotation>\n    </ssd:Annotations>\n  \
         </ssd:DefaultExperiment>\n</ssd:SystemStructureDescription>\n",
        interface.nodes.len()
    ));
    out
}

/// Writes the SSP of `interface` to `out`: `fmus[i]` is node i's packed
/// `.fmu`, already written and verified.
pub fn write(interface: &Interface, fmus: &[&Path], out: &Path) -> Result<()> {
    let names: Vec<String> = fmus
        .iter()
        .map(|f| {
            f.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let mut entries = vec![(
        "SystemStructure.ssd".to_owned(),
        ssd(interface, &names).into_bytes(),
    )];
    for (i, (fmu, name)) in fmus.iter().zip(&names).enumerate() {
        let bytes = std::fs::read(fmu).with_context(|| format!("cannot read {}", fmu.display()))?;
        entries.push((format!("resources/{name}"), bytes));
        entries.push((
            format!("resources/{}.ssv", interface.nodes[i].name),
            ssv(interface, i).into_bytes(),
        ));
    }
    crate::archive::write(out, &entries, |_| Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab(settings: &str) -> Interface {
        let text = format!(
            "name = \"lab\"\n{settings}[[node]]\nname = \"cockpit\"\nslot = 0\nperiod = 0.001\n\
             signals = [{{ name = \"x\", type = \"Real\" }}]\n[[node]]\nname = \"visual\"\n\
             slot = 1\nperiod = \"1/60\"\nlag = 2\nsignals = [{{ name = \"y\", type = \"Real\" }}]\n"
        );
        Interface::parse("lab.toml", &text, &fmu_model::RESERVED).unwrap()
    }

    #[test]
    fn the_base_step_is_the_fastest_whole_nanosecond_period_and_hints_each() {
        let fmus = ["lab_cockpit.fmu".to_owned(), "lab_visual.fmu".to_owned()];
        let text = ssd(&lab(""), &fmus);
        assert!(
            text.contains(r#"<osp:FixedStepAlgorithm baseStepSize="0.001" numWorkerThreads="2"/>"#),
            "{text}"
        );
        assert!(text.contains(r#"<osp:StepSizeHint value="0.001"/>"#));
        assert_eq!(text.matches("StepSizeHint").count(), 1, "1/60 s has none");
        assert!(text.contains(r#"source="resources/lab_visual.fmu""#));
        assert!(text.contains(r#"source="resources/visual.ssv""#));
    }

    #[test]
    fn each_node_gets_its_settings_and_a_loopback_device_unless_the_file_names_one() {
        let text = ssv(&lab("timeout = 2\n"), 1);
        assert!(text.contains(
            r#"<ssv:Parameter name="device"><ssv:String value="loopback:lab"/></ssv:Parameter>"#
        ));
        assert!(
            text.contains(r#"<ssv:Parameter name="lag"><ssv:Integer value="2"/></ssv:Parameter>"#)
        );
        assert!(text
            .contains(r#"<ssv:Parameter name="timeout"><ssv:Real value="2.0"/></ssv:Parameter>"#));
        let text = ssv(&lab("device = \"shm:lab\"\n"), 0);
        assert!(text.contains(r#"<ssv:String value="shm:lab"/>"#), "{text}");
        assert!(!text.contains("loopback"), "{text}");
    }
}
