"""The packaged rfm_attitude.fmu in libcosim (the Open Simulation Platform's
engine, through libcosimpy), a master that unpacks every instance it adds as a
CosimLocalSlave into its own folder: one process, two copies of the binary.

Run by scripts/test.sh after build-fmu, in the project's venv.
"""

import os
import subprocess
import sys
from pathlib import Path

import book

ROOT = Path(__file__).resolve().parents[2]
FMU = Path(os.environ.get("RFM_FMU", ROOT / "target" / "fmu" / "rfm_attitude.fmu"))


def readme_libcosim_snippet():
    """The libcosim script of the book's attitude pair, verbatim."""
    page = "guide/attitude-pair.md"
    script = book.snippet(page, "libcosim-pair")
    expected = book.after(page, "libcosim-pair").split("It prints `", 1)[1].split("`", 1)[0]
    return script, expected


def test_the_readmes_libcosim_pair_runs_two_copies_over_loopback_exactly(tmp_path):
    """Two attitude instances as CosimLocalSlave over `loopback:` at lag 1: each
    copy of the binary once had its own loopback memory, and both waited
    `startupTimeout` for a peer that was in the same process. The script checks
    every value of 1,000 steps and prints the count of wrong ones."""
    script, expected = readme_libcosim_snippet()
    (tmp_path / "pair.py").write_text(script)
    (tmp_path / "rfm_attitude.fmu").write_bytes(FMU.read_bytes())
    run = subprocess.run([sys.executable, "pair.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    # libcosim logs to stdout too: the script's line is among its lines.
    assert expected in run.stdout.splitlines(), run.stdout[-4000:]
    # Two copies were loaded, from two folders: the case this is about.
    copies = {line.split("Loaded FMU binary from ", 1)[1].strip()
              for line in (run.stdout + run.stderr).splitlines()
              if "Loaded FMU binary from " in line}
    assert len(copies) == 2, copies
