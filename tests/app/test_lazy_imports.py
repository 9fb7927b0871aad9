"""Lazy imports (issue 13 point 7): opening a page imports no heavy package it does not use.

Each page is opened in its default state by ``AppTest`` in a fresh interpreter, which then
lists the heavy packages in ``sys.modules``. geomstats (oracle and adapter), diffprivlib and
scikit-learn (the opt-in comparison), dask, torch and opacus (reproduction extras) must not be
paid for at page load; ``scipy.stats`` (1 s) neither, nor numba (the compiled sphere sampler)
except where the page's work estimate runs it (``COMPILED_AT_LOAD``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ui.registry import PAGES

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("geomstats", "diffprivlib", "sklearn", "dask", "distributed", "torch", "opacus",
         "scipy.stats", "numba")

#: Pages whose load may import numba: they show the work estimate of a geodesic-regression
#: release, calibrated on a short run of the regression chains (``dpcore.release.work``), which
#: on the sphere run compiled (``dpcore.sampling._compiled_sphere``). Every other page must not.
COMPILED_AT_LOAD = {"gr", "bs"}

PROBE = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, "tests/app")
    from pages import open_app_page
    import conftest  # noqa: F401
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import app_test

    class Nav(PagesManager):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            PagesManager.uses_pages_directory = False

    app_test.PagesManager = Nav
    at = open_app_page(sys.argv[1])
    assert not at.exception, [e.value for e in at.exception]
    print(json.dumps(sorted({m for m in sys.modules
                             if any(m == h or m.startswith(h + ".") for h in %r)})))
""") % (HEAVY,)


@pytest.mark.parametrize("spec", PAGES, ids=[p.name for p in PAGES])
def test_page_load_imports_no_heavy_package(spec):
    proc = subprocess.run([sys.executable, "-c", PROBE, spec.file], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    if spec.name in COMPILED_AT_LOAD:
        loaded = [m for m in loaded if not (m == "numba" or m.startswith("numba."))]
    assert loaded == [], f"{spec.file} imports {loaded} at load"
