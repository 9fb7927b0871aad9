"""Page logic of the Gaussian DP page: µ against σ and the Gaussian vs Laplace utility."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpcore.data.synthetic import default_center
from dpcore.experiments.studies import gdp_mu_curve
from dpcore.manifolds import Sphere
from dpcore.privacy import (
    gdp_mu_monte_carlo,
    mu_to_eps,
)
from dpcore.sampling import sample_gaussian, sample_laplace
from ui.caps import CAPS

from .common import _seed_for
from .frechet_mean import frechet_summary

__all__ = [
    "mc_study_kwargs",
    "gaussian_laplace_utility",
    "mu_sigma_table",
]

def mu_sigma_table(sensitivity, sigmas, *, mc_sigmas=None, mc_samples=500, mc_repeats=10,
                   seed=0):
    r"""µ against σ on S¹ (exact and Monte Carlo) and on R (Δ/σ).

    Parameters
    ----------
    sensitivity : float
        Δ, the arc distance between the outputs on adjacent data sets (at most π).
    sigmas : array-like
        Rates for the exact curves.
    mc_sigmas : array-like, optional
        Rates for the Monte Carlo estimates (paper 004 Algorithm 2); none if omitted.
    mc_samples, mc_repeats : int
        Monte Carlo sizes (capped by :data:`CAPS`).
    seed : int

    Returns
    -------
    dict
        ``sigma``, ``mu_circle`` (exact, :func:`dpcore.privacy.gdp_mu_circle`), ``mu_line``
        (Δ/σ), and ``mc_sigma``, ``mu_mc``, ``mu_mc_se`` (empty arrays without ``mc_sigmas``).
    """
    sigmas = np.asarray(sigmas, dtype=float)
    exact = gdp_mu_curve(sigmas, sensitivity=sensitivity, monte_carlo=False)
    out = {
        "sigma": sigmas,
        "mu_circle": exact.loc[exact["space"] == "S1", "mu"].to_numpy(),
        "mu_line": exact.loc[exact["space"] == "R", "mu"].to_numpy(),
        "mc_sigma": np.array([]),
        "mu_mc": np.array([]),
        "mu_mc_se": np.array([]),
    }
    if mc_sigmas is not None and len(mc_sigmas):
        mc = gdp_mu_curve(**mc_study_kwargs(sensitivity, mc_sigmas, mc_samples, mc_repeats,
                                            seed))
        mc = mc[mc["method"] == "monte_carlo_mis"]
        out["mc_sigma"] = mc["sigma"].to_numpy()
        out["mu_mc"] = mc["mu"].to_numpy()
        out["mu_mc_se"] = mc["standard_error"].to_numpy()
    return out


def mc_study_kwargs(sensitivity, mc_sigmas, mc_samples, mc_repeats, seed):
    """Arguments of :func:`dpcore.experiments.gdp_mu_curve` for the page's Monte Carlo column:
    one estimate per σ on S¹ (library estimator, 300 ε values), sizes capped by :data:`CAPS`."""
    return {
        "sigmas": np.asarray(mc_sigmas, dtype=float)[: CAPS["mc_sigmas"]],
        "sensitivity": sensitivity, "monte_carlo": True, "rng": seed, "replicates": 1,
        "estimators": ("mis",), "n_samples": int(min(mc_samples, CAPS["mc_samples"])),
        "n_eps": 300, "repeats": int(min(max(mc_repeats, 2), CAPS["mc_repeats"])),
        "spaces": ("S1",),
    }


def gaussian_laplace_utility(sigmas, *, n=10, radius=math.pi / 8, replicates=200,
                             mc_samples=500, mc_repeats=10, seed=0):
    r"""Utility of the Riemannian Gaussian and Laplace mechanisms at equal µ on S² (paper 004
    §5.2).

    Data: ``n`` points in a ball of radius ``radius`` (sensitivity Δ of the mean, paper 001
    Thm 2). For each rate σ the Gaussian's µ is estimated by Monte Carlo (paper 004 Algorithm
    2); the Laplace mechanism gets the ε with the same µ, :math:`\varepsilon = \log
    (\Phi(\mu/2)/\Phi(-\mu/2))`, and rate Δ/ε. Both distributions are invariant under
    rotations of the sphere, so the distance of a draw from the mean does not depend on the
    data set: the draws are made about one fixed point.

    Parameters
    ----------
    sigmas : array-like
        Rates of the Gaussian mechanism (at most ``CAPS["mc_sigmas"]``).
    n : int
    radius : float
    replicates : int
        Draws per rate and mechanism (capped by ``CAPS["utility_replicates"]``).
    mc_samples, mc_repeats : int
    seed : int

    Returns
    -------
    pandas.DataFrame
        One row per (rate, mechanism, replicate): ``sigma``, ``mu``, ``mu_se``, ``epsilon``,
        ``mechanism``, ``distance``.
    """
    m = Sphere(2)
    sigmas = np.asarray(sigmas, dtype=float)[: CAPS["mc_sigmas"]]
    replicates = int(min(max(int(replicates), 2), CAPS["utility_replicates"]))
    delta = frechet_summary(m, n, radius)["delta"]
    north = default_center(m)
    rows = []
    for i, s in enumerate(sigmas):
        rng = _seed_for(seed, i, 7)
        mu, se = gdp_mu_monte_carlo(m, float(s), delta, n_samples=int(mc_samples), n_eps=300,
                                    repeats=int(mc_repeats), rng=seed + i)
        eps = float(mu_to_eps(mu))
        g = sample_gaussian(m, north, float(s), size=replicates, rng=rng)
        lap = sample_laplace(m, north, delta / eps, size=replicates, rng=rng)
        for mech, pts in (("Riemannian Gaussian", g), ("Riemannian Laplace", lap)):
            dist = np.asarray(m.dist(north, pts), dtype=float)
            rows.extend({"sigma": float(s), "mu": float(mu), "mu_se": float(se), "epsilon": eps,
                         "mechanism": mech, "distance": float(d)} for d in dist)
    return pd.DataFrame(rows)
