"""`rfmctl serve` as a person sees it: a real browser (Debian's headless
Chromium, driven by Playwright) on the page of the three-rate lab running on
two emulated redundant rings (rfm2g-sim, the vendor's ABI) beside a lab's own
program writing its struct to both (fmu-src/tests/c/lab_writer.c, built here
with cc), while a board of ring A is cut with `rfmctl cut` and mended with
`rfmctl mend`.

The lab's FMUs are built from tests/interfaces/lab_struct.toml (the lab of
examples/lab.toml and the program's struct). Needs target/release/{lab,rfmctl,
build-fmu,librfm2g.so} and target/fmu/rfm_attitude.fmu (scripts/test.sh
builds them before its serve step). The page's screenshot is written to
target/serve.png.
"""

import json
import os
import pathlib
import re
import socket
import subprocess
import threading
import time
import urllib.request

from playwright.sync_api import expect, sync_playwright

from lab_program import LIB, RELEASE, lab_writer

ROOT = pathlib.Path(__file__).resolve().parents[2]
INTERFACE = ROOT / "tests" / "interfaces" / "lab_struct.toml"
CHROMIUM = "/usr/bin/chromium"
# As the machine's probe starts it: no background network, no sandbox (root).
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def started(proc, what, timeout=60):
    """The first line `proc` writes to stderr that contains `what`."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if what in line:
            return line
    raise AssertionError(f"never said `{what}`: {''.join(seen)}")


def lab_fmus(tmp_path):
    out = tmp_path / "fmus"
    subprocess.run(
        [RELEASE / "build-fmu", "--interface", INTERFACE, "--node", "all",
         "--from", ROOT / "target/fmu/rfm_attitude.fmu", "--out", out],
        check=True, capture_output=True)
    return out


def browsers_yield_to_the_nodes():
    """Every Chromium process of this test at the lowest priority (nice 19).

    In a lab the people watching sit at their own PCs, or a simulator PC runs
    its nodes before anything else; on this two-core machine ten pages would
    otherwise take the cores the nodes pace themselves on, and the test would
    measure Chromium, not the server. Renderers forked later inherit it from
    the process that forks them, so this runs again after pages open."""
    parents = {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:]
        parents[int(stat.parent.name)] = (int(rest.split()[1]), name)
    def ours(pid):
        while pid in parents and pid > 1:
            if pid == os.getpid():
                return True
            pid = parents[pid][0]
        return False
    for pid, (_, name) in parents.items():
        if ("chrom" in name or "headless" in name) and ours(pid):
            try:
                os.setpriority(os.PRIO_PROCESS, pid, 19)
            except OSError:
                pass


def rfmctl(*args):
    subprocess.run([RELEASE / "rfmctl", "--library", LIB, *args], check=True,
                   capture_output=True, text=True)


def test_the_page_shows_the_running_lab_its_timing_its_struct_a_signal_and_a_ring_cut_and_mended(
        tmp_path):
    tag = f"serve-{os.getpid()}"
    fmus, writer = lab_fmus(tmp_path), lab_writer(tmp_path)
    lab = subprocess.Popen(
        [RELEASE / "lab", "--dir", fmus, "--interface", "lab",
         "--nodes", "cockpit,visual,ios", "--stop", "600", "--real-time-factor", "1",
         "--periods", "0.001,1/60,0.1", "--free", "visual:ios",
         "--rfm2g-sim", LIB, "--ring", tag, "--redundant"],
        cwd=ROOT, stdout=open(tmp_path / "lab.log", "w"), stderr=subprocess.STDOUT)
    # The program on a PC of its own: a board on each ring (node 7), writing
    # ring A then ring B, as a lab's program writes both.
    program = subprocess.Popen(
        [writer, f"/dev/rfm2g-sim/{tag}-a/7/1M+/dev/rfm2g-sim/{tag}-b/7/1M", "counter"],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "writer.log", "w"))
    # A board of its own on each ring (node 9), as a PC with two cards.
    device = f"/dev/rfm2g-sim/{tag}-a/9/1M+/dev/rfm2g-sim/{tag}-b/9/1M"
    port = free_port()
    serve = subprocess.Popen(
        [RELEASE / "rfmctl", "--library", LIB, "serve", device, "--interface", INTERFACE,
         "--listen", f"127.0.0.1:{port}", "--wait", "60"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        started(serve, "rfmctl: serving")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            browsers_yield_to_the_nodes()
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            errors = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"http://127.0.0.1:{port}/")
            see_every_node_live_with_its_timing(page)
            see_the_struct_move_with_its_fields(page)
            see_a_picked_signal_plotted_and_moving(page, "slot=0&signal=roll", "roll [rad]")
            see_a_picked_signal_plotted_and_moving(page, "struct=motion&signal=f%5B0%5D", "f[0] [m]")
            see_ring_a_cut_and_mended(page, f"/dev/rfm2g-sim/{tag}-a/1/1M", device.split("+")[0])
            page.screenshot(path=str(ROOT / "target" / "serve.png"), full_page=True)
            see_ten_browsers_change_nothing_for_the_nodes(browser, port, errors)
            browser.close()
        assert errors == [], errors
    finally:
        for proc in (serve, program, lab):
            proc.kill()
            proc.wait()
        for ring in ("a", "b"):
            for path in pathlib.Path("/dev/shm").glob(f"rfm2g-sim.{tag}-{ring}*"):
                path.unlink(missing_ok=True)


def see_every_node_live_with_its_timing(page):
    for slot, node, period in ((0, "cockpit", "0.001"), (1, "visual", "0.016666"),
                               (2, "ios", "0.1")):
        row = page.locator(f'#nodes tr[data-slot="{slot}"]')
        expect(row.locator("td").nth(0)).to_have_text(node, timeout=20_000)
        expect(row.locator("td").nth(2)).to_contain_text(period)
        expect(row.locator("td.state")).to_have_text("live", timeout=20_000)
        # Its own step and wait times, as it publishes them (µs p50/p99/max).
        expect(row.locator("td.step-times")).to_have_text(
            re.compile(r"^\d+\.\d/\d+\.\d/\d+\.\d$"), timeout=20_000)
        expect(row.locator("td.wait-times")).to_have_text(re.compile(r"^\d+\.\d/"))
    # Each reader's latency of each peer; on one host.
    for reader in (0, 1, 2):
        expect(page.locator(f'#latency tr[data-reader="{reader}"]')).to_have_count(2)
    # Cockpit and visual measure each other: the two directions' mean.
    expect(page.locator('#latency tr[data-reader="0"][data-peer="1"] td.both')).to_have_text(
        re.compile(r"^-?\d+\.\d$"), timeout=5_000)
    expect(page.locator("#latency-note")).to_contain_text("one host")
    expect(page.locator('#timing img[data-slot="0"]')).to_have_attribute(
        "src", re.compile(r"/chart/timing\.svg\?slot=0"))
    page.wait_for_function(
        "() => { const i = document.querySelector('#timing img[data-slot=\"0\"]');"
        " return i && i.complete && i.naturalWidth > 0; }", timeout=5_000)


def see_the_struct_move_with_its_fields(page):
    """The program's struct, read by its counter: moving, its fields decoded
    (fmu-src/tests/c/lab_struct.h: write n's u64 is 2^52 + n, its name `n`
    and n's last five digits)."""
    row = page.locator('#structs tr[data-struct="motion"]')
    expect(row.locator("td").nth(1)).to_have_text("true", timeout=10_000)
    moves = lambda: int(row.locator("td").nth(2).inner_text())
    first = moves()
    page.wait_for_function(
        "m => +document.querySelectorAll('#structs tr[data-struct=\"motion\"] td')[2]"
        ".textContent > m", arg=first, timeout=3_000)
    # One whole write: its counter is 2n, and every field is write n's.
    fields = dict(f.split("=", 1) for f in row.locator("td").nth(6).inner_text().split())
    n = int(fields["marker"]) // 2
    assert n > 0 and int(fields["marker"]) == 2 * n, fields
    assert int(fields["u64"]) == 2**52 + n, fields
    assert int(fields["u16[0]"]) == n % 65536 and fields["name"] == f"n{n % 100_000:05}", fields


def see_a_picked_signal_plotted_and_moving(page, pick, caption):
    page.select_option("#signal-pick", pick)
    plot = page.locator("#signal-plot")
    expect(plot).to_be_visible()
    # The picked signal's chart, loaded.
    page.wait_for_function(
        "p => { const i = document.getElementById('signal-plot');"
        " return i.getAttribute('src').includes('?' + p + '&') && i.complete && i.naturalWidth > 0; }",
        arg=pick, timeout=5_000)
    # The chart itself moves: two draws a second apart differ.
    svg = lambda: page.evaluate(
        "async () => (await fetch(document.getElementById('signal-plot').src)).text()")
    before = svg()
    assert caption in before and "<polyline" in before, re.findall(r"<text[^>]*>\s*([^<]*?)\s*<", before)
    time.sleep(1.0)
    assert svg() != before, "the plot did not move"


def snapshot(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/snapshot", timeout=5) as r:
        return json.load(r)


def see_ten_browsers_change_nothing_for_the_nodes(browser, port, errors):
    """Ten more pages, each kept updated; and ten clients of the page's own
    stream change nothing for the nodes: they go on at their rates (real
    time), live, with no late warning.

    The two are measured apart. What the nodes could pay for is the server:
    its sampler reads the memory once whatever the number of clients, and each
    client is a thread reading a snapshot in memory. Ten Chromium renderers on
    this machine's two cores are another matter: CI runs of f4e2480 (nice 0)
    and 8651813 (Chromium at nice 19) saw the 1 kHz node at a fifth and at
    three tenths of its pace while ten pages opened, which measured Chromium
    taking the cores, not the server. So the pages are checked for their
    updates, and the nodes' pace is measured under ten streams read by this
    test at the rate a page reads them."""
    see_ten_pages_updated(browser, port, errors)
    before, t0 = snapshot(port), time.monotonic()
    received = read_ten_streams(port, seconds=3.0)
    after, t1 = snapshot(port), time.monotonic()
    # Ten a second each: every stream got its snapshots all along.
    assert all(n >= 20 for n in received), received
    step = lambda snap, slot: next(n for n in snap["slots"] if n["slot"] == slot)
    for slot, period in ((0, 0.001), (1, 1 / 60), (2, 0.1)):
        a, b = step(before, slot), step(after, slot)
        assert b["holder"]["judged"].startswith("live"), b["holder"]
        assert b["stats"]["late"] == a["stats"]["late"], (a["stats"], b["stats"])
        steps = b["frame"]["frame_index"] - a["frame"]["frame_index"]
        expected = (t1 - t0) / period
        print(f"slot {slot}: {steps} steps in {t1 - t0:.2f} s, {expected:.0f} in real time; events {received}")
        assert 0.8 * expected <= steps <= 1.2 * expected + 1, (slot, steps, expected)


def see_ten_pages_updated(browser, port, errors):
    """Ten pages (each its own browser context, its own stream), each redrawn
    from its stream while all ten are open."""
    pages = []
    for _ in range(10):
        page = browser.new_context().new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"http://127.0.0.1:{port}/")
        pages.append(page)
        browsers_yield_to_the_nodes()
    # Each page counts its own redraws of the status line (one a snapshot).
    count = ("() => { window.updates = 0; new MutationObserver(() => window.updates++)"
             ".observe(document.getElementById('status'), { childList: true, subtree: true }); }")
    for page in pages:
        page.evaluate(count)
    time.sleep(3.0)
    updates = [page.evaluate("() => window.updates") for page in pages]
    print(f"ten pages: {updates} redraws in 3 s")
    # Ten a second each, less what the machine's two cores give ten pages.
    assert all(u >= 10 for u in updates), updates
    for page in pages:
        page.context.close()


def read_ten_streams(port, seconds):
    """Ten clients of `/api/stream` at once, each counting the events it
    reads for `seconds`: the bytes ten pages receive, without their renderers."""
    def read(counts, i):
        deadline = time.monotonic() + seconds
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stream", timeout=5) as r:
            while time.monotonic() < deadline:
                line = r.readline()
                if not line:
                    break
                if line.startswith(b"data:"):
                    counts[i] += 1
    counts = [0] * 10
    threads = [threading.Thread(target=read, args=(counts, i)) for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts


def see_ring_a_cut_and_mended(page, board, memory):
    ring = page.locator(f'#rings li[data-memory="{memory}"]')
    expect(ring).to_contain_text("whole", timeout=10_000)
    rfmctl("cut", board)
    cut = time.monotonic()
    # Open at the cut board (cockpit's, node 1 of the ring), as its card's
    # LCSR says: within a second of the cut.
    expect(ring).to_contain_text("open at board 1", timeout=1_000)
    assert time.monotonic() - cut < 1.5
    # The nodes whose cards on ring A see the fault, named.
    expect(ring).to_contain_text(re.compile(r"the nodes' cards see node `\w+`"), timeout=2_000)
    rfmctl("mend", board)
    # Whole for this server's board, and for every node's card again.
    expect(ring).to_have_class("whole", timeout=3_000)
    expect(ring).not_to_contain_text("cards see")
    events = page.locator("#events")
    expect(events.locator('li[data-kind="cut"]')).to_have_count(1, timeout=3_000)
    expect(events.locator('li[data-kind="mend"]')).to_have_count(1, timeout=3_000)
    expect(events.locator('li[data-kind="join"]')).not_to_have_count(0)
