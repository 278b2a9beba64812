"""The formation lab (issue 48) in FMPy: two JSBSim aircraft FMUs, each in its
own simulator process with its autopilot FMU and its node's coupling FMU,
coupled over shm:, the wiring done by examples/formation/fly.py.

- Every leader value the wingman's coupling FMU outputs, at every step, is
  bit for bit what the leader sent at the step the rule names (after step k,
  the leader's frame of step k - lag; its initialization frame before that).
- The wingman's trajectory is bit for bit a reference run of both aircraft
  in one process without any coupling FMU, the wingman handed the leader
  state the rule names (JSBSim is deterministic: any wrong, late or torn
  value shows); a reference with the wrong lag is not.
- The formation is held: after the join the slot error stays under
  SLOT_BOUND, and the aircraft never come closer than SEPARATION.

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

ROOT = Path(__file__).resolve().parents[2]
FLY = ROOT / "examples" / "formation" / "fly.py"
FMUS = Path(os.environ.get("RFM_FORMATION_FMUS", ROOT / "target" / "fmu" / "formation"))
SECONDS = 70
STEPS = SECONDS * 120
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
    worst = max(e["own"]["slot_error"] for e in steps if e["k"] / 120 >= JOIN)
    closest = min(e["own"]["separation"] for e in steps[1:])
    assert worst < SLOT_BOUND, worst
    assert closest > SEPARATION, closest
