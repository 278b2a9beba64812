"""A lab's struct through the FMI 3.0 face, exact: lab_writer.c (a C program
on its own board of an emulated RFM2g ring, the vendor's ABI) writes
lab_struct.h big-endian, a uint64 past 2^53, floats and a uint8 array among
its fields; an FMI 3.0 FMU of tests/interfaces/lab_exact.toml in FMPy reads
every field with its own type's getter (`motion.count` a UInt64,
`motion.f` a Float32 array, `motion.flags` a UInt8 array of five), compares
each bit for bit with what the program wrote, writes the values back into
`echo` with the setters, and the test compares the bytes in memory with C's.
The FMI 2.0 FMU of the same file reads the same struct with Reals and counts
what they round (`motion.link.inexact`).

Needs target/release/{build-fmu,rfmctl,librfm2g.so} and
target/fmu/rfm_attitude.fmu (scripts/test.sh's package step builds them).
"""

import ctypes
import os
import struct
import subprocess
import time
from pathlib import Path

import pytest
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Slave

from lab_program import LIB, RELEASE, lab_values, lab_writer, write_of

ROOT = Path(__file__).resolve().parents[2]
INTERFACE = ROOT / "tests" / "interfaces" / "lab_exact.toml"
ECHO_OFFSET = 12288

# Each field of `motion` by the FMI 3.0 getter of its C type (FMPy's name).
TYPED = {
    "i8": "Int8", "i16": "Int16", "i32": "Int32", "i64": "Int64", "u8": "UInt8",
    "u16": "UInt16", "u32": "UInt32", "u64": "UInt64", "f": "Float32", "d": "Float64",
    "on": "Boolean", "name": "String", "count": "UInt64", "flags": "UInt8",
}
ARRAYS = {"u16": 3, "f": 2, "d": 3, "flags": 5}


class Echo(ctypes.BigEndianStructure):
    """tests/interfaces/lab_exact.toml's `echo`, as a C compiler lays it out."""
    _fields_ = [
        ("i64", ctypes.c_int64), ("u64", ctypes.c_uint64), ("count", ctypes.c_uint64),
        ("u32", ctypes.c_uint32), ("f", ctypes.c_float * 2), ("d", ctypes.c_double * 3),
        ("u16", ctypes.c_uint16 * 3), ("i8", ctypes.c_int8), ("flags", ctypes.c_uint8 * 5),
        ("name", ctypes.c_char * 7),
    ]


def build(tmp_path, fmi):
    out = tmp_path / f"exact_sim_fmi{fmi}.fmu"
    subprocess.run(
        [RELEASE / "build-fmu", "--fmi", str(fmi), "--interface", INTERFACE, "--node", "sim",
         "--from", ROOT / "target/fmu/rfm_attitude.fmu", "--out", out],
        check=True, capture_output=True)
    md = read_model_description(str(out), validate=True)
    return md, extract(str(out)), {v.name: v for v in md.modelVariables}


def bits(value, getter):
    """`value` as the bytes of its C type, for a comparison bit for bit."""
    code = {"Float32": "<f", "Float64": "<d", "Int64": "<q", "UInt64": "<Q"}.get(getter)
    return struct.pack(code, value) if code else value


def memory(device, offset, length):
    out = subprocess.run([RELEASE / "rfmctl", "--library", LIB, "dump", device, str(offset),
                          str(length)], check=True, capture_output=True, text=True).stdout
    return bytes.fromhex("".join(line[10:58] for line in out.splitlines()))


@pytest.fixture
def ring(tmp_path):
    tag = f"fmi3-exact-{os.getpid()}"
    writer = subprocess.Popen(
        [lab_writer(tmp_path), f"/dev/rfm2g-sim/{tag}/7/1M", "counter"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    yield tag, writer
    writer.kill()
    writer.wait()
    for path in Path("/dev/shm").glob(f"rfm2g-sim.{tag}*"):
        path.unlink(missing_ok=True)


def started(slave, vrs, device):
    """`slave` instantiated on `device`, a board of the emulated ring."""
    slave.instantiate()
    slave.setString([vrs["device"].valueReference, vrs["rfm2gLibrary"].valueReference],
                    [device, str(LIB)])
    return slave


class Clock:
    """A master's communication points: each step from where the last ended."""

    def __init__(self, step):
        self.do, self.k = step, 0

    def step(self):
        self.do(self.k * 1e-3, 1e-3)
        self.k += 1


def read_whole_write(get, clock):
    """Steps until the struct read is a write of the program's (not the
    zeros before its first); that write's number and the values read."""
    for _ in range(5000):
        clock.step()
        got = get()
        n = write_of(got["i32"])
        if n is not None and n > 2:
            return n, got
        time.sleep(0.001)
    raise AssertionError("the program's struct never arrived")


def test_an_fmi3_fmu_reads_and_writes_a_lab_struct_exact_bit_for_bit(tmp_path, ring):
    tag, writer = ring
    md, unzipdir, v = build(tmp_path, 3)
    assert {name: v[f"motion.{name}"].type for name in TYPED} == TYPED
    assert {name: len(v[f"motion.{name}"].dimensions) for name in ARRAYS} == {
        name: 1 for name in ARRAYS}
    s = started(FMU3Slave(guid=md.instantiationToken, unzipDirectory=unzipdir,
                          modelIdentifier=md.coSimulation.modelIdentifier,
                          instanceName="exact"), v, f"/dev/rfm2g-sim/{tag}/0/1M")
    s.enterInitializationMode(startTime=0.0)
    s.exitInitializationMode()

    def get():
        out = {}
        for name, getter in TYPED.items():
            values = getattr(s, f"get{getter}")([v[f"motion.{name}"].valueReference],
                                                ARRAYS.get(name, 1))
            out[name] = values if name in ARRAYS else values[0]
        return out

    clock = Clock(lambda t, h: s.doStep(t, h))
    n, got = read_whole_write(get, clock)
    expected = lab_values(n)
    for name, getter in TYPED.items():
        if name in ARRAYS:
            assert [bits(x, getter) for x in got[name]] == [
                bits(x, getter) for x in expected[name]], (name, n)
        else:
            assert bits(got[name], getter) == bits(expected[name], getter), (name, n)
    assert got["count"] > 2**53 and got["count"] % 2 == 1

    # Written back, each by its own type's setter: the bytes in memory are C's.
    for name in [f for f, _ in Echo._fields_]:
        setter = getattr(s, f"set{TYPED[name]}")
        setter([v[f"echo.{name}"].valueReference],
               got[name] if name in ARRAYS else [got[name]])
    clock.step()
    c = Echo()
    for name in [f for f, _ in Echo._fields_]:
        value = expected[name]
        if name in ARRAYS:
            getattr(c, name)[:] = value
        else:
            setattr(c, name, value.encode() if name == "name" else value)
    written = memory(f"/dev/rfm2g-sim/{tag}/5/1M", ECHO_OFFSET, ctypes.sizeof(Echo))
    assert written == bytes(c), (written.hex(), bytes(c).hex())

    # The program stops when the FMU says so, having written past write n.
    s.setUInt32([v["control.stop"].valueReference], [1])
    clock.step()
    out, _ = writer.communicate(timeout=10)
    assert int(out) >= n
    s.terminate()
    s.freeInstance()


def test_the_same_struct_through_fmi2_counts_the_values_its_reals_round(tmp_path, ring):
    tag, writer = ring
    md, unzipdir, v = build(tmp_path, 2)
    assert v["motion.count"].type == "Real" and v["motion.f[0]"].type == "Real"
    s = FMU2Slave(guid=md.guid, unzipDirectory=unzipdir,
                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName="exact2")
    s.instantiate(callbacks=None, loggingOn=True)
    s.setString([v["device"].valueReference, v["rfm2gLibrary"].valueReference],
                [f"/dev/rfm2g-sim/{tag}/0/1M", str(LIB)])
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()

    def get():
        return {"i32": s.getInteger([v["motion.i32"].valueReference])[0],
                "count": s.getReal([v["motion.count"].valueReference])[0],
                "u64": s.getReal([v["motion.u64"].valueReference])[0]}

    clock = Clock(lambda t, h: s.doStep(currentCommunicationPoint=t, communicationStepSize=h))
    n, got = read_whole_write(get, clock)
    expected = lab_values(n)
    # 2^52 + n is a Real exactly; 2^60 + 2n + 1 is not: rounded, and counted.
    assert got["u64"] == expected["u64"]
    assert got["count"] != expected["count"] and got["count"] == float(expected["count"])
    assert s.getInteger([v["motion.link.inexact"].valueReference])[0] >= 1
    s.setReal([v["control.stop"].valueReference], [1.0])
    clock.step()
    writer.communicate(timeout=10)
    s.terminate()
    s.freeInstance()


def test_fmi3_accessors_take_each_variable_by_its_own_type_and_an_array_whole(tmp_path):
    md, unzipdir, v = build(tmp_path, 3)
    messages = []

    def fresh():
        """An instance in Initialization Mode (an error ends a setter's turn)."""
        s = FMU3Slave(guid=md.instantiationToken, unzipDirectory=unzipdir,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="types")
        s.instantiate(loggingOn=True, logMessage=lambda *a: messages.append(a[-1].decode()))
        s.enterInitializationMode(startTime=0.0)
        return s

    count, u16 = v["motion.count"].valueReference, v["motion.u16"].valueReference
    flags, i8 = v["echo.flags"].valueReference, v["echo.i8"].valueReference
    s = fresh()
    assert s.getUInt64([count]) == [0] and s.getUInt16([u16], 3) == [0, 0, 0]
    s.setUInt8([flags], [1, 2, 3, 4, 255])
    s.setInt8([i8], [-128])
    assert s.getUInt8([flags], 5) == [1, 2, 3, 4, 255] and s.getInt8([i8]) == [-128]
    s.freeInstance()
    refused = [
        (lambda s: s.getFloat64([count]), f"value reference {count} is `motion.count`, a UInt64"),
        (lambda s: s.getUInt16([u16], 1), "1 values passed for 1 value references, whose "
                                           "variables have 3"),
        (lambda s: s.getUInt16([u16 + 1], 1), f"value reference {u16 + 1} is `motion.u16[1]`, an "
                                               f"element of an array: FMI 3.0 sets and gets the "
                                               f"array whole, at value reference {u16}"),
        (lambda s: s.setUInt64([count], [1]), "`motion.count` is an output and cannot be set"),
        (lambda s: s.setUInt8([flags], [1, 2, 3, 4, 5, 6]), "6 values passed"),
        (lambda s: s.setFloat64([0x7FFFFFFF], [1.0]), "`time`, the independent variable"),
    ]
    for call, said in refused:
        s = fresh()
        with pytest.raises(FMICallException):
            call(s)
        assert any(said in m for m in messages), (said, messages[-1:])
        s.freeInstance()
