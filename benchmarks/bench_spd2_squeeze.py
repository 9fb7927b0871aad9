"""Exact SPD(2) regression releases with and without the certified squeeze (issue 28).

``python -m benchmarks.bench_spd2_squeeze [n·ε ...] [--n N] [--seeds S,S,...] [--no-baseline]``
prints one table. For each n·ε (default 400 and 500) and each data set
(``make_regression_data`` with seeds 1-3, n = 100, noise 0.05, footpoints within 0.1 of I),
the release the Geodesic regression page's SPD(2) design makes (footpoint ball of radius 0.1
about I, speeds up to 0.55, τ = 0.175, τ_m = 0.8, ε_p = ε_v, 3 x 3 draws, ``sampler="exact"``)
is timed twice in the same run: as the library draws it (uniform proposals with the squeeze of
:mod:`dpcore.sampling.spd2_squeeze` where :func:`~dpcore.release.planning.release_squeeze`
builds one) and, as the baseline, with plain uniform proposals (the squeeze switched off).
Columns: CPU seconds of each, ``ratio`` (squeeze / baseline), the squeeze's leaves, its
proposals and how many needed their gradient, and what ``sampler="auto"`` decides for the
request (exact or MCMC, from public inputs only) with its work estimate.
The baseline at n·ε = 500 takes about a minute a data set; ``--no-baseline`` skips it.
"""

from __future__ import annotations

import contextlib
import sys
import time
import warnings
from unittest import mock

import numpy as np
import pandas as pd

from dpcore.data import make_regression_data
from dpcore.manifolds import SPD
from dpcore.release import private_geodesic_regression
from dpcore.release.requests import GeodesicRegressionRequest

DESIGN = {"tau": 0.175, "tau_m": 0.8, "center": np.eye(2), "footpoint_radius": 0.1,
          "max_speed": 0.55}


def _release(m, data, eps, squeeze=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        patch = (mock.patch("dpcore.release.regression.release_squeeze", return_value=None)
                 if not squeeze else contextlib.nullcontext())
        with patch:
            start = time.process_time()
            rel = private_geodesic_regression(
                m, data.x, data.y, eps_p=eps, eps_v=eps, covariate_range=(0.0, 1.0), rng=0,
                max_work=float("inf"), n_footpoints=3, n_vectors=3, sampler="exact", **DESIGN)
            return time.process_time() - start, rel.diagnostics["joint"]


def rows(n_eps_list, n=100, seeds=(1, 2, 3), baseline=True):
    m = SPD(2)
    out = []
    for n_eps in n_eps_list:
        eps = n_eps / n / 2
        req = GeodesicRegressionRequest(m, n, eps_p=eps, eps_v=eps, tau=0.175,
                                        covariate_range=(0.0, 1.0), tau_m=0.8,
                                        center=((1.0, 0.0), (0.0, 1.0)), max_speed=0.55,
                                        footpoint_radius=0.1, n_footpoints=3, n_vectors=3)
        auto = "exact" if req.plan()["exact"] else "MCMC"
        estimate = req.work().seconds
        for seed in seeds:
            data = make_regression_data(m, n, noise=0.05, rng=seed,
                                        footpoint_region=(np.eye(2), 0.1))
            s_sq, d = _release(m, data, eps)
            row = {"n·ε": n_eps, "n": n, "seed": seed, "squeeze CPU s": round(s_sq, 1),
                   "leaves": d.get("squeeze_leaves", 0), "proposals": d["proposals"],
                   "gradients": d.get("gradients_evaluated", d["proposals"]),
                   "auto": auto, "estimate s": round(estimate, 1)}
            if baseline:
                s_u, d_u = _release(m, data, eps, squeeze=False)
                row.update({"uniform CPU s": round(s_u, 1), "uniform proposals": d_u["proposals"],
                            "ratio": round(s_sq / s_u, 2)})
            out.append(row)
            print(pd.DataFrame([row]).to_string(index=False, header=len(out) == 1), flush=True)
    return pd.DataFrame(out)


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    n, seeds, baseline = 100, (1, 2, 3), True
    if "--n" in args:
        i = args.index("--n")
        n = int(args[i + 1])
        del args[i:i + 2]
    if "--seeds" in args:
        i = args.index("--seeds")
        seeds = tuple(int(s) for s in args[i + 1].split(","))
        del args[i:i + 2]
    if "--no-baseline" in args:
        args.remove("--no-baseline")
        baseline = False
    n_eps = [float(a) for a in args] or [400.0, 500.0]
    table = rows(n_eps, n=n, seeds=seeds, baseline=baseline)
    print()
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
