"""The book (docs/src) and the README, as a reader uses them: every shell,
TOML and Python block of the Guide is run here or by another test as written,
or says why it cannot be; the Reference names every FMU variable, every
interface-file key and every rfmctl command the programs have; the README's
links lead somewhere.

Run by scripts/test.sh after the release tools are built (target/release)."""

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

import book

ROOT = book.ROOT
RELEASE = ROOT / "target" / "release"
FMU = Path(os.environ.get("RFM_FMU", ROOT / "target" / "fmu" / "rfm_attitude.fmu"))
GUIDE = sorted(p.relative_to(book.BOOK).as_posix() for p in (book.BOOK / "guide").glob("*.md"))
RUN = {"sh", "toml", "python"}


def shell(script, cwd, timeout=120):
    """A snippet run by bash as a user would, with the release tools and this
    venv's Python first on the PATH."""
    env = dict(os.environ, PATH=f"{RELEASE}:{Path(sys.executable).parent}:{os.environ['PATH']}")
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("page", GUIDE)
def test_every_guide_snippet_is_run_or_says_why_not(page):
    sources = "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py"))
    for kind, name, lang, text, _ in book.blocks(page):
        if lang not in RUN:
            continue
        where = f"{page}: the {lang} block `{text.splitlines()[0]}`"
        assert kind in ("snippet", "not run"), f"{where} has no marker"
        assert name.strip(), f"{where}: a marker without its name or reason"
        if kind == "snippet" and lang != "toml":  # every TOML block is parsed below
            assert f'"{name}"' in sources, f"{where}: no test runs the snippet `{name}`"


@pytest.mark.parametrize("page", GUIDE)
def test_every_toml_snippet_parses_and_a_whole_interface_builds(page, tmp_path):
    """TOML blocks parse; those that are whole interface files (every node with
    its slot and signals) are built into FMUs by build-fmu from the packaged
    attitude FMU, as the Guide says."""
    for kind, name, lang, text, _ in book.blocks(page):
        if lang != "toml" or kind != "snippet":
            continue
        parsed = tomllib.loads(text)
        nodes = parsed.get("node", [])
        ours = [n for n in nodes if "slot" in n and "signals" in n]
        # A whole file: every node ours, or a lab's own struct (a foreign node).
        if ours and all(n in ours or "fields" in n for n in nodes):
            (tmp_path / f"{name}.toml").write_text(text)
            run = subprocess.run([RELEASE / "build-fmu", "--interface", f"{name}.toml", "--node",
                                  "all", "--from", FMU, "--out", tmp_path / name, "--shm-only"],
                                 cwd=tmp_path, capture_output=True, text=True, timeout=300)
            assert run.returncode == 0, f"{page} `{name}`: {run.stderr[-3000:]}"
            built = sorted(p.name for p in (tmp_path / name).glob("*.fmu"))
            assert built == sorted(f"{parsed['name']}_{n['name']}.fmu" for n in ours), built


def test_the_quick_start_runs_as_written(tmp_path):
    """The Quick start from its interface file to its two masters and the
    watch between them, in a folder of its own: the masters print the lines
    the page shows, and rfmctl watch sees both nodes by name."""
    page = "guide/quick-start.md"
    (tmp_path / "quick.toml").write_text(book.snippet(page, "quick-toml"))
    (tmp_path / "node.py").write_text(book.snippet(page, "quick-node"))
    shutil.copy(FMU, tmp_path / "rfm_attitude.fmu")
    try:
        run = shell(book.snippet(page, "quick-build"), tmp_path, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        assert "no node has a period" in run.stderr, run.stderr[-3000:]
        run = shell(book.snippet(page, "quick-run"), tmp_path)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        # Two processes print to one pipe: a line may end up beside the other's.
        for line in book.snippet(page, "quick-output").splitlines():
            assert run.stdout.count(line) == 1, run.stdout
        assert re.search(r"^\s+0 pilot\s+live .*stick=", run.stdout, re.M), run.stdout
        # A String output crosses, read as a user reads it from FMPy (bytes).
        assert "getString" in book.snippet(page, "quick-node")
        assert re.search(r"^\s+0 pilot\s+live .*callsign=", run.stdout, re.M), run.stdout
        assert re.search(r"^\s+1 display\s+live .*frame=", run.stdout, re.M), run.stdout
    finally:
        clean = shell(book.snippet(page, "quick-clean"), tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert not Path("/dev/shm/quick").exists()


def test_no_guide_says_a_node_refuses_a_step_size_of_another_length():
    """Rates and time: a node keeps to its own grid whatever step its master
    gives it; the lab chapter's snippet used to say its FMU "refuses any
    other" step size."""
    for page in sorted((book.BOOK / "guide").glob("*.md")):
        text = " ".join(page.read_text().split()).replace("# ", "")
        assert "refuses any other" not in text, page


def test_interface_fmus_are_made_from_a_released_fmu_as_written(tmp_path):
    page = "guide/interfaces.md"
    shutil.copy(ROOT / "examples" / "lab.toml", tmp_path / "lab.toml")
    shutil.copy(FMU, tmp_path / "rfm_attitude.fmu")
    run = shell(book.snippet(page, "interfaces-from"), tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "fmus").glob("*.fmu")) == [
        "lab_cockpit.fmu", "lab_ios.fmu", "lab_visual.fmu"]


def test_a_labs_header_becomes_an_fmu_reading_its_struct_as_written(tmp_path):
    """rfmctl header prints what the page shows for its header; the page's
    interface file, that node with what the header cannot say, builds the
    FMU, which has every variable the page's table names."""
    page = "guide/foreign.md"
    (tmp_path / "lab.h").write_text(book.snippet(page, "foreign-lab-h"))
    run = shell(book.snippet(page, "foreign-header"), tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == book.snippet(page, "foreign-header-output"), run.stdout
    lab = tomllib.loads(book.snippet(page, "foreign-lab"))
    imported = tomllib.loads(run.stdout)["node"][0]
    flight = next(n for n in lab["node"] if n["name"] == "flight")
    assert [{k: f[k] for k in ("name", "type", "offset") if k in f} for f in flight["fields"]] \
        == [{k: f[k] for k in ("name", "type", "offset") if k in f} for f in imported["fields"]]
    (tmp_path / "lab.toml").write_text(book.snippet(page, "foreign-lab"))
    shutil.copy(FMU, tmp_path / "rfm_attitude.fmu")
    run = shell(book.snippet(page, "foreign-build"), tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "fmus").glob("*.fmu")) == ["lab_ios.fmu"]
    for line in book.after(page, "foreign-build").split("```text\n", 1)[1] \
            .split("```", 1)[0].splitlines():
        assert line in run.stderr, f"build-fmu's map lacks `{line}`:\n{run.stderr}"
    with zipfile.ZipFile(tmp_path / "fmus" / "lab_ios.fmu") as fmu:
        variables = {v.get("name"): v.get("causality") for v in ElementTree.fromstring(
            fmu.read("modelDescription.xml")).iter("ScalarVariable")}
    table = book.after(page, "foreign-build").split("| variables |", 1)[1].split("\n\n", 1)[0]
    for row in table.splitlines()[2:]:
        names, causality = row.split(" | ")[0], row.split(" | ")[1]
        for name in re.findall(r"`([^`]+)`", names):
            assert variables.get(name) == causality, f"{name}: {variables.get(name)}"
    flights = [v for v in variables if v.startswith("flight.")]
    # Its 9 elements, and age, link.ok, link.retries, link.gaveUp,
    # link.inexact and link.failovers.
    assert len(flights) == 9 + 6, flights


def linked(folder):
    """A folder that sees the repository's paths the snippets name."""
    for name in ("rfm2g-sys", "rfm2g-sim", "target"):
        (folder / name).symlink_to(ROOT / name)
    return folder


def test_the_articles_programs_run_on_the_emulator_as_written(tmp_path):
    """The sender's 1,000 packets reach the receiver, which waits for each
    packet's interrupt; both print every packet."""
    page = "guide/emulator.md"
    if shutil.which("cc") is None:
        pytest.fail("no C compiler: scripts/setup.sh installs gcc")
    try:
        run = shell(book.snippet(page, "article-programs") + "wait\n", linked(tmp_path))
    finally:
        for leftover in Path("/dev/shm").glob("rfm2g-sim.lab*"):
            leftover.unlink()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # Both print every packet to one pipe, each in its own buffered chunks
    # (lines cut in two): the summaries on stderr say what crossed.
    # An interrupt sent while the last is still latched is lost, as on a card:
    # the receiver then takes the next packet by polling.
    assert re.search(r"^receiver: 1000 packets, 0 missing, \d+ interrupts$", run.stderr, re.M), \
        run.stderr
    assert "sender: done, 1000 packets at 1 kHz" in run.stderr, run.stderr


def test_a_ring_cut_and_mend_run_as_written(tmp_path):
    """As written, on a board a program opened; on a ring nobody opened the
    cut is refused naming the ring, and creates no memory."""
    page = "guide/emulator.md"
    snippet = book.snippet(page, "ring-cut")
    default_ring = list(Path("/dev/shm").glob("rfm2g-sim.lab*"))
    cwd = linked(tmp_path)
    try:
        if not default_ring:
            run = shell(snippet, cwd)
            assert run.returncode == 3, run.stdout + run.stderr
            assert "it is node 0 of ring `lab`, which no program has opened" in run.stderr, \
                run.stderr
            assert not list(Path("/dev/shm").glob("rfm2g-sim.lab*"))
        # A program holds the board: `info` opens it, as a simulator does.
        opened = shell(snippet.splitlines()[0].replace("cut ", "info"), cwd)
        assert opened.returncode == 0, opened.stdout + opened.stderr
        run = shell(snippet, cwd)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "(node 0 of ring `lab`) cut from its ring" in run.stdout, run.stdout
    finally:
        for leftover in Path("/dev/shm").glob("rfm2g-sim.lab*"):
            leftover.unlink()


def named(page):
    """Every name a page writes as code: `name`."""
    return set(re.findall(r"`([^`\n]+)`", (book.BOOK / page).read_text()))


def test_the_fmu_reference_names_every_variable_of_the_attitude_fmu():
    variables = [v.get("name") for v in
                 ElementTree.parse(ROOT / "modelDescription.xml").iter("ScalarVariable")]
    assert len(variables) > 40, variables
    missing = [v for v in variables if v not in named("reference/fmu.md")]
    assert not missing, f"reference/fmu.md does not name {missing}"


@pytest.mark.parametrize("level, file", [
    ("top", 'name = "x"\nbogus = 1\n[[node]]\nname = "a"\nslot = 0\n'
            'signals = [{ name = "r", type = "Real" }]\n'),
    ("node", 'name = "x"\n[[node]]\nname = "a"\nbogus = 1\nslot = 0\n'
             'signals = [{ name = "r", type = "Real" }]\n'),
    ("signal", 'name = "x"\n[[node]]\nname = "a"\nslot = 0\n'
               'signals = [{ name = "r", type = "Real", bogus = 1 }]\n'),
])
def test_the_interface_reference_names_every_key_the_parser_knows(level, file, tmp_path):
    """build-fmu names every key of a level when it refuses an unknown one: each
    is in the reference's table of that level (or of the settings)."""
    (tmp_path / "bad.toml").write_text(file)
    run = subprocess.run([RELEASE / "build-fmu", "--interface", "bad.toml", "--node", "all",
                          "--from", FMU, "--out", tmp_path / "out"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    keys = re.findall(r"`(\w+)`", run.stderr.split("expected one of", 1)[1])
    assert len(keys) >= 8, run.stderr
    page = (book.BOOK / "reference" / "interface-file.md").read_text()
    tables = {"top": "## The top level", "node": "## A node", "signal": "## A signal"}
    section = page.split(tables[level], 1)[1].split("\n## ", 1)[0]
    settings = page.split("## Settings", 1)[1]
    missing = [k for k in keys if f"| `{k}` |" not in section + settings
               and not (k in ("min", "max") and "| `min`, `max` |" in section)]
    assert not missing, f"the {level} table of reference/interface-file.md lacks {missing}"


def test_the_rfmctl_reference_names_every_command():
    run = subprocess.run([RELEASE / "rfmctl", "--help"], capture_output=True, text=True)
    commands = re.findall(r"^  ([a-z][a-z-]+)  ", run.stdout.split("Commands:", 1)[1]
                          .split("Options:", 1)[0], re.M)
    commands = [c for c in commands if c != "help"]
    assert len(commands) >= 15, run.stdout
    page = (book.BOOK / "reference" / "rfmctl.md").read_text()
    missing = [c for c in commands if f"| `{c}` |" not in page]
    assert not missing, f"reference/rfmctl.md lacks {missing}"


def test_the_readmes_links_lead_to_files_that_exist():
    text = (ROOT / "README.md").read_text()
    links = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert len(links) >= 10, links
    missing = [t for t in links if not (ROOT / t.split("#", 1)[0]).exists()]
    assert not missing, f"README.md links to {missing}"


# A path into one of the workspace's crates, as the book and README write them
# (in backticks or not): `rfm-core/tests/link/files.rs`, `fmu-src/tests/hostile/`.
SOURCE_PATH = re.compile(r"(?<![\w/.-])((?:[a-z0-9]+-)*[a-z0-9]+/(?:src|tests|benches|examples)/[A-Za-z0-9_./-]*)")


def test_every_source_path_the_book_names_exists():
    """Moving a file (the crates split out of rfm-core, a test file split into a
    folder) left the book naming paths that no longer exist; this finds them."""
    pages = [ROOT / "README.md", *sorted(book.BOOK.rglob("*.md"))]
    named = {(page.relative_to(ROOT).as_posix(), path)
             for page in pages for path in SOURCE_PATH.findall(page.read_text())
             if not path.startswith("target/")}
    assert len(named) >= 30, named
    missing = sorted(f"{page}: {path}" for page, path in named
                     if not (ROOT / path.rstrip(".")).exists())
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)


def test_the_rfmctl_reference_gives_each_command_its_positional_arguments():
    """The reference's arguments of each command start with as many
    positional arguments as its usage line has (`export FILE --csv [OUT]`:
    the reference once wrote `--csv FILE`, and a reader passed the recording
    as the CSV)."""
    page = (book.BOOK / "reference" / "rfmctl.md").read_text()
    rows = re.findall(r"^\| `([a-z-]+)` \| `([^`]*)` \|", page, re.M)
    assert len(rows) >= 15, rows
    wrong = []
    for command, arguments in rows:
        run = subprocess.run([RELEASE / "rfmctl", *command.split(), "--help"],
                             capture_output=True, text=True)
        usage = re.search(r"^Usage: rfmctl (.*)$", run.stdout, re.M)
        if not usage:
            continue
        positional, tokens = 0, iter(usage.group(1).split()[1:])
        for token in tokens:
            if token == "[OPTIONS]":
                continue
            if token.startswith("--"):
                next(tokens, None)  # the option's value
            elif token.startswith("[-"):
                break  # what follows `--` goes to another program
            elif re.match(r"[<\[][A-Z]", token):
                positional += 1
        leading = 0
        for word in arguments.split():
            if word.startswith(("--", "[--", "-")):
                break
            leading += 1
        if leading != positional:
            wrong.append(f"{command}: `{arguments}` against `{usage.group(1)}`")
    assert not wrong, "\n".join(wrong)
