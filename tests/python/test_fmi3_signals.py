"""Signals declared of C types and as arrays (tests/interfaces/typed.toml),
through both faces: the FMI 3.0 FMU of a node has each signal of its own
type (`fcc.frame` a UInt64 past 2^53, `fcc.counters` a UInt64 array of
three, `fcc.g` a Float32, `fcc.flags` a UInt8 array of five, `fcc.mode` an
Int16), each array set and got in one call; its FMI 2.0 FMU has them as the
C types' table says (Reals and Integers, one variable per element), and
counts the 64-bit values its Reals round (`fcc.link.inexact`). An FMI 3.0
node couples with an FMI 2.0 node of the same file, every value by the rule.

Needs target/release/build-fmu and target/fmu/rfm_attitude.fmu (scripts/
test.sh's package step builds them).
"""

import struct
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import (FMU2Slave, calloc, fmi2CallbackAllocateMemoryTYPE,
                       fmi2CallbackFreeMemoryTYPE, fmi2CallbackFunctions,
                       fmi2CallbackLoggerTYPE, free)
from fmpy.fmi3 import FMU3Slave

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "target" / "release"
INTERFACE = ROOT / "tests" / "interfaces" / "typed.toml"
FMPY = Path(sys.executable).with_name("fmpy")
BIG = 1 << 60


def f32(x):
    """`x` as the nearest `float` (what a Float32 holds), back as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def fcc_values(k):
    """What the flight control computer publishes at step k (k = -1: before
    its first): 64-bit values past 2^53, one past i64's top."""
    k = max(k, 0)
    return {
        "frame": BIG + 2 * k + 1,
        "counters": [BIG + k, (1 << 63) + 3 * k + 1, k],
        "g": f32(9.80665 + k * 1e-3),
        "flags": [(k + i) % 256 for i in range(5)],
        "mode": k % 7 - 3,
        "pos": [k * 0.5, -k * 1.0, k * 1e-3],
        "tag": f"fcc{k % 1000}",
    }


def visual_values(k):
    k = max(k, 0)
    return {"ack": 4_000_000_000 + k, "ready": k % 2 == 1, "frame": -(1 << 53) - 4 * k}


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    out = tmp_path_factory.mktemp("typed")
    built = {}
    for fmi in (2, 3):
        subprocess.run(
            [RELEASE / "build-fmu", "--fmi", str(fmi), "--interface", INTERFACE, "--node", "all",
             "--from", ROOT / "target/fmu/rfm_attitude.fmu", "--out", out / f"fmi{fmi}",
             "--platform", "linux64"],
            check=True, capture_output=True)
        for node in ("fcc", "visual"):
            path = out / f"fmi{fmi}" / f"typed_{node}.fmu"
            md = read_model_description(str(path), validate=True)
            built[node, fmi] = (path, md, extract(str(path)),
                                {v.name: v for v in md.modelVariables})
    return built


def test_fmpy_validates_both_faces_and_each_signal_has_its_c_types_own_type(fmus):
    for (node, fmi), (path, *_) in fmus.items():
        out = subprocess.run([str(FMPY), "validate", str(path)], capture_output=True, text=True)
        assert out.returncode == 0 and "No problems found." in out.stdout, (node, fmi, out.stdout)
    v3 = fmus["visual", 3][3]
    typed = {name: (v.type, [d.start for d in v.dimensions]) for name, v in v3.items()
             if name.startswith("fcc.") and "link" not in name}
    assert typed == {
        "fcc.frame": ("UInt64", []), "fcc.counters": ("UInt64", [3]),
        "fcc.g": ("Float32", []), "fcc.flags": ("UInt8", [5]), "fcc.mode": ("Int16", []),
        "fcc.pos": ("Float64", [3]), "fcc.tag": ("String", []),
        "fcc.time": ("Float64", []), "fcc.step": ("Int32", []),
    }, typed
    assert (v3["ack"].type, v3["ready"].type, v3["frame"].type) == ("UInt32", "Boolean", "Int64")
    v2 = fmus["visual", 2][3]
    assert [v2[n].type for n in ("fcc.frame", "fcc.counters[2]", "fcc.g", "fcc.flags[4]",
                                 "fcc.mode", "fcc.pos[1]", "ack", "ready", "frame")] == [
        "Real", "Real", "Real", "Integer", "Integer", "Real", "Real", "Boolean", "Real"]
    assert v2["fcc.link.inexact"].type == "Integer"


class Node:
    """An instance of node `node`'s FMU of face `fmi`, with the sets and gets
    the test makes written once per face."""

    def __init__(self, fmus, node, fmi):
        _, md, unzipdir, self.v = fmus[node, fmi]
        self.fmi3 = fmi == 3
        Slave = FMU3Slave if self.fmi3 else FMU2Slave
        token = md.instantiationToken if self.fmi3 else md.guid
        self.s = Slave(guid=token, unzipDirectory=unzipdir,
                       modelIdentifier=md.coSimulation.modelIdentifier, instanceName=node)
        # What the FMU tells the master's logger.
        self.log = []
        if self.fmi3:
            self.s.instantiate(loggingOn=True,
                               logMessage=lambda *a: self.log.append(a[-1].decode()))
        else:
            callbacks = fmi2CallbackFunctions()
            callbacks.logger = fmi2CallbackLoggerTYPE(
                lambda *a: self.log.append(a[-1].decode()))
            callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
            callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
            self._callbacks = callbacks
            self.s.instantiate(callbacks=callbacks, loggingOn=True)

    def vr(self, name):
        return self.v[name].valueReference

    def get(self, name, getter2, n=None):
        """A variable's value (an array's list): FMI 3.0 by its own type's
        getter in one call; FMI 2.0 one element variable each."""
        if self.fmi3:
            values = getattr(self.s, "get" + self.v[name].type)([self.vr(name)], nValues=n or 1)
            return values if n else values[0]
        get = getattr(self.s, "get" + getter2)
        if n is None:
            return get([self.vr(name)])[0]
        return get([self.vr(f"{name}[{i}]") for i in range(n)])

    def set(self, name, value, setter2):
        values = value if isinstance(value, list) else [value]
        if self.fmi3:
            getattr(self.s, "set" + self.v[name].type)([self.vr(name)], values)
        elif isinstance(value, list):
            getattr(self.s, "set" + setter2)(
                [self.vr(f"{name}[{i}]") for i in range(len(values))], values)
        else:
            getattr(self.s, "set" + setter2)([self.vr(name)], values)

    def start(self, device, lag):
        self.s.setString([self.vr("device")], [device])
        self.set("lag", lag, "Integer")
        self.set("timeout", 20.0, "Real")
        if self.fmi3:
            self.s.enterInitializationMode(startTime=0.0)
        else:
            self.s.setupExperiment(startTime=0.0)
            self.s.enterInitializationMode()

    def step(self, t, h):
        if self.fmi3:
            assert self.s.doStep(t, h)[:3] == (False, False, False)
        else:
            self.s.doStep(currentCommunicationPoint=t, communicationStepSize=h)


def publish_fcc(n, k):
    want = fcc_values(k)
    wide = "UInt64" if n.fmi3 else "Real"
    n.set("frame", want["frame"] if n.fmi3 else float(want["frame"]), wide)
    if n.fmi3:
        n.set("counters", want["counters"], wide)
    n.set("g", want["g"], "Real")
    n.set("flags", want["flags"], "Integer")
    n.set("mode", want["mode"], "Integer")
    n.set("pos", want["pos"], "Real")
    n.s.setString([n.vr("tag")], [want["tag"]])


def publish_visual(n, k):
    want = visual_values(k)
    n.set("ack", want["ack"] if n.fmi3 else float(want["ack"]), "Real")
    n.set("ready", want["ready"], "Boolean")
    n.set("frame", want["frame"] if n.fmi3 else float(want["frame"]), "Real")


def text(s):
    """A String got: bytes from FMPy's FMI 2.0 getter, str from its FMI 3.0 one."""
    return s.decode() if isinstance(s, bytes) else s


def check_fcc_as_read_by(n, k, fcc_fmi3):
    """What node `n` reads of fcc, published at step k: exact in FMI 3.0
    (bit for bit: a Float32's bits, a UInt64's every digit), as the C types'
    table says in FMI 2.0 (a Real holds the 64-bit ones rounded). An FMI 2.0
    fcc publishes its frame as the Real it sets (rounded by Python's float,
    stored exactly)."""
    want = fcc_values(k)
    if not fcc_fmi3:
        want["frame"] = int(float(want["frame"]))
    got = {
        "frame": n.get("fcc.frame", "Real"),
        "g": n.get("fcc.g", "Real"),
        "flags": n.get("fcc.flags", "Integer", 5),
        "mode": n.get("fcc.mode", "Integer"),
        "pos": n.get("fcc.pos", "Real", 3),
        "tag": text(n.s.getString([n.vr("fcc.tag")])[0]),
    }
    if n.fmi3:
        got["counters"] = n.get("fcc.counters", "Real", 3)
        assert struct.pack("<f", got["g"]) == struct.pack("<f", want["g"]), (k, got["g"])
    else:
        want["frame"] = float(want["frame"])
    # Checked in `couple`: only an FMI 3.0 fcc sets its counters (one is past
    # i64's top, which FMI 2.0's Real cannot set exactly).
    del want["counters"]
    got.pop("counters", None)
    assert got == want, (k, got, want)


def couple(fcc, visual, steps=300):
    device = f"loopback:typed-{uuid.uuid4().hex[:8]}"
    for n in (fcc, visual):
        n.start(device, lag=1)
    publish_fcc(fcc, -1)
    publish_visual(visual, -1)
    for n in (fcc, visual):
        n.s.exitInitializationMode()
    h = 1e-3
    for k in range(steps):
        publish_fcc(fcc, k)
        publish_visual(visual, k)
        fcc.step(k * h, h)
        visual.step(k * h, h)
        check_fcc_as_read_by(visual, k - 1, fcc.fmi3)
        want = visual_values(k - 1)
        ack = fcc.get("visual.ack", "Real")
        frame = fcc.get("visual.frame", "Real")
        assert (ack, fcc.get("visual.ready", "Boolean"), frame) == (
            want["ack"], want["ready"], want["frame"]), k
        if fcc.fmi3:
            counters = visual.get("fcc.counters", "Real", 3)
            expected = fcc_values(k - 1)["counters"]
            assert counters == (expected if visual.fmi3 else [float(c) for c in expected]), k


def close(*nodes):
    for n in nodes:
        n.s.terminate()
        n.s.freeInstance()


def test_two_fmi3_nodes_exchange_every_c_type_and_array_exactly(fmus):
    fcc, visual = Node(fmus, "fcc", 3), Node(fmus, "visual", 3)
    couple(fcc, visual)
    close(fcc, visual)


def test_fmi3_and_fmi2_nodes_couple_and_fmi2_counts_the_64_bit_values_its_reals_round(fmus):
    fcc, visual = Node(fmus, "fcc", 3), Node(fmus, "visual", 2)
    couple(fcc, visual, steps=200)
    # Each step visual got fcc.frame and fcc.counters: the frame and the first
    # two counters are past 2^53 (from the first frame on), the third is not.
    inexact = visual.get("fcc.link.inexact", "Integer")
    assert inexact == 200 * 3, inexact
    # Said once in the master's log, naming the node and the count.
    said = [m for m in visual.log if "beyond 2^53" in m]
    assert len(said) == 1 and "`fcc.link.inexact`" in said[0], visual.log
    close(fcc, visual)


def test_an_fmi2_fcc_publishes_to_an_fmi3_visual(fmus):
    fcc, visual = Node(fmus, "fcc", 2), Node(fmus, "visual", 3)
    couple(fcc, visual, steps=200)
    close(fcc, visual)


@pytest.mark.parametrize("fmi", [2, 3])
def test_a_value_its_c_type_cannot_hold_is_refused_naming_the_signal(fmus, fmi):
    refused = [("mode", 5, "Integer", "expected -3..3")]
    if fmi == 2:
        refused += [
            ("flags[0]", 256, "Integer", "`flags[0]`"),
            ("frame", 0.5, "Real", "not a whole number"),
            ("frame", -1.0, "Real", "outside the range"),
            ("g", 1e40, "Real", "outside the range"),
        ]
    for name, value, setter, says in refused:
        # A refused set is an error: the instance takes no call after it.
        n = Node(fmus, "fcc", fmi)
        with pytest.raises(FMICallException):
            if fmi == 3:
                n.s.setInt16([n.vr(name)], [value])
            else:
                getattr(n.s, "set" + setter)([n.vr(name)], [value])
        assert any(f"`{name}`" in m and says in m for m in n.log), (name, n.log)
        n.s.freeInstance()
