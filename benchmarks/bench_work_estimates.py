"""Work estimates against measured time, on the three pages that now show them (issues 13/14).

Each page states, before running, the time its request will take (:mod:`dpcore.release.work`,
calibrated once per process on tiny runs) and refuses requests above the 60 s work budget. Rows:
a page's default request and one large request, each with the page's estimate (``estimate s``)
and the measured wall time of the same computation run cold, as the page runs it
(``measured s``); ``ratio`` is measured over estimate (1 is a perfect estimate; the budget
refusal is only as good as this ratio).

* Fréchet mean: one release (``private_frechet_mean``) of the default S² data (n = 50,
  r = π/8, ε = 1) by KNG (exact sampler), and a KNG release on SPD(3) at n = 1000 (MCMC,
  3000 steps);
* Gaussian DP: the Monte Carlo column of the µ-σ figure at the default 500 x 10 and at the
  largest 5000 x 40 samples x repeats (8 rates), and the default release (σ = Δ = 1);
* Budget split: the default simulation (two views, strict S², n = 100, 200) and a larger one
  (three replicates).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd


def _timed(func):
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def _frechet_rows():
    from dpcore.data import make_mean_data
    from dpcore.data.synthetic import default_center
    from dpcore.manifolds import SPD, Sphere
    from dpcore.release import private_frechet_mean
    from dpcore.release.requests import FrechetMeanRequest

    rows = []
    for name, m, n, r in (("Fréchet mean: default (S², n = 50, KNG)", Sphere(2), 50, np.pi / 8),
                          ("Fréchet mean: SPD(3), n = 1000, KNG by MCMC", SPD(3), 1000, 1.0)):
        y = make_mean_data(m, n, radius=r, rng=0)
        c = default_center(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = FrechetMeanRequest(m, n, epsilon=1.0, mechanism="kng", radius=r,
                                     center=c).work()
            sec = _timed(lambda: private_frechet_mean(m, y, epsilon=1.0, mechanism="kng",
                                                      radius=r, center=c, rng=0))
        rows.append((name, est.seconds, sec))
    return rows


def _gaussian_rows():
    from ui.logic import gaussian_dp as L

    sigmas = np.arange(1, 17) / 4
    rows = []
    for ns, reps in ((500, 10), (5000, 40)):
        est = L.table_work(8, ns, reps)[0]
        sec = _timed(lambda: L.mu_sigma_table(1.0, sigmas, mc_sigmas=sigmas[1::2],
                                              mc_samples=ns, mc_repeats=reps, seed=0))
        rows.append((f"Gaussian DP: µ-σ Monte Carlo {ns} x {reps}", est.seconds, sec))
    from dpcore.data import make_mean_data
    from dpcore.data.synthetic import default_center
    from dpcore.manifolds import Sphere
    from dpcore.release import private_frechet_mean

    request = L.release_request(10, 1.0, 1.0)
    radius = request.radius
    y = make_mean_data(Sphere(2), 10, radius=radius, rng=0)
    est = L.release_work(request)[0]
    sec = _timed(lambda: private_frechet_mean(Sphere(2), y, sigma=1.0, mechanism="gaussian",
                                              radius=radius, center=default_center(Sphere(2))))
    rows.append(("Gaussian DP: default release (σ = Δ = 1)", est.seconds, sec))
    return rows


def _budget_rows():
    from ui.logic import budget_split as B

    rows = []
    for name, config in (("Budget split: default", B.SweepConfig(views=("unequal", "equal"))),
                         ("Budget split: 3 replicates",
                          B.SweepConfig(views=("unequal", "equal"), replicates=3))):
        est = B.sweep_work(config)[0]
        sec = _timed(lambda: [B.run_chunk(config, v, n, r) for v, n, r in B.sweep_chunks(config)])
        rows.append((name, est.seconds, sec))
    return rows


def main():
    rows = _frechet_rows() + _gaussian_rows() + _budget_rows()
    table = pd.DataFrame(rows, columns=["request", "estimate s", "measured s"])
    table["ratio"] = table["measured s"] / table["estimate s"]
    return table.round(3)


if __name__ == "__main__":
    print(main().to_string())
