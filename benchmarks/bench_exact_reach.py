"""How far exact releases reach today, per manifold (issue 28: the README states it).

``python -m benchmarks.bench_exact_reach`` prints one table. For each manifold, strict joint
geodesic regression with the pages' public bounds (covariate range [0, 1], τ = 0.2, the
library's default speed bound; SPD(2) also τ_m = 1 about I; S² also with a public footpoint
ball, where the certified bundle sampler runs; SPD(2) and Kendall(4) also with the Geodesic
regression page's demonstration designs, where uniform proposals are priced by their public
prediction, :mod:`dpcore.release.uniform_cost`) at n = 100 and one draw: the
largest n·ε (ε = ε_p + ε_v, split evenly) at which ``sampler="auto"`` still chooses the exact
sampler, found by bisection on the public plan (:meth:`dpcore.release.requests.
GeodesicRegressionRequest.exact_reach`; public inputs only, so it is the same for every data
set), and then the time of one exact release there on a synthetic data set (``seconds``; the
exact sampler's time depends on the data) next to the
MCMC release of the same request (library chains, 2000 + 1000) measured in the same run
(``ratio`` = exact / MCMC). Beyond that n·ε a release is refused ("exact only") or drawn by
MCMC and labelled approximately private.

A second block does the same for the Fréchet-mean KNG on S² (public ball of radius 0.5 about the
north pole) and for the Laplace mechanism, which is exact at every ε (closed-form radial law).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from dpcore.data import make_mean_data, make_regression_data
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.release import (
    private_frechet_mean,
    private_geodesic_regression,
)
from dpcore.release.frechet_mechanisms import frechet_mechanism
from dpcore.release.requests import FrechetMeanRequest, GeodesicRegressionRequest

N = 100
TAU = 0.2
NORTH = np.array([0.0, 0.0, 1.0])
#: Bisection interval of n·ε and its relative resolution.
LOW, HIGH, RESOLUTION = 1.0, 1e6, 0.02


def _regression_cases():
    spd, kendall = SPD(2), KendallShape(4)
    return [
        ("S²", Sphere(2), {}),
        ("S², footpoint ball r = 0.5, |v| ≤ 1.5", Sphere(2),
         {"center": NORTH, "footpoint_radius": 0.5, "max_speed": 1.5}),
        ("S², footpoint ball r = 1.25, |v| ≤ 0.8 (the two-stage design's stage 2)", Sphere(2),
         {"center": NORTH, "footpoint_radius": 1.25, "max_speed": 0.8}),
        ("SPD(2)", spd, {"tau_m": 1.0, "center": np.eye(2)}),
        # the Geodesic regression page's demonstration designs (ui.logic.geodesic_regression)
        ("SPD(2), the page's design (footpoint within 0.1 of I, |v| ≤ 0.55, τ = 0.175)", spd,
         {"tau": 0.175, "tau_m": 0.8, "center": np.eye(2), "footpoint_radius": 0.1,
          "max_speed": 0.55}),
        ("Kendall(4)", kendall, {}),
        ("Kendall(4), the page's design (within 0.15 of the template, |v| ≤ 0.55, τ = 0.25)",
         kendall, {"tau": 0.25, "center": kendall.origin, "footpoint_radius": 0.15,
                   "max_speed": 0.55}),
        ("R² (Linear regression)", Euclidean(2), {"tau_m": 1.0, "center": np.zeros(2)}),
        ("R⁴ (Linear regression, four responses)", Euclidean(4),
         {"tau_m": 1.0, "center": np.zeros(4)}),
    ]


def _largest(exact_at):
    """Largest n·ε in [LOW, HIGH] with ``exact_at(n_eps)`` true (monotone), or None."""
    if not exact_at(LOW):
        return None
    if exact_at(HIGH):
        return HIGH
    lo, hi = LOW, HIGH
    while hi / lo > 1 + RESOLUTION:
        mid = float(np.sqrt(lo * hi))
        lo, hi = (mid, hi) if exact_at(mid) else (lo, mid)
    return lo


def _timed(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        out = fn()
        return time.perf_counter() - start, out


def regression_rows():
    rows = []
    for name, m, extra in _regression_cases():
        tau_m = extra.get("tau_m")

        tau = extra.get("tau", TAU)

        # the bisection of the request itself over n·ε in [LOW, HIGH] (its span about the
        # geometric middle), at an even split and one draw
        middle = float(np.sqrt(LOW * HIGH)) / N / 2
        request = GeodesicRegressionRequest(
            m, N, eps_p=middle, eps_v=middle, tau=tau, covariate_range=(0.0, 1.0),
            tau_m=tau_m, center=extra.get("center"), max_speed=extra.get("max_speed"),
            footpoint_radius=extra.get("footpoint_radius"))
        reach = request.exact_reach(span=float(np.sqrt(HIGH / LOW)), resolution=RESOLUTION)
        reach = None if reach is None else reach * N
        row = {"release": f"geodesic regression, {name}", "n": N,
               "exact up to n·ε": "never" if reach is None else f"{reach:,.0f}"}
        if reach is not None:
            # (Kendall's synthetic data have no footpoint region: the paper's protocol, as on
            # the page)
            region = ((extra["center"], min(0.2, extra["footpoint_radius"]))
                      if "footpoint_radius" in extra and not isinstance(m, KendallShape)
                      else None)
            data = make_regression_data(m, N, noise=0.05, rng=1, footpoint_region=region)
            eps = reach / N / 2
            kw = dict(eps_p=eps, eps_v=eps, covariate_range=(0.0, 1.0), rng=0,
                      max_work=float("inf"), **{"tau": TAU, **extra})
            exact_s, rel = _timed(lambda kw=kw, m=m, data=data: private_geodesic_regression(
                m, data.x, data.y, sampler="exact", **kw))
            mcmc_s, _ = _timed(lambda kw=kw, m=m, data=data: private_geodesic_regression(
                m, data.x, data.y, sampler="mcmc", **kw))
            row.update({"label": rel.label.split(",")[0], "seconds": round(exact_s, 2),
                        "MCMC seconds": round(mcmc_s, 2), "ratio": round(exact_s / mcmc_s, 2)})
        rows.append(row)
    return rows


def frechet_rows():
    rows = []
    m = Sphere(2)
    points = make_mean_data(m, N, radius=0.3, rng=1, center=NORTH)
    for mechanism in ("kng", "laplace"):
        def exact_at(n_eps, mechanism=mechanism):
            request = FrechetMeanRequest(m, N, epsilon=n_eps / N, mechanism=mechanism,
                                         radius=0.5, center=NORTH)
            return bool(frechet_mechanism(mechanism).plan(request)["exact"])

        reach = _largest(exact_at)
        row = {"release": f"Fréchet mean ({mechanism}), S², ball radius 0.5", "n": N,
               "exact up to n·ε": ("never" if reach is None else
                                   f"≥ {reach:,.0f} (every ε tried)" if reach == HIGH else
                                   f"{reach:,.0f}")}
        if reach is not None:
            eps = reach / N
            exact_s, rel = _timed(lambda eps=eps, mechanism=mechanism: private_frechet_mean(
                m, points, epsilon=eps, mechanism=mechanism, radius=0.5, center=NORTH,
                rng=0, max_work=float("inf")))
            row.update({"label": rel.label.split(",")[0], "seconds": round(exact_s, 2)})
        rows.append(row)
    return rows


def main():
    return pd.DataFrame(regression_rows() + frechet_rows())


if __name__ == "__main__":
    start = time.perf_counter()
    with pd.option_context("display.width", 200, "display.max_columns", None):
        print(main().astype(object).fillna("-").to_string(index=False))
    print(f"({time.perf_counter() - start:.0f} s)")
