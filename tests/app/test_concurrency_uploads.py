"""Uploads through the real server stay in memory (issue 6, point 4).

``test_browser_uploads_stay_in_memory``: a CSV with a unique marker is uploaded through the
browser (one under and one over a megabyte, two sessions of one server,
``tests/app/_live_server.py``); the server runs with DEBUG logging and a ``sitecustomize`` hook
that records every temporary file it creates (Starlette parses uploads with
``SpooledTemporaryFile``); afterwards no temporary file may have been created, and the temp
directory, the server log and the repository hold no marker.

This needs Chromium (``/usr/bin/chromium``, Debian package ``chromium``) and is marked ``slow``
and ``browser``; without Chromium it is skipped. The concurrent sessions of the real server are
checked in ``test_concurrency.py``.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from dpcore.data import make_regression_data, to_csv
from dpcore.manifolds import Sphere

from ._live_server import (
    CHAIN,
    GOTO_TIMEOUT_MS,
    RESULT_TIMEOUT_MS,
    ROOT,
    Server,
    chromium,
    page_errors,
    page_url,
    press_release,
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("server")


@pytest.fixture(scope="module")
def chromium_browser():
    with chromium() as browser:
        yield browser


# =========================================================================== real uploads
def marked_csv(covariate, pad_bytes=0):
    data = make_regression_data(Sphere(2), 30, rng=8)
    x = np.array(data.x)
    x[7] = covariate
    # Blank lines are skipped by the loader: they only make the file larger.
    return to_csv(Sphere(2), data.y, x).encode() + b"\n" * pad_bytes


def scan(patterns, since, roots):
    hits = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in (".venv", ".git", "node_modules")
                       and not (folder == str(root) and d.startswith(("bash_jobs.",
                                                                      "bash_tool_")))]
            for name in files:
                path = os.path.join(folder, name)
                try:
                    if os.path.islink(path) or os.path.getmtime(path) < since:
                        continue
                    with open(path, "rb") as f:
                        data = f.read(64 * 2**20)
                except OSError:
                    continue
                if any(p in data for p in patterns):
                    hits.append(path)
    return hits


def upload_through_browser(browser, server, workdir, pad_bytes):
    """Upload a marked CSV in a new session of ``server`` and release; returns (patterns,
    size of the file)."""
    digits = str(1 + secrets.randbelow(8)) + "".join(
        str(secrets.randbelow(10)) for _ in range(13)) + str(1 + secrets.randbelow(9))
    covariate = float("0." + digits)
    patterns = [digits[:14].encode(), np.float64(covariate).tobytes()]
    content = marked_csv(covariate, pad_bytes)
    upload = Path(workdir) / "upload-source" / "mine.csv"  # the visitor's own file
    upload.parent.mkdir(exist_ok=True)
    upload.write_bytes(content)
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        page.goto(page_url(server, gr_src="upload", gr_chain=CHAIN, gr_burn=CHAIN, gr_nf=1,
                           gr_nv=1), timeout=GOTO_TIMEOUT_MS)
        page.locator('[data-testid="stMain"] [data-testid="stFileUploaderDropzoneInput"]') \
            .set_input_files(str(upload))
        page.get_by_text("Uploaded CSV: n = 30").wait_for(timeout=120_000)
        press_release(page)
        page.get_by_text("MSE, private (mean)").wait_for(timeout=RESULT_TIMEOUT_MS)
        assert page_errors(page) == []
    finally:
        ctx.close()
        upload.unlink()
    return patterns, len(content)


def check_no_trace(server, patterns, since, workdir):
    log = server.log.read_bytes()
    assert b"Uvicorn server started" in log or b"You can now view" in log
    assert not any(p in log for p in patterns), "marker in the server log"
    roots = [Path(tempfile.gettempdir()), ROOT, Path.home() / ".streamlit",
             Path.home() / ".cache"]
    hits = [h for h in scan(patterns, since, [r for r in roots if r.is_dir()])
            if not h.startswith(str(workdir))]
    assert hits == [], hits


@pytest.mark.slow
@pytest.mark.slow_first(20)
@pytest.mark.browser
def test_browser_uploads_stay_in_memory(chromium_browser, workdir):
    """Two visitors of one server (DEBUG logging, every temporary file recorded) upload a
    marked CSV each, one under and one over a megabyte (above 1 MB the web server would spool
    the body to a temporary file), and release: the server created no temporary file at all,
    and neither marker is in its log, the temp directory, the repository or the home
    directory's caches. (One server for both uploads: each check covers both. The visitors
    arrive while the server warms its pages up, and the checks wait for the warm-up's end, so
    they cover it too.)"""
    server = Server(workdir, log_level="debug", wait_for_warm_up=False)
    since = time.time() - 1.0
    try:
        small, small_size = upload_through_browser(chromium_browser, server, workdir,
                                                   pad_bytes=0)
        large, large_size = upload_through_browser(chromium_browser, server, workdir,
                                                   pad_bytes=1_300_000)
        server.wait_for_warm_up()
    finally:
        time.sleep(1.0)
        server.stop()
    assert small_size < 2**20 < large_size
    assert server.tempfiles() == "", "temporary files created:\n" + server.tempfiles()
    check_no_trace(server, small + large, since, workdir)
