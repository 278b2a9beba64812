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

import book

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
    """The book's "A lab in FMPy" script, verbatim, and the line it prints."""
    script = book.snippet("guide/lab.md", "lab-node")
    example = book.after("guide/lab.md", "lab-node").split("e.g.\n`", 1)[1].split("`", 1)[0]
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
    once had its own loopback memory: the manual said to use `shm:`). One
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


NODE_SCRIPT = r'''
import sys, time
from pathlib import Path
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

fmu, device, ready, others = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4:]
md = read_model_description(fmu)
vr = {v.name: v.valueReference for v in md.modelVariables}
s = FMU2Slave(guid=md.guid, unzipDirectory=extract(fmu),
              modelIdentifier=md.coSimulation.modelIdentifier, instanceName=ready.name)
s.instantiate()
s.setString([vr["device"]], [device])
s.setReal([vr["startupTimeout"]], [20.0])
s.setupExperiment(startTime=0.0)
s.enterInitializationMode()
s.exitInitializationMode()
ready.touch()
deadline = time.monotonic() + 60
while not all(Path(o).exists() for o in others):  # both nodes have started
    assert time.monotonic() < deadline, "the other node never started"
    time.sleep(0.001)
h = float(md.defaultExperiment.stepSize)
t0 = time.monotonic()
try:
    for k in range(100):
        s.doStep(currentCommunicationPoint=k * h, communicationStepSize=h)
    print("stepped", flush=True)
except Exception:
    print(f"failed after {time.monotonic() - t0:.3f} s", flush=True)
'''


def test_nodes_whose_files_differ_in_layout_are_told_within_a_second_in_two_processes(tmp_path):
    """The cockpit built from a file in which it publishes twelve Reals more (the
    visual's area lies elsewhere in it), the visual from examples/lab.toml, two
    FMPy processes over `shm:`: each used to wait `startupTimeout` (20 s here) and
    say "nothing from node …". Both fail their first step within a second of both
    having started, naming both nodes."""
    lab = (ROOT / "examples" / "lab.toml").read_text()
    anchor = '{ name = "callsign", type = "String", size = 16, start = "RFM001", description = "ATC callsign" },'
    assert anchor in lab
    more = "".join(f'\n  {{ name = "extra{i}", type = "Real" }},' for i in range(12))
    (tmp_path / "other.toml").write_text(lab.replace(anchor, anchor + more))
    build = ROOT / "target" / "release" / "build-fmu"
    run = subprocess.run([str(build), "--interface", str(tmp_path / "other.toml"), "--node", "cockpit",
                          "--from", str(FMUS / "rfm_attitude.fmu"), "--out", str(tmp_path / "other_cockpit.fmu")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    (tmp_path / "node.py").write_text(NODE_SCRIPT)
    device = f"shm:layout-{uuid.uuid4().hex[:8]}"
    fmus = {"cockpit": tmp_path / "other_cockpit.fmu", "visual": FMUS / "lab" / "lab_visual.fmu"}
    ready = {node: tmp_path / f"{node}.ready" for node in fmus}
    try:
        runs = {
            node: subprocess.Popen(
                [sys.executable, "node.py", str(fmu), device, str(ready[node]),
                 *(str(r) for other, r in ready.items() if other != node)],
                cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for node, fmu in fmus.items()
        }
        outs = {node: r.communicate(timeout=120) for node, r in runs.items()}
    finally:
        Path(f"/dev/shm/{device[4:]}").unlink(missing_ok=True)
    for node, (out, err) in outs.items():
        peer = "visual" if node == "cockpit" else "cockpit"
        m = re.search(r"^failed after ([\d.]+) s$", out, re.M)
        assert m, f"{node}: {out[-3000:]} {err[-3000:]}"
        assert float(m.group(1)) < 1.0, f"{node} was told after {m.group(1)} s"
        assert "were built from different interface files" in out, out[-3000:]
        assert f"node `{peer}`" in out and f"this node `{node}`" in out, out[-3000:]


PAIR_SCRIPT = r'''
import sys, time
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

fmu, device, me, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
md = read_model_description(fmu)
vr = {v.name: v.valueReference for v in md.modelVariables}
s = FMU2Slave(guid=md.guid, unzipDirectory=extract(fmu),
              modelIdentifier=md.coSimulation.modelIdentifier, instanceName=f"node{me}")
s.instantiate()
s.setString([vr["device"]], [device])
s.setInteger([vr["nodeSlot"], vr["peerSlot"]], [me, 1 - me])
s.setReal([vr["realTimeFactor"]], [1.0])
s.setupExperiment(startTime=0.0)
s.enterInitializationMode()
s.exitInitializationMode()
wrong, h = 0, 1e-3
for k in range(steps):
    s.setReal([vr["roll"]], [k + 0.5 * me])
    s.doStep(currentCommunicationPoint=k * h, communicationStepSize=h)
    wrong += s.getReal([vr["peer.roll"]])[0] != k + 0.5 * (1 - me)
s.terminate()
print(f"{steps} steps, {wrong} wrong", flush=True)
'''


def test_a_node_of_another_interface_over_a_running_pair_is_refused_and_the_pair_finishes_exactly(
        tmp_path, capsys):
    """An attitude pair in two FMPy processes over `shm:`, paced to real time for
    3 s; after 1 s a node of another interface (`pq`, node `q` in slot 8, whose
    area lies over the pair's) starts on the same memory. It used to leave
    initialization and break the pair within milliseconds; it is refused at
    fmi2ExitInitializationMode, naming what it found, and the pair finishes
    exactly."""
    (tmp_path / "pq.toml").write_text(
        'name = "pq"\n[[node]]\nname = "p"\nslot = 7\nsignals = [ { name = "x", type = "Real" } ]\n'
        '[[node]]\nname = "q"\nslot = 8\nsignals = [ { name = "y", type = "Real" } ]\n')
    build = ROOT / "target" / "release" / "build-fmu"
    run = subprocess.run([str(build), "--interface", str(tmp_path / "pq.toml"), "--node", "q",
                          "--from", str(FMUS / "rfm_attitude.fmu"), "--out", str(tmp_path / "pq_q.fmu")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    (tmp_path / "pair.py").write_text(PAIR_SCRIPT)
    device = f"shm:foreign-{uuid.uuid4().hex[:8]}"
    try:
        pair = [subprocess.Popen([sys.executable, "pair.py", str(FMUS / "rfm_attitude.fmu"), device,
                                  str(me), "3000"],
                                 cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for me in (0, 1)]
        import time
        time.sleep(1.5)
        q, vr = slave(tmp_path / "pq_q.fmu", "q")
        q.setString([vr["device"]], [device])
        q.setupExperiment(startTime=0.0)
        q.enterInitializationMode()
        with pytest.raises(Exception, match="fmi2ExitInitializationMode"):
            q.exitInitializationMode()
        told = capsys.readouterr().out  # FMPy's logger prints what the FMU logs
        outs = [p.communicate(timeout=120) for p in pair]
    finally:
        Path(f"/dev/shm/{device[4:]}").unlink(missing_ok=True)
    assert "whose heartbeat last moved" in told and "it is of interface `rfm_attitude`, this node of `pq`" in told \
        and "Nothing was written" in told, told[-3000:]
    for p, (out, err) in zip(pair, outs):
        assert p.returncode == 0, out[-3000:] + err[-3000:]
        assert "3000 steps, 0 wrong" in out, out[-3000:]
