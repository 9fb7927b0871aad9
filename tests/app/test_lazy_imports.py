"""Lazy imports (issue 13 point 7): opening a page imports no heavy package it does not use.

Each page is opened in its default state by ``AppTest`` in a fresh interpreter, which then
lists the heavy packages in ``sys.modules``. geomstats (oracle and adapter), diffprivlib and
scikit-learn (the opt-in comparison), dask, torch and opacus (reproduction extras) must not be
paid for at page load; ``scipy.stats`` (1 s) neither, nor numba (the compiled sphere sampler)
except where the page's work estimate runs it (``COMPILED_AT_LOAD``).

The fresh interpreters are forked from one probe process (:func:`probe`) that has done only
what every page load does first: start Python, import streamlit's test machinery and the
modules ``app.py`` imports (``ui.registry``, ``ui.session``), and scan the installed
distributions for Streamlit components (``tests/conftest.py`` keeps that scan too). Each fork
is a copy of that state, so it sees what a new interpreter would see at that point, without
paying for the start-up again per page. Preloading cannot hide a heavy import: a module the
probe imported before forking is in every fork's ``sys.modules``, so a heavy package pulled in
there would be reported for every page.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ui.registry import PAGES

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("geomstats", "diffprivlib", "sklearn", "dask", "distributed", "torch", "opacus",
         "scipy.stats", "numba")
TIMEOUT = 300  # seconds per page

#: Pages whose load may import numba: they show the work estimate of a geodesic-regression
#: release, calibrated on a short run of the regression chains (``dpcore.release.work``), which
#: on the sphere run compiled (``dpcore.sampling._compiled_sphere``). Every other page must not.
COMPILED_AT_LOAD = {"gr", "bs"}

#: Reads one page file per line on stdin; for each, forks, opens the page in the fork and
#: writes one JSON line: the fork's exit code, the end of its stderr and the heavy modules.
PROBE = textwrap.dedent("""
    import json, os, sys, tempfile, traceback
    sys.path.insert(0, "tests/app")
    from pages import open_app_page
    import conftest  # noqa: F401
    from streamlit.components.v2 import manifest_scanner
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import app_test
    import ui.registry, ui.session  # noqa: F401  (app.py's imports: every page load runs it)

    class Nav(PagesManager):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            PagesManager.uses_pages_directory = False

    app_test.PagesManager = Nav
    _found = manifest_scanner.scan_component_manifests()
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(_found)
    HEAVY = %r

    def heavy():
        return sorted({m for m in sys.modules
                       if any(m == h or m.startswith(h + ".") for h in HEAVY)})

    for line in sys.stdin:
        page = line.strip()
        with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
            pid = os.fork()
            if pid == 0:  # the fresh interpreter: open the page, list the heavy modules
                code = 1
                try:
                    os.dup2(err.fileno(), 2)
                    os.dup2(err.fileno(), 1)  # stdout is the probe's answers: a print goes here
                    at = open_app_page(page)
                    assert not at.exception, [e.value for e in at.exception]
                    out.write(json.dumps(heavy()).encode())
                    out.flush()
                    code = 0
                except BaseException:
                    traceback.print_exc()
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            err.seek(0)
            out.seek(0)
            print(json.dumps({"code": os.waitstatus_to_exitcode(status),
                              "stderr": err.read().decode(errors="replace")[-3000:],
                              "loaded": json.loads(out.read() or b"null")}), flush=True)
""") % (HEAVY,)


@pytest.fixture(scope="module")
def probe():
    """``open_page(file)``: the fork's exit code, stderr tail and heavy modules for a page."""
    proc = subprocess.Popen([sys.executable, "-c", PROBE], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            start_new_session=True)  # its own group: a hung fork is ended too

    def stop():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def open_page(file):
        proc.stdin.write(file + "\n")
        proc.stdin.flush()
        if not select.select([proc.stdout], [], [], TIMEOUT)[0]:
            stop()
            pytest.fail(f"opening {file} took over {TIMEOUT} s")
        line = proc.stdout.readline()
        assert line, f"the probe ended (exit code {proc.poll()})"
        return json.loads(line)

    yield open_page
    proc.stdin.close()
    try:
        proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        stop()
    proc.stdout.close()


@pytest.mark.parametrize("spec", PAGES, ids=[p.name for p in PAGES])
def test_page_load_imports_no_heavy_package(spec, probe):
    result = probe(spec.file)
    assert result["code"] == 0, result["stderr"]
    loaded = result["loaded"]
    if spec.name in COMPILED_AT_LOAD:
        loaded = [m for m in loaded if not (m == "numba" or m.startswith("numba."))]
    assert loaded == [], f"{spec.file} imports {loaded} at load"
