"""Shared fixtures: a seeded generator per test so every randomized test is reproducible."""

import sys
import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """A generator seeded from the test's node id (stable across runs and processes)."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


_SCAN_MEMOISED = False
#: The process's own ``__main__`` (pytest's), before any test runs a script as ``__main__``.
_REAL_MAIN = sys.modules.get("__main__")


@pytest.fixture
def real_main(monkeypatch):
    """Put the process's own ``__main__`` back for the test. ``AppTest.from_function`` runs
    its script as ``__main__`` from a temporary file and leaves that module in
    ``sys.modules``; a process spawned afterwards (a dask Nanny's worker) re-runs the main
    module's file first, and that script fails there (``NameError: __args``)."""
    monkeypatch.setitem(sys.modules, "__main__", _REAL_MAIN)


@pytest.fixture(autouse=True)
def _scan_installed_components_once():
    """Every ``AppTest`` scans the metadata of all installed distributions for Streamlit
    components on its first run (``BidiComponentManager.discover_and_register_components``,
    ~0.3 s of CPU and more wall time on a loaded machine), hundreds of times per test run. The
    installed packages do not change during a test run, so the scan's result is kept after the
    first one; every AppTest still gets its own component manager, registered from it."""
    global _SCAN_MEMOISED
    if not _SCAN_MEMOISED and "streamlit.testing.v1" in sys.modules:
        from streamlit.components.v2 import manifest_scanner

        scan = manifest_scanner.scan_component_manifests
        found = []

        def scan_once(max_workers=None):
            if not found:
                found.append(scan(max_workers))
            return list(found[0])

        manifest_scanner.scan_component_manifests = scan_once
        _SCAN_MEMOISED = True
    yield
