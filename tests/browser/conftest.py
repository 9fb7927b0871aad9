"""Fixtures of the browser tests: a real Streamlit server and Debian's Chromium via Playwright.

``server_url`` starts the dashboard once per test session exactly as ``make run`` does (through
``python -m ui.serve``) on a free port, and waits for Streamlit's health endpoint.
``chromium_browser`` launches the system ``chromium`` binary (Debian's package, not a browser
downloaded by Playwright) with ``executable_path``; without it the tests are skipped with the
command that installs it (``.ci/run`` installs it in CI). ``app_page`` gives each test a fresh
browser context, so each test is a new Streamlit session with an empty privacy ledger;
``themed_page`` does the same once in the light and once in the dark theme.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ui.serve import server_answers

ROOT = Path(__file__).resolve().parents[2]
# Written to the build folder (git-ignored) so that a test run never dirties the work tree;
# `make screenshots` copies them to assets/screenshots/, the README's, to be committed deliberately.
SCREENSHOTS = ROOT / "build" / "screenshots"
VIEWPORT = {"width": 1400, "height": 900}
SERVER_START_TIMEOUT = 120  # s; a fresh machine imports streamlit, plotly, scipy... (~10 s)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def server_url(tmp_path_factory):
    """URL of a dashboard server started for this test session (stopped at its end)."""
    port = _free_port()
    url = f"http://localhost:{port}"
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    command = [
        # ui.serve with the work calibration pinned (_pinned_server.py: no outcome may
        # depend on the machine's load).
        sys.executable, "-m", "tests.browser._pinned_server",
        "--server.port", str(port), "--server.headless", "true",
        "--server.address", "localhost",
        # Files may change on disk during a test run; never reload or watch them.
        "--server.fileWatcherType", "none", "--server.runOnSave", "false",
        "--browser.gatherUsageStats", "false",
    ]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                   env=env)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while not server_answers(url):
            if process.poll() is not None:
                pytest.fail(f"the Streamlit server exited with code {process.returncode}:\n"
                            + log_path.read_text(errors="replace")[-3000:])
            if time.monotonic() > deadline:
                pytest.fail(f"the Streamlit server did not answer {url}/_stcore/health within "
                            f"{SERVER_START_TIMEOUT} s:\n"
                            + log_path.read_text(errors="replace")[-3000:])
            time.sleep(0.25)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@pytest.fixture(scope="session")
def chromium_browser():
    """Debian's Chromium driven by Playwright (skipped when it is not installed)."""
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("Debian's `chromium` is not on PATH: install it with "
                    "`apt-get install -y chromium` (.ci/run does this in CI)")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (requirements-dev.txt)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


#: The two themes of the dashboard. The config sets no ``[theme] base``, so Streamlit follows the
#: browser's ``prefers-color-scheme`` ("Use system setting"); a test picks a theme by emulating it.
THEMES = ("light", "dark")


@pytest.fixture
def app_page(chromium_browser, server_url):
    """A page in a fresh browser context (a new Streamlit session), 1400 px wide."""
    yield from _page(chromium_browser, server_url, "light")


@pytest.fixture(params=THEMES)
def themed_page(request, chromium_browser, server_url):
    """Like ``app_page``, once in the light and once in the dark theme (``page.theme``)."""
    yield from _page(chromium_browser, server_url, request.param)


def _page(browser, server_url, theme):
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True, base_url=server_url,
                                  color_scheme=theme)
    page = context.new_page()
    page.theme = theme
    page.set_default_timeout(60_000)
    try:
        yield page
    finally:
        context.close()
