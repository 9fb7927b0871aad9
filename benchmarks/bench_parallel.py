"""Does ``n_jobs = 2`` pay on this machine? The reproduction's biggest figures, side by side.

Each figure of ``make reproduce`` (the full configuration) is run in this process
(``n_jobs = 1``, the baseline) and with two joblib workers (loky, BLAS held to one thread in
each worker), in the same run; the table gives the seconds of each and the speed-up. The issue's
target is a speed-up of at least 1.5 on 2 cores; where it is not reached, the in-process run is
the better default (README, "Reproducing the papers").

The two workers are started (and have imported :mod:`dpcore.experiments.report`) before any
figure is timed, as in a report run, where one pool of workers serves all the sections: their
start-up, paid once per run, is the first row of the table.

Columns: ``n_jobs=1 s`` and ``n_jobs=2 s`` (best of the repeats) and ``speed-up``, their
ratio: the issue's measure, meaningful only on a quiet machine. The kernel shares the CPUs
between sessions (autogroups), not processes: while another session keeps a core busy, the two
workers together get roughly the one core the in-process run gets too, and the speed-up drops
towards 1 whatever the code. Hence two columns computed from CPU seconds (psutil, a dependency of
``dask[distributed]``; NaN without it), which depend much less on the load: ``work ratio``, the CPU
seconds of the two-worker run (this process and the workers) over those of the in-process run
(the parallel overhead: task dispatch, warm-up repeated in each worker, cores slowed by
sharing caches), and ``cpu speed-up``, the in-process CPU seconds over those of this process
plus the busiest worker, the speed-up of cores that nothing else uses, waits for stragglers at
the end of a parallel call not counted.

``BENCH_PARALLEL_SECTIONS`` (comma-separated section keys, see
``dpcore.experiments.report.SECTIONS``) chooses the figures, by default the two biggest of the
full run; ``BENCH_PARALLEL_REPEATS`` (default 1) how often each is timed, alternating
``n_jobs = 1`` and ``2``.
"""

from __future__ import annotations

import importlib
import os
import time
import warnings

import numpy as np
import pandas as pd

DEFAULT_SECTIONS = ("p002_fig1", "p001_fig1")


def _cpu_seconds():
    """CPU seconds of this process and of each of its children (the loky workers), by pid;
    empty when psutil is missing."""
    try:
        import psutil
    except ImportError:
        return {}
    me = psutil.Process()
    out = {"parent": sum(me.cpu_times()[:2])}
    for child in me.children(recursive=True):
        try:
            out[child.pid] = sum(child.cpu_times()[:2])
        except psutil.Error:
            continue  # a process that ended between the listing and the query
    return out


def _run(func, config, n_jobs):
    """Wall seconds of one run of a section, and the CPU seconds of this process and of the
    busiest worker (NaN without psutil)."""
    before, start = _cpu_seconds(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        func(config, 2024, n_jobs)
    wall, after = time.perf_counter() - start, _cpu_seconds()
    if not after:
        return wall, np.nan, np.nan
    used = {k: v - before.get(k, 0.0) for k, v in after.items()}
    parent = used.pop("parent")
    return wall, parent + sum(used.values()), parent + max(used.values(), default=0.0)


def _start_workers(n_jobs):
    """Start the joblib workers and import the report in each; seconds taken."""
    from dpcore.experiments._parallel import parallel_map

    start = time.perf_counter()
    parallel_map(importlib.import_module, [("dpcore.experiments.report",)] * (4 * n_jobs),
                 n_jobs)
    return time.perf_counter() - start


def main():
    from dpcore.experiments.report import FULL, SECTIONS

    wanted = os.environ.get("BENCH_PARALLEL_SECTIONS")
    keys = tuple(k.strip() for k in wanted.split(",")) if wanted else DEFAULT_SECTIONS
    repeats = max(1, int(os.environ.get("BENCH_PARALLEL_REPEATS", "1")))
    funcs = dict(SECTIONS)
    rows = [{"figure": "(start 2 workers, once per run)", "n_jobs=1 s": np.nan,
             "n_jobs=2 s": _start_workers(2), "speed-up": np.nan, "work ratio": np.nan,
             "cpu speed-up": np.nan, "target": np.nan}]
    for key in keys:
        runs = {1: [], 2: []}
        for _ in range(repeats):
            for n_jobs in (1, 2):
                runs[n_jobs].append(_run(funcs[key], FULL, n_jobs))
        one, cpu_one, _ = (min(col) for col in zip(*runs[1], strict=True))
        two, cpu_two, critical = (min(col) for col in zip(*runs[2], strict=True))
        rows.append({"figure": key, "n_jobs=1 s": one, "n_jobs=2 s": two,
                     "speed-up": one / two, "work ratio": cpu_two / cpu_one,
                     "cpu speed-up": cpu_one / critical, "target": 1.5})
    return pd.DataFrame(rows).round(2)


if __name__ == "__main__":
    print(main().to_string(index=False))
