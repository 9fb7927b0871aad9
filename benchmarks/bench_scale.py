"""Large n: the non-private estimators and the exact mechanisms at n = 10^4 ... 10^6.

For each step (non-private Fréchet mean, non-private geodesic regression, exact private
Fréchet means by the Laplace and KNG mechanisms) on S² and SPD(2), the seconds at each n and the
growth exponent b of seconds ~ n^b fitted over the sizes (least squares on the logs). The
baseline of each row is its smallest n, measured in the same run: the ratio column is the time at
the largest n over the time at the smallest. ``BENCH_SCALE_MAX`` caps the largest n (default
10^6).

One more row (issue 13 point 6): a private geodesic regression on S² in strict mode at the
library's defaults otherwise (joint scheme, one draw, sampler "auto", chains of 1000 + 2000
steps), at n = 10^4 and 10^5 only, with a progress callback (its calls are checked to end at
1.0); target: at most 30 s at n = 10^5.

Data are drawn once per space and size: on S² the papers' protocol around a random point; on
SPD(2) symmetric matrices Exp(I, xi) with xi Gaussian in the tangent space, a cheap
stand-in for the protocol's generator at these sizes (the estimators' cost does not depend on
which generator made the points).
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
import pandas as pd

from dpcore.learning import GeodesicRegression, frechet_mean
from dpcore.manifolds import SPD, Sphere
from dpcore.release import private_frechet_mean, private_geodesic_regression

SIZES = (10_000, 100_000, 1_000_000)
#: Sizes of the private regression row and its target at the largest (seconds).
PRIVATE_SIZES = (10_000, 100_000)
PRIVATE_TARGET = 30.0


def _points(manifold, n, rng):
    if isinstance(manifold, Sphere):
        base = manifold.random_point(rng=rng)
        xi = manifold.proj_tangent(base, 0.2 * rng.standard_normal((n, manifold.dim + 1)))
        return manifold.exp(np.broadcast_to(base, xi.shape), xi)
    a = 0.3 * rng.standard_normal((n, 2, 2))
    return manifold.exp(np.broadcast_to(np.eye(2), a.shape), 0.5 * (a + np.swapaxes(a, -1, -2)))


def _regression_data(manifold, n, rng):
    y = _points(manifold, n, rng)
    return rng.uniform(0.0, 1.0, n), y


def _time(fn):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn()
    return time.perf_counter() - start


def _steps(manifold, center, radius):
    return {
        "Fréchet mean (non-private)": lambda y, x: frechet_mean(manifold, y),
        "geodesic regression (non-private)": lambda y, x: GeodesicRegression(manifold).fit(x, y),
        "Laplace Fréchet mean (exact)": lambda y, x: private_frechet_mean(
            manifold, y, epsilon=1.0, mechanism="laplace", radius=radius, center=center, rng=0),
        "KNG Fréchet mean (exact)": lambda y, x: private_frechet_mean(
            manifold, y, epsilon=1.0, mechanism="kng", radius=radius, center=center, rng=0),
    }


def _private_regression(manifold, y, x):
    """A strict private regression at the library's defaults, reporting its progress."""
    seen = []
    private_geodesic_regression(manifold, x, y, eps_p=1.0, eps_v=2.0, tau=0.2,
                                covariate_range=(0.0, 1.0), rng=0, progress=seen.append)
    if not seen or seen[-1] != 1.0 or np.any(np.diff(seen) < 0):
        raise RuntimeError("the progress callback did not rise to 1.0")


def _row(name, step, sizes, secs):
    slope = np.polyfit(np.log(sizes), np.log(secs), 1)[0] if len(sizes) > 1 else np.nan
    row = {"space": name, "step": step}
    row.update({f"n={n:.0e} s": s for n, s in zip(sizes, secs, strict=True)})
    row.update({"exponent": slope, "largest / smallest": secs[-1] / secs[0]})
    return row


def main():
    top = int(float(os.environ.get("BENCH_SCALE_MAX", SIZES[-1])))
    sizes = [n for n in SIZES if n <= top]
    rng = np.random.default_rng(0)
    rows = []
    for name, manifold, center, radius in (
            ("S2", Sphere(2), None, 0.75), ("SPD(2)", SPD(2), np.eye(2), 1.5)):
        data = {n: _regression_data(manifold, n, rng) for n in sizes}
        if center is None:
            center = frechet_mean(manifold, data[sizes[0]][1][:1000])
        for step, fn in _steps(manifold, center, radius).items():
            secs = [_time(lambda n=n: fn(data[n][1], data[n][0])) for n in sizes]
            rows.append(_row(name, step, sizes, secs))
        if name == "S2":
            private = [n for n in PRIVATE_SIZES if n in data]
            if private:
                # Warm up: the first call compiles the sampler's kernels (numba), once per process.
                _time(lambda: _private_regression(manifold, data[private[0]][1][:1000],
                                                  data[private[0]][0][:1000]))
                secs = [_time(lambda n=n: _private_regression(manifold, data[n][1],
                                                                data[n][0])) for n in private]
                rows.append(_row(name, "private geodesic regression (strict, defaults, "
                                 f"progress; target <= {PRIVATE_TARGET:g} s at n=1e+05)",
                                 private, secs))
    pd.set_option("display.width", 200)
    return pd.DataFrame(rows).round(3)


if __name__ == "__main__":
    print(main().to_string(index=False))
