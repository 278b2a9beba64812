"""`rfmctl serve` as a person sees it: a real browser (Debian's headless
Chromium, driven by Playwright) on the page of the three-rate lab running on
two emulated redundant rings (rfm2g-sim, the vendor's ABI), while a board of
ring A is cut with `rfmctl cut` and mended with `rfmctl mend`.

Needs target/release/{lab,rfmctl,librfm2g.so} and target/fmu/lab (scripts/
test.sh builds them before its serve step). The page's screenshot is written
to target/serve.png.
"""

import os
import pathlib
import re
import socket
import subprocess
import time

from playwright.sync_api import expect, sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[2]
RELEASE = ROOT / "target" / "release"
LIB = RELEASE / "librfm2g.so"
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


def rfmctl(*args):
    subprocess.run([RELEASE / "rfmctl", "--library", LIB, *args], check=True,
                   capture_output=True, text=True)


def test_the_page_shows_the_running_lab_its_timing_a_signal_and_a_ring_cut_and_mended(tmp_path):
    tag = f"serve-{os.getpid()}"
    lab = subprocess.Popen(
        [RELEASE / "lab", "--dir", "target/fmu/lab", "--interface", "lab",
         "--nodes", "cockpit,visual,ios", "--stop", "60", "--real-time-factor", "1",
         "--periods", "0.001,1/60,0.1", "--free", "visual:ios",
         "--rfm2g-sim", LIB, "--ring", tag, "--redundant"],
        cwd=ROOT, stdout=open(tmp_path / "lab.log", "w"), stderr=subprocess.STDOUT)
    # A board of its own on each ring (node 9), as a PC with two cards.
    device = f"/dev/rfm2g-sim/{tag}-a/9/1M+/dev/rfm2g-sim/{tag}-b/9/1M"
    port = free_port()
    serve = subprocess.Popen(
        [RELEASE / "rfmctl", "--library", LIB, "serve", device,
         "--listen", f"127.0.0.1:{port}", "--wait", "60"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        started(serve, "rfmctl: serving")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            errors = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"http://127.0.0.1:{port}/")
            see_every_node_live_with_its_timing(page)
            see_a_picked_signal_plotted_and_moving(page)
            see_ring_a_cut_and_mended(page, f"/dev/rfm2g-sim/{tag}-a/1/1M", device.split("+")[0])
            page.screenshot(path=str(ROOT / "target" / "serve.png"), full_page=True)
            browser.close()
        assert errors == [], errors
    finally:
        serve.kill()
        lab.kill()
        serve.wait()
        lab.wait()
        for ring in ("a", "b"):
            pathlib.Path(f"/dev/shm/rfm2g-sim.{tag}-{ring}").unlink(missing_ok=True)


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
    expect(page.locator("#latency-note")).to_contain_text("one host")
    expect(page.locator('#timing img[data-slot="0"]')).to_have_attribute(
        "src", re.compile(r"/chart/timing\.svg\?slot=0"))
    page.wait_for_function(
        "() => { const i = document.querySelector('#timing img[data-slot=\"0\"]');"
        " return i && i.complete && i.naturalWidth > 0; }", timeout=5_000)


def see_a_picked_signal_plotted_and_moving(page):
    page.select_option("#signal-pick", "0:roll")
    plot = page.locator("#signal-plot")
    expect(plot).to_be_visible()
    first = plot.get_attribute("src")
    page.wait_for_function(
        "s => { const i = document.getElementById('signal-plot');"
        " return i.src !== s && i.complete && i.naturalWidth > 0; }", arg=first, timeout=5_000)
    # The chart itself moves: two draws a second apart differ.
    svg = lambda: page.evaluate(
        "async () => (await fetch(document.getElementById('signal-plot').src)).text()")
    before = svg()
    assert "roll [rad]" in before and "<polyline" in before
    time.sleep(1.0)
    assert svg() != before, "the plot did not move"


def see_ring_a_cut_and_mended(page, board, memory):
    ring = page.locator(f'#rings li[data-memory="{memory}"]')
    expect(ring).to_contain_text("whole", timeout=10_000)
    rfmctl("cut", board)
    cut = time.monotonic()
    expect(ring).to_contain_text("open", timeout=1_000)
    assert time.monotonic() - cut < 1.5
    # The nodes whose cards on ring A see the fault, named.
    expect(ring).to_contain_text(re.compile(r"the nodes' cards see node `\w+`"), timeout=2_000)
    rfmctl("mend", board)
    expect(ring).to_contain_text("whole", timeout=3_000)
    events = page.locator("#events")
    expect(events.locator('li[data-kind="cut"]')).to_have_count(1, timeout=3_000)
    expect(events.locator('li[data-kind="mend"]')).to_have_count(1, timeout=3_000)
    expect(events.locator('li[data-kind="join"]')).not_to_have_count(0)
