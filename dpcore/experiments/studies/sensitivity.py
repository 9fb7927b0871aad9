r"""Sensitivity studies: theoretical bounds against empirical sensitivities on adjacent datasets.

* :func:`sensitivity_ratios` -- theoretical over empirical gradient sensitivity of geodesic
  regression (paper 002 app. G, figs. 9-10);
* :func:`frechet_sensitivity_study` -- distance between the Fréchet means of adjacent datasets
  against the bound of paper 001 Thm 2 (paper 001 fig. 1, panels 1 and 3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import check_int, check_manifold, check_positive
from ...data import make_mean_data, make_regression_data
from ...sensitivity import (
    empirical_frechet_sensitivity,
    empirical_regression_sensitivity,
    frechet_mean_sensitivity,
    geodesic_regression_sensitivity,
)
from .._parallel import Map, run_plan
from ._common import _nonprivate_fit, _parallel, _root_seed, _sizes

__all__ = [
    "frechet_sensitivity_study",
    "sensitivity_ratios",
]


def _ratio_pair(manifold, n, noise, seed):
    x, y = make_regression_data(manifold, n + 1, noise=noise, rng=seed)
    # The gradients are compared at the non-private fit of D (the first n + 1 - 1 points).
    fit = _nonprivate_fit(manifold, x[1:], y[1:], covariate_range=(0.0, 1.0))
    p, v = fit.footpoint_, fit.shooting_vector_
    pred = manifold.geodesic(p, v, x)
    residuals = np.asarray(manifold.dist(pred, y), dtype=float)
    tau = max(float(residuals.max()), 1e-12)  # paper 002 app. G: largest error in D and D'
    kappa_low = manifold.curvature_bounds[0]
    tau_m = None
    if kappa_low < 0:
        # Ball about the footpoint holding all responses of D and D'; with it every geodesic
        # the proof follows stays within 2 (tau_m + tau), so the bound applies.
        tau_m = max(float(np.max(manifold.dist(np.broadcast_to(p, y.shape), y))), 1e-12)
    theory_p, theory_v = geodesic_regression_sensitivity(n, tau, kappa_low, tau_m)
    emp_p, emp_v = empirical_regression_sensitivity(manifold, x, y, p, v)
    return [("footpoint", theory_p, emp_p, tau, tau_m),
            ("shooting_vector", theory_v, emp_v, tau, tau_m)]


def sensitivity_ratios(manifold, *, sample_sizes=(20, 50, 100), pairs=20, noise=None, rng=None,
                       n_jobs=None):
    r"""Theoretical over empirical sensitivity of geodesic regression (paper 002 app. G).

    For each sample size ``n`` and each of ``pairs`` repetitions, ``n + 1`` observations are
    drawn with the paper's protocol (:func:`dpcore.data.make_regression_data`); ``D`` drops the
    first and ``D'`` the last. At the non-private fit :math:`(\hat p, \hat v)` of ``D`` the
    empirical sensitivities are :math:`\|\nabla_p E(D) - \nabla_p E(D')\|` and the same for
    :math:`v`; the theoretical ones are :func:`~dpcore.sensitivity.geodesic_regression_sensitivity`
    with :math:`\tau` the largest residual over ``D`` and ``D'`` (as the paper does) and, where the
    curvature can be negative, :math:`\tau_m` the radius of the ball about :math:`\hat p` holding
    all responses. The ratios :math:`r = \Delta^{thy} / \Delta^{exp}` must be at least 1.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    sample_sizes : sequence of int
        Sizes ``n`` of the adjacent datasets (the papers: 20, 50, 100).
    pairs : int
        Adjacent pairs per size (the papers: 20).
    noise : float, optional
        Noise level of the synthetic data (see :func:`~dpcore.data.make_regression_data`; the
        papers use δ = 0.001 on the sphere and σ = 0.01 on SPD(2), the defaults).
    rng : None, int, SeedSequence or Generator
        Seed of the study; one child per (n, pair).
    n_jobs : int, optional
        joblib workers.

    Returns
    -------
    pandas.DataFrame
        One row per (n, pair, parameter) with columns ``n``, ``pair``, ``parameter``
        (``"footpoint"`` or ``"shooting_vector"``), ``theoretical``, ``empirical``, ``ratio``,
        ``tau``, ``tau_m`` (NaN when not needed).
    """
    m = check_manifold(manifold)
    sizes = _sizes(sample_sizes)
    pairs = check_int(pairs, "pairs")
    seeds = _root_seed(rng).spawn(len(sizes) * pairs)
    keys = [(n, k) for n in sizes for k in range(pairs)]
    jobs = [(m, n, noise, seed) for (n, _), seed in zip(keys, seeds, strict=True)]
    results = _parallel(_ratio_pair, jobs, n_jobs)
    rows = []
    for (n, k), res in zip(keys, results, strict=True):
        for param, theory, emp, tau, tau_m in res:
            ratio = theory / emp if emp > 0 else np.inf
            rows.append((n, k, param, theory, emp, ratio, tau,
                         np.nan if tau_m is None else tau_m))
    df = pd.DataFrame(rows, columns=["n", "pair", "parameter", "theoretical", "empirical",
                                     "ratio", "tau", "tau_m"])
    df.attrs.update({"manifold": repr(m), "noise": noise})
    return df


#: Rough seconds of one adjacent pair (two Fréchet means): a scheduling hint only.
_PAIR_COST = 0.002


def _frechet_pair(manifold, n, radius, center, seed):
    y = make_mean_data(manifold, n + 1, radius=radius, center=center, rng=seed)
    return empirical_frechet_sensitivity(manifold, y)


def frechet_sensitivity_study(manifold, *, sample_sizes, radius, replicates=50, center=None,
                              rng=None, n_jobs=None):
    r"""Distance between the Fréchet means of adjacent datasets against its bound (paper 001).

    For each ``n`` and replicate, ``n + 1`` points are drawn in :math:`B_r(m_0)`
    (:func:`dpcore.data.make_mean_data`, the paper's protocol); the datasets drop the first and
    the last point. The bound is :func:`~dpcore.sensitivity.frechet_mean_sensitivity`,
    :math:`2r(2 - h)/(n h)` (paper 001 Thm 2).

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    sample_sizes : sequence of int
    radius : float
        Radius of the ball holding the data (paper 001: π/8 on S², 1.5 on SPD(2)).
    replicates : int
        Adjacent pairs per size.
    center : array-like, optional
        Centre of the ball (default :func:`dpcore.data.default_center`).
    rng, n_jobs
        See :mod:`dpcore.experiments.studies`.

    Returns
    -------
    pandas.DataFrame
        Columns ``n``, ``replicate``, ``empirical`` (geodesic distance between the two means),
        ``bound``, ``ratio`` (bound / empirical).
    """
    return run_plan(_frechet_sensitivity_plan(manifold, sample_sizes=sample_sizes,
                                              radius=radius, replicates=replicates,
                                              center=center, rng=rng), n_jobs)


def _frechet_sensitivity_plan(manifold, *, sample_sizes, radius, replicates=50, center=None,
                              rng=None):
    """:func:`frechet_sensitivity_study` as a plan (:func:`dpcore.experiments._parallel.
    run_plans`)."""
    m = check_manifold(manifold)
    sizes = _sizes(sample_sizes)
    replicates = check_int(replicates, "replicates")
    radius = check_positive(radius, "radius")
    kappa_high = m.curvature_bounds[1]
    bounds = {n: frechet_mean_sensitivity(n, radius, kappa_high, m.injectivity_radius)
              for n in sizes}
    seeds = _root_seed(rng).spawn(len(sizes) * replicates)
    keys = [(n, r) for n in sizes for r in range(replicates)]
    jobs = [(m, n, radius, center, s) for (n, _), s in zip(keys, seeds, strict=True)]
    emp = yield Map(_frechet_pair, jobs, cost=_PAIR_COST)
    df = pd.DataFrame({
        "n": [k[0] for k in keys],
        "replicate": [k[1] for k in keys],
        "empirical": emp,
        "bound": [bounds[k[0]] for k in keys],
    })
    with np.errstate(divide="ignore"):
        df["ratio"] = df["bound"] / df["empirical"]
    df.attrs.update({"manifold": repr(m), "radius": radius})
    return df
