r"""Gaussian differential privacy: µ of the Gaussian mechanism against its rate σ.

* :func:`gdp_mu_curve` -- on the circle and the line, exact and by Monte Carlo (paper 004
  fig. 1, panels 1 and 2).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import check_int, check_positive, check_positive_array
from ...manifolds import Euclidean, Sphere
from ...privacy import gdp_mu_circle, gdp_mu_monte_carlo
from ._common import _parallel, _root_seed

__all__ = ["gdp_mu_curve"]


def _mc_mu(space, sigma, sensitivity, estimator, n_samples, n_eps, repeats, seed):
    if space == "S1":
        manifold = Sphere(1)
        paper_eps_max = np.pi * sensitivity / (2 * sigma**2)
    else:
        manifold = Euclidean(1)
        paper_eps_max = max(10.0, 5.0 / sigma + 1.0 / (2 * sigma**2))
    # The paper's estimator runs on the paper's grid; the library's default estimator chooses
    # its own grid (see gdp_mu_monte_carlo).
    eps_max = paper_eps_max if estimator == "tails" else None
    mu, se = gdp_mu_monte_carlo(manifold, sigma, sensitivity, n_samples=n_samples, n_eps=n_eps,
                                repeats=repeats, eps_max=eps_max, estimator=estimator,
                                rng=np.random.default_rng(seed))
    return float(mu), float(se)


def gdp_mu_curve(sigmas, *, sensitivity=1.0, monte_carlo=True, rng=None, replicates=20,
                 estimators=("mis",), n_samples=1000, n_eps=1000, repeats=100, n_jobs=None,
                 spaces=("S1", "R")):
    r"""GDP parameter µ of the Gaussian mechanism against its rate σ (paper 004 fig. 1).

    For every σ: the exact µ on the circle S¹ (:func:`~dpcore.privacy.gdp_mu_circle`,
    Algorithm 1) and on the line R (Δ/σ); with ``monte_carlo``, ``replicates`` independent Monte
    Carlo estimates (:func:`~dpcore.privacy.gdp_mu_monte_carlo`, Algorithm 2) on both. The
    ``"tails"`` estimator is the paper's and runs on its ε grid (ε_max = πΔ/(2σ²) on S¹,
    max{10, 5/σ + 1/(2σ²)} on R); ``"mis"`` is the library's lower-variance default.

    Parameters
    ----------
    sigmas : sequence of float
        Rates σ (the paper: k/4 for k = 1..16).
    sensitivity : float
        Δ (the paper: 1). At most π.
    monte_carlo : bool
        Also run the Monte Carlo estimates.
    rng : None, int, SeedSequence or Generator
        Seed; one child per Monte Carlo estimate.
    replicates : int
        Monte Carlo estimates per (space, σ, estimator) (the paper: 20).
    estimators : sequence of {"mis", "tails"}
    n_samples, n_eps, repeats : int
        Monte Carlo sizes (the paper: 1000, 1000, 100).
    n_jobs : int, optional
    spaces : sequence of {"S1", "R"}
        Spaces of the Monte Carlo estimates (the exact rows always cover both). The Gaussian DP
        page runs only "S1"; its table is this function's, seed for seed.

    Returns
    -------
    pandas.DataFrame
        Columns ``space`` (``"S1"`` or ``"R"``), ``sigma``, ``method`` (``"exact"`` or
        ``"monte_carlo_<estimator>"``), ``replicate`` (0 for exact rows), ``mu``,
        ``standard_error`` (0 for exact rows), ``inverse_sigma`` (Δ/σ, the Euclidean µ).
    """
    sig = check_positive_array(sigmas, "sigmas")
    sensitivity = check_positive(sensitivity, "sensitivity")
    if sensitivity > np.pi:
        raise ValueError(f"`sensitivity` must be at most pi on the circle, got {sensitivity!r}.")
    replicates = check_int(replicates, "replicates")
    estimators = tuple(estimators)
    if any(e not in ("mis", "tails") for e in estimators):
        raise ValueError(f"`estimators` must hold 'mis' and/or 'tails', got {estimators!r}.")
    spaces = tuple(spaces)
    if not spaces or any(s not in ("S1", "R") for s in spaces):
        raise ValueError(f"`spaces` must hold 'S1' and/or 'R', got {spaces!r}.")
    rows = []
    for s in sig:
        rows.append(("S1", s, "exact", 0, float(gdp_mu_circle(s, sensitivity)), 0.0))
        rows.append(("R", s, "exact", 0, sensitivity / s, 0.0))
    if monte_carlo:
        keys = [(space, s, est, r) for space in spaces for s in sig for est in estimators
                for r in range(replicates)]
        seeds = _root_seed(rng).spawn(len(keys))
        jobs = [(space, s, sensitivity, est, n_samples, n_eps, repeats, seed)
                for (space, s, est, _), seed in zip(keys, seeds, strict=True)]
        for (space, s, est, r), (mu, se) in zip(keys, _parallel(_mc_mu, jobs, n_jobs),
                                                 strict=True):
            rows.append((space, s, f"monte_carlo_{est}", r, mu, se))
    df = pd.DataFrame(rows, columns=["space", "sigma", "method", "replicate", "mu",
                                     "standard_error"])
    df["inverse_sigma"] = sensitivity / df["sigma"]
    df.attrs.update({"sensitivity": sensitivity, "n_samples": n_samples, "n_eps": n_eps,
                     "repeats": repeats})
    return df
