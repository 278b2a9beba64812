//! `documentation/index.html`: what a user of the .fmu needs, without the repository.

use crate::model::Model;
use fmu_model::FmuKind;
use fmu_model::Model as FmuModel;
use rfm_interface::layout::MapTable;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What the FMU does, for the attitude FMU or a node of an interface.
fn what_it_does(fmu: &FmuModel) -> String {
    if fmu.kind == FmuKind::Attitude {
        return r#"<p>Every <code>fmi2DoStep</code> writes this simulator's attitude (<code>roll</code>, <code>pitch</code>,
<code>yaw</code>, <code>status</code>, <code>message</code>) into this node's slot of a reflective memory and
reads the peer's into the <code>peer.*</code> outputs.</p>"#
            .to_owned();
    }
    let i = &fmu.interface;
    let me = &i.nodes[fmu.node];
    format!(
        r#"<p>This is node <code>{node}</code> (slot {slot}) of interface <code>{name}</code>. Every
<code>fmi2DoStep</code> writes its {n} signals (the inputs) into its area of a reflective memory and reads every
other node's into the outputs <code>NODE.SIGNAL</code>, with <code>NODE.time</code>, <code>NODE.step</code> and
the link diagnostics <code>NODE.link.*</code> of each. The interface file is in
<code>resources/interface.toml</code>; build the FMU of every node from the same file.</p>"#,
        node = escape(&me.name),
        slot = me.slot,
        name = escape(&i.name),
        n = me.signals.len()
    )
}

/// How many nodes couple, in words: the attitude FMU's pair, or an
/// interface's nodes.
fn nodes_in_words(fmu: &FmuModel) -> String {
    let n = if fmu.kind == FmuKind::Attitude {
        2
    } else {
        fmu.interface.nodes.len()
    };
    const WORDS: [&str; 9] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    ];
    WORDS
        .get(n.wrapping_sub(1))
        .map_or(n.to_string(), |w| (*w).to_owned())
}

/// How to wire the nodes, with the memory map for an interface.
fn wiring(fmu: &FmuModel) -> String {
    if fmu.kind == FmuKind::Attitude {
        return "<li>Give one instance <code>nodeSlot = 0</code>, <code>peerSlot = 1</code> and the \
                other <code>nodeSlot = 1</code>, <code>peerSlot = 0</code>.</li>"
            .to_owned();
    }
    let map = fmu.interface.map().expect("a model's interface has a map");
    format!(
        "<li>Each node's FMU knows its slot and area from the interface; only that node writes its \
         area. The memory map (offsets from <code>regionOffset</code>):<pre>{}</pre></li>",
        escape(
            &MapTable {
                interface: &fmu.interface,
                map: &map
            }
            .to_string()
        )
    )
}

/// The page's style: readable on its own, with no file beside it.
const STYLE: &str = r#"<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.45}
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.25em .5em;vertical-align:top}
code,pre{background:#f4f4f4}pre{padding:.5em}</style>"#;

/// How the FMU steps, waits and fails, by parameter.
const MODES: &str = r#"<ul>
<li><b>syncMode = lockstep</b> (default, deterministic): after step k the outputs are exactly each peer's
inputs of its step k &minus; <code>lag</code> (its initial values while k &lt; lag); with periods in the
interface file, of the peer's step floor((k &minus; lag) &times; this node's period / the peer's), and the FMU
steps by exactly its period (the default experiment's step size). lag = 0 needs the masters stepping at the
same time (separate PCs or processes); lag = 1 also works when one master steps the instances in turn. lag is
at most 7 (or the interface's max_lag), and each node may run its own. A peer whose heartbeat stops for
<code>timeout</code> makes the step fail with a message naming the device, the node, the step and the time
waited; so does a peer that stops, restarts or fails (at once), one that sends nothing within
<code>startupTimeout</code> of the first step, and a live peer late by more than <code>idleTimeout</code>
(default 300 s: a paused master is waited for, with a warning every 5 s).</li>
<li><b>realTimeFactor</b> (default 0): 1 paces each step to the wall clock, for masters that do not pace
themselves; <code>pace.behind</code> counts the steps that ended late.</li>
<li><b>syncMode = free</b>: never waits; takes the peer's newest frame. <code>link.ok</code> says whether the
peer is running, <code>link.age</code> how old its newest frame is.</li>
<li>The attitude FMU only: <code>nodeSlot = peerSlot</code> is a self-loop: the outputs echo the inputs.</li>
<li>Every instance beats a heartbeat in its slot from a thread of its own, from
<code>fmi2ExitInitializationMode</code> to <code>fmi2Terminate</code>. A frame is taken only from a peer
whose heartbeat is seen moving, so frames left in the memory by an earlier run are never taken; a peer
whose heartbeat stops for <code>timeout</code> is reported dead. A slot whose holder still beats is refused
at initialization (two instances with one <code>nodeSlot</code>); one left by a crashed program is taken
once its heartbeat has been silent for 0.5 s.</li>
</ul>"#;

/// The `device` parameter's forms.
const DEVICES: &str = r#"<h2>Device strings (parameter <code>device</code>)</h2>
<table><tr><th>device</th><th>memory</th></tr>
<tr><td><code>/dev/rfm2g0</code>, <code>\\.\rfm2g1</code></td><td>an RFM2g board (GE/Abaco PCIE-5565 and kin) through the
vendor library, loaded at run time: <code>librfm2g.so</code> (Linux) or <code>rfm2gdll_stdc_64.dll</code>
(Windows) from the search path, or the path in <code>rfm2gLibrary</code></td></tr>
<tr><td><code>shm:NAME</code></td><td>shared memory on this host, for simulators on one PC (1 MiB, closed to
other users): the POSIX object <code>/NAME</code> on Linux, the named file mapping
<code>Local\rfm-NAME</code> of this logon session on Windows</td></tr>
<tr><td><code>loopback:NAME</code></td><td>memory shared by the instances of one master process</td></tr>
<tr><td><code>replay:PATH</code></td><td>no memory: the peers are played from a recording
(<code>recordFile</code>) of this node or of a peer, and this node's inputs compared with it
(<code>replay.divergence</code>)</td></tr>
</table>"#;

/// Where the RFM2g vendor library comes from, on each system.
const VENDOR_LIBRARY: &str = r#"<h2>The vendor library</h2>
<p><b>Windows</b>: the vendor's SDK installs <code>rfm2gdll_stdc_64.dll</code>. The FMU loads it at the first
use of an RFM2g device from the DLL search path: the master program's folder, the system folders, then
<code>PATH</code>. Put it there, or give its full path in <code>rfm2gLibrary</code>
(e.g. <code>C:\Program Files\RFM2g\rfm2gdll_stdc_64.dll</code>).</p>
<p><b>Linux</b>: the vendor ships only a static <code>librfm2g.a</code>. Build a shared library from the SDK sources
and put it on <code>LD_LIBRARY_PATH</code> (or give its path in <code>rfm2gLibrary</code>):</p>
<pre>cd /path/to/RFM2g-SDK
gcc -shared -fPIC -O2 api/*.c -lpthread -o librfm2g.so</pre>
<p>Without a card, the project's emulator <code>rfm2g-sim</code> is a drop-in <code>librfm2g.so</code>
(<code>cargo build --release -p rfm2g-sim</code>), and on Windows a drop-in <code>rfm2gdll_stdc_64.dll</code>
(its <code>rfm2g.dll</code>, built for <code>x86_64-pc-windows-gnu</code>, renamed): boards are nodes of a ring in
shared memory, chosen per process, e.g. <code>RFM2G_SIM_DEVICES="/dev/rfm2g0 ring=lab node=2"</code> (or
<code>\\.\rfm2g1 ring=lab node=2</code>). See the project's book, <i>Without a card: the emulator</i>.</p>"#;

/// The two layouts of a node's area.
const LAYOUTS: &str = r#"<h2>Layouts</h2>
<p><b>framed</b> (default): each node's area holds a descriptor of its signals (so <code>rfmctl watch</code>
shows them by name) and a ring of frames (at least 16: deep enough for the lag and the nodes' periods),
each a 64-byte header (with the interface's fingerprint) and the
node's signals laid out as a C struct, guarded by a sequence counter and a CRC-32C, all little-endian.
<b>seed</b> (attitude FMU only): the packed 65-byte <code>FlightData</code> of programs written as in the
reflective-memory article (magic 0x55AA55AA, packetId, timestamp, float attitude[3], status, msg[32]); free
mode only.</p>"#;

/// The wiring steps of `fmu`'s nodes.
fn wiring_steps(fmu: &FmuModel) -> String {
    format!(
        r#"<h2>Wiring the PCs</h2>
<ol>
<li>Connect the {count} PCs' RFM2g boards in a ring (the TX of each to the RX of the next) and install the
driver on every PC. Linux: <code>ls -l /dev/rfm2g*</code> shows the device; <code>device</code> is
<code>/dev/rfm2g0</code>. Windows: the board is listed in Device Manager once the vendor's driver is
installed; <code>device</code> is <code>\\.\rfm2g1</code> for the first board (the vendor numbers them from 1).</li>
<li>Give every node its local board as <code>device</code>, and all of them the same
<code>regionOffset</code>, <code>syncMode</code> and <code>layout</code>.</li>
{wiring}
<li>Start every master, in any order; the first step waits up to <code>startupTimeout</code> for the
others.</li>
</ol>"#,
        count = nodes_in_words(fmu),
        wiring = wiring(fmu),
    )
}

/// The variables as table rows.
fn variable_rows(model: &Model) -> String {
    model
        .variables
        .iter()
        .map(|v| {
            format!(
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>\n",
                escape(&v.name),
                escape(&v.causality),
                escape(&v.kind),
                escape(&v.start),
                escape(&v.description)
            )
        })
        .collect()
}

/// The page: a user of the .fmu reads it without the repository.
pub fn index_html(model: &Model, fmu: &FmuModel) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{id}: signals through reflective memory</title>
{STYLE}</head><body>
<h1>{id}</h1>
<p>{desc}</p>
<p>FMI 2.0 co-simulation, model identifier <code>{id}</code>, GUID <code>{guid}</code>.</p>

<h2>What it does</h2>
{what}
{MODES}

{DEVICES}

{wiring}

{VENDOR_LIBRARY}

<h2>Variables</h2>
<table><tr><th>name</th><th>causality</th><th>type</th><th>start</th><th>description</th></tr>
{rows}</table>

{LAYOUTS}
</body></html>
"#,
        id = escape(&model.model_identifier),
        desc = escape(&model.description),
        guid = escape(&model.guid),
        what = what_it_does(fmu),
        wiring = wiring_steps(fmu),
        rows = variable_rows(model),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn page(fmu: &FmuModel) -> String {
        index_html(&Model::parse(fmu.xml()).unwrap(), fmu)
    }

    /// The page of a node of a three-node lab spoke of "the two RFM2g boards"
    /// and "both masters"; the attitude FMU's showed a literal `{wiring}`.
    #[test]
    fn the_documentation_speaks_of_as_many_nodes_as_couple() {
        let lab = rfm_interface::Interface::parse(
            "lab.toml",
            include_str!("../../examples/lab.toml"),
            &fmu_model::RESERVED,
        )
        .unwrap();
        assert_eq!(lab.nodes.len(), 3);
        let three = page(&FmuModel::of_node(Arc::new(lab), 1));
        let pair = page(&FmuModel::attitude());
        for (html, count) in [(&three, "three"), (&pair, "two")] {
            assert!(
                html.contains(&format!("Connect the {count} PCs' RFM2g boards")),
                "{count}"
            );
            for stale in [
                "the two RFM2g boards",
                "both masters",
                "{wiring}",
                "{count}",
            ] {
                assert!(!html.contains(stale), "{count}: `{stale}`");
            }
            assert!(html.contains("<code>replay:PATH</code>"));
        }
        assert!(pair.contains("<code>nodeSlot = 1</code>, <code>peerSlot = 0</code>"));
    }
}
