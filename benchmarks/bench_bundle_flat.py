"""The exact joint KNG sampler on R^d (``dpcore.sampling.bundle_flat``, issue 28): leaves, CPU
seconds and proposals of 9 exact draws per row, against the uniform proposals at n·ε = 64
(their reach, the sampler these releases had before) on the same data and dimension,
measured in the same run (the ratio column).

Data: the Linear regression page's generated example with two or three responses (``dose``
uniform on [0, 10], rescaled to [0, 1]; lines 2 + 0.8 dose, 10 - 0.5 dose and 5 + 0.1 dose,
noise 1.0, 0.7 and 1.5; for R^4 a fourth, -3 + 0.3 dose, noise 0.8), the
public centre the response box's centre, τ_m its circumscribed radius (the page's starting
bounds), τ = τ_m / ratio; support: footpoints within τ_m + τ of the centre, speeds up to
2(τ_m + τ) (the releases' on R^d); responses projected onto the τ_m ball; σ of the joint
scheme; the releases' public leaf cap (``bundle_leaf_cap``). ``certified``: the acceptance
the envelope certifies; a row whose draws it puts above :data:`DRAW_LIMIT` proposals is built
but not drawn (R^4, where the releases keep uniform proposals: issue 28).
``python -m benchmarks.bench_bundle_flat [draws] [dims, e.g. 2,3 or 4]`` (several minutes).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from dpcore.manifolds import Euclidean
from dpcore.mechanisms.kng_bundle import LEAF_TERMS, bundle_leaf_cap
from dpcore.release.asymptotic import joint_sigma
from dpcore.sampling.bundle_flat import FlatBundleSampler
from dpcore.sampling.bundle_lattice import FlatLattice
from dpcore.sampling.rejection import BundleBall, UniformBall, sample_kng_exact

LINES = ((2.0, 0.8, 1.0), (10.0, -0.5, 0.7), (5.0, 0.1, 1.5), (-3.0, 0.3, 0.8))
#: (d, n, tau_m / tau, n eps) of the rows.
ROWS = [(2, 100, 1, 250.0), (2, 100, 1, 1000.0), (2, 250, 1, 1000.0), (2, 1000, 1, 1e5),
        (2, 100, 5, 100.0), (2, 100, 5, 250.0), (2, 100, 5, 1000.0), (2, 250, 5, 1000.0),
        (2, 1000, 5, 1e4), (2, 10_000, 5, 2e4), (2, 100_000, 5, 2e5),
        (2, 100, 20, 150.0), (2, 100, 20, 1000.0), (2, 100, 20, 1e5), (2, 10_000, 20, 2e4),
        (3, 100, 1, 1000.0), (3, 100, 1, 1e4),
        (3, 100, 5, 250.0), (3, 100, 5, 1000.0), (3, 250, 5, 1000.0), (3, 1000, 5, 1e4),
        (3, 100, 5, 1e5), (3, 1000, 5, 1e5), (3, 5_000, 5, 2e4), (3, 10_000, 5, 2e4),
        (3, 100, 20, 1000.0), (3, 100, 20, 1e4), (3, 100, 20, 1e5),
        (4, 100, 5, 250.0), (4, 100, 1, 500.0)]
#: Largest number of proposals the certified acceptance may imply for a row to be drawn (R^4:
#: the envelope is built and its certified acceptance reported, nothing drawn beyond this).
DRAW_LIMIT = 3e7


def data(n, ratio, seed=0, d=2):
    """Covariates in [0, 1], responses (n, d), centre, tau_m and tau (module docstring)."""
    rng = np.random.default_rng(seed)
    dose = rng.uniform(0.0, 10.0, n)
    lines = LINES[:d]
    y = np.stack([a + b * dose + s * rng.standard_normal(n) for a, b, s in lines], axis=1)
    lo = np.array([min(a, a + 10 * b) - 5 * s for a, b, s in lines])
    hi = np.array([max(a, a + 10 * b) + 5 * s for a, b, s in lines])
    center, tau_m = 0.5 * (lo + hi), 0.5 * float(np.linalg.norm(hi - lo))
    off = y - center
    y = center + off * np.minimum(1.0, tau_m / np.linalg.norm(off, axis=1))[:, None]
    return dose / 10.0, y, center, tau_m, tau_m / ratio


def flat_row(d, n, ratio, n_eps, draws):
    t, y, center, tau_m, tau = data(n, ratio, d=d)
    sigma = joint_sigma(Euclidean(d), n, n_eps / n, tau, tau_m)
    lattice = FlatLattice(center, tau_m + tau, 2 * (tau_m + tau))
    cpu = time.process_time()
    sampler = FlatBundleSampler(t, y, tau, sigma, lattice, draws=draws,
                                max_boxes=bundle_leaf_cap(n, Euclidean(d)),
                                box_cost=LEAF_TERMS, acceptance_goal=1.0)
    build = time.process_time() - cpu
    row = {"sampler": "whitened leaves (bundle_flat)", "d": d, "n": n, "τ_m/τ": ratio,
           "n·ε": n_eps, "leaves": sampler.diagnostics["boxes"], "build CPU s": round(build, 2),
           "certified": f"{sampler.acceptance_estimate:.2g}"}
    if draws > DRAW_LIMIT * sampler.acceptance_estimate:
        return {**row, "proposals": "not drawn", "acceptance": "-", "total CPU s": float("nan")}
    _, tried = sampler.sample_indices(draws, np.random.default_rng(1))
    total = time.process_time() - cpu
    return {**row, "proposals": tried, "acceptance": f"{draws / tried:.2g}",
            "total CPU s": round(total, 2)}


def uniform_row(d, n, ratio, n_eps, draws):
    t, y, center, tau_m, tau = data(n, ratio, d=d)
    sigma = joint_sigma(Euclidean(d), n, n_eps / n, tau, tau_m)
    m = Euclidean(d)

    def g(z):
        from dpcore.learning.regression import regression_gradient
        gp, gv = regression_gradient(m, z[:, 0], z[:, 1], t, y, tau=tau)
        return np.sqrt(np.sum(gp**2, axis=-1) + np.sum(gv**2, axis=-1))

    support = BundleBall(UniformBall(m, center, tau_m + tau), 2 * (tau_m + tau))
    cpu = time.process_time()
    _, tried = sample_kng_exact(g, sigma, support, draws, np.random.default_rng(1), n_terms=n)
    tried = int(np.sum(tried))
    total = time.process_time() - cpu
    return {"sampler": "uniform proposals", "d": d, "n": n, "τ_m/τ": ratio, "n·ε": n_eps,
            "leaves": 0, "build CPU s": 0.0, "proposals": tried,
            "acceptance": f"{draws / tried:.2g}", "total CPU s": round(total, 2)}


def main(draws=9, dims=(2, 3)):
    rows = []
    for d in dims:
        for ratio in (1, 5, 20):
            rows.append(uniform_row(d, 100, ratio, 64.0, draws))
            for dd, n, r, n_eps in ROWS:
                if (dd, r) == (d, ratio):
                    rows.append(flat_row(d, n, r, n_eps, draws))
                    print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    uniform = table[table["sampler"] == "uniform proposals"]
    base = {(d, r): tot for d, r, tot in zip(uniform["d"], uniform["τ_m/τ"],
                                             uniform["total CPU s"], strict=True)}
    table["vs uniform at 64"] = [f"{tot / max(base[(d, r)], 1e-9):.2g}x"
                                 for tot, d, r in zip(table["total CPU s"], table["d"],
                                                      table["τ_m/τ"], strict=True)]
    print(table.to_string(index=False))
    return table


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9,
         tuple(int(d) for d in sys.argv[2].split(",")) if len(sys.argv) > 2 else (2, 3))
