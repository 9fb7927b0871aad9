"""Shared fixtures: a seeded generator per test so every randomized test is reproducible; the
work costs fixed for every test (``tests/_work_costs.py``)."""

import os
import sys
import zlib

import numpy as np
import pytest

from dpcore.release.work import WORK_COSTS_ENV
from tests._work_costs import pinned_setting

# No test's outcome may depend on the machine's speed: work estimates (and refusals) read fixed
# costs, here and in every process a test starts.
os.environ[WORK_COSTS_ENV] = pinned_setting()


@pytest.fixture
def measured_work_costs(monkeypatch):
    """For the tests of the calibration itself: costs measured on the machine, as shipped."""
    monkeypatch.delenv(WORK_COSTS_ENV)


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


def _slow_first_seconds(item):
    mark = item.get_closest_marker("slow_first")
    if mark is not None:
        return float(mark.args[0]) if mark.args else 10.0
    return None


def _worksteal_starts(n_items, n_workers):
    """Where each worker's first share begins under ``--dist worksteal``: the scheduler hands
    the idle workers, in turn, ``len(pending) // workers_left`` of the pending items, in order
    (``xdist.scheduler.worksteal.WorkStealingScheduling.check_schedule``)."""
    starts, left = [], n_items
    for k in range(n_workers, 0, -1):
        starts.append(n_items - left)
        left -= left // k
    return starts


def _dist_mode(config):
    """The run's ``--dist``: an xdist worker's own option says ``no`` (set by
    ``xdist.remote.setup_config``); the command line as parsed before that still holds it."""
    known = getattr(config, "known_args_namespace", None)
    return getattr(known, "dist", None) or config.getoption("dist", None)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Start the known-slow tests first, on every xdist worker. Only the order changes: no
    test depends on it, and every worker computes the same order from the same items.

    A long test that starts late stretches the run's tail while the other worker idles. The
    slow tests are those marked ``slow_first(seconds)`` (their duration in CI). The slow
    tests of one module move as one block, in their order (its module-scoped fixtures and
    cached searches are built once), worth their summed seconds.
    The blocks are dealt, longest first, to the worker whose lane is shortest so far (LPT).

    ``--dist worksteal`` (``make test``) gives each worker one contiguous slice of the
    collection to start with (of ``N`` items, worker 0 the first ``N // 2``, worker 1 the
    rest, for two workers) and an idle worker steals the *tail* of the other's queue. So each
    lane goes to the start of its worker's slice: ``lane 0, rest..., lane 1, rest...``, the
    other tests in their order. Otherwise (serial, or another ``--dist``, which deals the
    first items round robin) the lanes' blocks are interleaved at the front. The hook runs
    last, after deselection (``-k``, ``-m``), so the slices are the scheduler's; a worker
    reads ``--dist`` from the command line (:func:`_dist_mode`).

    Checked with ``pytest -n 2 --dist worksteal`` on marked tests that log their start: each
    worker's first tests were its lane. Move a test here when it takes over ~13 s in CI (the
    longest tests left in place bound the run's tail)."""
    blocks = {}  # module -> [seconds, items]
    for item in items:
        seconds = _slow_first_seconds(item)
        if seconds is not None:
            block = blocks.setdefault(item.nodeid.split("::", 1)[0], [0.0, []])
            block[0] += seconds
            block[1].append(item)
    if not blocks:
        return
    workers = max(1, getattr(config, "workerinput", {}).get("workercount", 1))
    lanes = [[0.0, []] for _ in range(workers)]  # [seconds, blocks]
    for seconds, block in sorted(blocks.values(), key=lambda b: -b[0]):  # stable: ties keep order
        lane = min(lanes, key=lambda lane: lane[0])
        lane[0] += seconds
        lane[1].append(block)
    moved = {id(item) for _, block in blocks.values() for item in block}
    rest = [item for item in items if id(item) not in moved]
    order = []
    if workers > 1 and _dist_mode(config) == "worksteal":
        ends = [*_worksteal_starts(len(items), workers)[1:], len(items)]
        for (_, lane), end in zip(lanes, ends, strict=True):
            order.extend(item for block in lane for item in block)
            fill = max(0, end - len(order))
            order.extend(rest[:fill])
            rest = rest[fill:]
    else:
        for i in range(max(len(lane) for _, lane in lanes)):
            order.extend(item for _, lane in lanes if i < len(lane) for item in lane[i])
    items[:] = [*order, *rest]
