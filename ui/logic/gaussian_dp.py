"""Page logic of the Gaussian DP page: µ against σ and the Gaussian vs Laplace utility."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpcore.data.synthetic import default_center
from dpcore.experiments.studies import gdp_mu_curve
from dpcore.manifolds import Sphere
from dpcore.privacy import (
    delta_mu,
    gdp_mu_monte_carlo,
    mu_to_eps,
)
from dpcore.release import GaussianReleaseRequest
from dpcore.release import work as W
from dpcore.release.accuracy import largest_gaussian_sigma
from dpcore.sampling import sample_gaussian, sample_laplace
from dpcore.sensitivity import frechet_mean_sensitivity, frechet_radius_limit
from ui.caps import CAPS

from .common import _seed_for
from .frechet_mean import frechet_summary

__all__ = [
    "equal_mu_reading",
    "largest_sigma_for_error",
    "predicted_release_error",
    "release_radius",
    "release_request",
    "mc_study_kwargs",
    "gaussian_laplace_utility",
    "mu_sigma_table",
    "release_work",
    "table_work",
    "work_refusal",
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


def table_work(n_sigmas, mc_samples, mc_repeats):
    """Estimated work of the Monte Carlo column of :func:`mu_sigma_table` (one Monte Carlo µ
    on S¹ per rate, at the sizes :func:`mc_study_kwargs` passes), and whether it is within the
    library's work budget.

    Returns
    -------
    (WorkEstimate, bool)
    """
    kw = mc_study_kwargs(1.0, np.ones(int(n_sigmas)), mc_samples, mc_repeats, 0)
    costs = W.calibrated_costs(Sphere(1), "monte_carlo")
    est = W.estimate_work(W.monte_carlo_part(
        costs, n_samples=kw["n_samples"], repeats=len(kw["sigmas"]) * kw["repeats"],
        what=f"Monte Carlo µ at {len(kw['sigmas'])} rates ({kw['repeats']} repeats each)",
        reduce="the Monte Carlo samples or repeats"))
    return est, est.seconds <= W.DEFAULT_WORK_BUDGET


#: The library's message for a request above the work budget (None within it).
work_refusal = W.refusal_message


def release_request(n, sigma, sensitivity):
    """The page's release as a request: one Riemannian Gaussian draw at the rate ``sigma``
    on S² about the mean of ``n`` points in the public cap about the north pole whose radius
    gives the mean the proven sensitivity Δ = ``sensitivity`` (:func:`release_radius`).

    Returns
    -------
    dpcore.release.GaussianReleaseRequest
    """
    m = Sphere(2)
    return GaussianReleaseRequest(m, int(n), sigma=float(sigma),
                                  radius=release_radius(int(n), float(sensitivity)),
                                  center=default_center(m))


def release_work(request):
    """Estimated work of the page's release (:meth:`GaussianReleaseRequest.work
    <dpcore.release.GaussianReleaseRequest.work>`: its µ is estimated by Monte Carlo), and
    whether it is within the library's work budget.

    Returns
    -------
    (WorkEstimate, bool)
    """
    est = request.work()
    return est, est.seconds <= W.DEFAULT_WORK_BUDGET


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


def release_radius(n, sensitivity, manifold=None):
    r"""Radius r of the public data ball whose Fréchet mean of ``n`` points has the proven
    sensitivity :math:`2r(2-h)/(nh) = \Delta` (paper 001 Thm 2; it increases with r from 0 to
    infinity below the radius limit r*), found by bisection to 1e-12 and nudged down so the
    proven sensitivity at the returned r is at most Δ.

    Parameters
    ----------
    n : int
    sensitivity : float
        Δ of the page's top controls.
    manifold : Manifold, optional
        Default S².

    Returns
    -------
    float
    """
    m = Sphere(2) if manifold is None else manifold
    kappa, inj = m.curvature_bounds[1], m.injectivity_radius
    lo, hi = 0.0, frechet_radius_limit(kappa, inj)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if frechet_mean_sensitivity(n, mid, kappa, inj) <= sensitivity:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return lo


def predicted_release_error(request):
    """Predicted distance between the page's release (``request``, see
    :func:`release_request`) and the non-private mean: :meth:`GaussianReleaseRequest.predict
    <dpcore.release.GaussianReleaseRequest.predict>`, the exact radial law of the noise, in
    radians and degrees (public: only σ enters)."""
    pred = request.predict()
    return {**pred, "median_deg": math.degrees(pred["median"]),
            "q95_deg": math.degrees(pred["q95"])}


def largest_sigma_for_error(target_degrees, quantile="median", manifold=None):
    """The largest σ whose predicted ``quantile`` error is at most ``target_degrees`` (None
    when no σ in the searched range reaches it)."""
    return largest_gaussian_sigma(Sphere(2) if manifold is None else manifold,
                                  math.radians(target_degrees), quantile=quantile)


def equal_mu_reading(mu):
    """Plain words for "equal µ": what µ-GDP does and does not promise, with the δ at the
    matched ε = log(Φ(µ/2)/Φ(−µ/2))."""
    eps = float(mu_to_eps(mu))
    delta = float(delta_mu(eps, mu))
    return (f"Equal µ is a weaker promise than pure ε. A µ = {mu:.3g}-GDP mechanism is "
            f"(ε, δ(ε))-DP for every ε at once, not ε-DP for any ε: at the matched "
            f"ε = {eps:.3g} it is only (ε, δ)-DP with δ = {delta:.2g}, so the e^ε = "
            f"{math.exp(eps):.3g}-fold bound on how much one row can shift an attacker's odds "
            f"may fail on outcomes of probability up to {delta:.2g}. A pure "
            f"ε-DP mechanism (Laplace) has δ = 0 at its ε, and converts to the same µ; the "
            "converse does not hold.")
