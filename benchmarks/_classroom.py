"""A classroom at once (issue 30 point 6): N sessions open Geodesic regression within a time
window and each makes one release, against a dashboard server started for the run.

Used by ``tests/browser/test_classroom.py`` (30 sessions, correctness only) and
``benchmarks/bench_classroom.py`` (times and memory). :func:`run_classroom` starts the server
exactly as ``make run`` does (``python -m ui.serve``) on a free port and opens one Streamlit
session per student, the ``i``-th at ``first_s + i * window / n`` seconds after the server
answered. The first ``browsers`` students (1 in the test) use a real headless Chromium
(Debian's, through Playwright's async API: one browser context each); every other student is a
websocket client that behaves like a browser (:class:`benchmarks._ws_client.BrowserLikeClient`:
it loads the page's HTML and static files, opens ``/_stcore/stream`` and sends the
``BackMsg`` the frontend sends, keeps the widget states, the element tree and the message cache
as the frontend does and fires the page's fragment timers; it renders nothing). Each session:

1. opens ``/geodesic_regression`` and waits for its first plotly chart (Chromium: drawn;
   websocket: its delta received);
2. waits for the whole page (the sidebar's ledger heading, drawn at the end of a complete run,
   and Streamlit's "not running" state), presses Release, confirms its cost when the page asks
   and waits for the release to show (its download button);
3. waits for the ledger's table in the sidebar ("No releases yet." gone) and stays open until
   every session is done (a classroom keeps its tabs open).

Why websocket clients: thirty Chromium contexts took about 400 CPU seconds of renderers
against 40 to 60 of the server on the machine's two cores (the test ran 4.5 to 6 minutes, or
timed out under other load), so the times were those of a server *and* thirty renderers on
one 2-core machine. The websocket clients take about 0.3 CPU s each and cost the server what
a browser costs (one visitor on a fresh server: 4.5 to 5.3 CPU s against 4.4 to 5.6 for
Chromium), so the server's work, not the clients', sets the times, as with thirty students on
their own machines. One Chromium session (25 CPU s) stays in the run so that what only a
browser does is still exercised under that load: the widgets it builds and the states it sends, the
confirmation dialog, the chart drawn, the static bundle and the chart preload.

Chromium's times come from the page's own clock (``performance.now()``, from the navigation's
start), read by a ``MutationObserver`` installed before the page's scripts run, so Playwright's
polling adds nothing to them; a websocket client's from ``time.monotonic()`` at its navigation
(before it fetches the HTML) to the arrival of the message. The server's RSS and CPU time, and
the browser's (every Chromium process), are sampled every :data:`SAMPLE_S` seconds; the CPU
time of this process (the websocket clients, the Playwright client) is measured over the run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = "geodesic_regression"
RELEASE_KEY = "gr_release_button"
RELEASED_KEY = "gr_download_release"
CONFIRM_KEY = f"{RELEASE_KEY}_confirm"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
VIEWPORT = {"width": 1400, "height": 900}
#: Seconds between two samples of the server's memory and CPU time.
SAMPLE_S = 0.5
#: The browser's processes are sampled every this many samples (costlier to read).
BROWSER_EVERY = 4
#: Generous limits (ms) for one session's steps: the run measures, it does not race.
STEP_TIMEOUT_MS = 600_000
SERVER_START_TIMEOUT_S = 180

#: Installed before the page's scripts: records, on the page's clock (ms from the navigation's
#: start), when the first plotly chart is drawn and when the release shows, and every error
#: element's text seen at any time (st.error, an exception box).
OBSERVER = """(() => {
  const rec = {plot: null, released: null, errors: []};
  window.__classroom = rec;
  const ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"], '
    + '[data-testid="stErrorElementStack"]';
  const check = () => {
    if (rec.plot === null && document.querySelector(
        '[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg, '
        + '[data-testid="stPlotlyChart"] .js-plotly-plot canvas')) {
      rec.plot = performance.now();
    }
    if (rec.released === null && document.querySelector('.st-key-__RELEASED__')) {
      rec.released = performance.now();
    }
    for (const el of document.querySelectorAll(ERRORS)) {
      const text = (el.innerText || el.textContent || '').trim().slice(0, 300);
      if (!rec.errors.includes(text)) rec.errors.push(text);
    }
  };
  new MutationObserver(check).observe(document, {childList: true, subtree: true});
})();""".replace("__RELEASED__", RELEASED_KEY)
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
LEDGER_HEADING = '[data-testid="stSidebar"] h2:has-text("{title}")'
LEDGER_TABLE = "[data-testid='stSidebar'] [data-testid='stDataFrame']"
MCMC_OPT_IN = "Draw by MCMC anyway (approximately private)"


@dataclass
class Session:
    """What one student's session saw.

    Attributes
    ----------
    index : int
        Order of arrival (0 first).
    client : str
        ``"chromium"`` (a real browser) or ``"websocket"`` (:mod:`benchmarks._ws_client`).
    opened_s : float
        When it opened the page, in seconds after the server answered.
    first_plot_s : float or None
        Seconds from the navigation's start to the first plotly chart (Chromium: drawn, on the
        page's clock; websocket: its delta received).
    release_s : float or None
        Seconds from pressing Release to the release shown, the confirmation included.
    released : bool
        The release panel (its download button) was shown.
    ledger : bool
        The sidebar's privacy ledger shows a table of releases at the end.
    errors : list of str
        Error elements seen, uncaught page errors and failed steps (none expected).
    unknown_widgets : list of str
        Widget kinds a websocket client met but does not commit states for (see
        :data:`benchmarks._ws_client.UNKNOWN_WIDGETS`; none on this page).
    """

    index: int
    client: str = "chromium"
    opened_s: float = 0.0
    first_plot_s: float | None = None
    release_s: float | None = None
    released: bool = False
    ledger: bool = False
    errors: list = field(default_factory=list)
    unknown_widgets: list = field(default_factory=list)


@dataclass
class Classroom:
    """Result of :func:`run_classroom`.

    Attributes
    ----------
    sessions : list of Session
    window_s : float
        The arrival window asked for.
    last_opened_s : float
        When the last session opened its page (seconds after the server answered).
    wall_s : float
        From the server's first answer to the end of the last session.
    samples : list of tuple
        ``(t, server RSS MiB, server CPU s, browser PSS MiB, browser CPU s)`` over time
        (the browser's: its processes alive at the time, every ``BROWSER_EVERY`` samples).
    client_cpu_s : float
        CPU seconds of this process over the run (the websocket clients, Playwright's client,
        the sampler).
    phases : dict
        Seconds outside the sessions: ``browser_launch_s`` (Chromium and Playwright, before
        the server), ``server_start_s`` (from its launch to its first answer),
        ``server_stop_s``.
    warm_up : str
        The server's warm-up log line ("" if none was logged).
    log_tail : str
        The end of the server's log.
    """

    sessions: list
    window_s: float
    last_opened_s: float
    wall_s: float
    samples: list
    client_cpu_s: float = float("nan")
    phases: dict = field(default_factory=dict)
    warm_up: str = ""
    log_tail: str = ""

    @property
    def errors(self):
        """``(session index, error)`` of every session, in order."""
        return [(s.index, e) for s in self.sessions for e in s.errors]

    @property
    def peak_server_rss_mb(self):
        return max((s[1] for s in self.samples), default=float("nan"))

    @property
    def peak_browser_pss_mb(self):
        return max((s[3] for s in self.samples), default=float("nan"))

    @property
    def server_cpu_s(self):
        return self.samples[-1][2] - self.samples[0][2] if self.samples else float("nan")

    @property
    def browser_cpu_s(self):
        return max((s[4] for s in self.samples), default=float("nan"))

    def summary(self):
        """One row of figures: medians and 95th percentiles of the times (every session's),
        the Chromium session's own times, errors, memory and CPU."""
        plots = [s.first_plot_s for s in self.sessions if s.first_plot_s is not None]
        releases = [s.release_s for s in self.sessions if s.release_s is not None]
        browser = [s for s in self.sessions if s.client == "chromium"]
        return {
            "sessions": len(self.sessions),
            "chromium": len(browser),
            "first_plot_median_s": _round(median(plots)),
            "first_plot_p95_s": _round(percentile(plots, 95)),
            "release_median_s": _round(median(releases)),
            "release_p95_s": _round(percentile(releases, 95)),
            "chromium_first_plot_s": _round(median(
                [s.first_plot_s for s in browser if s.first_plot_s is not None])),
            "chromium_release_s": _round(median(
                [s.release_s for s in browser if s.release_s is not None])),
            "released": sum(s.released for s in self.sessions),
            "errors": len(self.errors),
            "peak_server_rss_mb": _round(self.peak_server_rss_mb, 0),
            "server_cpu_s": _round(self.server_cpu_s, 1),
            "peak_browser_pss_mb": _round(self.peak_browser_pss_mb, 0),
            "browser_cpu_s": _round(self.browser_cpu_s, 1),
            "client_cpu_s": _round(self.client_cpu_s, 1),
            "wall_s": _round(self.wall_s, 1),
            **self.phases,
        }


def _round(x, digits=2):
    return x if x != x else round(x, digits)  # NaN stays NaN


def median(values):
    return statistics.median(values) if values else float("nan")


def percentile(values, q):
    """The ``q``-th percentile of ``values`` (linear interpolation; NaN when empty)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def chromium_missing():
    """Why the Chromium sessions cannot run here ("" when they can)."""
    if shutil.which("chromium") is None:
        return ("Debian's `chromium` is not on PATH: install it with `apt-get install -y "
                "chromium` (.ci/run does this in CI)")
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (requirements-dev.txt)"
    return ""


# --------------------------------------------------------------------------- the server
def _free_port():
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


class Server:
    """The dashboard as ``make run`` starts it, on a free port, its log in ``log_path``.

    Parameters
    ----------
    env : dict, optional
        Variables added to the environment (``DASHBOARD_WARM_UP`` ...).
    log_path : path, optional
        Default: a temporary file.
    """

    def __init__(self, env=None, log_path=None):
        self.port = _free_port()
        self.url = f"http://localhost:{self.port}"
        self.log_path = Path(log_path or tempfile.mkstemp(prefix="classroom-", suffix=".log")[1])
        self.env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
        self.proc = None

    def start(self):
        """Start the server and wait for its health check; returns the time it answered."""
        from ui.serve import server_answers

        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ui.serve", "--server.address", "localhost",
                 "--server.port", str(self.port), "--server.headless", "true",
                 "--browser.gatherUsageStats", "false"],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not server_answers(self.url):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the dashboard server did not start:\n" + self.log())
            time.sleep(0.1)
        return time.monotonic()

    def log(self, chars=3000):
        return self.log_path.read_text(errors="replace")[-chars:]

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


class Sampler(threading.Thread):
    """Samples the server's RSS and CPU time, and those of every other process started from
    this one (the browser), every :data:`SAMPLE_S` seconds until :meth:`stop`."""

    def __init__(self, server_pid, t0):
        super().__init__(name="classroom-sampler", daemon=True)
        self.server_pid, self.t0 = server_pid, t0
        self.samples = []
        self._browser = (0.0, 0.0)
        self._done = threading.Event()

    def sample(self, browser=True):
        """Append one sample; ``browser``: measure the browser's processes too (their
        proportional set sizes: Chromium's processes share much of their memory; about 10 ms
        a process), else repeat its last figures."""
        import psutil

        server = psutil.Process(self.server_pid)
        with server.oneshot():
            rss = server.memory_info().rss / 2**20
            cpu = sum(server.cpu_times()[:2])
        if browser:
            pss = cpu_b = 0.0
            for proc in psutil.Process().children(recursive=True):
                if proc.pid == self.server_pid:
                    continue
                try:
                    with proc.oneshot():
                        pss += proc.memory_full_info().pss / 2**20
                        cpu_b += sum(proc.cpu_times()[:2])
                except psutil.Error:  # a renderer that just ended
                    continue
            self._browser = (pss, max(cpu_b, self._browser[1]))
        self.samples.append((time.monotonic() - self.t0, rss, cpu, *self._browser))

    def run(self):
        count = 0
        while not self._done.wait(SAMPLE_S):
            count += 1
            try:
                self.sample(browser=count % BROWSER_EVERY == 0)
            except Exception:  # the server is gone: nothing left to sample
                return

    def stop(self):
        self._done.set()
        self.join(timeout=10)
        try:
            self.sample()
        except Exception:
            pass


# --------------------------------------------------------------------------- a session
async def _visit(browser, url, session, start_at, t0, all_done):
    """Drive one student's session (see the module's docstring); record in ``session``."""
    from ui.session import LEDGER_TITLE

    await asyncio.sleep(max(0.0, start_at - (time.monotonic() - t0)))
    context = await browser.new_context(viewport=VIEWPORT, base_url=url)
    try:
        await context.add_init_script(OBSERVER)
        page = await context.new_page()
        page.set_default_timeout(STEP_TIMEOUT_MS)
        page.on("pageerror", lambda exc: session.errors.append(f"page error: {exc}"))
        session.opened_s = time.monotonic() - t0
        await page.goto(f"/{PAGE}", wait_until="commit")
        await page.wait_for_function("() => window.__classroom.plot !== null", polling=200)
        session.first_plot_s = await page.evaluate("() => window.__classroom.plot") / 1000
        await page.locator(LEDGER_HEADING.format(title=LEDGER_TITLE)).first.wait_for()
        await page.wait_for_selector(IDLE)
        main = page.locator("[data-testid='stMain']")
        release = main.locator(f".st-key-{RELEASE_KEY}").get_by_role("button")
        await release.wait_for(state="visible")
        opt_in = page.get_by_text(MCMC_OPT_IN)
        if await opt_in.count():  # a release beyond the exact sampler's reach
            await opt_in.click()
            await page.wait_for_selector(IDLE)
            await page.wait_for_function(
                f"() => !document.querySelector('.st-key-{RELEASE_KEY} button[disabled]')")
        pressed = await page.evaluate("() => performance.now()")
        await release.click()
        confirm = page.locator(f".st-key-{RELEASE_KEY}_confirm").get_by_role("button")
        await page.wait_for_function(
            f"() => window.__classroom.released !== null"
            f" || document.querySelector('.st-key-{RELEASE_KEY}_confirm button')", polling=200)
        if await confirm.count():  # the page asks to confirm the release's cost
            await confirm.click()
        await page.wait_for_function("() => window.__classroom.released !== null", polling=200)
        session.release_s = (await page.evaluate("() => window.__classroom.released")
                             - pressed) / 1000
        session.released = True
        await page.locator(LEDGER_TABLE).first.wait_for(state="visible")
        await page.wait_for_selector(IDLE)
        session.ledger = await page.get_by_text("No releases yet.").count() == 0
        session.errors.extend(await page.evaluate("() => window.__classroom.errors"))
        await all_done.wait()  # the tab stays open while the others work
    except Exception as exc:  # recorded, not raised: every session is reported
        session.errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
        try:
            session.errors.extend(await page.evaluate("() => window.__classroom.errors"))
        except Exception:
            pass
    finally:
        await context.close()


async def _ws_visit(url, session, start_at, t0, all_done):
    """Drive one student's session through a websocket client (the steps of :func:`_visit`);
    record in ``session``."""
    from benchmarks._ws_client import SIDEBAR, BrowserLikeClient
    from ui.session import LEDGER_TITLE

    session.client = "websocket"
    timeout = STEP_TIMEOUT_MS / 1000
    await asyncio.sleep(max(0.0, start_at - (time.monotonic() - t0)))
    client = BrowserLikeClient(url, PAGE)
    try:
        session.opened_s = time.monotonic() - t0
        await client.open()
        await client.wait_for(lambda: client.first_plot, timeout)
        session.first_plot_s = client.first_plot - client.started
        await client.wait_for(lambda: client.idle and LEDGER_TITLE in client.texts(SIDEBAR)
                              and client.widget(RELEASE_KEY), timeout)
        opt_in = [n for n in client.elements("checkbox") if n.proto.label == MCMC_OPT_IN]
        if opt_in:  # a release beyond the exact sampler's reach
            await client.click_checkbox(MCMC_OPT_IN)
        await client.wait_for(lambda: client.idle and client.widget(RELEASE_KEY)
                              and not client.widget(RELEASE_KEY).proto.disabled, timeout)
        pressed = time.monotonic()
        await client.press(RELEASE_KEY)
        await client.wait_for(lambda: client.widget(RELEASED_KEY)
                              or (client.idle and client.widget(CONFIRM_KEY)), timeout)
        if not client.widget(RELEASED_KEY):  # the page asks to confirm the release's cost
            await client.press(CONFIRM_KEY)
        await client.wait_for(lambda: client.widget(RELEASED_KEY), timeout)
        session.release_s = client.seen_at(RELEASED_KEY) - pressed
        session.released = True
        await client.wait_for(lambda: client.idle and client.elements("dataframe", SIDEBAR),
                              timeout)
        session.ledger = not any("No releases yet." in text for text in client.texts(SIDEBAR))
        await all_done.wait()  # the tab stays open while the others work
    except Exception as exc:  # recorded, not raised: every session is reported
        text = str(exc).splitlines()[0][:300] if str(exc) else "(no message)"
        session.errors.append(f"{type(exc).__name__}: {text}")
    finally:
        session.errors.extend(client.errors)
        session.unknown_widgets = sorted(client.unknown_widgets)
        await client.close()


async def _classroom(server_ready, n, window_s, first_s=0.0, browsers=1):
    """Launch the browser (when ``browsers``), then ``(url, t0) = server_ready()``, then the
    sessions: the first ``browsers`` in Chromium, the others websocket clients."""
    sessions = [Session(i) for i in range(n)]
    browsers = min(browsers, n)
    async with contextlib.AsyncExitStack() as stack:
        browser = None
        if browsers:
            from playwright.async_api import async_playwright

            playwright = await stack.enter_async_context(async_playwright())
            browser = await playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                                       args=CHROMIUM_ARGS)
            stack.push_async_callback(browser.close)
        # The websocket clients fetch over HTTP in threads: enough for every student at once.
        asyncio.get_running_loop().set_default_executor(
            concurrent.futures.ThreadPoolExecutor(max(n, 4), thread_name_prefix="classroom"))
        url, t0 = await asyncio.to_thread(server_ready)
        all_done = asyncio.Event()
        tasks = [asyncio.create_task(
            _visit(browser, url, s, first_s + i * window_s / n, t0, all_done) if i < browsers
             else _ws_visit(url, s, first_s + i * window_s / n, t0, all_done))
            for i, s in enumerate(sessions)]
        # A session's tab stays open until each one has released (or failed).
        while not all(s.released or s.errors for s in sessions):
            if all(t.done() for t in tasks):
                break
            await asyncio.sleep(0.5)
        all_done.set()
        await asyncio.gather(*tasks)
    return sessions


def run_classroom(n=30, window_s=60.0, env=None, log_path=None, first_s=0.0, browsers=1):
    """Open ``n`` sessions of Geodesic regression over ``window_s`` seconds; one release each.

    Parameters
    ----------
    n : int
        Sessions (students).
    window_s : float
        Arrival window: session ``i`` opens ``first_s + i * window_s / n`` s after the
        server answered.
    env : dict, optional
        Environment of the server (``{"DASHBOARD_WARM_UP": "0"}`` ...).
    log_path : path, optional
        Where the server writes its log (default: a temporary file).
    first_s : float
        When the first session opens, in seconds after the server answered.
    browsers : int
        How many sessions (the first ones) use Chromium; the others are websocket clients.
        0 needs neither Chromium nor Playwright.

    Returns
    -------
    Classroom
    """
    server = Server(env, log_path)
    box = {}

    def server_ready():  # called once the browser runs: the server starts, the clock too
        phases["browser_launch_s"] = time.monotonic() - begun
        box["t0"] = server.start()
        phases["server_start_s"] = time.monotonic() - begun - phases["browser_launch_s"]
        box["sampler"] = Sampler(server.proc.pid, box["t0"])
        box["sampler"].sample()
        box["sampler"].start()
        return server.url, box["t0"]

    def target():
        try:
            box["sessions"] = asyncio.run(_classroom(server_ready, n, window_s, first_s,
                                                     browsers))
        except BaseException as exc:
            box["error"] = exc

    cpu0 = time.process_time()
    begun = time.monotonic()
    phases = {}
    try:
        # The sessions run in an event loop of their own, in a thread of its own: the caller
        # may hold a running event loop (or Playwright's sync API) in this one.
        worker = threading.Thread(target=target, name="classroom")
        worker.start()
        worker.join()
        if "error" in box:
            raise box["error"]
        wall = time.monotonic() - box["t0"]
        client_cpu = time.process_time() - cpu0
    finally:
        if "sampler" in box:
            box["sampler"].stop()
        stopping = time.monotonic()
        server.stop()
        phases["server_stop_s"] = time.monotonic() - stopping
    phases = {k: round(v, 1) for k, v in phases.items()}
    sampler = box["sampler"]
    log = server.log_path.read_text(errors="replace")
    warm = next((line for line in log.splitlines() if "Warm-up done:" in line), "")
    sessions = box["sessions"]
    return Classroom(sessions, window_s, max(s.opened_s for s in sessions), wall,
                     sampler.samples, client_cpu, phases, warm, log[-3000:])
