"""pytest plugin of ``benchmarks/suite_times.py``: a JSON line per test with its CPU and wall time.

Loaded with ``-p benchmarks._suite_plugin`` (also by every xdist worker). Each process writes
``<DPCORE_SUITE_LOG>/<pid>.jsonl``: the test's node id, the CPU seconds of the process itself
and of the child processes reaped during the test (servers, Chromium, subprocesses: counted
when they end, so a session-scoped server is counted with the test that stops it), and the wall
seconds, setup and teardown included, with its start (epoch seconds) and the worker's pid.
"""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import pytest

_OUT = None


def _cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _OUT
    folder = os.environ.get("DPCORE_SUITE_LOG")
    if folder is None:
        yield
        return
    if _OUT is None:
        _OUT = open(Path(folder) / f"{os.getpid()}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
    own, children, start, at = *_cpu(), time.perf_counter(), time.time()
    yield
    own2, children2, end = *_cpu(), time.perf_counter()
    _OUT.write(json.dumps({"id": item.nodeid, "own": own2 - own, "children": children2 - children,
                           "wall": end - start, "start": at, "pid": os.getpid()}) + "\n")
    _OUT.flush()
