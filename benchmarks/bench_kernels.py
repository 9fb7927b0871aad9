"""Closed-form regression kernels: SPD(2) and KendallShape(8) releases against S^2 (issue 13).

Part 1: ``private_geodesic_regression`` at n = 1000 with the same settings on every space
(1 footpoint x 10 shooting vectors, eps_p = eps_v = 1, tau = 0.2, covariate range (0, 1),
default chain length), in paper mode and in strict mode (SPD also needs ``tau_m``), each
the best of ``REPEATS`` wall-clock runs; ``ratio_to_S2`` divides by the S^2 time of the same
mode measured in this run (target: <= 3). The SPD(2) paper-mode release is also run with its
closed-form kernels unregistered (the generic adjoint-Jacobi path, as before the kernel), both
ways with a tenth of the chain (``SHORT``: the cost is linear in the steps and the generic path
takes minutes at full length): ``speedup`` is the generic time over the kernel's there.

Part 2: one regression-gradient evaluation (10 fits x n = 1000 responses, the vector stage's
batch; tau = 0.2), the registered closed-form kernel against ``generic_regression_gradient``,
and the SPD(2) Fréchet-mean gradient (10 candidates) against averaging ``SPD.log``.
"""

from __future__ import annotations

import contextlib
import math
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks._timing import per_call
from dpcore.data import make_regression_data
from dpcore.learning import regression_gradient
from dpcore.learning.frechet import frechet_mean_gradient
from dpcore.learning.kernels import closed_form_frechet_gradient, closed_form_regression_gradient
from dpcore.learning.regression import generic_regression_gradient
from dpcore.manifolds import SPD, KendallShape, Sphere
from dpcore.release import private_geodesic_regression

N = 1000
BATCH = 10
REPEATS = 2
SETTINGS = dict(eps_p=1.0, eps_v=1.0, tau=0.2, covariate_range=(0.0, 1.0), n_footpoints=1,
                n_vectors=10)
#: Public radius of the responses' ball for strict mode on SPD (about the data's spread).
TAU_M = 3.0
#: Chain settings of the kernel-versus-generic release comparison.
SHORT = dict(chain_length=200, burn_in=100)


def _spaces():
    return [("S^2", Sphere(2)), ("SPD(2)", SPD(2)), ("Kendall(8)", KendallShape(8))]


@contextlib.contextmanager
def _generic_path(cls):
    """Unregister ``cls``'s closed-form regression and Fréchet kernels for the block."""
    saved = [(d, d.dispatch(cls)) for d in (closed_form_regression_gradient,
                                            closed_form_frechet_gradient)]
    for dispatcher, _ in saved:
        dispatcher.register(cls, lambda *args, **kwargs: None)
    try:
        yield
    finally:
        for dispatcher, kernel in saved:
            dispatcher.register(cls, kernel)


def _release_seconds(m, x, y, mode, repeats=REPEATS, **extra):
    if mode == "strict" and isinstance(m, SPD):
        extra["tau_m"] = TAU_M
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            private_geodesic_regression(m, x, y, mode=mode, rng=1, **SETTINGS, **extra)
        best = min(best, time.perf_counter() - start)
    return best


def _releases():
    rows = []
    data = {name: make_regression_data(m, N, rng=0) for name, m in _spaces()}
    for mode in ("paper", "strict"):
        base = None
        for name, m in _spaces():
            x, y = data[name]
            seconds = _release_seconds(m, x, y, mode)
            base = seconds if base is None else base
            rows.append({"task": f"private_geodesic_regression, {mode}, {name}, n={N}",
                         "seconds": round(seconds, 3), "ratio_to_S2": round(seconds / base, 2),
                         "target": "<= 3" if name != "S^2" else ""})
            if name == "SPD(2)" and mode == "paper":
                short = _release_seconds(m, x, y, mode, **SHORT)
                with _generic_path(SPD):
                    generic = _release_seconds(m, x, y, mode, repeats=1, **SHORT)
                rows[-1]["short_chain_seconds"] = round(short, 3)
                rows[-1]["generic_path_short_seconds"] = round(generic, 2)
                rows[-1]["speedup"] = round(generic / short, 1)
    return rows


def _kernels():
    rows = []
    rng = np.random.default_rng(2)
    sphere_kernel = None
    for name, m in _spaces():
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

    return pd.DataFrame(_kernels() + _releases()).set_index("task")


if __name__ == "__main__":
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(main().to_string())
