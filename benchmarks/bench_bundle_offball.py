"""The far-field bundle release when the data's fit lies outside the public footpoint ball
(issue 28): one exact release per row, through the release path
(``dpcore.mechanisms.kng_bundle.regression_joint_bundle``), its CPU time and proposals, against
the same release with the fit at the ball's centre (the baseline, measured in the same run).

Data: n = 250 responses about a geodesic whose footpoint lies at the stated distance from the
ball's centre (the north pole; within 0.01 of that point), shooting vector (0.8, 0.5) in the
chart, noise 0.1 per tangent component, covariates uniform on [0, 1]; τ = 0.2, ball of radius
0.5, speeds up to 1.5, ε_p = ε_v = 2 (n·ε = 1,000 per geodesic), σ of the joint scheme. The
public prediction (``2 x MAX_LEAVES x LEAF_TERMS x n`` gradient terms per mechanism) is the
cost ``sampler="auto"`` reads. Run: ``python -m benchmarks.bench_bundle_offball [draws]``
(default 9 draws; the rows take about a minute in all).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd

from dpcore.manifolds import Sphere
from dpcore.mechanisms.kng_bundle import LEAF_TERMS, MAX_LEAVES
from dpcore.sampling.bundle_farfield import FarFieldBundleSampler
from dpcore.sampling.bundle_lattice import BundleLattice

S2 = Sphere(2)
CENTER = np.array([0.0, 0.0, 1.0])
N, TAU, RADIUS, SPEED, N_EPS = 250, 0.2, 0.5, 1.5, 1000.0
DISTANCES = (0.0, 0.4, 0.55, 0.7, 1.0)


def data(lattice, distance, rng, speed=None, n=N):
    """Covariates and responses about a geodesic with footpoint ``distance`` from the centre
    and shooting vector ``speed x (0.8, 0.5) / 0.94`` in the chart (default: (0.8, 0.5))."""
    t = rng.random(n)
    t[:2] = 0.0, 1.0
    u = np.array([distance, 0.0]) + 0.01 * rng.standard_normal(2) / math.sqrt(2)
    w = np.array([0.8, 0.5])
    p, v = lattice.chart.to_bundle(u, w if speed is None else speed * w / math.hypot(*w))
    pred = S2.exp(p, t[:, None] * v)
    return t, S2.exp(pred, S2.proj_tangent(pred, 0.1 * rng.standard_normal((n, 3))))


def built_sampler(lattice, t, y, draws):
    """``(sampler, build CPU s)``: the envelope of one release at n·ε = N_EPS with the
    releases' leaf cap and leaf cost."""
    n = len(t)
    sigma = 2.0 * math.hypot(2 * TAU / n, 2 * TAU / n) / (N_EPS / n)
    cpu = time.process_time()
    sampler = FarFieldBundleSampler(t, y, TAU, sigma, lattice, draws=draws,
                                    max_boxes=MAX_LEAVES, box_cost=LEAF_TERMS)
    return sampler, time.process_time() - cpu


def timed_release(lattice, t, y, draws):
    """``(sampler, build CPU s, proposals, total CPU s)`` of one release at n·ε = N_EPS with
    the releases' leaf cap and leaf cost."""
    sampler, build = built_sampler(lattice, t, y, draws)
    cpu = time.process_time()
    _, tried = sampler.sample_indices(draws, np.random.default_rng(2))
    return sampler, build, tried, build + time.process_time() - cpu


def run(distance, draws):
    """One release's figures (a dict of the table's columns)."""
    lattice = BundleLattice(CENTER, RADIUS, SPEED)
    t, y = data(lattice, distance, np.random.default_rng(1))
    sampler, build, tried, total = timed_release(lattice, t, y, draws)
    fit_u = float(np.hypot(*sampler.fit[:2]))
    return {"footpoint distance": distance, "fit |u|": round(fit_u, 3),
            "fit in ball": fit_u <= RADIUS,
            "support mass / mode's Laplace mass": (
                "1 (fit inside)" if sampler.log_support_mass is None else
                f"{math.exp(sampler.log_support_mass - sampler.laplace_log_mass):.2g}"),
            # rejection accepts with probability Z / M: the draws' own estimate of log Z
            "estimate - log Z from the draws": (
                "" if sampler.log_support_mass is None else
                f"{sampler.log_support_mass - sampler.log_m - math.log(draws / tried):+.2f}"),
            "leaves": sampler.diagnostics["boxes"], "build CPU s": round(build, 1),
            "proposals": int(tried), "acceptance": f"{draws / tried:.2g}",
            "total CPU s": round(total, 1)}


def main(draws=9):
    rows = []
    for d in DISTANCES:
        rows.append(run(d, draws))
        print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    frame["vs fit at centre"] = [f"{x / frame['total CPU s'][0]:.2g}x"
                                 for x in frame["total CPU s"]]
    cost = 2 * MAX_LEAVES * LEAF_TERMS * N
    print(f"public prediction per release: {cost:.3g} gradient terms (2 x {MAX_LEAVES} leaves x "
          f"{LEAF_TERMS:g} x n)")
    return frame


if __name__ == "__main__":
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 9).to_string(index=False))
