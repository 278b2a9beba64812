"""The FMI 3.0 face (`build-fmu --fmi 3`) in FMPy 0.3.32's FMI 3.0 API, a
master nobody here wrote: the description it validates, two FMI 3.0
instances exchanging exactly, and an FMI 3.0 node coupled in lockstep with an
FMI 2.0 node of the same binary's FMI 2.0 FMU.

RFM_FMU3 names the FMI 3.0 .fmu (default target/fmu/fmi3/rfm_attitude.fmu,
which scripts/test.sh writes with `build-fmu --fmi 3 --from` the FMI 2.0 one);
RFM_FMU the FMI 2.0 one.
"""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi3 import FMU3Slave

ROOT = Path(__file__).resolve().parents[2]
FMU3 = Path(os.environ.get("RFM_FMU3", ROOT / "target" / "fmu" / "fmi3" / "rfm_attitude.fmu"))
FMU2 = Path(os.environ.get("RFM_FMU", ROOT / "target" / "fmu" / "rfm_attitude.fmu"))
FMPY = Path(sys.executable).with_name("fmpy")


def unpacked(path):
    assert path.is_file(), f"{path} is missing: run build-fmu (with --fmi 3 for FMI 3.0) first"
    md = read_model_description(str(path), validate=True)
    return md, extract(str(path)), {v.name: v.valueReference for v in md.modelVariables}


@pytest.fixture(scope="module")
def fmu3():
    return unpacked(FMU3)


@pytest.fixture(scope="module")
def fmu2():
    return unpacked(FMU2)


def test_fmpy_validates_the_fmi3_fmu_and_finds_no_problems():
    out = subprocess.run([str(FMPY), "validate", str(FMU3)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "No problems found." in out.stdout
    md = read_model_description(str(FMU3))
    assert md.fmiVersion == "3.0"
    kinds = {v.name: v.type for v in md.modelVariables}
    assert (kinds["roll"], kinds["lag"], kinds["link.ok"], kinds["device"]) == (
        "Float64", "Int32", "Boolean", "String")
    assert [v.name for v in md.modelVariables if v.causality == "independent"] == ["time"]


def ramp(node, k):
    """What node `node` feeds in at step k (k = -1: its initial values)."""
    return [k * 1e-3 + node, -k * 1e-3, (k % 1000) * 0.01 + node * 0.5]


class Node:
    """One instance of either face, with the calls the test makes named alike."""

    def __init__(self, fmu, name, fmi3, early=False, log=None):
        md, unzipdir, self.vr = fmu
        self.fmi3 = fmi3
        if fmi3:
            self.s = FMU3Slave(guid=md.instantiationToken, unzipDirectory=unzipdir,
                               modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
            keep = None if log is None else lambda *a: log.append(a[-1].decode())
            self.s.instantiate(loggingOn=log is not None, earlyReturnAllowed=early,
                               logMessage=keep)
        else:
            self.s = FMU2Slave(guid=md.guid, unzipDirectory=unzipdir,
                               modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
            self.s.instantiate()

    def real(self, names, values=None):
        refs = [self.vr[n] for n in names]
        if values is None:
            return (self.s.getFloat64 if self.fmi3 else self.s.getReal)(refs)
        (self.s.setFloat64 if self.fmi3 else self.s.setReal)(refs, values)

    def integer(self, names, values=None):
        refs = [self.vr[n] for n in names]
        if values is None:
            return (self.s.getInt32 if self.fmi3 else self.s.getInteger)(refs)
        (self.s.setInt32 if self.fmi3 else self.s.setInteger)(refs, values)

    def start(self, device, me, lag):
        self.s.setString([self.vr["device"]], [device])
        self.integer(["nodeSlot", "peerSlot", "lag"], [me, 1 - me, lag])
        self.real(["startupTimeout", "timeout"], [20.0, 20.0])
        self.real(ATT, ramp(me, -1))
        if self.fmi3:
            self.s.enterInitializationMode(startTime=0.0)
        else:
            self.s.setupExperiment(startTime=0.0)
            self.s.enterInitializationMode()

    def step(self, t, h):
        if self.fmi3:
            event, terminate, early, reached = self.s.doStep(t, h)
            assert (event, terminate, early) == (False, False, False)
            assert reached == pytest.approx(t + h)
        else:
            self.s.doStep(currentCommunicationPoint=t, communicationStepSize=h)

    def ok(self):
        return self.s.getBoolean([self.vr["link.ok"]]) == [True]


ATT = ["roll", "pitch", "yaw"]
PEER = ["peer.roll", "peer.pitch", "peer.yaw"]


def couple(nodes, lag, steps=2000):
    """Starts `nodes` (slots 0 and 1) on one loopback memory and checks every
    step's peer values by the rule at `lag`."""
    device = f"loopback:fmi3-{uuid.uuid4().hex[:8]}"
    for me, n in enumerate(nodes):
        n.start(device, me, lag)
    for n in nodes:
        n.s.exitInitializationMode()
    h = 1e-3
    for k in range(steps):
        for me, n in enumerate(nodes):
            n.real(ATT, ramp(me, k))
            n.step(k * h, h)
        for me, n in enumerate(nodes):
            assert n.real(PEER) == ramp(1 - me, k - lag), f"node {me} step {k}"
            assert n.integer(["peer.step"]) == [k - lag]
            assert n.ok()
    for n in nodes:
        n.s.terminate()
        n.s.freeInstance()


def test_two_fmi3_instances_exchange_exactly_with_lag_one(fmu3):
    couple([Node(fmu3, "node0", True), Node(fmu3, "node1", True)], lag=1)


def test_an_fmi3_node_and_an_fmi2_node_couple_in_lockstep(fmu3, fmu2):
    # One thread steps both: at lag 1 each step's frame of the other is there
    # (at lag 0 each would wait for the other's step).
    couple([Node(fmu3, "fmi3", True), Node(fmu2, "fmi2", False)], lag=1)


def test_time_is_the_independent_variable(fmu3):
    n = Node(fmu3, "alone", True)
    n.start(f"loopback:fmi3-{uuid.uuid4().hex[:8]}", 0, 0)
    n.integer(["peerSlot"], [0])
    n.s.exitInitializationMode()
    for k in range(3):
        n.step(k * 0.5, 0.5)
    assert n.s.getFloat64([n.vr["time"]]) == [1.5]
    n.s.terminate()
    n.s.freeInstance()


def stalled_pair(fmu3, early, log, idle_timeout=20.0):
    """Node 0 (FMI 3.0, early return allowed or not) and node 1 at lag 1 on
    one loopback memory, stepped alike for 50 steps by the rule; node 0 then
    at step 50, which takes node 1's step 49. Node 1 stalls from there: its
    master steps it no more, its heartbeat beats on (late, not dead)."""
    nodes = [Node(fmu3, "early", True, early=early, log=log), Node(fmu3, "stalled", True)]
    device = f"loopback:fmi3-{uuid.uuid4().hex[:8]}"
    for me, n in enumerate(nodes):
        n.start(device, me, 1)
    nodes[0].real(["idleTimeout"], [idle_timeout])
    for n in nodes:
        n.s.exitInitializationMode()
    for k in range(50):
        for me, n in enumerate(nodes):
            n.real(ATT, ramp(me, k))
            n.step(k * H, H)
            assert n.real(PEER) == ramp(1 - me, k - 1)
    nodes[0].real(ATT, ramp(0, 50))
    nodes[0].step(50 * H, H)
    return nodes


H = 1e-3


def test_a_step_waiting_for_a_stalled_peer_returns_early_and_the_next_goes_on_by_the_rule(fmu3):
    """Node 0's step 51 needs node 1's step 50, which its stalled master has
    not taken: with earlyReturnAllowed each fmi3DoStep of it returns early
    after 0.1 s, at the time it started (nothing reached), saying why; once
    node 1 steps again (3 s later), the next fmi3DoStep from the same time
    ends the step with node 1's step 50, by the rule, and the pair steps on."""
    log = []
    n0, n1 = stalled_pair(fmu3, early=True, log=log)
    n0.real(ATT, ramp(0, 51))
    t = 51 * H
    start, returns = time.monotonic(), 0
    while time.monotonic() - start < 3.0:
        event, terminate, early, reached = n0.s.doStep(t, H)
        assert (event, terminate, early, reached) == (False, False, True, t)
        returns += 1
    stalled = time.monotonic() - start
    assert 3.0 / 0.1 * 0.5 <= returns <= stalled / 0.1 + 1, returns
    said = [m for m in log if "returns early" in m]
    assert len(said) == returns, log[-3:]
    assert f"step 51 has waited 0.1 s in this call for frame 51 (its step 50) of node `" in said[0]
    assert "(slot 1)" in said[0] and f"the next fmi3DoStep from t = {t} goes on waiting" in said[0]
    assert n0.ok() and n0.integer(["peer.step"]) == [49]
    # Node 1 steps again: node 0's next call ends its step 51 by the rule.
    n1.real(ATT, ramp(1, 50))
    n1.step(50 * H, H)
    n0.step(t, H)
    assert n0.real(PEER) == ramp(1, 50) and n0.integer(["peer.step"]) == [50]
    for k in range(51, 100):
        for me, n in enumerate((n0, n1)):
            if (me, k) != (0, 51):
                n.real(ATT, ramp(me, k))
                n.step(k * H, H)
            assert n.real(PEER) == ramp(1 - me, k - 1), (me, k)
            assert n.ok()
    for n in (n0, n1):
        n.s.terminate()
        n.s.freeInstance()


def test_without_early_return_a_step_waits_for_a_stalled_peer_until_its_timeout(fmu3):
    """The same stall, earlyReturnAllowed false: today's behaviour, one call
    that waits for the late peer up to idleTimeout (1 s here) and fails
    saying so."""
    log = []
    n0, n1 = stalled_pair(fmu3, early=False, log=log, idle_timeout=1.0)
    start = time.monotonic()
    with pytest.raises(FMICallException):
        n0.s.doStep(51 * H, H)
    assert time.monotonic() - start >= 1.0
    assert not any("returns early" in m for m in log)
    assert any("fmi3DoStep" in m and "slot 1" in m for m in log), log[-3:]
    for n in (n0, n1):
        n.s.freeInstance()
