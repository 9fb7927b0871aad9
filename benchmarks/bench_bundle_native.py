"""Exact joint KNG on the whole of TS² in the geodesic's own coordinates (issue 28): the
releases' sampler (:class:`~dpcore.sampling.bundle_native.NativeSphereSampler` with the public
leaf cap :func:`~dpcore.mechanisms.kng_bundle.native_leaf_cap` and
:data:`~dpcore.mechanisms.kng_bundle.NATIVE_BOX_COST`), 9 draws, n = 250, tau = 0.2, speeds up
to V = pi, no footpoint ball; the issue's request is the row at n·ε = 1,000.

Two data sets: the responses of ``bench_bundle_sampler.py`` (along a geodesic near the north
pole, tangent noise 0.1) and the issue's (covariates uniform on [0, 1], footpoint the north
pole, shooting vector (0.5, 0.3, 0), tangent noise 0.1; three seeds). Per row: leaves, build
and total CPU seconds (process time, one core), proposals, and ``ratio`` = total over the
baseline measured in the same run: the two-chart sampler the releases ran before
(:mod:`dpcore.sampling.bundle_sphere`, its public caps) at n·ε = 150, its largest public reach.
``python -m benchmarks.bench_bundle_native [n·ε ...]`` (default 150 250 500 1000; about two
minutes).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd

from dpcore.manifolds import Sphere
from dpcore.mechanisms.kng_bundle import (
    ACCEPTANCE_GOAL,
    LEAF_TERMS,
    MAX_LEAVES,
    NATIVE_BOX_COST,
    native_leaf_cap,
)
from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_native import NativeSphereSampler
from dpcore.sampling.bundle_sphere import WholeSphereBundleSampler

try:
    from bench_bundle_sampler import CENTER, _data
except ImportError:  # run as a module from the repository root
    from benchmarks.bench_bundle_sampler import CENTER, _data

N, TAU, DRAWS = 250, 0.2, 9


def _sigma(n_eps, n=N, tau=TAU):
    return 2.0 * math.hypot(2 * tau / n, 2 * tau / n) / (n_eps / n)


def issue_data(seed, n=N):
    """The issue's request: footpoint the north pole, shooting vector (0.5, 0.3, 0)."""
    s2 = Sphere(2)
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 1.0, n)
    pred = s2.exp(np.broadcast_to(CENTER, (n, 3)), t[:, None] * np.array([0.5, 0.3, 0.0]))
    return t, s2.exp(pred, s2.proj_tangent(pred, 0.1 * rng.standard_normal((n, 3))))


def native_row(name, t, y, n_eps, seed=1):
    cpu = time.process_time()
    sampler = NativeSphereSampler(t, y, TAU, _sigma(n_eps), math.pi, draws=DRAWS,
                                  max_boxes=native_leaf_cap(n_eps), box_cost=NATIVE_BOX_COST,
                                  acceptance_goal=ACCEPTANCE_GOAL)
    build = time.process_time() - cpu
    _, tried = sampler.sample_indices(DRAWS, np.random.default_rng(seed))
    return {"sampler": "native boxes", "data": name, "n·ε": n_eps,
            "leaves": sampler.diagnostics["boxes"], "build CPU s": round(build, 1),
            "proposals": int(tried), "total CPU s": round(time.process_time() - cpu, 1)}


def two_chart_row(t, y, n_eps):
    cpu = time.process_time()
    sampler = WholeSphereBundleSampler(t, y, TAU, _sigma(n_eps), math.pi, draws=DRAWS,
                                       max_boxes=MAX_LEAVES, box_cost=LEAF_TERMS,
                                       acceptance_goal=ACCEPTANCE_GOAL)
    build = time.process_time() - cpu
    _, _, tried = sampler.sample_indices(DRAWS, np.random.default_rng(1))
    return {"sampler": "two charts (before)", "data": "bench_bundle_sampler", "n·ε": n_eps,
            "leaves": sampler.diagnostics["boxes"], "build CPU s": round(build, 1),
            "proposals": int(tried), "total CPU s": round(time.process_time() - cpu, 1)}


def main(levels=(150.0, 250.0, 500.0, 1000.0)):
    t, y = _data(BundleLattice(CENTER, 0.5, 1.5), np.random.default_rng(250))
    rows = [two_chart_row(t, y, 150.0)]
    for n_eps in levels:
        rows.append(native_row("bench_bundle_sampler", t, y, n_eps))
        for seed in (0, 1, 2):
            rows.append(native_row(f"issue, seed {seed}", *issue_data(seed), n_eps, seed))
        print(pd.DataFrame(rows[-4:]).to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    table["ratio"] = (table["total CPU s"] / rows[0]["total CPU s"]).round(2)
    return table


if __name__ == "__main__":
    args = tuple(float(a) for a in sys.argv[1:])
    with pd.option_context("display.width", 160):
        print(main(args or (150.0, 250.0, 500.0, 1000.0)).to_string(index=False))
