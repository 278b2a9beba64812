"""The formation lab (issue 48): two JSBSim aircraft FMUs, each in its own
simulator process with its autopilot FMU and its node's coupling FMU, coupled
over shm:. In FMPy the wiring is examples/formation/fly.py's; in libcosim and
ecos it is the master's own, from each simulator's SSP (build-fmu --system,
examples/formation/cosim.py).

- Every leader value the wingman's coupling FMU outputs, at every step, is
  bit for bit what the leader sent at the step the rule names (after step k,
  the leader's frame of step k - lag; its initialization frame before that).
- The wingman's trajectory is bit for bit a reference run of both aircraft
  in one process without any coupling FMU, the wingman handed the leader
  state the rule names (JSBSim is deterministic: any wrong, late or torn
  value shows); a reference with the wrong lag is not.
- The formation is held: after the join the slot error stays under
  SLOT_BOUND, and the aircraft never come closer than SEPARATION.
- From the SSPs, in libcosim (lags 0 and 2) and ecos (the SSP's lag 0):
  every leader value received is the leader aircraft's output the rule
  names, and the slot is held; ecos flies the FMPy reference trajectory bit
  for bit. (libcosim leaves it by one unit in the last place of a roll rate
  after about 1,400 steps: JSBSim runs in libcosim's worker threads there,
  and the coupled values stay exact.)

Needs the FMUs `scripts/formation.sh build` writes (target/fmu/formation);
run by scripts/test.sh in the project's venv.
"""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import book

ROOT = Path(__file__).resolve().parents[2]
FLY = ROOT / "examples" / "formation" / "fly.py"
COSIM = ROOT / "examples" / "formation" / "cosim.py"
FMUS = Path(os.environ.get("RFM_FORMATION_FMUS", ROOT / "target" / "fmu" / "formation"))
SECONDS = 70
STEPS = SECONDS * 125
JOIN = 30.0  # s: the wingman starts 110 m behind and 80 m right of its slot
SLOT_BOUND = 45.0  # m, after the join
SEPARATION = 30.0  # m, at every step after the first


def fly(role, out, lag, device=None):
    args = [sys.executable, str(FLY), role, "--fmus", str(FMUS), "--lag", str(lag),
            "--steps", str(STEPS), "--out", str(out)]
    if device:
        args += ["--device", device]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(process):
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output[-3000:]


@pytest.fixture(scope="module", params=[0, 2], ids=["lag0", "lag2"])
def flight(request, tmp_path_factory):
    """The two simulators flown once per lag, and the reference runs."""
    lag = request.param
    tmp = tmp_path_factory.mktemp(f"formation-lag{lag}")
    name = f"formation-{uuid.uuid4().hex[:8]}"
    try:
        leader = fly("leader", tmp / "leader.json", lag, f"shm:{name}")
        wingman = fly("wingman", tmp / "wingman.json", lag, f"shm:{name}")
        finish(leader)
        finish(wingman)
    finally:
        Path(f"/dev/shm/{name}").unlink(missing_ok=True)
    runs = {"lag": lag}
    for role in ["leader", "wingman"]:
        runs[role] = json.loads((tmp / f"{role}.json").read_text())
    for key, reference_lag in [("reference", lag), ("wrong", lag + 1)]:
        p = fly("reference", tmp / f"{key}.json", reference_lag)
        finish(p)
        runs[key] = json.loads((tmp / f"{key}.json").read_text())
    return runs


def test_every_leader_value_the_wingman_received_is_the_leaders_by_the_rule(flight):
    lag = flight["lag"]
    leader, wingman = flight["leader"], flight["wingman"]
    sent = [e["sent"] for e in leader["steps"]]
    steps = wingman["steps"]
    assert len(steps) == STEPS
    for before, after in zip(steps, steps[1:]):
        k = before["k"]
        assert before["peer_step"] == (k - lag if k >= lag else -1), before
        # What the coupling FMU output after step k, read before step k + 1.
        j = before["peer_step"]
        expected = sent[j] if j >= 0 else leader["first"]
        assert after["received"] == expected, f"after step {k}: leader step {j}"
    # Every value compared, bit for bit: floats survive JSON exactly.
    assert all(isinstance(v, float) for v in steps[-1]["received"].values())


def test_the_wingman_flies_the_reference_trajectory_bit_for_bit(flight):
    coupled = [e["own"] for e in flight["wingman"]["steps"]]
    reference = [e["own"] for e in flight["reference"]["steps"]]
    assert len(coupled) == len(reference) == STEPS
    first = next((k for k, (a, b) in enumerate(zip(coupled, reference)) if a != b), None)
    assert first is None, f"the wingman left the reference at step {first}"


def test_a_reference_with_the_wrong_lag_is_another_trajectory(flight):
    coupled = [e["own"] for e in flight["wingman"]["steps"]]
    wrong = [e["own"] for e in flight["wrong"]["steps"]]
    assert coupled != wrong


def test_the_wingman_holds_its_slot_after_the_join(flight):
    steps = flight["wingman"]["steps"]
    worst = max(e["own"]["slot_error"] for e in steps if e["k"] * 0.008 >= JOIN)
    closest = min(e["own"]["separation"] for e in steps[1:])
    assert worst < SLOT_BOUND, worst
    assert closest > SEPARATION, closest


STATE = ["latitude", "longitude", "altitude", "roll", "pitch", "heading",
         "u", "v", "w", "p", "q", "r", "airspeed"]
# What each simulator's run logs: its aircraft, and what the wingman receives.
LOGGED = {
    "leader": [f"aircraft.{n}" for n in STATE],
    "wingman": [f"aircraft.{n}" for n in STATE] + [f"wingman.leader.{n}" for n in STATE]
    + ["wingman.leader.step", "keeper.slot_error"],
}


def cosim(engine, node, out, lag=None, device=None):
    args = [sys.executable, str(COSIM), engine, str(FMUS / f"{node}.ssp"), "--steps",
            str(STEPS), "--step", "0.008", "--out", str(out), "--log", *LOGGED[node]]
    if lag is not None:
        args += ["--lag", str(lag)]
    if device:
        args += ["--device", device]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.fixture(scope="module", params=[("libcosim", 0), ("libcosim", 2), ("ecos", 0)],
                ids=["libcosim-lag0", "libcosim-lag2", "ecos-lag0"])
def from_ssp(request, tmp_path_factory):
    """Both simulators from their SSPs, in two processes of one master."""
    engine, lag = request.param
    tmp = tmp_path_factory.mktemp(f"formation-{engine}-lag{lag}")
    # ecos takes the device from the SSP's parameter set: shm:formation.
    name = "formation" if engine == "ecos" else f"formation-{uuid.uuid4().hex[:8]}"
    set_lag = None if engine == "ecos" else lag
    device = None if engine == "ecos" else f"shm:{name}"
    try:
        leader = cosim(engine, "leader", tmp / "leader.json", set_lag, device)
        wingman = cosim(engine, "wingman", tmp / "wingman.json", set_lag, device)
        finish(leader)
        finish(wingman)
    finally:
        Path(f"/dev/shm/{name}").unlink(missing_ok=True)
    runs = {"engine": engine, "lag": lag}
    for node in ["leader", "wingman"]:
        steps = json.loads((tmp / f"{node}.json").read_text())["steps"]
        runs[node] = [{"k": e["k"], "aircraft": {n: e[f"aircraft.{n}"] for n in STATE},
                       "received": {n: e.get(f"wingman.leader.{n}") for n in STATE},
                       "peer_step": e.get("wingman.leader.step"),
                       "slot_error": e.get("keeper.slot_error")} for e in steps]
    return runs


def test_from_the_ssps_every_leader_value_received_is_the_leader_aircrafts_by_the_rule(
        from_ssp):
    """After step k the wingman holds the leader's frame of step j = k - lag,
    which the master's connection filled with the leader aircraft's output
    after its step j - 1. (Frame 0 carries its state at initialization, and
    the frame of step -1, before it, what the master set in initialization
    mode: both are the master's, and not compared here.)"""
    lag, leader, wingman = from_ssp["lag"], from_ssp["leader"], from_ssp["wingman"]
    assert len(wingman) == len(leader) == STEPS
    compared = 0
    for e in wingman:
        k, j = e["k"], e["peer_step"]
        assert j == (k - lag if k >= lag else -1), e
        if j >= 1:
            assert e["received"] == leader[j - 1]["aircraft"], f"after step {k}: leader step {j}"
            compared += 1
    assert compared == STEPS - lag - 1


def test_from_the_ssps_the_wingman_holds_its_slot(from_ssp):
    steps = from_ssp["wingman"]
    worst = max(e["slot_error"] for e in steps if e["k"] * 0.008 >= JOIN)
    assert worst < SLOT_BOUND, worst


def test_ecos_from_the_ssps_flies_the_fmpy_reference_bit_for_bit(from_ssp, tmp_path):
    if from_ssp["engine"] != "ecos":
        pytest.skip("libcosim's worker threads round one roll rate otherwise (see above)")
    p = fly("reference", tmp_path / "reference.json", from_ssp["lag"])
    finish(p)
    reference = json.loads((tmp_path / "reference.json").read_text())["steps"]
    ours = [e["aircraft"] for e in from_ssp["wingman"]]
    theirs = [{n: e["own"][n] for n in STATE} for e in reference]
    first = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
    assert first is None, f"ecos's wingman left the reference at step {first}"


def build_system(tmp_path, text):
    """build-fmu --system on `text`, its FMUs those scripts/formation.sh built."""
    system = tmp_path / "system.toml"
    system.write_text(text)
    return subprocess.run(
        [str(ROOT / "target" / "release" / "build-fmu"), "--interface",
         str(ROOT / "examples" / "formation.toml"), "--system", str(system), "--from",
         str(ROOT / "target" / "fmu" / "rfm_attitude.fmu"), "--out", str(FMUS), "--ssp",
         str(tmp_path / "out.ssp")], capture_output=True, text=True, timeout=300)


def test_the_reference_system_file_packs_and_a_wrong_name_is_refused_naming_it(tmp_path):
    """The Reference's system file, as written, packs an SSP with its three
    connections; misspelt, wired backwards or doubled, it is refused naming
    what is wrong, and nothing is written."""
    text = book.snippet("reference/system-file.md", "system-file")
    run = build_system(tmp_path, text)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "node `wingman` and 2 component(s), 3 connection(s)" in run.stderr
    (tmp_path / "out.ssp").unlink()
    wrong = [
        (text.replace("keeper.leader_heading", "keeper.leader_headng"),
         "`keeper` has no variable `leader_headng`"),
        (text.replace('["keeper.heading_cmd", "aircraft.heading_cmd"]',
                      '["aircraft.heading_cmd", "keeper.heading_cmd"]'),
         "connection end `aircraft.heading_cmd` is an input"),
        (text.replace('["aircraft.latitude", "wingman.latitude"],',
                      '["aircraft.latitude", "wingman.latitude"],\n'
                      '  ["aircraft.longitude", "wingman.latitude"],'),
         "two connections into `wingman.latitude`"),
        (text.replace("heading0 = 0.0", "heading0 = \"north\""),
         "parameter `aircraft.heading0`"),
        (text.replace("latitude0", "latitude_0"), "has no variable `latitude_0`"),
    ]
    for broken, named in wrong:
        run = build_system(tmp_path, broken)
        assert run.returncode != 0 and named in run.stderr, (named, run.stderr[-2000:])
        assert not (tmp_path / "out.ssp").exists()


def test_the_reference_system_file_packs_an_fmi3_node_beside_fmi2_components(tmp_path):
    """`build-fmu --fmi 3 --system`: the wingman's FMI 3.0 FMU beside the FMI
    2.0 flight model and slot keeper, its Float64s connected to their Reals
    (SSP 1.0's `Real` connectors); the SSD validates. In a copy of the
    formation's FMUs: the others here load the FMI 2.0 wingman."""
    import shutil
    import zipfile

    import xmlschema
    from fmpy import read_model_description
    from pyssp_standard.standard import ModelicaStandard

    fmus = tmp_path / "fmus"
    shutil.copytree(FMUS, fmus)
    system = tmp_path / "system.toml"
    system.write_text(book.snippet("reference/system-file.md", "system-file"))
    run = subprocess.run(
        [str(ROOT / "target" / "release" / "build-fmu"), "--fmi", "3", "--interface",
         str(ROOT / "examples" / "formation.toml"), "--system", str(system), "--from",
         str(ROOT / "target" / "fmu" / "rfm_attitude.fmu"), "--out", str(fmus), "--ssp",
         str(tmp_path / "out.ssp")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "node `wingman` and 2 component(s), 3 connection(s)" in run.stderr
    with zipfile.ZipFile(tmp_path / "out.ssp") as z:
        z.extractall(tmp_path / "ssp")
    ssd = tmp_path / "ssp" / "SystemStructure.ssd"
    xmlschema.validate(ssd, xmlschema.XMLSchema10(ModelicaStandard.schemas["ssd"]))
    versions = {f.name: read_model_description(str(f)).fmiVersion
                for f in (tmp_path / "ssp" / "resources").glob("*.fmu")}
    assert versions == {"formation_wingman.fmu": "3.0", "Aircraft.fmu": "2.0",
                        "SlotKeeper.fmu": "2.0"}, versions
    assert "Float64" not in ssd.read_text()


@pytest.mark.parametrize("node", ["leader", "wingman"])
def test_each_simulators_ssp_validates_against_the_ssp_schemas(node, tmp_path):
    import zipfile

    import xmlschema
    from pyssp_standard.standard import ModelicaStandard

    schemas = ModelicaStandard.schemas
    with zipfile.ZipFile(FMUS / f"{node}.ssp") as z:
        z.extractall(tmp_path)
    xmlschema.validate(tmp_path / "SystemStructure.ssd", xmlschema.XMLSchema10(schemas["ssd"]))
    sets = sorted((tmp_path / "resources").glob("*.ssv"))
    assert [s.name for s in sets] == sorted([f"{node}.ssv", "aircraft.ssv"]), sets
    for ssv in sets:
        xmlschema.validate(ssv, xmlschema.XMLSchema10(schemas["ssv"]))


@pytest.mark.parametrize("aileron", [0.3, -0.3])
def test_without_its_autopilot_the_aircraft_is_flown_by_its_controls(aileron):
    """`autopilot = false`: the stick flies it (two seconds of aileron roll
    it past 10 degrees, to the side the stick says; the propeller's torque
    makes the left roll the slower)."""
    import math

    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    path = str(FMUS / "Aircraft.fmu")
    md = read_model_description(path)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    s = FMU2Slave(guid=md.guid, unzipDirectory=extract(path),
                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName="stick")
    s.instantiate()
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.setBoolean([vr["autopilot"]], [False])
    s.exitInitializationMode()
    s.setReal([vr["aileron"]], [aileron])
    for k in range(250):
        s.doStep(currentCommunicationPoint=k * 0.008, communicationStepSize=0.008)
    roll = math.degrees(s.getReal([vr["roll"]])[0])
    s.terminate()
    s.freeInstance()
    assert math.copysign(1, roll) == math.copysign(1, aileron) and abs(roll) > 10, roll
