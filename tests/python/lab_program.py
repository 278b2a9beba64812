"""A lab's own RFM program for the Python tests: fmu-src/tests/c/lab_writer.c,
compiled against the vendor's API (the emulator's library,
target/release/librfm2g.so), and the values of its write n
(fmu-src/tests/c/lab_struct.h's `lab_values`), as C computes them."""

import struct
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "target" / "release"
LIB = RELEASE / "librfm2g.so"


def lab_writer(tmp_path):
    """lab_writer built into `tmp_path`."""
    out = tmp_path / "lab_writer"
    subprocess.run(
        ["cc", "-O2", "-std=c11", "-Wall", "-Werror",
         "-I", ROOT / "rfm2g-sys/include", "-I", ROOT / "rfm2g-sim/c",
         "-I", ROOT / "fmu-src/tests/c", ROOT / "fmu-src/tests/c/lab_writer.c",
         "-L", RELEASE, "-lrfm2g", f"-Wl,-rpath,{RELEASE}", "-o", out], check=True)
    return out


def float32(x):
    """`x` rounded to a C `float`, as a Python float (exactly widened)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def lab_values(n):
    """Write n's fields by name (arrays as lists), each as C computes it."""
    return {
        "i8": n % 256 - 128,
        "i16": n * 3 % 65536 - 32768,
        "i32": n * 7 - 1_000_000,
        "i64": -n * 1_000_000_007,
        "u8": n & 0xFF,
        "u16": [(n + j) & 0xFFFF for j in range(3)],
        "u32": 4_000_000_000 - n,
        "u64": (1 << 52) + n,
        "f": [float32(float32(n) * 0.5 + j) for j in range(2)],
        "d": [n * 0.001 + j for j in range(3)],
        "on": n & 1 == 1,
        "name": f"n{n % 100_000:05}",
        "count": (1 << 60) + 2 * n + 1,
        "flags": [(n * 7 + j) & 0xFF for j in range(5)],
    }


def write_of(i32):
    """The write whose `i32` field is `i32` (None: the zeros before the first)."""
    k = i32 + 1_000_000
    return k // 7 if k > 0 and k % 7 == 0 else None
