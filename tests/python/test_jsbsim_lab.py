"""The three-rate lab (examples/lab.toml) with a real cockpit (issue 48): the
cockpit's simulator flies a JSBSim aircraft at 1 kHz beside its coupling FMU,
the instructor station's simulator commands a wind at 3 s, the visual system
runs its coupling FMU alone; three libcosim processes, each from the SSP
`build-fmu --system` packs (examples/jsbsim-lab/), over shm:, 10 s.

- The wind reaches the cockpit's aircraft through the coupling by the rule:
  after cockpit step k it holds the instructor station's frame of step
  floor(k / 100), which carries the instructor's command after its step
  before; the master's connection hands it to the aircraft.
- It changes the flight: no drift east before it, tens of metres after.

Needs what `scripts/formation.sh build` writes (target/fmu/jsbsim-lab); run
by scripts/test.sh in the project's venv.
"""

import json
import math
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COSIM = ROOT / "examples" / "formation" / "cosim.py"
LAB = ROOT / "target" / "fmu" / "jsbsim-lab"
EARTH = 6371000.0
# Each simulator: its master's step (the SSP's base step), steps for 10 s, what it logs.
SIMULATORS = {
    "cockpit": (0.001, 10_000, ["aircraft.latitude", "aircraft.longitude", "aircraft.wind_speed",
                                "cockpit.ios.wind_speed", "cockpit.ios.step"]),
    "visual": (0.001, 10_000, ["visual.cockpit.step"]),
    "ios": (0.1, 100, ["instructor.wind_speed"]),
}
WIND_AT_STEP = 3000  # the cockpit's first step holding the ios frame of the wind (3 s)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jsbsim-lab")
    name = f"jsbsim-lab-{uuid.uuid4().hex[:8]}"
    processes = {}
    try:
        for node, (step, steps, logged) in SIMULATORS.items():
            processes[node] = subprocess.Popen(
                [sys.executable, str(COSIM), "libcosim", str(LAB / f"{node}.ssp"), "--steps",
                 str(steps), "--step", str(step), "--device", f"shm:{name}",
                 "--out", str(tmp / f"{node}.json"), "--log", *logged],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for node, p in processes.items():
            output, _ = p.communicate(timeout=300)
            assert p.returncode == 0, f"{node}: {output[-3000:]}"
    finally:
        for p in processes.values():
            if p.poll() is None:
                p.kill()
        Path(f"/dev/shm/{name}").unlink(missing_ok=True)
    return {node: json.loads((tmp / f"{node}.json").read_text())["steps"] for node in SIMULATORS}


def test_the_instructors_wind_reaches_the_cockpits_aircraft_by_the_rule(lab):
    cockpit, ios = lab["cockpit"], lab["ios"]
    assert len(cockpit) == 10_000 and len(ios) == 100
    for before, e in zip([None] + cockpit, cockpit):
        k, j = e["k"], e["cockpit.ios.step"]
        assert j == k // 100, e
        # The ios frame of step j: the instructor's command after its step j - 1.
        want = ios[j - 1]["instructor.wind_speed"] if j >= 1 else 0.0
        assert e["cockpit.ios.wind_speed"] == want, e
        # The cockpit's master hands it to the aircraft for the next step
        # (libcosim's observer sees the input as it was during step k).
        if before is not None:
            assert e["aircraft.wind_speed"] == before["cockpit.ios.wind_speed"], e
    assert cockpit[WIND_AT_STEP]["aircraft.wind_speed"] == 0.0
    assert cockpit[WIND_AT_STEP + 1]["aircraft.wind_speed"] == 15.0


def test_the_wind_from_the_instructor_station_changes_the_cockpits_flight(lab):
    cockpit = lab["cockpit"]
    lat0, lon0 = cockpit[0]["aircraft.latitude"], cockpit[0]["aircraft.longitude"]

    def east(e):
        return (e["aircraft.longitude"] - lon0) * EARTH * math.cos(lat0)

    before = max(abs(east(e)) for e in cockpit[:WIND_AT_STEP])
    after = east(cockpit[-1])
    assert before < 2.0, before
    assert after > 20.0, after


def test_the_visual_system_follows_the_cockpit_at_60_hz(lab):
    """Its master steps it by 1 ms; it takes its own steps where a 60th of
    a second falls, each holding the cockpit's frame the rule names."""
    steps = {e["visual.cockpit.step"] for e in lab["visual"]}
    assert max(steps) >= 9_900, max(steps)
