"""Page logic of the Gaussian DP page: µ against σ and the Gaussian vs Laplace utility."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpcore.data.synthetic import default_center
from dpcore.manifolds import Sphere
from dpcore.privacy import (
    gdp_mu_circle,
    gdp_mu_monte_carlo,
    mu_to_eps,
)
from dpcore.sampling import sample_gaussian, sample_laplace

from .common import CAPS, _seed_for
from .frechet_mean import frechet_summary

__all__ = [
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
    out = {
        "sigma": sigmas,
        "mu_circle": np.array([gdp_mu_circle(s, sensitivity) for s in sigmas]),
        "mu_line": sensitivity / sigmas,
        "mc_sigma": np.array([]),
        "mu_mc": np.array([]),
        "mu_mc_se": np.array([]),
    }
    if mc_sigmas is not None and len(mc_sigmas):
        mc_sigmas = np.asarray(mc_sigmas, dtype=float)[: CAPS["mc_sigmas"]]
        samples = int(min(mc_samples, CAPS["mc_samples"]))
        repeats = int(min(max(mc_repeats, 2), CAPS["mc_repeats"]))
        est = [gdp_mu_monte_carlo(Sphere(1), s, sensitivity, n_samples=samples, n_eps=300,
                                  repeats=repeats, rng=seed + i)
               for i, s in enumerate(mc_sigmas)]
        out["mc_sigma"] = mc_sigmas
        out["mu_mc"] = np.array([e[0] for e in est])
        out["mu_mc_se"] = np.array([e[1] for e in est])
    return out


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
