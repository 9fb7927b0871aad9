"""Radial draws for Monte Carlo work: numerical inversion against the exact sampler.

Issue 31 point 7a. For each radial law, the time of 3 x 10^5 draws from

- ``exact``: the exact log-concave rejection sampler (:mod:`dpcore.sampling._logconcave`), which
  releases use;
- ``inversion``: dpcore's numerical inversion (:mod:`dpcore.sampling.inversion`), which the
  Monte Carlo µ, its calibration and studies use;
- ``pinv``: scipy's ``NumericalInversePolynomial`` on the same density (UNU.RAN's PINV, the
  reference for what inversion can cost). NaN where the density has not decayed before a
  finite end of the support where it vanishes (log f there within 20 to 50 of its peak: S² at
  the antipode for sigma from about 0.8, Kendall shapes at pi/2): PINV's setup fails there
  ("maximum number of iterations exceeded") or does not return, so it is not attempted.

Both samplers are built once and cached (the columns ``*_setup_ms`` give the cost of a build).
``speedup`` = exact / inversion; ``vs_pinv`` = inversion / pinv (1 = as fast as scipy). The last
row times a whole Monte Carlo µ (``gdp_mu_monte_carlo`` on S², 100 x 1000 draws per centre) with
the radii drawn each way.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

import dpcore.sampling as sampling
from dpcore.manifolds import Hyperbolic, KendallShape, Sphere
from dpcore.privacy import gdp_mu_monte_carlo
from dpcore.sampling.inversion import InversionSampler
from dpcore.sampling.radial import (
    draw_radii,
    inversion_sampler,
    log_radial_functions,
    radial_sampler,
    volume_profile,
)

from ._timing import per_call

N_DRAWS = 300_000
LAWS = [
    (Sphere(2), 0.1, "gaussian"),
    (Sphere(2), 0.5, "gaussian"),
    (Sphere(2), 1.5, "gaussian"),
    (Sphere(2), 0.3, "laplace"),
    (Sphere(2), 1.0, "laplace"),
    (Sphere(1), 1.0, "gaussian"),
    (KendallShape(4), 0.4, "gaussian"),
    (Hyperbolic(2), 0.8, "gaussian"),
]


def _setup_ms(build, repeats=3):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        build()
        best = min(best, time.perf_counter() - start)
    return 1e3 * best


def _pinv(profile, sigma, kind, r_max, rng):
    """scipy's PINV on the same law, or None where its setup fails or is not attempted."""
    from scipy.stats.sampling import NumericalInversePolynomial

    logf, _ = log_radial_functions(profile, sigma, kind)
    exact = radial_sampler(profile, sigma, kind, 0.0, r_max)
    peak = exact.log_peak
    with np.errstate(all="ignore"):
        vanishes_at_end = (math.isfinite(r_max)
                           and peak - 50.0 < float(logf(np.float64(r_max))) < peak - 20.0)
    reaches_end = inversion_sampler(profile, sigma, kind, 0.0, r_max).nodes[-1] == r_max
    if vanishes_at_end and reaches_end:
        return None

    class Law:
        def pdf(self, r):
            with np.errstate(all="ignore"):
                return float(np.exp(logf(np.float64(r)) - peak))

    top = r_max if math.isfinite(r_max) else exact.mode + 60.0 * sigma
    try:
        return NumericalInversePolynomial(Law(), domain=(0.0, top), center=exact.mode,
                                          random_state=rng)
    except Exception:  # noqa: BLE001 - UNU.RAN reports a failed setup as a generic error
        return None


def _law_row(manifold, sigma, kind, rng):
    profile = volume_profile(manifold)
    r_max = profile.r_max
    exact_s = per_call(lambda: draw_radii(profile, sigma, kind, 0.0, r_max, N_DRAWS, rng),
                       min_time=0.2, repeats=3)
    fast = inversion_sampler(profile, sigma, kind, 0.0, r_max)
    inv_s = per_call(lambda: fast.sample(N_DRAWS, rng), min_time=0.2, repeats=3)
    logf, dlogf = log_radial_functions(profile, sigma, kind)
    inv_setup = _setup_ms(lambda: InversionSampler(logf, dlogf, 0.0, r_max, scale=sigma))
    pinv = _pinv(profile, sigma, kind, r_max, rng)
    pinv_s = pinv_setup = math.nan
    if pinv is not None:
        pinv_s = per_call(lambda: pinv.rvs(N_DRAWS), min_time=0.2, repeats=3)
        pinv_setup = _setup_ms(lambda: _pinv(profile, sigma, kind, r_max, rng), repeats=1)
    return {"law": f"{manifold!r} {kind} sigma={sigma}", "exact_ms": 1e3 * exact_s,
            "inversion_ms": 1e3 * inv_s, "pinv_ms": 1e3 * pinv_s,
            "inversion_setup_ms": inv_setup, "pinv_setup_ms": pinv_setup,
            "cells": fast.nodes.size - 1, "speedup": exact_s / inv_s, "vs_pinv": inv_s / pinv_s}


def _monte_carlo_mu_row():
    """gdp_mu_monte_carlo on S² with the radii by inversion (as shipped) and exactly."""
    real = sampling.sample_gaussian

    def run():
        gdp_mu_monte_carlo(Sphere(2), 1.0, 0.5, n_samples=1000, repeats=100, rng=1)

    inv_s = per_call(run, min_time=0.5, repeats=3)
    sampling.sample_gaussian = lambda *a, **k: real(*a, **{**k, "radial": "exact"})
    try:
        exact_s = per_call(run, min_time=0.5, repeats=3)
    finally:
        sampling.sample_gaussian = real
    return {"law": "gdp_mu_monte_carlo(Sphere(2), sigma=1, 2 x 100 x 1000 draws)",
            "exact_ms": 1e3 * exact_s, "inversion_ms": 1e3 * inv_s,
            "speedup": exact_s / inv_s}


def main():
    rng = np.random.default_rng(0)
    rows = [_law_row(m, s, k, rng) for m, s, k in LAWS] + [_monte_carlo_mu_row()]
    return pd.DataFrame(rows).set_index("law").round(2)


if __name__ == "__main__":
    print(main().to_string())
