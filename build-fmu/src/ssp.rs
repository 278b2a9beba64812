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

use crate::system::System;
use anyhow::{Context, Result};
use fmu_model::xml_attr as attr;
use rfm_frames::fmi::Value;
use rfm_interface::{Interface, Period};

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
    ssv_with_device(interface, node, &format!("loopback:{}", interface.name))
}

/// A parameter set of `values`, named `name`.
fn parameter_set(name: &str, values: &[(String, &'static str, String)]) -> String {
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ssv:ParameterSet xmlns:ssv=\"{SSV_NS}\" \
         version=\"1.0\" name=\"{}\">\n  <ssv:Parameters>\n",
        attr(name)
    );
    for (name, kind, text) in values {
        out.push_str(&format!(
            "    <ssv:Parameter name=\"{}\"><ssv:{kind} value=\"{}\"/></ssv:Parameter>\n",
            attr(name),
            attr(text)
        ));
    }
    out.push_str("  </ssv:Parameters>\n</ssv:ParameterSet>\n");
    out
}

/// One node's parameter set, with `device` unless the file gives one.
fn ssv_with_device(interface: &Interface, node: usize, device: &str) -> String {
    let mut settings: Vec<(String, Value)> = interface
        .settings_of(node)
        .iter()
        .map(|(s, v)| (s.key.to_owned(), v.clone()))
        .collect();
    if !settings.iter().any(|(k, _)| k == "device") {
        settings.insert(0, ("device".into(), Value::String(device.to_owned())));
    }
    // Every node's set has one name, the interface's: a master that applies
    // a set by name to every component (ecos: `init(parameter_set = "lab")`)
    // configures the whole lab with it; libcosim takes each component's first.
    let values: Vec<(String, &'static str, String)> = settings
        .into_iter()
        .map(|(name, value)| (name, value.fmi_type().name(), value.written()))
        .collect();
    parameter_set(&interface.name, &values)
}

/// A whole SSD: system `name`, described as `description`, whose `body` is
/// its Elements (and Connections), run by the fixed-step algorithm at
/// `base` seconds with `threads` workers (libcosim's annotations).
fn document(name: &str, description: &str, body: &str, base: &str, threads: usize) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <ssd:SystemStructureDescription xmlns:ssd=\"{SSD_NS}\" xmlns:ssc=\"{SSC_NS}\" \
         xmlns:osp=\"{OSP_NS}\" version=\"1.0\" name=\"{name}\">\n\
         \x20 <ssd:System name=\"{name}\" description=\"{description}\">\n\
         {body}  </ssd:System>\n  <ssd:DefaultExperiment startTime=\"0\">\n    \
         <ssd:Annotations>\n      <ssc:Annotation type=\"{OSP}\">\n        <osp:Algorithm>\
         <osp:FixedStepAlgorithm baseStepSize=\"{base}\" numWorkerThreads=\"{threads}\"/>\
         </osp:Algorithm>\n      </ssc:Annotation>\n    </ssd:Annotations>\n  \
         </ssd:DefaultExperiment>\n</ssd:SystemStructureDescription>\n",
        name = attr(name),
        description = attr(description)
    )
}

/// The base step of a system whose fastest period is `period`: it, when it
/// is a whole number of nanoseconds (the clock libcosim counts in), else 1 ms.
fn base_step(period: Option<Period>) -> String {
    period
        .and_then(whole_nanoseconds)
        .unwrap_or_else(|| FALLBACK_STEP.to_owned())
}

/// The system: `fmus[i]` is node i's archive name under `resources/`.
fn ssd(interface: &Interface, fmus: &[String]) -> String {
    let fastest = interface
        .nodes
        .iter()
        .filter_map(|n| n.period)
        .min_by(|a, b| a.seconds().total_cmp(&b.seconds()));
    let mut body = "    <ssd:Elements>\n".to_owned();
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
        body.push_str(&format!(
            "      <ssd:Component name=\"{n}\" type=\"application/x-fmu-sharedlibrary\" \
             source=\"resources/{fmu}\">\n        <ssd:ParameterBindings>\n          \
             <ssd:ParameterBinding type=\"application/x-ssp-parameter-set\" \
             source=\"resources/{n}.ssv\"/>\n        </ssd:ParameterBindings>\n{hint}      \
             </ssd:Component>\n",
            n = attr(&node.name),
            fmu = attr(fmu)
        ));
    }
    body.push_str("    </ssd:Elements>\n");
    document(
        &interface.name,
        &format!(
            "the nodes of interface `{}`, coupled through reflective memory (the device \
             parameter), not through the master",
            interface.name
        ),
        &body,
        &base_step(fastest),
        interface.nodes.len(),
    )
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

/// The connectors of component `name`: every variable of it a connection
/// names, with its kind and type, in the order first named.
fn connectors(name: &str, system: &System) -> String {
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    for (from, to) in &system.connections {
        for (end, kind) in [(from, "output"), (to, "input")] {
            if end.component == name && !seen.iter().any(|s| s.0 == end.variable) {
                seen.push((&end.variable, kind, &end.kind));
            }
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let mut out = "        <ssd:Connectors>\n".to_owned();
    for (variable, kind, ty) in seen {
        out.push_str(&format!(
            "          <ssd:Connector name=\"{}\" kind=\"{kind}\"><ssc:{ty}/></ssd:Connector>\n",
            attr(variable)
        ));
    }
    out.push_str("        </ssd:Connectors>\n");
    out
}

/// One component: its FMU under `resources/`, its connectors, and its
/// parameter set if it has one.
fn component(name: &str, fmu: &str, system: &System, parameters: bool) -> String {
    let binding = if parameters {
        format!(
            "        <ssd:ParameterBindings>\n          <ssd:ParameterBinding \
             type=\"application/x-ssp-parameter-set\" source=\"resources/{n}.ssv\"/>\n        \
             </ssd:ParameterBindings>\n",
            n = attr(name)
        )
    } else {
        String::new()
    };
    format!(
        "      <ssd:Component name=\"{n}\" type=\"application/x-fmu-sharedlibrary\" \
         source=\"resources/{fmu}\">\n{}{binding}      </ssd:Component>\n",
        connectors(name, system),
        n = attr(name),
        fmu = attr(fmu)
    )
}

/// The system of one simulator: node `node`'s coupling FMU (`node_fmu`,
/// its archive name) beside the components of `system`, and the
/// connections between them, stepped at the node's period ([`base_step`]).
fn simulator_ssd(interface: &Interface, node: usize, node_fmu: &str, system: &System) -> String {
    let n = &interface.nodes[node];
    let mut body = "    <ssd:Elements>\n".to_owned();
    body.push_str(&component(&n.name, node_fmu, system, true));
    for c in &system.components {
        body.push_str(&component(
            &c.name,
            &c.file_name,
            system,
            !c.parameters.is_empty(),
        ));
    }
    body.push_str("    </ssd:Elements>\n");
    if !system.connections.is_empty() {
        body.push_str("    <ssd:Connections>\n");
        for (from, to) in &system.connections {
            body.push_str(&format!(
                "      <ssd:Connection startElement=\"{}\" startConnector=\"{}\" \
                 endElement=\"{}\" endConnector=\"{}\"/>\n",
                attr(&from.component),
                attr(&from.variable),
                attr(&to.component),
                attr(&to.variable)
            ));
        }
        body.push_str("    </ssd:Connections>\n");
    }
    document(
        &n.name,
        &format!(
            "node `{}` of interface `{}`: its coupling FMU and the simulator's own, connected \
             by the master",
            n.name, interface.name
        ),
        &body,
        &base_step(n.period),
        system.components.len() + 1,
    )
}

/// Writes the SSP of one simulator (`--system`): node `node`'s coupling FMU
/// at `node_fmu`, already written and verified, beside the components of
/// `system`. The node's parameter set has its settings and, unless the file
/// gives one, `device = shm:INTERFACE`: two simulators' masters are two
/// processes, which `loopback:` memory cannot join.
pub fn write_simulator(
    interface: &Interface,
    node: usize,
    node_fmu: &Path,
    system: &System,
    out: &Path,
) -> Result<()> {
    let name = node_fmu
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let node_name = &interface.nodes[node].name;
    let mut entries = vec![(
        "SystemStructure.ssd".to_owned(),
        simulator_ssd(interface, node, &name, system).into_bytes(),
    )];
    let read = |p: &Path| std::fs::read(p).with_context(|| format!("cannot read {}", p.display()));
    entries.push((format!("resources/{name}"), read(node_fmu)?));
    entries.push((
        format!("resources/{node_name}.ssv"),
        ssv_with_device(interface, node, &format!("shm:{}", interface.name)).into_bytes(),
    ));
    for c in &system.components {
        // Two components of one FMU (two aircraft) share its archive.
        let resource = format!("resources/{}", c.file_name);
        if !entries.iter().any(|(n, _)| *n == resource) {
            entries.push((resource, read(&c.path)?));
        }
        if !c.parameters.is_empty() {
            let values: Vec<(String, &'static str, String)> = c
                .parameters
                .iter()
                .map(|(n, v)| {
                    let (kind, text) = v.ssv();
                    (n.clone(), kind, text)
                })
                .collect();
            entries.push((
                format!("resources/{}.ssv", c.name),
                parameter_set(&interface.name, &values).into_bytes(),
            ));
        }
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
