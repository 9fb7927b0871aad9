"""Exact joint KNG on the whole of TS² in the geodesic's own coordinates (issue 28): the
releases' sampler (:class:`~dpcore.sampling.bundle_native.NativeSphereSampler` with the public
leaf cap :func:`~dpcore.mechanisms.kng_bundle.native_leaf_cap` and
:data:`~dpcore.mechanisms.kng_bundle.NATIVE_BOX_COST`), 9 draws, n = 250, tau = 0.2, speeds up
to V = pi, no footpoint ball; the issue's request is the row at n·ε = 1,000.

Two data sets: responses along a geodesic near the north pole (:func:`pole_data`: footpoint at
normal coordinates (0.1, -0.1) about the pole, shooting vector (0.8, 0.5), tangent noise 0.1)
and the issue's (covariates uniform on [0, 1], footpoint the north pole, shooting vector
(0.5, 0.3, 0), tangent noise 0.1; three seeds). Per row: leaves, build and total CPU seconds
(process time, one core), proposals, and ``ratio`` = total over the baseline measured in the
same run: this sampler on the pole data at n·ε = 150, after an untimed run of the same row that
compiles the kernels. (Until session 35 the baseline was the two-chart sampler the releases ran
before, at n·ε = 150, its largest public reach: 4.3 s against 0.4-0.6 s; it was removed with
that sampler.)

A second table: public footpoint balls at n·ε = 1,000 (:data:`BALLS`: radius R about the north
pole, speed bound V, the data's footpoint at the stated distance from the centre, beyond R
outside the ball; :func:`ball_data`), where the far-field sampler ran before (5-16 CPU s inside
its two measured supports, 15-17.5 s with the fit 0.1-0.2 outside the two-stage design's ball,
never finishing with it 0.35 outside). ``--tail`` adds that last case (about six minutes).
``python -m benchmarks.bench_bundle_native [n·ε ...] [--tail]`` (default 150 250 500 1000;
about three minutes).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd

from dpcore.manifolds import Sphere
from dpcore.mechanisms.kng_bundle import ACCEPTANCE_GOAL, NATIVE_BOX_COST, native_leaf_cap
from dpcore.sampling.bundle_native import NativeSphereSampler
from tests.sampling._chart import NormalChart

S2 = Sphere(2)
CENTER = np.array([0.0, 0.0, 1.0])
N, TAU, DRAWS = 250, 0.2, 9
#: (R, V, footpoint distance, speed of the data's geodesic or None) at n·ε = 1,000.
BALLS = ((0.5, 1.5, 0.0, None), (0.5, 1.5, 0.7, None), (0.5, math.pi, 0.0, None),
         (1.25, 0.8, 0.0, 0.7), (1.25, 0.8, 1.35, 0.7), (1.25, 0.8, 1.45, 0.7))
#: The two-stage design's tail (``--tail``): the fit 0.35 outside its ball.
TAIL = (1.25, 0.8, 1.6, 0.7)
#: Normal coordinates about the north pole (frame rows: centre, e1, e2 = centre x e1).
_CHART = NormalChart(CENTER, e1=np.array([1.0, 0.0, 0.0]))


def chart_point(u, w):
    """``(p, v)`` of normal coordinates ``u`` (2,) about the north pole with the shooting vector
    ``w`` (2,) transported along the radial geodesic (the chart of the samplers the releases
    ran before session 35, float for float, so the data sets are unchanged)."""
    return _CHART.to_bundle(u, w)


def pole_data(rng, n=N):
    """Covariates and responses about the geodesic at normal coordinates (0.1, -0.1) about the
    north pole with shooting vector (0.8, 0.5), tangent noise 0.1, covariates on [0, 1]."""
    t = rng.random(n)
    t[:2] = 0.0, 1.0
    p, v = chart_point(np.array([0.1, -0.1]), np.array([0.8, 0.5]))
    pred = S2.exp(p, t[:, None] * v)
    return t, S2.exp(pred, S2.proj_tangent(pred, 0.1 * rng.standard_normal((n, 3))))


def ball_data(distance, rng, speed=None, n=N):
    """Covariates and responses about a geodesic with footpoint ``distance`` from the north
    pole (within 0.01 of normal coordinates (distance, 0)) and shooting vector ``speed x
    (0.8, 0.5) / 0.94`` (default: (0.8, 0.5)), tangent noise 0.1, covariates on [0, 1]."""
    t = rng.random(n)
    t[:2] = 0.0, 1.0
    u = np.array([distance, 0.0]) + 0.01 * rng.standard_normal(2) / math.sqrt(2)
    w = np.array([0.8, 0.5])
    p, v = chart_point(u, w if speed is None else speed * w / math.hypot(*w))
    pred = S2.exp(p, t[:, None] * v)
    return t, S2.exp(pred, S2.proj_tangent(pred, 0.1 * rng.standard_normal((n, 3))))


def _sigma(n_eps, n=N, tau=TAU):
    return 2.0 * math.hypot(2 * tau / n, 2 * tau / n) / (n_eps / n)


def issue_data(seed, n=N):
    """The issue's request: footpoint the north pole, shooting vector (0.5, 0.3, 0)."""
    s2 = Sphere(2)
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 1.0, n)
    pred = s2.exp(np.broadcast_to(CENTER, (n, 3)), t[:, None] * np.array([0.5, 0.3, 0.0]))
    return t, s2.exp(pred, s2.proj_tangent(pred, 0.1 * rng.standard_normal((n, 3))))


def native_row(name, t, y, n_eps, seed=1, speed=math.pi, radius=None):
    cpu = time.process_time()
    sampler = NativeSphereSampler(t, y, TAU, _sigma(n_eps), speed,
                                  center=None if radius is None else CENTER, radius=radius,
                                  draws=DRAWS, max_boxes=native_leaf_cap(n_eps),
                                  box_cost=NATIVE_BOX_COST, acceptance_goal=ACCEPTANCE_GOAL)
    build = time.process_time() - cpu
    _, tried = sampler.sample_indices(DRAWS, np.random.default_rng(seed))
    return {"sampler": "native boxes", "data": name, "n·ε": n_eps,
            "leaves": sampler.diagnostics["boxes"], "build CPU s": round(build, 1),
            "proposals": int(tried), "total CPU s": round(time.process_time() - cpu, 1)}


def ball_rows(tail=False):
    """The second table (module docstring)."""
    rows = []
    for radius, speed, distance, data_speed in BALLS + ((TAIL,) if tail else ()):
        t, y = ball_data(distance, np.random.default_rng(1), speed=data_speed)
        row = native_row("ball", t, y, 1000.0, 2, speed, radius)
        rows.append({"R": radius, "V": round(speed, 3), "footpoint distance": distance,
                     **{k: row[k] for k in ("leaves", "build CPU s", "proposals",
                                            "total CPU s")}})
        print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def main(levels=(150.0, 250.0, 500.0, 1000.0)):
    t, y = pole_data(np.random.default_rng(250))
    native_row("pole (warm-up)", t, y, 150.0)     # compiles the kernels: not timed
    rows = [native_row("pole (baseline)", t, y, 150.0)]
    for n_eps in levels:
        rows.append(native_row("pole", t, y, n_eps))
        for seed in (0, 1, 2):
            rows.append(native_row(f"issue, seed {seed}", *issue_data(seed), n_eps, seed))
        print(pd.DataFrame(rows[-4:]).to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    table["ratio"] = (table["total CPU s"] / rows[0]["total CPU s"]).round(2)
    return table


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--tail"]
    with pd.option_context("display.width", 160):
        print(main(tuple(float(a) for a in args) or (150.0, 250.0, 500.0, 1000.0))
              .to_string(index=False))
        print(ball_rows("--tail" in sys.argv).to_string(index=False))
