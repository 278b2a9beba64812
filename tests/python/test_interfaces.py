"""FMUs built from interface files, in FMPy 0.3.32.

Run by scripts/test.sh after it packed target/fmu/mixed/*.fmu (three nodes, every
signal type), target/fmu/reals1000/*.fmu (two nodes of 1,000 Reals) and
target/fmu/lab/*.fmu (examples/lab.toml: three nodes at 1 kHz, 1/60 s and 10 Hz).
"""

import csv
import math
import re
import subprocess
import sys
import uuid
from fractions import Fraction
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
    FMUS / "lab" / "lab_visual.fmu",
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


def lab_snippet():
    """The README's "A lab in FMPy" script, verbatim, and the line it prints."""
    text = (ROOT / "README.md").read_text()
    section = text.split("**A lab in FMPy.**", 1)[1].split("\n## ", 1)[0]
    script = section.split("```python\n", 1)[1].split("```", 1)[0]
    example = section.split("e.g.\n`", 1)[1].split("`", 1)[0]
    return script, example


LAB = {"cockpit": Fraction(1, 1000), "visual": Fraction(1, 60), "ios": Fraction(1, 10)}


def test_the_readmes_lab_runs_three_nodes_at_their_periods_paced_by_one(tmp_path):
    """Three FMPy processes, each at its own period, the instructor station paced
    to real time: every peer step each node read is the rule's, and all three
    take the simulated 10 s in wall time (within 5 %)."""
    script, example = lab_snippet()
    line = re.compile(r"^(\w+): (\d+) steps of ([\d.]+) s in ([\d.]+) s$")
    assert line.match(example), example
    (tmp_path / "node.py").write_text(script)
    for node in LAB:
        fmu = FMUS / "lab" / f"lab_{node}.fmu"
        assert fmu.is_file(), f"{fmu} is missing: scripts/test.sh packs it"
        (tmp_path / fmu.name).write_bytes(fmu.read_bytes())
    args = {"ios": ["1"], "cockpit": [], "visual": []}
    try:
        runs = {
            node: subprocess.Popen(
                [sys.executable, "node.py", node, *extra],
                cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            for node, extra in args.items()
        }
        outs = {node: r.communicate(timeout=300) for node, r in runs.items()}
    finally:
        Path("/dev/shm/lab").unlink(missing_ok=True)
    for node, (out, err) in outs.items():
        assert runs[node].returncode == 0, out + err
        m = line.match(out.strip())
        assert m and m.group(1) == node, out + err
        assert int(m.group(2)) == 10 / LAB[node], out
        assert 9.5 <= float(m.group(4)) <= 10.5, f"{node} took {m.group(4)} s of wall time for 10 s"
    free = {("visual", "ios")}
    for node, period in LAB.items():
        with open(tmp_path / f"{node}.csv") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 10 / period + 1
        for i, row in enumerate(rows[1:]):
            k = i  # the row after doStep k
            for peer, theirs in LAB.items():
                if peer == node:
                    continue
                got = int(float(row[f"{peer}.step"]))
                assert row[f"{peer}.link.ok"] in ("True", "1", "1.0"), (node, k, row)
                if (node, peer) in free:
                    assert -1 <= got <= k * period / theirs + 1, (node, k, peer, got)
                else:
                    want = math.floor(k * period / theirs)
                    assert got == want, f"{node} step {k}: {peer}.step {got}, the rule {want}"


# What each lab node sends at its step k: every type, a function of k.
LAB_INPUTS = {
    "cockpit": lambda k: {"latitude": k * 1e-3, "flap_detent": k % 5, "gear_down": k % 2 == 0,
                          "callsign": f"C{k}"},
    "visual": lambda k: {"frame_count": k, "ready": k % 2 == 1},
    "ios": lambda k: {"reposition": k % 100, "freeze": k % 3 == 0, "failure": f"F{k}",
                      "wind_speed": k * 0.5},
}


def test_the_three_lab_fmus_in_one_process_couple_over_loopback_exactly():
    """The three lab .fmus in one FMPy process, each unpacked into its own folder
    (three copies of the binary), one thread each, over `loopback:` (each copy
    once had its own loopback memory: the README said to use `shm:`). One
    simulated second: every value of every type is the one the rule on time
    names; the visual system's free peer (ios) is a whole frame."""
    device = f"loopback:lab-{uuid.uuid4().hex[:8]}"
    seen, failures = {}, []

    def run(node):
        try:
            path = FMUS / "lab" / f"lab_{node}.fmu"
            s, vr = slave(path, node)
            h = float(read_model_description(str(path)).defaultExperiment.stepSize)
            s.setString([vr["device"]], [device])
            s.setupExperiment(startTime=0.0)
            s.enterInitializationMode()
            s.exitInitializationMode()
            peers = [p for p in LAB if p != node]
            outputs = [f"{p}.{name}" for p in peers for name in [*LAB_INPUTS[p](0), "step"]]
            rows = []
            for k in range(int(1 / LAB[node])):
                for name, value in LAB_INPUTS[node](k).items():
                    setter = {float: s.setReal, int: s.setInteger, bool: s.setBoolean,
                              str: s.setString}[type(value)]
                    setter([vr[name]], [value])
                s.doStep(currentCommunicationPoint=k * h, communicationStepSize=h)
                rows.append({o: get(s, vr, o) for o in outputs})
            s.terminate()
            s.freeInstance()
            seen[node] = rows
        except Exception as e:  # reported by the main thread
            failures.append((node, repr(e)))

    import threading
    threads = [threading.Thread(target=run, args=(node,)) for node in LAB]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures, failures
    for node, rows in seen.items():
        for k, row in enumerate(rows):
            for peer in (p for p in LAB if p != node):
                j = row[f"{peer}.step"]
                if (node, peer) != ("visual", "ios"):
                    assert j == math.floor(k * LAB[node] / LAB[peer]), (node, k, peer, j)
                assert j >= -1, (node, k, peer, j)
                if j == -1:
                    continue  # a free peer not yet stepped: its initial frame
                for name, value in LAB_INPUTS[peer](j).items():
                    assert row[f"{peer}.{name}"] == value, (node, k, peer, name, row)


def get(s, vr, name):
    """One output of any type, as the Python value LAB_INPUTS gives."""
    v = vr[name]
    if name.endswith(".step") or name.endswith((".flap_detent", ".frame_count", ".reposition")):
        return s.getInteger([v])[0]
    if name.endswith((".gear_down", ".ready", ".freeze")):
        return bool(s.getBoolean([v])[0])
    if name.endswith((".callsign", ".failure")):
        return s.getString([v])[0].decode()
    return s.getReal([v])[0]
