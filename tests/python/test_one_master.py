"""The whole lab in one master: the three lab FMUs (1 kHz, 1/60 s, 10 Hz) in
one process over `loopback:`, stepped by one step size for all. In libcosim,
from the SSP archive build-fmu writes and from CosimLocalSlaves stepped by one
1 ms base step (whole multiples of it, in integer nanoseconds); in FMPy, a
thread a node, by 1 ms and by 5 ms. Each node takes its own steps where their
times fall, and every output after every master step is checked against the
rule on time, computed here in exact fractions.

Run by scripts/test.sh after build-fmu, in the project's venv.
"""

import math
import os
import subprocess
import sys
import uuid
import zipfile
from xml.etree import ElementTree
from fractions import Fraction
from pathlib import Path

import book

import pytest
import xmlschema
from fmpy import read_model_description
from libcosimpy.CosimExecution import CosimExecution
from libcosimpy.CosimManipulator import CosimManipulator
from libcosimpy.CosimObserver import CosimObserver
from libcosimpy.CosimSlave import CosimLocalSlave
from pyssp_standard.standard import ModelicaStandard

ROOT = Path(__file__).resolve().parents[2]
FMU = Path(os.environ.get("RFM_FMU", ROOT / "target" / "fmu" / "rfm_attitude.fmu"))
BUILD_FMU = ROOT / "target" / "release" / "build-fmu"

PERIODS = {"cockpit": Fraction(1, 1000), "visual": Fraction(1, 60), "ios": Fraction(1, 10)}
# Whom each node waits for in lockstep (examples/lab.toml: the visual system
# takes the instructor station's newest frame).
WAITS = {"cockpit": ["visual", "ios"], "visual": ["cockpit"], "ios": ["cockpit", "visual"]}
FREE = {"cockpit": [], "visual": ["ios"], "ios": []}
# The signal each node publishes its own step index in.
SIGNAL = {"cockpit": "altitude", "visual": "frame_count", "ios": "reposition"}
BASE = Fraction(1, 1000)
SSV = "http://ssp-standard.org/SSP1/SystemStructureParameterValues"
MACRO_STEPS = 1000  # 1 s


def lab_file(tmp_path, lags=None):
    """examples/lab.toml, with `lag = L` in each node if `lags` says."""
    text = (ROOT / "examples" / "lab.toml").read_text()
    for node, lag in (lags or {}).items():
        text = text.replace(f'name = "{node}"\n', f'name = "{node}"\nlag = {lag}\n', 1)
    path = tmp_path / "lab.toml"
    path.write_text(text)
    return path


def build(tmp_path, lags=None, fmi=2):
    """The lab's FMUs (of FMI `fmi`) and SSP, built from the packaged FMU's
    binaries."""
    out = tmp_path / "fmus"
    ssp = tmp_path / "lab.ssp"
    run = subprocess.run(
        [str(BUILD_FMU), "--fmi", str(fmi), "--interface", str(lab_file(tmp_path, lags)),
         "--node", "all", "--from", str(FMU), "--out", str(out), "--ssp", str(ssp)],
        capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return out, ssp


def last_step(node, t_end, h=BASE):
    """The last of `node`'s steps a master shows after t_end, stepping it by
    `h`: the last whose doStep (the one whose [t, t + h) holds its grid time)
    has ended by t_end; libcosim reads a simulator's outputs when its doStep
    ends (-1: none)."""
    k = math.ceil(t_end / PERIODS[node]) - 1
    while k >= 0 and (math.floor(k * PERIODS[node] / h) + 1) * h > t_end:
        k -= 1
    return k


def published(node, s, h):
    """What `node` published at its step s, stepped by `h`: the step index the
    test set before the doStep that took it (inputs are held over a doStep);
    its initial frame holds the start value, 0."""
    if s < 0:
        return 0
    start = math.floor(s * PERIODS[node] / h) * h
    return math.ceil(start / PERIODS[node])


def rule(node, peer, k, lag):
    """The peer's step whose frame `node`'s step k holds at `lag`."""
    if k < lag:
        return -1
    return math.floor((k - lag) * PERIODS[node] / PERIODS[peer])


def free_bound(node, peer, k):
    """The newest step of a peer that `node` takes free (not waiting for it)
    may show after its step k: the peer has published a step once it took
    the one before, whose lockstep waits for `node`'s frames (of the time
    before `node`'s step k at most) were met; so at most one step past the
    time of `node`'s step k."""
    return math.floor(k * PERIODS[node] / PERIODS[peer]) + 1


def check_run(master, lags, steps=None):
    """Steps `master` 1 s by its base step, each node's signal set to the
    step it takes next, and checks every peer output after every base step;
    `steps` gives the step size a node is stepped by (default: the base).
    `master` sets a node's signal (`set(node, name, value)`), takes a base
    step (`step()`) and reads a node's variable (`get(node, name, real)`)."""
    steps = steps or {}
    checked = 0
    for m in range(MACRO_STEPS):
        for node in PERIODS:
            # The step this node takes next: what it publishes at it.
            nxt = math.ceil(m * BASE / PERIODS[node])
            master.set(node, SIGNAL[node], float(nxt) if node == "cockpit" else nxt)
        master.step(m)
        t_end = (m + 1) * BASE
        for node in PERIODS:
            k = last_step(node, t_end, steps.get(node, BASE))
            for peer in WAITS[node] + FREE[node]:
                step = master.get(node, f"{peer}.step", False)
                value = master.get(node, f"{peer}.{SIGNAL[peer]}", peer == "cockpit")
                where = f"{node} after base step {m} (its step {k}), peer {peer}"
                if peer in WAITS[node]:
                    assert step == rule(node, peer, k, lags[node]), where
                else:
                    assert -1 <= step <= free_bound(node, peer, k), where
                want = published(peer, step, steps.get(peer, BASE))
                assert value == want, f"{where}: value {value} of step {step}"
                checked += 1
    return checked


class Libcosim:
    """A libcosim execution as `check_run` drives it."""

    def __init__(self, execution, slaves, fmus):
        self.execution, self.slaves = execution, slaves
        self.vr = {n: {v.name: v.valueReference for v in read_model_description(str(f)).modelVariables}
                   for n, f in fmus.items()}
        self.inputs = CosimManipulator.create_override()
        execution.add_manipulator(self.inputs)
        self.outputs = CosimObserver.create_last_value()
        execution.add_observer(self.outputs)

    def set(self, node, name, value):
        ref = [self.vr[node][name]]
        if isinstance(value, float):
            self.inputs.slave_real_values(self.slaves[node], ref, [value])
        else:
            self.inputs.slave_integer_values(self.slaves[node], ref, [value])

    def step(self, m):
        assert self.execution.step(), f"base step {m} failed"

    def get(self, node, name, real):
        ref = [self.vr[node][name]]
        read = self.outputs.last_real_values if real else self.outputs.last_integer_values
        return read(self.slaves[node], ref)[0]


@pytest.mark.parametrize("fmi", [2, 3])
def test_the_ssp_validates_and_binds_only_parameters_its_fmus_have(tmp_path, fmi):
    """SystemStructure.ssd and every .ssv against the SSP 1.0 schemas (those
    pyssp-standard carries), each component's FMU in the archive (of FMI
    `fmi`: `build-fmu --fmi 3 --ssp` packs the FMI 3.0 FMUs), and every
    parameter an .ssv binds one its FMU has (libcosim only warns about a
    misspelt one and runs on with the default)."""
    _, ssp = build(tmp_path, fmi=fmi)
    unpacked = tmp_path / "ssp"
    with zipfile.ZipFile(ssp) as z:
        z.extractall(unpacked)
    schemas = ModelicaStandard.schemas
    xmlschema.validate(unpacked / "SystemStructure.ssd", xmlschema.XMLSchema10(schemas["ssd"]))
    ssd = (unpacked / "SystemStructure.ssd").read_text()
    assert 'baseStepSize="0.001" numWorkerThreads="3"' in ssd
    for node in PERIODS:
        ssv = unpacked / "resources" / f"{node}.ssv"
        xmlschema.validate(ssv, xmlschema.XMLSchema10(schemas["ssv"]))
        fmu = unpacked / "resources" / f"lab_{node}.fmu"
        md = read_model_description(str(fmu), validate=True)
        assert md.fmiVersion == f"{fmi}.0", (fmu, md.fmiVersion)
        names = {v.name for v in md.modelVariables if v.causality == "parameter"}
        bound = [p.attrib["name"] for p in ElementTree.parse(ssv).iter(f"{{{SSV}}}Parameter")]
        assert bound, ssv
        assert set(bound) <= names, (node, set(bound) - names)
        assert f'source="resources/lab_{node}.fmu"' in ssd
    # A broken system structure fails the same check.
    broken = tmp_path / "broken.ssd"
    broken.write_text(ssd.replace("ssd:Elements", "ssd:Elementz"))
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        xmlschema.validate(broken, xmlschema.XMLSchema10(schemas["ssd"]))


# libcosim caps its worker threads at the cores less one: with a thread a node
# (the SSP's annotation asks for one) every node steps while the others do,
# and lockstep at lag 0 is met; with fewer, the nodes step one after the
# other, in an order of its hash map's, and each needs lag 1 or more.
PARALLEL = (os.cpu_count() or 1) - 1 >= len(PERIODS)


@pytest.mark.parametrize("lags", [
    {"cockpit": 0, "visual": 0, "ios": 0} if PARALLEL else {"cockpit": 1, "visual": 1, "ios": 1},
    {"cockpit": 1, "visual": 2, "ios": 1},
])
def test_libcosim_runs_the_lab_from_its_ssp_exactly(tmp_path, lags):
    """`CosimExecution.from_ssp_file` on the archive as build-fmu wrote it,
    with nothing set by the test but the inputs: the lags are the file's
    settings, the devices the .ssv's `loopback:lab`."""
    fmus_dir, ssp = build(tmp_path, lags)
    execution = CosimExecution.from_ssp_file(str(ssp))
    slaves = {n: execution.slave_index_from_instance_name(n) for n in PERIODS}
    fmus = {n: fmus_dir / f"lab_{n}.fmu" for n in PERIODS}
    # The SSP hints each whole-nanosecond period: the instructor station is
    # stepped by 0.1 s, every 100th base step.
    checked = check_run(Libcosim(execution, slaves, fmus), lags, {"ios": Fraction(1, 10)})
    assert checked == MACRO_STEPS * 6  # two peers of each of three nodes


@pytest.mark.parametrize("lags", [{"cockpit": 1, "visual": 1, "ios": 1},
                                  {"cockpit": 1, "visual": 2, "ios": 0}])
def test_libcosim_runs_the_lab_from_local_slaves_by_one_base_step(tmp_path, lags):
    """Three CosimLocalSlaves of one execution stepped by 1 ms (1/60 s is
    16,666,666.67 ns, which no integer clock holds). On one worker libcosim
    steps them one after the other, the last added first: added instructor
    station first, it is stepped last, after the frames its lag 0 waits for
    were published."""
    fmus_dir, _ = build(tmp_path)
    execution = CosimExecution.from_step_size(step_size=1_000_000)
    device = f"loopback:lab-{uuid.uuid4().hex[:8]}"
    fmus = {n: fmus_dir / f"lab_{n}.fmu" for n in PERIODS}
    keep, slaves = [], {}
    for node, fmu in reversed(fmus.items()):
        vr = {v.name: v.valueReference for v in read_model_description(str(fmu)).modelVariables}
        keep.append(CosimLocalSlave(fmu_path=str(fmu), instance_name=node))
        slaves[node] = execution.add_local_slave(keep[-1])
        execution.string_initial_value(slaves[node], vr["device"], device)
        execution.integer_initial_value(slaves[node], vr["lag"], lags[node])
    checked = check_run(Libcosim(execution, slaves, fmus), lags)
    assert checked == MACRO_STEPS * 6  # two peers of each of three nodes


@pytest.mark.parametrize("lags", [{"cockpit": 1, "visual": 1, "ios": 1},
                                  {"cockpit": 1, "visual": 2, "ios": 1}])
def test_ecos_runs_the_lab_from_its_ssp_exactly(tmp_path, lags):
    """ecos (ecospy) from the same archive, by a 1 ms step: it applies a
    parameter set by name to every component (each node's is named after
    the interface), and steps its models one after the other."""
    from ecospy import EcosSimulation
    _, ssp = build(tmp_path, lags)

    class Ecos:
        def __init__(self):
            self.sim = EcosSimulation(step_size=float(BASE), ssp_path=str(ssp))
            assert self.sim.init(parameter_set="lab")

        def set(self, node, name, value):
            if isinstance(value, float):
                self.sim.set_real(f"{node}::{name}", value)
            else:
                self.sim.set_integer(f"{node}::{name}", value)

        def step(self, m):
            self.sim.step()

        def get(self, node, name, real):
            return (self.sim.get_real if real else self.sim.get_integer)(f"{node}::{name}")

    ecos = Ecos()
    for node in PERIODS:
        assert ecos.sim.get_string(f"{node}::device") == "loopback:lab"
    assert check_run(ecos, lags) == MACRO_STEPS * 6
    ecos.sim.terminate()


class FmpyNode:
    """One node's FMU in FMPy, through either face, with the calls the lab's
    test makes named alike."""

    def __init__(self, fmu, node, fmi):
        from fmpy import extract
        from fmpy.fmi2 import FMU2Slave
        from fmpy.fmi3 import FMU3Slave
        md = read_model_description(str(fmu))
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.fmi3 = fmi == 3
        assert md.fmiVersion == f"{fmi}.0", (fmu, md.fmiVersion)
        kind = FMU3Slave if self.fmi3 else FMU2Slave
        guid = md.instantiationToken if self.fmi3 else md.guid
        self.s = kind(guid=guid, unzipDirectory=extract(str(fmu)),
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName=node)
        self.s.instantiate()

    def start(self, device):
        self.s.setString([self.vr["device"]], [device])
        if self.fmi3:
            self.s.enterInitializationMode(startTime=0.0)
        else:
            self.s.setupExperiment(startTime=0.0)
            self.s.enterInitializationMode()
        self.s.exitInitializationMode()

    def real(self, name, value=None):
        if value is None:
            return (self.s.getFloat64 if self.fmi3 else self.s.getReal)([self.vr[name]])[0]
        (self.s.setFloat64 if self.fmi3 else self.s.setReal)([self.vr[name]], [value])

    def integer(self, name, value=None):
        if value is None:
            return (self.s.getInt32 if self.fmi3 else self.s.getInteger)([self.vr[name]])[0]
        (self.s.setInt32 if self.fmi3 else self.s.setInteger)([self.vr[name]], [value])

    def step(self, t, h):
        if self.fmi3:
            assert self.s.doStep(t, h)[:3] == (False, False, False)
        else:
            self.s.doStep(currentCommunicationPoint=t, communicationStepSize=h)


def fmpy_node(fmu, node, device, h, seen, fmi=2):
    """One node in FMPy (its FMI 2.0 or FMI 3.0 face), in a thread of its
    own: stepped by `h` for 1 s, its signal set before each doStep to the
    step it takes next; `seen` gets each doStep's peer outputs."""
    slave = FmpyNode(fmu, node, fmi)
    slave.start(device)
    t = Fraction(0)
    peers = WAITS[node] + FREE[node]
    while t < 1:
        nxt = math.ceil(t / PERIODS[node])
        if node == "cockpit":
            slave.real(SIGNAL[node], float(nxt))
        else:
            slave.integer(SIGNAL[node], nxt)
        slave.step(float(t), float(h))
        t += h
        row = []
        for peer in peers:
            step = slave.integer(f"{peer}.step")
            name = f"{peer}.{SIGNAL[peer]}"
            value = slave.real(name) if peer == "cockpit" else slave.integer(name)
            row.append((peer, step, value))
        seen.append((t, row))
    slave.s.terminate()
    slave.s.freeInstance()


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("h", [Fraction(1, 1000), Fraction(5, 1000)])
def test_fmpy_runs_the_lab_in_one_process_by_one_step_size(tmp_path, h, fmi):
    """FMPy's FMU2Slave (FMU3Slave on the FMI 3.0 FMUs of `build-fmu --fmi
    3`), three instances in one process, a thread a node (as a master that
    steps its FMUs concurrently), at lag 0: by 1 ms the cockpit takes one
    step a doStep, by 5 ms five, the visual system one where a 60th of a
    second falls; every value by the rule."""
    import threading
    fmus_dir, _ = build(tmp_path, fmi=fmi)
    device = f"loopback:lab-{uuid.uuid4().hex[:8]}"
    seen = {n: [] for n in PERIODS}
    threads = [threading.Thread(target=fmpy_node,
                                args=(fmus_dir / f"lab_{n}.fmu", n, device, h, seen[n], fmi))
               for n in PERIODS]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    checked = 0
    for node, rows in seen.items():
        assert len(rows) == 1 / h, (node, len(rows))
        for t_end, row in rows:
            k = last_step(node, t_end, h)
            for peer, step, value in row:
                where = f"{node} at {t_end} s (its step {k}), peer {peer}"
                if peer in WAITS[node]:
                    assert step == rule(node, peer, k, 0), where
                else:
                    assert -1 <= step <= free_bound(node, peer, k), where
                assert value == published(peer, step, h), f"{where}: value {value}"
                checked += 1
    assert checked == 6 / h


def readme_snippets():
    """The scripts of the book's "Any master", by the master they follow."""
    return {master: book.snippet("guide/lab.md", name)
            for master, name in (("With libcosim", "one-master-libcosim"),
                                 ("With ecos", "one-master-ecos"),
                                 ("With FMPy", "one-master-fmpy"))}


@pytest.mark.parametrize("master, expected", [("With libcosim", "ios holds cockpit step 800"),
                                              ("With ecos", "ios holds cockpit step 800"),
                                              ("With FMPy", "ios holds cockpit step 900")])
def test_the_readmes_masters_run_the_lab_as_written(tmp_path, master, expected):
    """Each script of the book's masters table, as written, beside what
    `build-fmu --interface examples/lab.toml --node all --ssp lab.ssp` writes."""
    run = subprocess.run(
        [str(BUILD_FMU), "--interface", str(ROOT / "examples" / "lab.toml"), "--node", "all",
         "--from", str(FMU), "--out", str(tmp_path), "--ssp", str(tmp_path / "lab.ssp")],
        capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    (tmp_path / "script.py").write_text(readme_snippets()[master])
    run = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert expected in run.stdout.splitlines(), run.stdout[-3000:]
