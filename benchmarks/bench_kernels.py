"""Regression releases on SPD(2) and KendallShape(4) against S^2 (issues 13 and 31), and the
closed-form regression kernels.

Part 1: ``private_geodesic_regression`` at n = 100 and n = 1000 with the same settings on
every space (1 footpoint x 10 shooting vectors, eps_p = eps_v = 1, tau = 0.2, covariate range
(0, 1), default chain length), in paper mode and in strict mode (SPD also needs ``tau_m``),
each the best of ``REPEATS`` wall-clock runs taken in turns over the spaces (so that the load
of a shared machine affects all alike); ``ratio_to_S2`` divides by the S^2 time of the same
mode and n measured in this run (target: <= 3). ``path`` is the ``compute_path`` the release
records (issue 31: the compiled numba chains of :mod:`dpcore.sampling._compiled_regression`
on all three spaces).

Part 2 (n = 100, paper and strict): ten separate default calls against one batched call for
the same 100 draws (10 footpoints x 10 vectors), as ``benchmarks/bench_single_call.py``
measures on S^2 (target: ten calls <= 1.2 x the batched call).

Part 3: one regression-gradient evaluation (10 fits x n = 1000 responses, the vector stage's
batch; tau = 0.2), the registered closed-form numpy kernel against
``generic_regression_gradient`` (and on R^1, R^2 at 2,000 points x n = 500, the Linear
regression page's envelopes), and the SPD(2) Fréchet-mean gradient (10 candidates) against
averaging ``SPD.log``. (The releases above no longer call these numpy kernels inside their
chains: the compiled chains mirror them.)
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks._timing import per_call
from dpcore.data import make_regression_data
from dpcore.learning import regression_gradient
from dpcore.learning.frechet import frechet_mean_gradient
from dpcore.learning.regression import generic_regression_gradient
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.release import private_geodesic_regression

N = 1000
SIZES = (100, 1000)
BATCH = 10
REPEATS = 3
SETTINGS = dict(eps_p=1.0, eps_v=1.0, tau=0.2, covariate_range=(0.0, 1.0), n_footpoints=1,
                n_vectors=10)
#: Public radius of the responses' ball for strict mode on SPD (about the data's spread).
TAU_M = 3.0


def _spaces():
    return [("S^2", Sphere(2)), ("SPD(2)", SPD(2)), ("Kendall(4)", KendallShape(4))]


def _call(m, x, y, mode, **extra):
    if mode == "strict" and isinstance(m, SPD):
        extra["tau_m"] = TAU_M
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        options = dict(SETTINGS, **extra)
        options.setdefault("rng", 1)
        return private_geodesic_regression(m, x, y, mode=mode, **options)


def _seconds(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _path(release):
    return "/".join(sorted({d["compute_path"] for d in release.diagnostics.values()
                            if isinstance(d, dict) and "compute_path" in d}))


def _releases():
    rows = []
    for n in SIZES:
        data = {name: make_regression_data(m, n, rng=0) for name, m in _spaces()}
        for mode in ("paper", "strict"):
            best = {name: math.inf for name, _ in _spaces()}
            paths = {name: _path(_call(m, *data[name], mode)) for name, m in _spaces()}  # warm
            for _ in range(REPEATS):
                for name, m in _spaces():
                    best[name] = min(best[name], _seconds(lambda m=m, name=name: _call(
                        m, *data[name], mode)))
            for name, _ in _spaces():
                rows.append({"task": f"private_geodesic_regression, {mode}, {name}, n={n}",
                             "seconds": round(best[name], 3),
                             "ratio_to_S2": round(best[name] / best["S^2"], 2),
                             "target": "<= 3" if name != "S^2" else "",
                             "path": paths[name]})
    return rows


def _ten_calls():
    rows = []
    n = 100
    for mode in ("paper", "strict"):
        for name, m in _spaces():
            x, y = make_regression_data(m, n, rng=0)
            _call(m, x, y, mode)  # warm-up
            ten = batched = math.inf
            for _ in range(2):
                ten = min(ten, _seconds(lambda m=m, x=x, y=y: [
                    _call(m, x, y, mode, rng=k) for k in range(10)]))
                batched = min(batched, _seconds(lambda m=m, x=x, y=y: _call(
                    m, x, y, mode, n_footpoints=10)))
            rows.append({"task": f"ten calls vs one batched call, {mode}, {name}, n={n}",
                         "seconds": round(ten, 3), "batched_seconds": round(batched, 3),
                         "ten_over_batched": round(ten / batched, 2), "target": "<= 1.2"})
    return rows


def _kernels():
    rows = []
    rng = np.random.default_rng(2)
    sphere_kernel = None
    for name, m in _spaces() + [("Kendall(8)", KendallShape(8))]:
        x, y = make_regression_data(m, N, rng=0)
        p = m.random_point(BATCH, rng)
        if isinstance(m, SPD):
            p = m.exp(np.broadcast_to(np.eye(2), p.shape), 0.5 * m.random_tangent(
                np.broadcast_to(np.eye(2), p.shape), rng))
        v = 0.3 * m.random_tangent(p, rng)
        kernel = per_call(lambda: regression_gradient(m, p, v, x, y, tau=0.2, which="vector"))
        generic = per_call(lambda: generic_regression_gradient(m, p, v, x, y, tau=0.2),
                           repeats=3)
        sphere_kernel = kernel if sphere_kernel is None else sphere_kernel
        rows.append({"task": f"regression gradient, {name}, {BATCH} fits x n={N}",
                     "kernel_us": round(1e6 * kernel, 1), "generic_us": round(1e6 * generic, 1),
                     "speedup": round(generic / kernel, 1),
                     "ratio_to_S2": round(kernel / sphere_kernel, 2)})
    for d in (1, 2):  # the Linear regression page: envelopes and predictions at a wide batch
        m = Euclidean(d)
        x, y = make_regression_data(m, 500, rng=0)
        p, v = rng.normal(size=(2000, d)), rng.normal(size=(2000, d))
        kernel = per_call(lambda: regression_gradient(m, p, v, x, y, tau=0.2), repeats=3)
        generic = per_call(lambda: generic_regression_gradient(m, p, v, x, y, tau=0.2),
                           repeats=3)
        rows.append({"task": f"regression gradient, R^{d}, 2000 points x n=500",
                     "kernel_us": round(1e6 * kernel, 1), "generic_us": round(1e6 * generic, 1),
                     "speedup": round(generic / kernel, 1)})
    m = SPD(2)
    z = m.random_point(BATCH, rng)
    y = m.random_point(N, rng)
    kernel = per_call(lambda: frechet_mean_gradient(m, z, y))
    generic = per_call(lambda: -np.mean(m.log(z[:, None], y), axis=1), repeats=3)
    rows.append({"task": f"Fréchet gradient, SPD(2), {BATCH} points x n={N}",
                 "kernel_us": round(1e6 * kernel, 1), "generic_us": round(1e6 * generic, 1),
                 "speedup": round(generic / kernel, 1)})
    return rows


def main():
    import dpcore.sampling  # noqa: F401  (import scipy once, outside the timed region)

    return pd.DataFrame(_releases() + _ten_calls() + _kernels()).set_index("task")


if __name__ == "__main__":
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(main().to_string())
