"""The real server (``python -m ui.serve``, as ``make run`` starts it) and the Chromium pages
that drive it, for ``test_concurrency.py`` and ``test_concurrency_uploads.py``.

:class:`Server` starts the server as a subprocess on a free localhost port, with a
``sitecustomize`` hook (:data:`SPOOL_HOOK`) that records every temporary file it creates, and
reads its memory and CPU time from /proc; :func:`chromium` launches headless Chromium
(``/usr/bin/chromium``, Debian package ``chromium``) through Playwright, or skips the test
without it. The page helpers press Release on the geodesic regression page as a user would.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from ui.serve import WARM_UP_DONE

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv" / "bin" / "python"
CHROMIUM = os.environ.get("DPCORE_TEST_CHROMIUM", "/usr/bin/chromium")
RESULT_TIMEOUT_MS = 300_000
#: Opening a page (Playwright's default is 30 s: too short for 8 sessions on a loaded 2-core
#: machine, where the goto of the third session once timed out; the waits after it allow 120 s).
GOTO_TIMEOUT_MS = 120_000
#: The app has finished its script run (Streamlit's own marker on the app container).
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
CHAIN = 50  # short MCMC chains (the sessions ask for MCMC to put load on the server)

#: Loaded into the server process through PYTHONPATH: records every temporary file it makes.
SPOOL_HOOK = '''
import os, tempfile, traceback

_REPORT = os.environ["DPCORE_TEST_TEMPFILE_REPORT"]


def _note(what):
    stack = "".join(traceback.format_stack(limit=16)[:-2])
    if "numba/core/caching.py" in stack:
        # numba's on-disk cache of compiled kernels (the compiled S² sampler) probes and
        # writes its cache directory through temporary files: compiled code, never data.
        return
    with open(_REPORT, "a") as f:
        f.write(f"== {what}\\n{stack}\\n")


def _wrap(name):
    original = getattr(tempfile, name)

    def wrapper(*args, **kwargs):
        _note(name)
        return original(*args, **kwargs)

    setattr(tempfile, name, wrapper)


for _name in ("mkstemp", "mkdtemp", "TemporaryFile", "NamedTemporaryFile"):
    _wrap(_name)
_rollover = tempfile.SpooledTemporaryFile.rollover


def _rollover_noted(self):
    if not self._rolled:
        _note(f"SpooledTemporaryFile.rollover (max_size={self._max_size})")
    return _rollover(self)


tempfile.SpooledTemporaryFile.rollover = _rollover_noted
'''

# =========================================================================== server
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """User + system CPU time of a process, in seconds, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_kb(pid):
    """VmRSS and VmHWM (peak RSS) of a process, in kB, from /proc."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields


class Server:
    """``python -m ui.serve`` on a free port, with its log and temp-file report."""

    def __init__(self, workdir, *, log_level="info", wait_for_warm_up=True):
        self.port = free_port()
        self.url = f"http://localhost:{self.port}"
        self.log = Path(workdir) / f"server-{self.port}.log"
        self.report = Path(workdir) / f"tempfiles-{self.port}.txt"
        hook = Path(workdir) / "hook"
        hook.mkdir(exist_ok=True)
        (hook / "sitecustomize.py").write_text(SPOOL_HOOK)
        env = dict(os.environ)
        env.update({
            "PYTHONPATH": os.pathsep.join(filter(None, [str(hook), env.get("PYTHONPATH")])),
            "DPCORE_TEST_TEMPFILE_REPORT": str(self.report),
            "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        })
        self._log_file = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [str(PYTHON), "-m", "ui.serve", "--server.port", str(self.port),
             "--server.headless", "true", "--logger.level", log_level],
            cwd=ROOT, env=env, stdout=self._log_file, stderr=subprocess.STDOUT,
        )
        deadline = time.time() + 90
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.read() == b"ok":
                        break
            except OSError:
                time.sleep(0.3)
        else:
            self.stop()
            raise RuntimeError("server did not become healthy within 90 s")
        if wait_for_warm_up:
            self.wait_for_warm_up()

    def wait_for_warm_up(self):
        """Wait until the server has warmed its pages up (``ui.serve.warm_up_pages``, started
        once it answers): memory and CPU are measured after it, as a visitor arriving later
        finds the server."""
        deadline = time.time() + 240
        while WARM_UP_DONE not in self.log.read_text(errors="replace"):
            if time.time() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"no warm-up: {self.log.read_text()[-2000:]}")
            time.sleep(0.3)

    def memory(self):
        return memory_kb(self.proc.pid)

    def cpu(self):
        return cpu_seconds(self.proc.pid)

    def tempfiles(self):
        return self.report.read_text() if self.report.exists() else ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log_file.close()


# =========================================================================== browser
@contextlib.contextmanager
def chromium():
    """Headless Chromium through Playwright (for a module-scoped fixture): skips the test
    where Chromium or Playwright is missing."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                 "--disable-dev-shm-usage"])
        yield b
        b.close()


def page_url(server, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"{server.url}/geodesic_regression?{query}"


def release_button(page):
    return page.get_by_role("button", name="Release", exact=True)


def opt_in_if_asked(page):
    """Tick the MCMC opt-in where the page asks for it; True if it did. The page's run must
    have finished before it is read: the opt-in comes after the sampler plan, and until the
    run ends an element of the previous run may still be shown."""
    page.wait_for_selector(IDLE, timeout=120_000)
    opt_in = page.get_by_text("Draw by MCMC anyway (approximately private)")
    if not opt_in.count():
        return False
    opt_in.click()
    return True


def confirm_release(page):
    """*Release now* in the dialog that states the cost (after Release was pressed)."""
    page.locator(".st-key-gr_release_button_confirm").get_by_role("button").click(
        timeout=60_000)


def press_release(page):
    """Release as a user would: tick the MCMC opt-in where the page asks for it, press
    Release, then *Release now* in the dialog that states the cost."""
    if opt_in_if_asked(page):
        page.wait_for_timeout(500)  # the opt-in's rerun has started
        page.wait_for_selector(IDLE, timeout=120_000)
        release_button(page).wait_for(timeout=60_000)
    release_button(page).click()
    confirm_release(page)


#: The red flag of unmixed MCMC chains (these tests use short chains on purpose): a
#: diagnostic of the release, not an error of the page.
UNMIXED = "chains have not mixed"


def page_errors(page):
    return ([t for t in page.locator('[data-testid="stAlertContentError"]').all_inner_texts()
             if UNMIXED not in t]
            + page.locator('[data-testid="stException"]').all_inner_texts())

