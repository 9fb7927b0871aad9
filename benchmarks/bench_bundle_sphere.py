"""Exact joint KNG on the whole of TS² (issue 28): the two-chart far-field sampler
(dpcore.sampling.bundle_sphere) at n = 250, tau = 0.2, speeds up to V = pi, no footpoint ball,
9 draws, against the far-field ball sampler (dpcore.sampling.bundle_farfield, R = 0.5,
V = 1.5) measured in the same run as the baseline.

Data as in bench_bundle_sampler.py (responses along a geodesic near the north pole, tangent
noise 0.1). sigma = 2 Delta / eps. Per row: n·eps, leaves (both charts), build CPU s (process
time; the machine may be shared), the certified acceptance estimate, and when 9 draws need at
most ``DRAW_LIMIT`` proposals by that estimate, the measured acceptance and the total CPU s;
then the ball sampler's total CPU s at the same n·eps and the ratio. The whole-sphere sampler
refines each chart until its estimated acceptance reaches ``GOAL``, the stop rule of the
releases (leaf cost ``LEAF_TERMS`` proposals) or ``MAX_LEAVES`` leaves per chart (the
releases' settings, dpcore.mechanisms.kng_bundle).
``python -m benchmarks.bench_bundle_sphere [n·eps ...]`` (default 100 130 250 500 1000).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd

from dpcore.mechanisms.kng_bundle import ACCEPTANCE_GOAL as GOAL
from dpcore.mechanisms.kng_bundle import LEAF_TERMS, MAX_LEAVES
from dpcore.sampling.bundle_farfield import FarFieldBundleSampler
from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_sphere import WholeSphereBundleSampler

try:
    from bench_bundle_sampler import CENTER, DRAWS, TAU, N, _data
except ImportError:  # run as a module from the repository root
    from benchmarks.bench_bundle_sampler import CENTER, DRAWS, TAU, N, _data

DRAW_LIMIT = 3e6


def _sigma(n_eps):
    return 2.0 * math.hypot(2 * TAU / N, 2 * TAU / N) / (n_eps / N)


def whole(n_eps, t, y):
    cpu = time.process_time()
    s = WholeSphereBundleSampler(t, y, TAU, _sigma(n_eps), math.pi, draws=DRAWS,
                                 max_boxes=MAX_LEAVES, box_cost=LEAF_TERMS,
                                 acceptance_goal=GOAL)
    row = {"n·ε": n_eps, "leaves": s.diagnostics["boxes"],
           "chart leaves": s.diagnostics["chart_boxes"],
           "build CPU s": round(time.process_time() - cpu, 1),
           "est. acceptance": f"{s.acceptance_estimate:.2g}"}
    if DRAWS / max(s.acceptance_estimate, 1e-300) <= DRAW_LIMIT:
        _, _, tried = s.sample_indices(DRAWS, np.random.default_rng(1))
        row["measured acc."] = f"{DRAWS / tried:.2g}"
        row["total CPU s"] = round(time.process_time() - cpu, 1)
    else:
        row["measured acc."] = "not drawn"
        row["total CPU s"] = math.nan
    return row


def ball(n_eps, t, y):
    lattice = BundleLattice(CENTER, 0.5, 1.5)
    cpu = time.process_time()
    s = FarFieldBundleSampler(t, y, TAU, _sigma(n_eps), lattice, draws=DRAWS,
                              max_boxes=MAX_LEAVES, box_cost=LEAF_TERMS,
                              acceptance_goal=GOAL)
    s.sample_indices(DRAWS, np.random.default_rng(1))
    return {"ball R=0.5 leaves": s.diagnostics["boxes"],
            "ball CPU s": round(time.process_time() - cpu, 1)}


def main(levels=(100.0, 130.0, 250.0, 500.0, 1000.0)):
    t, y = _data(BundleLattice(CENTER, 0.5, 1.5), np.random.default_rng(250))
    whole(100.0, t[:20], y[:20])                      # load the numba kernels
    rows = []
    for n_eps in levels:
        row = whole(n_eps, t, y)
        row.update(ball(n_eps, t, y))
        row["whole / ball"] = round(row["total CPU s"] / row["ball CPU s"], 2)
        print(row, flush=True)
        rows.append(row)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    args = tuple(float(a) for a in sys.argv[1:]) or (100.0, 130.0, 250.0, 500.0, 1000.0)
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(main(args).to_string(index=False))
