"""The packaged rfm_attitude.fmu in FMPy 0.3.32, a master nobody here wrote.

Run by scripts/test.sh after build-fmu: `pytest tests/python` in the project's venv.
RFM_FMU names the .fmu (default target/fmu/rfm_attitude.fmu).
"""

import csv
import os
import subprocess
import sys
import uuid
from pathlib import Path

import book

import pytest
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

ROOT = Path(__file__).resolve().parents[2]
FMU = Path(os.environ.get("RFM_FMU", ROOT / "target" / "fmu" / "rfm_attitude.fmu"))
FMPY = Path(sys.executable).with_name("fmpy")


@pytest.fixture(scope="module")
def fmu():
    assert FMU.is_file(), f"{FMU} is missing: run `cargo run --release -p build-fmu` first"
    md = read_model_description(str(FMU))
    return md, extract(str(FMU)), {v.name: v.valueReference for v in md.modelVariables}


def test_fmpy_validate_finds_no_problems():
    out = subprocess.run([str(FMPY), "validate", str(FMU)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "No problems found." in out.stdout


def slave(fmu, name):
    md, unzipdir, _ = fmu
    s = FMU2Slave(
        guid=md.guid,
        unzipDirectory=unzipdir,
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName=name,
    )
    s.instantiate()
    return s


def ramp(node, k):
    """What node `node` feeds in at step k (k = -1: its initial values)."""
    return [k * 1e-3 + node, -k * 1e-3, (k % 1000) * 0.01 + node * 0.5]


def test_two_instances_in_one_process_exchange_exactly_with_lag_one(fmu):
    _, _, vr = fmu
    device = f"loopback:fmpy-{uuid.uuid4().hex[:8]}"
    att = [vr["roll"], vr["pitch"], vr["yaw"]]
    peer = [vr["peer.roll"], vr["peer.pitch"], vr["peer.yaw"]]
    nodes = []
    for me in (0, 1):
        s = slave(fmu, f"node{me}")
        s.setString([vr["device"]], [device])
        s.setInteger([vr["nodeSlot"], vr["peerSlot"], vr["lag"]], [me, 1 - me, 1])
        s.setReal([vr["startupTimeout"], vr["timeout"]], [20.0, 20.0])
        s.setReal(att, ramp(me, -1))
        s.setupExperiment(startTime=0.0)
        s.enterInitializationMode()
        nodes.append(s)
    for s in nodes:
        s.exitInitializationMode()
    h = 1e-3
    for k in range(2000):
        for me, s in enumerate(nodes):
            s.setReal(att, ramp(me, k))
            s.doStep(currentCommunicationPoint=k * h, communicationStepSize=h)
        for me, s in enumerate(nodes):
            assert s.getReal(peer) == ramp(1 - me, k - 1), f"node {me} step {k}"
            assert s.getInteger([vr["peer.step"]]) == [k - 1]
            assert s.getBoolean([vr["link.ok"]]) == [True]
    for s in nodes:
        s.terminate()
        s.freeInstance()


def test_rfmctl_numbers_steps_as_the_fmus_peer_step_output(fmu, tmp_path):
    """rfmctl's `step` was one higher than the FMU's `peer.step` for the same
    frame (frame_count 5463 showed as step 5464): node 0 records a lag-1 run,
    and `rfmctl export --csv` gives every frame it took the step its
    `peer.step` output said after that doStep."""
    _, _, vr = fmu
    device = f"loopback:steps-{uuid.uuid4().hex[:8]}"
    record = tmp_path / "steps.rec"
    nodes = []
    for me in (0, 1):
        s = slave(fmu, f"node{me}")
        s.setString([vr["device"]], [device])
        s.setInteger([vr["nodeSlot"], vr["peerSlot"], vr["lag"]], [me, 1 - me, 1])
        if me == 0:
            s.setString([vr["recordFile"]], [str(record)])
        s.setupExperiment(startTime=0.0)
        s.enterInitializationMode()
        nodes.append(s)
    for s in nodes:
        s.exitInitializationMode()
    seen = []
    h = 1e-3
    for k in range(50):
        for s in nodes:
            s.doStep(currentCommunicationPoint=k * h, communicationStepSize=h)
        seen.append(nodes[0].getInteger([vr["peer.step"]])[0])
    for s in nodes:
        s.terminate()
        s.freeInstance()
    assert seen == [k - 1 for k in range(50)]
    rfmctl = ROOT / "target" / "release" / "rfmctl"
    out = subprocess.run([str(rfmctl), "export", str(record), "--csv"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    taken = [int(r["step"]) for r in csv.DictReader(out.stdout.splitlines()) if r["kind"] == "taken"]
    assert taken == seen


def test_fmpy_simulate_runs_a_self_loop(tmp_path):
    inputs = tmp_path / "in.csv"
    with inputs.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time", "roll", "pitch", "yaw"])
        for i in range(21):
            t = i * 0.1
            w.writerow([t, t, -t, 2 * t])
    out = tmp_path / "out.csv"
    run = subprocess.run(
        [
            str(FMPY), "simulate", str(FMU),
            "--interface-type", "CoSimulation",
            "--stop-time", "2", "--output-interval", "0.1",
            "--input-file", str(inputs),
            "--output-variables", "peer.roll", "peer.pitch", "peer.yaw", "link.ok",
            "--output-file", str(out),
            "--start-values", "device", f"loopback:sim-{uuid.uuid4().hex[:8]}", "peerSlot", "0",
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 21
    # The output at t + h is the input set at t: a self-loop echoes its own attitude.
    for prev, row in zip(rows, rows[1:]):
        t = float(prev["time"])
        assert float(row["peer.roll"]) == pytest.approx(t)
        assert float(row["peer.pitch"]) == pytest.approx(-t)
        assert float(row["peer.yaw"]) == pytest.approx(2 * t)
        assert row["link.ok"] in ("1", "True", "true")


def test_the_win64_dll_exports_the_34_fmi2_functions_and_the_75_of_fmi3(tmp_path):
    import re
    import shutil
    import zipfile

    with zipfile.ZipFile(FMU) as z:
        if "binaries/win64/rfm_attitude.dll" not in z.namelist():
            pytest.skip("built without win64 (build-fmu says why)")
        dll = tmp_path / "rfm_attitude.dll"
        dll.write_bytes(z.read("binaries/win64/rfm_attitude.dll"))
    objdump = shutil.which("x86_64-w64-mingw32-objdump") or shutil.which("objdump")
    out = subprocess.run([objdump, "-p", str(dll)], capture_output=True, text=True, check=True).stdout
    # The table runs to the next blank line; later sections (base relocations)
    # have "[address] DIR64" lines that would otherwise match.
    table = out.split("[Ordinal/Name Pointer] Table", 1)[1].split("\n\n", 1)[0]
    names = set(re.findall(r"\[\s*\d+\]\s+(\S+)", table))
    expected = {
        "fmi2GetTypesPlatform", "fmi2GetVersion", "fmi2SetDebugLogging", "fmi2Instantiate",
        "fmi2FreeInstance", "fmi2SetupExperiment", "fmi2EnterInitializationMode",
        "fmi2ExitInitializationMode", "fmi2Terminate", "fmi2Reset", "fmi2GetReal", "fmi2GetInteger",
        "fmi2GetBoolean", "fmi2GetString", "fmi2SetReal", "fmi2SetInteger", "fmi2SetBoolean",
        "fmi2SetString", "fmi2GetFMUstate", "fmi2SetFMUstate", "fmi2FreeFMUstate",
        "fmi2SerializedFMUstateSize", "fmi2SerializeFMUstate", "fmi2DeSerializeFMUstate",
        "fmi2GetDirectionalDerivative", "fmi2SetRealInputDerivatives", "fmi2GetRealOutputDerivatives",
        "fmi2DoStep", "fmi2CancelStep", "fmi2GetStatus", "fmi2GetRealStatus", "fmi2GetIntegerStatus",
        "fmi2GetBooleanStatus", "fmi2GetStringStatus",
    }
    # The binary's second face: every function of FMI 3.0 (build-fmu --fmi 3).
    types = ["Float32", "Float64", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32",
             "Int64", "UInt64", "Boolean", "String", "Binary", "Clock"]
    fmi3 = {f"fmi3{op}{t}" for op in ("Get", "Set") for t in types} | {
        "fmi3GetVersion", "fmi3SetDebugLogging", "fmi3InstantiateModelExchange",
        "fmi3InstantiateCoSimulation", "fmi3InstantiateScheduledExecution", "fmi3FreeInstance",
        "fmi3EnterInitializationMode", "fmi3ExitInitializationMode", "fmi3EnterEventMode",
        "fmi3Terminate", "fmi3Reset", "fmi3GetNumberOfVariableDependencies",
        "fmi3GetVariableDependencies", "fmi3GetFMUState", "fmi3SetFMUState", "fmi3FreeFMUState",
        "fmi3SerializedFMUStateSize", "fmi3SerializeFMUState", "fmi3DeserializeFMUState",
        "fmi3GetDirectionalDerivative", "fmi3GetAdjointDerivative", "fmi3EnterConfigurationMode",
        "fmi3ExitConfigurationMode", "fmi3GetIntervalDecimal", "fmi3GetIntervalFraction",
        "fmi3GetShiftDecimal", "fmi3GetShiftFraction", "fmi3SetIntervalDecimal",
        "fmi3SetIntervalFraction", "fmi3SetShiftDecimal", "fmi3SetShiftFraction",
        "fmi3EvaluateDiscreteStates", "fmi3UpdateDiscreteStates", "fmi3EnterContinuousTimeMode",
        "fmi3CompletedIntegratorStep", "fmi3SetTime", "fmi3SetContinuousStates",
        "fmi3GetContinuousStateDerivatives", "fmi3GetEventIndicators", "fmi3GetContinuousStates",
        "fmi3GetNominalsOfContinuousStates", "fmi3GetNumberOfEventIndicators",
        "fmi3GetNumberOfContinuousStates", "fmi3EnterStepMode", "fmi3GetOutputDerivatives",
        "fmi3DoStep", "fmi3ActivateModelPartition",
    }
    assert len(fmi3) == 75
    expected |= fmi3
    assert names == expected, f"missing {expected - names}, unexpected {names - expected}"


def readme_snippets():
    """The FMPy snippets of the book's attitude pair, verbatim."""
    page = "guide/attitude-pair.md"
    script = book.snippet(page, "fmpy-simulator")
    rest = book.after(page, "fmpy-simulator")
    expected = rest.split("It prints `", 1)[1].split("`", 1)[0]
    command = rest.split("e.g. `fmpy simulate", 1)[1].split("`", 1)[0]
    return script, expected, ["fmpy", "simulate"] + command.split()


def test_the_readmes_fmpy_snippets_run_as_written(tmp_path):
    """Tried as a new user would: the script in two processes, and the self-loop
    command. (The script once passed step_size, which FMPy ignores for
    co-simulation: the two simulators ran 625 steps of 16 ms.)"""
    script, expected, command = readme_snippets()
    (tmp_path / "simulator.py").write_text(script)
    (tmp_path / "rfm_attitude.fmu").write_bytes(FMU.read_bytes())
    try:
        runs = [
            subprocess.Popen(
                [sys.executable, "simulator.py", str(me)],
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for me in (0, 1)
        ]
        outs = [r.communicate(timeout=300) for r in runs]
    finally:
        Path("/dev/shm/cockpit").unlink(missing_ok=True)
    for me, (run, (out, err)) in enumerate(zip(runs, outs)):
        assert run.returncode == 0, out + err
        assert out.strip() == expected.replace("node 0", f"node {me}"), out + err
    command[0] = str(FMPY)
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


UNLOAD_CYCLES = r'''
import sys, uuid
from fmpy import simulate_fmu

def deleted_copies():
    with open("/proc/self/maps") as maps:
        return sum(1 for line in maps if "rfm_attitude" in line and "(deleted)" in line)

def rss_kib():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmRSS"))

def run():
    simulate_fmu(sys.argv[1], fmi_type="CoSimulation", stop_time=0.1, output_interval=0.01,
                 start_values={"device": f"loopback:unload-{uuid.uuid4().hex[:8]}", "peerSlot": 0})

for _ in range(3):
    run()
before = rss_kib()
for _ in range(20):
    run()
print(deleted_copies(), rss_kib() - before)
'''


def test_twenty_runs_of_fresh_copies_leave_no_copy_mapped(tmp_path):
    """FMPy's simulate_fmu unpacks a fresh copy per run, dlcloses it and deletes
    its folder. A spawned heartbeat thread once pinned each copy (std's spawn
    hooks register a thread-local destructor in the master's thread): twenty runs
    left eighty mappings of deleted copies, about 1.6 MB each run."""
    script = tmp_path / "cycles.py"
    script.write_text(UNLOAD_CYCLES)
    run = subprocess.run([sys.executable, str(script), str(FMU)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    mapped, growth_kib = map(int, run.stdout.split())
    assert mapped == 0, f"{mapped} mappings of deleted copies after twenty runs"
    # FMPy and the dynamic loader keep about 25 KiB a run themselves (measured
    # with instances only instantiated and freed); a pinned copy kept 1.6 MB.
    assert growth_kib < 20 * 100, f"the process grew {growth_kib} KiB in twenty runs"
