"""Does ``n_jobs = 2`` pay on this machine? The reproduction's biggest figures, side by side.

Each figure of ``make reproduce`` (the full configuration) is run in this process
(``n_jobs = 1``, the baseline) and with two joblib workers (loky, BLAS held to one thread in
each worker), in the same run; the table gives the seconds of each and the speed-up. The issue's
target is a speed-up of at least 1.5 on 2 cores; where it is not reached, the in-process run is
the better default (README, "Reproducing the papers").

``BENCH_PARALLEL_SECTIONS`` (comma-separated section keys, see
``dpcore.experiments.report.SECTIONS``) chooses the figures; by default the two biggest of the
full run.
"""

from __future__ import annotations

import os
import time
import warnings

import pandas as pd

DEFAULT_SECTIONS = ("p002_fig1", "p001_fig1")


def _seconds(func, config, n_jobs):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        func(config, 2024, n_jobs)
    return time.perf_counter() - start


def main():
    from dpcore.experiments.report import FULL, SECTIONS

    wanted = os.environ.get("BENCH_PARALLEL_SECTIONS")
    keys = tuple(k.strip() for k in wanted.split(",")) if wanted else DEFAULT_SECTIONS
    funcs = dict(SECTIONS)
    rows = []
    for key in keys:
        one = _seconds(funcs[key], FULL, 1)
        two = _seconds(funcs[key], FULL, 2)
        rows.append({"figure": key, "n_jobs=1 s": one, "n_jobs=2 s": two,
                     "speed-up": one / two, "target": 1.5})
    return pd.DataFrame(rows).round(2)


if __name__ == "__main__":
    print(main().to_string(index=False))
