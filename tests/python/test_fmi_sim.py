"""The FMI 3.0 FMUs (`build-fmu --fmi 3`) in fmi-sim 0.7, a third FMI 3.0
master nobody here wrote (crates.io's `fmi-sim`, the Rust counterpart of the
Reference FMUs' fmusim: one FMU a process, inputs from a CSV file, outputs to
one; scripts/setup.sh installs it). fmusim itself is published only as
GitHub release binaries, which this project's registries do not carry.

Each node is an fmi-sim process of its own on one `shm:` memory, in lockstep
at lag 0, as each PC of a lab runs its own master: the attitude pair, and the
three-rate lab (each node stepped by its own period). Every output row
(written after each fmi3DoStep) is checked by the rule on time against what
the peer's CSV fed it, exactly.

An input CSV holds each step's value constant from 0.1 µs before its time to
0.2 µs before the next: fmi-sim interpolates Reals linearly between rows and
adds its step to its time (0.009000000000000001), so the value a step gets
is exact however its time rounds. Every input is a Real: fmi-sim steps to
each change of a discrete one, which adds steps off a node's grid.
"""

import csv
import math
import os
import shutil
import subprocess
import uuid
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "target" / "release"
FMU3 = Path(os.environ.get("RFM_FMU3", ROOT / "target" / "fmu" / "fmi3" / "rfm_attitude.fmu"))
FMI_SIM = os.environ.get("FMI_SIM") or shutil.which("fmi-sim") or "fmi-sim"
EPS = 1e-7


def inputs(path, names, values, times):
    """A CSV of `names` holding values(k) from times[k] - EPS to
    times[k + 1] - 2 EPS."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time", *names])
        for k, t in enumerate(times[:-1]):
            row = values(k)
            w.writerow([max(float(t) - EPS, 0.0), *row])
            w.writerow([float(times[k + 1]) - 2 * EPS, *row])


def fmi_sim(fmu, device, step, stop, inputs_csv, out_csv, init=()):
    args = [FMI_SIM, "--model", str(fmu), "-i", str(inputs_csv), "-o", str(out_csv),
            "co-simulation", "--step", repr(step), "-f", repr(stop), "-n", "0",
            "--init-values", f"device={device}"]
    for value in init:
        args += ["--init-values", value]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finished(procs):
    for name, p in procs.items():
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"fmi-sim of {name}: {err[-2000:]}"


def rows(path):
    """The rows written after each doStep (the first row is the start's)."""
    with open(path) as f:
        return list(csv.DictReader(f))[1:]


def test_fmi_sim_is_the_version_the_setup_installs():
    out = subprocess.run([FMI_SIM, "--version"], capture_output=True, text=True)
    assert "fmi-sim 0.7.0" in out.stdout + out.stderr, out


def attitude(node, k):
    return [k * 0.25 + node, -k * 0.5, float(k % 7 + node)]


def test_fmi_sim_couples_the_attitude_pair_in_lockstep_by_the_rule(tmp_path):
    """Two fmi-sim processes, nodes 0 and 1 at lag 0 over shm:, 1,000 steps of
    1 ms: after each step k each shows the other's attitude of its step k."""
    name = f"fmi-sim-{uuid.uuid4().hex[:8]}"
    steps, h = 1000, 0.001
    times = [Fraction(k, 1000) for k in range(steps + 1)]
    procs = {}
    try:
        for me in (0, 1):
            inputs(tmp_path / f"in{me}.csv", ["roll", "pitch", "yaw"],
                   lambda k, me=me: attitude(me, k), times)
            procs[me] = fmi_sim(FMU3, f"shm:{name}", h, steps * h, tmp_path / f"in{me}.csv",
                                tmp_path / f"out{me}.csv",
                                [f"nodeSlot={me}", f"peerSlot={1 - me}", "lag=0"])
        finished(procs)
    finally:
        Path(f"/dev/shm/{name}").unlink(missing_ok=True)
    for me in (0, 1):
        got = rows(tmp_path / f"out{me}.csv")
        assert len(got) == steps, len(got)
        for k, row in enumerate(got):
            peer = [float(row[f"peer.{a}"]) for a in ("roll", "pitch", "yaw")]
            assert (int(row["peer.step"]), peer) == (k, attitude(1 - me, k)), (me, k, row)
            assert row["link.ok"] == "true", (me, k)


# The three-rate lab (examples/lab.toml): each node's period, the signal it
# publishes its own step index in, whom it waits for and whom it reads free.
# A Real signal each (the visual system gets one, `drawn`): fmi-sim steps to
# every change of a discrete input, which would add steps off a node's grid.
LAB = {
    "cockpit": (Fraction(1, 1000), "altitude", ["visual", "ios"], []),
    "visual": (Fraction(1, 60), "drawn", ["cockpit"], ["ios"]),
    "ios": (Fraction(1, 10), "wind_speed", ["cockpit", "visual"], []),
}
DRAWN = '  { name = "drawn", type = "Real", description = "its own step" },\n'


def lab_file(tmp_path):
    """examples/lab.toml with the visual system's Real signal `drawn`."""
    text = (ROOT / "examples" / "lab.toml").read_text()
    at = text.index('  { name = "frame_count"')
    path = tmp_path / "lab.toml"
    path.write_text(text[:at] + DRAWN + text[at:])
    return path


def test_fmi_sim_runs_the_three_rate_lab_a_process_a_node_by_the_rule(tmp_path):
    """Three fmi-sim processes, each stepping its node's FMI 3.0 FMU by the
    node's period for 1 s: after its step k a node holds each peer's step
    floor(k x its period / the peer's) (lag 0), a free peer's at most one
    step newer than that, and each peer's value is that step's index."""
    fmus = tmp_path / "fmus"
    subprocess.run([RELEASE / "build-fmu", "--fmi", "3", "--interface", lab_file(tmp_path),
                    "--node", "all", "--from", ROOT / "target/fmu/rfm_attitude.fmu",
                    "--out", fmus], check=True, capture_output=True)
    name = f"fmi-sim-lab-{uuid.uuid4().hex[:8]}"
    procs = {}
    try:
        for node, (period, signal, _, _) in LAB.items():
            n = int(1 / period)
            times = [k * period for k in range(n + 1)]
            inputs(tmp_path / f"{node}.csv", [signal], lambda k: [float(k)], times)
            procs[node] = fmi_sim(fmus / f"lab_{node}.fmu", f"shm:{name}", float(period), 1.0,
                                  tmp_path / f"{node}.csv", tmp_path / f"{node}.out.csv")
        finished(procs)
    finally:
        Path(f"/dev/shm/{name}").unlink(missing_ok=True)
    checked = 0
    for node, (period, _, waits, free) in LAB.items():
        got = rows(tmp_path / f"{node}.out.csv")
        assert len(got) == int(1 / period), (node, len(got))
        for k, row in enumerate(got):
            for peer in waits + free:
                p_period, p_signal = LAB[peer][0], LAB[peer][1]
                step = int(row[f"{peer}.step"])
                held = math.floor(k * period / p_period)
                where = (node, k, peer, step)
                if peer in waits:
                    assert step == held, where
                else:
                    assert -1 <= step <= held + 1, where
                value = float(row[f"{peer}.{p_signal}"])
                assert value == max(step, 0), where
                checked += 1
    assert checked == 1000 * 2 + 60 * 2 + 10 * 2
