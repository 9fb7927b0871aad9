"""Compile the library's numba kernels once, when the environment is made.

``python -m dpcore.release.warm`` (run by ``make venv`` and ``make venv-dev`` after the install)
makes one tiny release through every compiled path: the Metropolis-Hastings chains of S², SPD(2)
and Kendall shapes, the exact uniform-proposal samplers (on SPD(2) also with the certified
squeeze), the native boxes of S² (a public footpoint ball and the whole sphere) and the
whitened leaves of R². numba compiles
each kernel on its first call and keeps the machine code in its on-disk cache
(``cache=True``, next to the sources or in ``NUMBA_CACHE_DIR``), so later processes (the
dashboard's first release, a notebook, a test worker) load it instead of compiling: about
20-25 CPU s once, instead of 6-8 s in the first release of each manifold's chain in every
fresh process tree.

Nothing here is a release anyone sees: synthetic data, fixed seeds, results discarded.
Without numba (the ``fast`` extra not installed) there is nothing to compile and it says so.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings

import numpy as np

from ..manifolds import SPD, Euclidean, KendallShape, Sphere

__all__ = ["KERNELS", "PATHS", "warm_kernels", "warm_up"]

NORTH = np.array([0.0, 0.0, 1.0])
S2, SPD2, KENDALL4 = Sphere(2), SPD(2), KendallShape(4)


_SHORT = {"chain_length": 20, "burn_in": 20}
_SMALL = {"eps_p": 1.0, "eps_v": 1.0, "tau": 0.3, "covariate_range": (0.0, 1.0)}
#: (name, manifold, n, data options, release options): each a release that runs one
#: compiled path. The ball and whole-sphere cases sit at n (eps_p + eps_v) = 100, beyond the
#: uniform proposals' public limit at n = 40, so ``sampler="auto"`` takes the bundle samplers.
PATHS = (
    ("S² chain", S2, 30, {}, {**_SMALL, "sampler": "mcmc", **_SHORT}),
    ("S² exact", S2, 30, {}, {**_SMALL, "sampler": "exact"}),
    ("S² ball, native boxes", S2, 40, {"footpoint_region": (NORTH, 0.3)},
     {**_SMALL, "eps_p": 1.25, "eps_v": 1.25, "center": NORTH, "footpoint_radius": 0.5,
      "max_speed": 1.5}),
    ("S² whole sphere, native boxes", S2, 40, {},
     {**_SMALL, "eps_p": 1.25, "eps_v": 1.25}),
    ("SPD(2) chain", SPD2, 30, {},
     {**_SMALL, "tau_m": 1.0, "center": np.eye(2), "sampler": "mcmc", **_SHORT}),
    ("SPD(2) exact", SPD2, 30, {}, {**_SMALL, "tau_m": 1.0, "center": np.eye(2),
                                    "sampler": "exact"}),
    # the Geodesic regression page's SPD(2) design at n·ε = 522: uniform proposals with the
    # certified squeeze (its k-d descent and proposal kernels, the enclosures' series)
    ("SPD(2) squeeze, the page's design", SPD2, 30, {"footpoint_region": (np.eye(2), 0.1)},
     {**_SMALL, "eps_p": 8.7, "eps_v": 8.7, "tau": 0.175, "tau_m": 0.8, "center": np.eye(2),
      "footpoint_radius": 0.1, "max_speed": 0.55}),
    ("Kendall(4) chain", KENDALL4, 30, {}, {**_SMALL, "sampler": "mcmc", **_SHORT}),
    ("Kendall(4) exact", KENDALL4, 30, {}, {**_SMALL, "sampler": "exact"}),
    ("R² whitened leaves", Euclidean(2), 40, {},
     {**_SMALL, "eps_p": 1.25, "eps_v": 1.25, "tau_m": 1.0, "center": np.zeros(2)}),
)


#: (name, manifold, n): compiled kernels that no release calls but a page does: the Budget
#: split page's asymptotic law scores its Kendall cells by this kernel
#: (:meth:`dpcore.release.asymptotic.BudgetLaws.mse`).
KERNELS = (("Kendall(4) errors, Budget split law", KENDALL4, 30),)


def warm_kernels(kernels=KERNELS, clock=time.process_time):
    """Call each kernel of :data:`KERNELS` once on synthetic data; ``[(name, CPU seconds,
    "compiled kernel" or "numpy")]`` (numpy: no compiled kernel covers the case)."""
    from ..data import make_regression_data
    from ..sampling._compiled_sphere import compiled_mean_squared_distances

    out = []
    for name, manifold, n in kernels:
        data = make_regression_data(manifold, n, rng=1)
        p = np.asarray(data.y[:2], dtype=float)
        start = clock()
        result = compiled_mean_squared_distances(manifold, p, np.zeros_like(p), data.x, data.y)
        out.append((name, clock() - start, "numpy" if result is None else "compiled kernel"))
    return out


def warm_up(paths=PATHS, clock=time.process_time):
    """Run one small release per compiled path; ``[(name, CPU seconds, sampler)]``.

    Parameters
    ----------
    paths : sequence, optional
        Entries of :data:`PATHS`.
    clock : callable, optional
        Seconds (CPU time by default).

    Returns
    -------
    list of (str, float, str)
        Each path's name, the seconds it took and the sampler the release used (its
        diagnostics' ``sampler`` line), so a caller can see that the path it meant ran.
    """
    from ..data import make_regression_data
    from .regression import private_geodesic_regression

    out = []
    for name, manifold, n, data_options, options in paths:
        data = make_regression_data(manifold, n, rng=1, **data_options)
        start = clock()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # short chains warn about mixing: not a release
            release = private_geodesic_regression(manifold, data.x, data.y, rng=2, **options)
        out.append((name, clock() - start, str(release.diagnostics["joint"]["sampler"])))
    return out


def main(argv=None):
    """Command line: compile the kernels, print a line per path."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    if importlib.util.find_spec("numba") is None:
        print("numba is not installed (the `fast` extra): nothing to compile.")
        return 0
    start = time.perf_counter()
    for name, seconds, _ in [*warm_up(), *warm_kernels()]:
        print(f"compiled: {name:40s} {seconds:6.1f} CPU s")
    print(f"numba kernels compiled and cached in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
