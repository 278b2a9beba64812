"""FMUs built from interface files, in FMPy 0.3.32.

Run by scripts/test.sh after it packed target/fmu/mixed/*.fmu (three nodes, every
signal type) and target/fmu/reals1000/*.fmu (two nodes of 1,000 Reals).
"""

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

ROOT = Path(__file__).resolve().parents[2]
FMUS = ROOT / "target" / "fmu"
FMPY = Path(sys.executable).with_name("fmpy")

GENERATED = [
    FMUS / "mixed" / "mixed_cockpit.fmu",
    FMUS / "mixed" / "mixed_visual.fmu",
    FMUS / "mixed" / "mixed_ios.fmu",
    FMUS / "reals1000" / "reals1000_a.fmu",
]


@pytest.mark.parametrize("fmu", GENERATED, ids=lambda p: p.name)
def test_fmpy_validate_finds_no_problems(fmu):
    assert fmu.is_file(), f"{fmu} is missing: scripts/test.sh packs it"
    out = subprocess.run([str(FMPY), "validate", str(fmu)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "No problems found." in out.stdout


def test_the_variables_are_the_nodes_signals():
    md = read_model_description(str(FMUS / "mixed" / "mixed_visual.fmu"))
    by_name = {v.name: v for v in md.modelVariables}
    assert md.coSimulation.modelIdentifier == "mixed_visual"
    assert [v.name for v in md.modelVariables if v.causality == "input"] == ["frame_count", "ready"]
    for name, kind in [("cockpit.roll", "Real"), ("cockpit.callsign", "String"),
                       ("ios.freeze", "Boolean"), ("cockpit.step", "Integer"),
                       ("ios.link.ok", "Boolean"), ("cockpit.time", "Real")]:
        assert by_name[name].causality == "output" and by_name[name].type == kind, name
    assert "nodeSlot" not in by_name and "peerSlot" not in by_name
    assert by_name["cockpit.roll"].unit == "rad"


def slave(path, name):
    md = read_model_description(str(path))
    s = FMU2Slave(
        guid=md.guid,
        unzipDirectory=extract(str(path)),
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName=name,
    )
    s.instantiate()
    return s, {v.name: v.valueReference for v in md.modelVariables}


def test_two_nodes_of_a_thousand_reals_exchange_exactly_with_lag_one():
    # Two FMUs are two copies of the binary, each with its own loopback: memory:
    # shared memory couples them in one process.
    name = f"fmpy-{uuid.uuid4().hex[:8]}"
    device = f"shm:{name}"
    nodes = []
    for node in "ab":
        s, vr = slave(FMUS / "reals1000" / f"reals1000_{node}.fmu", node)
        s.setString([vr["device"]], [device])
        s.setInteger([vr["lag"]], [1])
        s.setReal([vr["startupTimeout"], vr["timeout"]], [20.0, 20.0])
        s.setupExperiment(startTime=0.0)
        s.enterInitializationMode()
        nodes.append((node, s, vr))
    for _, s, _ in nodes:
        s.exitInitializationMode()
    h = 1e-3

    def values(node, k):
        return [k * 0.5 + i + (1000 if node == "b" else 0) for i in range(1000)]

    for k in range(200):
        for node, s, vr in nodes:
            s.setReal([vr[f"x{i}"] for i in range(1000)], values(node, k))
            s.doStep(currentCommunicationPoint=k * h, communicationStepSize=h)
        for node, s, vr in nodes:
            other = "b" if node == "a" else "a"
            got = s.getReal([vr[f"{other}.x{i}"] for i in range(1000)])
            expected = values(other, k - 1) if k > 0 else [0.0] * 1000
            assert got == expected, f"node {node} step {k}"
    for _, s, _ in nodes:
        s.terminate()
        s.freeInstance()
    Path(f"/dev/shm/{name}").unlink(missing_ok=True)
