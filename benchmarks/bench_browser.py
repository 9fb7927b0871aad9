"""Time to the first plot of each page, as a visitor sees it in Chromium (issue 15, item 7).

A dashboard server is started (``python -m ui.serve``, as ``make run`` does). For every page
of the registry, a fresh browser context (a new Streamlit session) opens the page's URL and the
clock runs from ``goto`` until:

* ``first_plot_s``: the browser's first frame with a plotly chart's SVG in it (``plot``
  False: the page draws no chart before its button is pressed; then the time until it is
  idle). The page clocks it itself (:data:`FRAME_CLOCK`: the animation frame after the SVG is
  attached, on the browser's clock, counted from ``goto``); ``polled_s`` is the same moment as
  Playwright's polling from Python sees it, the measure before session 44. The poll reaches a
  page only between its tasks, so while the browser draws the rest of a page after its chart
  it came 0.1-0.35 s after the frame on the dashboard's pages and within 0.03 s on the bare
  floor page (``docs/measurements.md``, session 44): it measured how busy a page is after its
  chart, not when the chart was seen;
* ``idle_s``: the whole page is drawn and its run has finished (no "running" indicator, no
  skeleton left); the sidebar's ledger, drawn at the end of a complete run, marks the whole
  page.

Two rounds: ``cold`` right after the server started (its first visitor pays the imports of
the pages it opens; one visit) and ``warm`` (later visitors: :data:`WARM_VISITS` visits per
page, interleaved over the pages, reported by their median, with the slowest beside it).
Baselines, measured the same way in the same run: the Home page (text only), and the *floor*:
a bare Streamlit page with a title and one small plotly chart (``benchmarks/_floor_app.py``,
its own server, visited once before the rounds), what any Streamlit page with a plotly chart
costs on this machine, as Streamlit serves it; and the same floor on a server with the
launcher's one socket fix (``ui.serve.send_without_delay``: no Nagle delay), so that the share
of the dashboard's ratio that comes from that fix shows. Target: at most 2.5 s to the first
plot on every page (warm median), and at most 1.2 times the floor (issue 29).

``python -m benchmarks.bench_browser [--visits K] [page ...]``: only the pages named (title or
url path; the floor and Home always), ``K`` warm visits each.

Needs Debian's ``chromium`` and playwright (the dev environment); skipped with a message
otherwise.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from ui.registry import PAGES
from ui.serve import server_answers
from ui.session import LEDGER_TITLE

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 2.5
#: Name of the floor row (a bare Streamlit page with one plotly chart).
FLOOR = "floor (bare page, one chart)"
#: The same floor on a server with the launcher's socket fix (``ui.serve.send_without_delay``)
#: and nothing else of it: what the fix alone gives a bare page.
FLOOR_NODELAY = "floor, sent without Nagle's delay"
TIMEOUT_MS = 120_000
#: Visits per page in the warm round (one visit varies by about ±0.3 s on the 2-core machine).
WARM_VISITS = 3
IDLE = ("() => !document.querySelector('[data-testid=\"stStatusWidget\"]') && "
        "!document.querySelector('[data-testid=\"stSkeleton\"]')")
PLOT = "document.querySelector('[data-testid=\"stPlotlyChart\"] .main-svg') !== null"
#: Drawn at the end of every complete run of the dashboard (app.py): the sidebar's ledger.
WHOLE_PAGE = f'[data-testid="stSidebar"] h2:has-text("{LEDGER_TITLE}")'
#: Injected before the page's own scripts: the first animation frame after a chart's SVG is
#: attached, as ``window.__firstPlotFrame`` (``performance.now()``, from the time origin).
FRAME_CLOCK = """
new MutationObserver((records, observer) => {
  if (document.querySelector('[data-testid="stPlotlyChart"] .main-svg')) {
    observer.disconnect();
    requestAnimationFrame(() => { window.__firstPlotFrame = performance.now(); });
  }
}).observe(document, {childList: true, subtree: true});
"""
PLOT_OR_IDLE = ("() => " + PLOT + " || (!document.querySelector('[data-testid=\"stStatusWidget\"]')"
                " && !document.querySelector('[data-testid=\"stSkeleton\"]'))")


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


FLOOR_APP = Path(__file__).resolve().parent / "_floor_app.py"


def _server(app=None, nodelay=False):
    """The dashboard as ``make run`` starts it, or (``app``) a bare ``streamlit run`` of a file
    (``nodelay``: with ``ui.serve.send_without_delay`` applied first)."""
    port = _free_port()
    url = f"http://localhost:{port}"
    entry = ["-m", "ui.serve"] if app is None else ["-m", "streamlit", "run", str(app)]
    if nodelay:
        entry = ["-c", "import sys, ui.serve; ui.serve.send_without_delay(); "
                 "from streamlit.web import cli; "
                 f"sys.argv = ['streamlit', 'run', {str(app)!r}, *sys.argv[1:]]; cli.main()"]
    proc = subprocess.Popen(
        # The options of `make run` (the file watcher is off in .streamlit/config.toml).
        [sys.executable, *entry, "--server.port", str(port), "--server.headless",
         "true", "--server.address", "localhost", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONUNBUFFERED="1"))
    deadline = time.monotonic() + 120
    while not server_answers(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("the dashboard server did not start")
        time.sleep(0.2)
    return proc, url


def _visit(browser, url, whole=None, chart=False):
    """Open ``url`` in a fresh context: (seconds to the first plot's frame, to idle, plot
    drawn?, seconds to the first plot as polled from here).

    ``chart``: the page draws a chart on opening (``PageSpec.chart_on_open``), so the clock
    stops at the chart only (on a loaded machine a page can look idle before its chart is
    drawn); otherwise at the chart or at idle.

    ``whole``: a selector present once the whole page is drawn (the dashboard's pages may end
    their first run at the first chart and draw the rest in a second run; idle counts the
    second).
    """
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    ctx.add_init_script(FRAME_CLOCK)
    page = ctx.new_page()
    try:
        start, wall = time.perf_counter(), time.time()
        page.goto(url)
        page.locator("h1").first.wait_for(timeout=TIMEOUT_MS)  # the page's script runs
        page.wait_for_function("() => " + PLOT if chart else PLOT_OR_IDLE,
                               timeout=TIMEOUT_MS)
        polled = first = time.perf_counter() - start
        has_plot = bool(page.evaluate("() => " + PLOT))
        if has_plot:
            page.wait_for_function("() => window.__firstPlotFrame !== undefined",
                                   timeout=TIMEOUT_MS)
            # The browser's clock on the same machine: its time origin is in ms since the
            # epoch, like time.time().
            first = page.evaluate("() => performance.timeOrigin + window.__firstPlotFrame"
                                  ) / 1000 - wall
        if whole:
            page.locator(whole).first.wait_for(timeout=TIMEOUT_MS)
        page.wait_for_timeout(300)  # let the status widget appear if a run is still going
        page.wait_for_function(IDLE, timeout=TIMEOUT_MS)
        idle = time.perf_counter() - start
    finally:
        ctx.close()
    return first, idle, has_plot, polled


def main(pages=None, warm_visits=WARM_VISITS):
    """Run the rounds; ``pages``: page titles (or url paths) to visit besides the floor and
    Home (default: every page)."""
    executable = shutil.which("chromium")
    if executable is None:
        print("skipped: Debian's chromium is not installed (apt-get install chromium)")
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("skipped: playwright is not installed (requirements-dev.txt)")
        return None
    proc, url = _server()
    floor_proc, floor_url = _server(FLOOR_APP)
    fixed_proc, fixed_url = _server(FLOOR_APP, nodelay=True)
    rows = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=executable,
                                         args=["--no-sandbox", "--disable-gpu",
                                               "--disable-dev-shm-usage"])
            try:
                for first in (floor_url, fixed_url):
                    _visit(browser, first)  # its server's first visitor pays the imports
                chosen = [spec for i, spec in enumerate(PAGES) if i == 0 or not pages
                          or spec.title in pages or spec.url_path in pages]
                targets = [(FLOOR, floor_url, None, True),
                           (FLOOR_NODELAY, fixed_url, None, True)] + [
                    (spec.title, f"{url}/{spec.url_path}", WHOLE_PAGE, spec.chart_on_open)
                    for spec in chosen]
                for rnd, visits in (("cold", 1), ("warm", warm_visits)):
                    seen = {name: [] for name, *_ in targets}
                    for _ in range(visits):
                        for name, target, whole, chart in targets:
                            seen[name].append(_visit(browser, target, whole, chart))
                    for name, runs in seen.items():
                        firsts = [r[0] for r in runs]
                        rows.append({"page": name, "round": rnd, "plot": runs[0][2],
                                     "visits": len(runs),
                                     "first_plot_s": round(statistics.median(firsts), 2),
                                     "slowest_s": round(max(firsts), 2),
                                     "polled_s": round(statistics.median(r[3] for r in runs),
                                                       2),
                                     "idle_s": round(statistics.median(r[1] for r in runs), 2)})
            finally:
                browser.close()
    finally:
        for p in (proc, floor_proc, fixed_proc):
            p.terminate()
            p.wait(timeout=15)
    df = pd.DataFrame(rows)
    for name, value, column in ((PAGES[0].title, "first_plot_s", "ratio_to_home"),
                                (FLOOR, "first_plot_s", "ratio_to_floor"),
                                (FLOOR_NODELAY, "first_plot_s", "ratio_to_floor_nodelay"),
                                (FLOOR, "polled_s", "polled_ratio_to_floor")):
        base = df[df["page"] == name].set_index("round")[value]
        df[column] = [round(r[value] / base[r["round"]], 2) for _, r in df.iterrows()]
    df["target_2.5s"] = df["first_plot_s"] <= TARGET_S
    print(df.to_string(index=False))
    return df


if __name__ == "__main__":
    # python -m benchmarks.bench_browser [--visits K] [page title or url path ...]
    args = sys.argv[1:]
    visits = WARM_VISITS
    if args[:1] == ["--visits"]:
        visits, args = int(args[1]), args[2:]
    main(args or None, visits)
