r"""The papers' other experiments as functions returning tidy DataFrames.

Next to :func:`~dpcore.experiments.budget_sweep` (paper 002 figs. 1, 2, 7) this module runs

* :func:`sensitivity_ratios` -- theoretical over empirical gradient sensitivity of geodesic
  regression on adjacent datasets (paper 002 app. G, figs. 9-10);
* :func:`frechet_sensitivity_study` -- distance between the Fréchet means of adjacent datasets
  against the bound of paper 001 Thm 2 (paper 001 fig. 1, panels 1 and 3);
* :func:`frechet_mean_study` -- private Fréchet means by the manifold Laplace, ambient Laplace, KNG
  and Gaussian mechanisms, the last at the µ equivalent to ε (paper 001 fig. 1, panels 2 and 4;
  paper 004 fig. 1, panel 3);
* :func:`gdp_mu_curve` -- the GDP parameter µ of the Gaussian mechanism against its rate σ on the
  circle and the line, exact and by Monte Carlo (paper 004 fig. 1, panels 1 and 2);
* :func:`noise_spread_study` and :func:`noise_spread_geodesics` -- the effect of the data spread δ
  on the sphere (paper 002 app. E, figs. 5-6);
* :func:`linear_regression_comparison` -- DP geodesic regression on Euclidean space against
  diffprivlib on the Wine Quality data (papers 000 / 003, table 1);
* :func:`real_data_budget_sweep`, :func:`rat_skull_budget_study`, :func:`rat_skull_shapes` --
  budget sweeps and predicted shapes on real planar shapes (paper 002 figs. 2-3, on Vilmann's rat
  skulls instead of the non-public corpus-callosum data);
* :func:`spd_ellipses_study` -- non-private and private SPD(2) geodesics at equally spaced
  covariates (paper 002 fig. 8);
* :func:`recorded_budget_sweep` -- a synthetic-data budget sweep that records releases which
  break down numerically instead of raising (paper 002 fig. 7 on SPD(2) in paper mode).

Conventions shared by all of them: ``rng`` seeds the whole study (None, an int, a
:class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator`); every independent unit of
work (a replicate, a cell) gets its own child of ``SeedSequence(rng).spawn``, fixed before any work
is distributed, so the results do not depend on ``n_jobs``. ``n_jobs`` is passed to joblib
(None or 1 runs in this process; any joblib backend, e.g. Dask or Ray, can be chosen with
``joblib.parallel_config``).
"""

from __future__ import annotations

import numbers
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import check_int, check_positive
from ..data import make_mean_data, make_regression_data
from ..data.synthetic import default_center
from ..exceptions import PrivacyLeakWarning
from ..learning import GeodesicRegression, frechet_mean
from ..manifolds import SPD, Euclidean, KendallShape, Manifold, Sphere
from ..mechanisms.laplace import ambient_dimension, embed
from ..privacy import (
    calibrate_sigma,
    eps_to_mu,
    gdp_mu_circle,
    gdp_mu_monte_carlo,
)
from ..release import private_frechet_mean, private_geodesic_regression
from ..sensitivity import (
    empirical_frechet_sensitivity,
    empirical_regression_sensitivity,
    frechet_mean_sensitivity,
    geodesic_regression_sensitivity,
)
from .budget import COLUMNS, budget_pairs, budget_sweep
from .metrics import geodesic_predictions, release_covariate_range, release_mse

__all__ = [
    "NUMERICAL_ERRORS",
    "RAT_AGES",
    "WINE_COVARIATE",
    "WINE_RESPONSES",
    "data_dir",
    "frechet_mean_study",
    "frechet_sensitivity_study",
    "gdp_mu_curve",
    "linear_regression_comparison",
    "load_rat_skulls",
    "load_wine",
    "noise_spread_geodesics",
    "noise_spread_study",
    "rat_skull_budget_study",
    "rat_skull_shapes",
    "real_data_budget_sweep",
    "recorded_budget_sweep",
    "sensitivity_ratios",
    "spd_ellipses_study",
    "summarize_linear_regression",
]

#: Ages in days of the eight observations of each rat (``rat_skulls.npy`` is rat-major).
RAT_AGES = (7, 14, 21, 30, 40, 60, 90, 150)
#: Responses of the Wine Quality comparison (papers 000 / 003 §4.2), in the CSV's spelling.
WINE_RESPONSES = ("fixed_acidity", "density", "pH", "residual_sugar")
#: Covariate of the Wine Quality comparison: the quality score (column ``class``).
WINE_COVARIATE = "class"
#: Public range of the wine quality score used as ``covariate_range`` in strict mode: the scores
#: that occur among the red wines of the UCI data (the scale itself runs from 0 to 10).
WINE_QUALITY_RANGE = (3.0, 8.0)


# ---------------------------------------------------------------------------- plumbing
def _root_seed(rng, name="rng"):
    """A SeedSequence from None (OS entropy), an int or ints, a SeedSequence or a Generator."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        return np.random.SeedSequence(rng)
    try:
        return np.random.SeedSequence([int(s) for s in rng])
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be None, an int, a SeedSequence or a Generator, "
                        f"got {type(rng).__name__}.") from exc


def _parallel(func, jobs, n_jobs):
    """``[func(*job) for job in jobs]``, in order, with joblib when ``n_jobs`` asks for it."""
    if n_jobs is None or int(n_jobs) == 1 or len(jobs) <= 1:
        return [func(*job) for job in jobs]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=int(n_jobs))(delayed(func)(*job) for job in jobs)


def _check_manifold(manifold):
    if not isinstance(manifold, Manifold):
        raise TypeError(f"`manifold` must be a dpcore Manifold, got {type(manifold).__name__}.")
    return manifold


def _sizes(sample_sizes, minimum=2):
    if isinstance(sample_sizes, numbers.Integral):
        sample_sizes = [sample_sizes]
    sizes = [check_int(n, "sample_sizes", minimum=minimum) for n in sample_sizes]
    if not sizes:
        raise ValueError("`sample_sizes` must not be empty.")
    return sizes


def _positive_list(values, name):
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"`{name}` must be a positive number or a non-empty sequence of them, "
                         f"got {values!r}.")
    return arr


def data_dir():
    """Directory of the real data sets (``rat_skulls.npy``, ``winequality-red.csv``).

    ``$DPCORE_DATA_DIR`` if set, else ``../shared/data`` beside the repository (where the
    project's CI keeps them).

    Returns
    -------
    pathlib.Path
    """
    env = os.environ.get("DPCORE_DATA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _quiet_release(func, *args, **kwargs):
    """Call a release function with the paper-mode PrivacyLeakWarning silenced (the studies
    record the mode in their output).

    Geodesic-regression studies reproduce the papers, whose scheme is the sequential one (an
    ε_p / ε_v split); it is passed explicitly since the library's strict default is the joint
    scheme. A strict sequential release is labelled "not covered" by its record.
    """
    if func is private_geodesic_regression:
        kwargs.setdefault("scheme", "sequential")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return func(*args, **kwargs)


def _nonprivate_fit(manifold, x, y, covariate_range=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return GeodesicRegression(manifold, covariate_range=covariate_range, tol=1e-8).fit(x, y)


# ---------------------------------------------------------------------------- sensitivity
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
    m = _check_manifold(manifold)
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
        See the module docstring.

    Returns
    -------
    pandas.DataFrame
        Columns ``n``, ``replicate``, ``empirical`` (geodesic distance between the two means),
        ``bound``, ``ratio`` (bound / empirical).
    """
    m = _check_manifold(manifold)
    sizes = _sizes(sample_sizes)
    replicates = check_int(replicates, "replicates")
    radius = check_positive(radius, "radius")
    kappa_high = m.curvature_bounds[1]
    bounds = {n: frechet_mean_sensitivity(n, radius, kappa_high, m.injectivity_radius)
              for n in sizes}
    seeds = _root_seed(rng).spawn(len(sizes) * replicates)
    keys = [(n, r) for n in sizes for r in range(replicates)]
    jobs = [(m, n, radius, center, s) for (n, _), s in zip(keys, seeds, strict=True)]
    emp = _parallel(_frechet_pair, jobs, n_jobs)
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


# ---------------------------------------------------------------------------- Fréchet means
FRECHET_STUDY_MECHANISMS = ("laplace", "kng", "gaussian", "ambient_laplace")


def _euclidean_coords(manifold, points):
    try:
        ambient_dimension(manifold)
    except NotImplementedError:
        return None
    return embed(manifold, points)


def _frechet_replicate(manifold, n, radius, center, eps_list, mechanisms, sigmas, mode,
                       chain_length, burn_in, seed):
    from ..sampling import sample_gaussian

    data_seed, *mech_seeds = seed.spawn(1 + len(eps_list) * len(mechanisms))
    y = make_mean_data(manifold, n, radius=radius, center=center, rng=data_seed)
    mean = frechet_mean(manifold, y)
    mean_e = _euclidean_coords(manifold, mean)
    rows = []
    k = 0
    for eps in eps_list:
        for mech in mechanisms:
            s = mech_seeds[k]
            k += 1
            left = False
            if mech == "gaussian":
                # Same sigma as private_frechet_mean(mechanism="gaussian", epsilon=eps): the
                # Riemannian Gaussian calibrated to mu = eps_to_mu(eps) (paper 004 §5.2),
                # computed once per (mu, Delta) by the caller.
                sigma = sigmas[(n, eps)]
                point = np.asarray(sample_gaussian(manifold, mean, sigma, size=1,
                                                   rng=np.random.default_rng(s)))[0]
                raw = point
            else:
                rel = _quiet_release(
                    private_frechet_mean, manifold, y, epsilon=float(eps), mechanism=mech,
                    radius=radius, center=center, mode=mode, rng=np.random.default_rng(s),
                    chain_length=chain_length, burn_in=burn_in)
                point = np.asarray(rel.values["mean"])[0]
                sigma = float(next(iter(rel.sigma.values())))
                raw = point
                if mech == "ambient_laplace":
                    raw = np.asarray(rel.values["ambient"])[0]
                    left = bool(np.asarray(rel.values["left_manifold"])[0])
            geo = float(manifold.dist(mean, point))
            if mean_e is None:
                eucl = np.nan
            else:
                eucl = float(np.linalg.norm(_euclidean_coords(manifold, raw) - mean_e))
            rows.append((eps, mech, geo, eucl, left, sigma))
    return rows


def frechet_mean_study(manifold, *, sample_sizes, epsilon=1.0, radius, replicates=200,
                       mechanisms=FRECHET_STUDY_MECHANISMS, center=None, mode="strict",
                       chain_length=1000, burn_in=500, rng=None, n_jobs=None):
    r"""Private Fréchet means by several mechanisms at equal privacy (papers 001 and 004).

    For each sample size and replicate a dataset is drawn in the public ball
    :math:`B_r(m_0)` (:func:`dpcore.data.make_mean_data`) and its Fréchet mean :math:`\bar x`
    is released once by each mechanism at each ε:

    ``"laplace"``
        Riemannian Laplace, σ = Δ/ε with Δ of paper 001 Thm 2.
    ``"ambient_laplace"``
        Euclidean K-norm noise added to the extrinsic mean in the embedding (R³ for S², the
        symmetric 2x2 matrices for SPD(2)), sensitivity :math:`2 r_E / n`; the result is
        projected back onto the manifold for the geodesic error, while the Euclidean error uses
        the unprojected point, as paper 001 does.
    ``"kng"``
        K-norm gradient mechanism on the Fréchet energy (MCMC; σ = 2Δ_g/ε in strict mode).
    ``"gaussian"``
        Riemannian Gaussian at µ = :func:`~dpcore.privacy.eps_to_mu` (ε), the GDP guarantee an
        ε-DP mechanism also has (paper 004 §5.2), so it is compared with the Laplace mechanism at
        equal µ. σ is calibrated once per (µ, Δ) with :func:`~dpcore.privacy.calibrate_sigma`,
        exactly as :func:`~dpcore.release.private_frechet_mean` does.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    sample_sizes : sequence of int
    epsilon : float or sequence of float
        Budget(s) ε of every release.
    radius : float
        Public radius r of the ball holding the data (paper 001: π/8 on S², 1.5 on SPD(2)).
    replicates : int
        Datasets per sample size (each released once per mechanism and ε).
    mechanisms : sequence of str
        Any of ``"laplace"``, ``"kng"``, ``"gaussian"``, ``"ambient_laplace"``.
    center : array-like, optional
        Public centre of the ball (default :func:`dpcore.data.default_center`).
    mode : {"strict", "paper"}
        Passed to :func:`~dpcore.release.private_frechet_mean`. The data are generated inside the
        public ball, so strict mode states a guarantee that really holds.
    chain_length, burn_in : int
        Metropolis-Hastings settings of KNG.
    rng, n_jobs
        See the module docstring.

    Returns
    -------
    pandas.DataFrame
        One row per (n, ε, replicate, mechanism): ``n``, ``epsilon``, ``mu`` (= eps_to_mu(ε),
        the µ at which the mechanisms are compared), ``replicate``, ``mechanism``,
        ``geodesic_error`` (distance from :math:`\bar x` to the release on the manifold),
        ``euclidean_error`` (distance in the embedding; NaN where there is none),
        ``left_manifold`` (the ambient release before projection is off the manifold),
        ``sigma``, ``sensitivity`` (Δ of paper 001 Thm 2, the Laplace / Gaussian sensitivity).
    """
    m = _check_manifold(manifold)
    sizes = _sizes(sample_sizes)
    eps_list = [float(e) for e in _positive_list(epsilon, "epsilon")]
    replicates = check_int(replicates, "replicates")
    radius = check_positive(radius, "radius")
    mechanisms = tuple(mechanisms)
    unknown = [mech for mech in mechanisms if mech not in FRECHET_STUDY_MECHANISMS]
    if unknown or not mechanisms:
        raise ValueError(f"`mechanisms` must be a non-empty subset of {FRECHET_STUDY_MECHANISMS}"
                         f", got {mechanisms!r}.")
    if center is None:
        center = default_center(m)
    center = np.asarray(center, dtype=float)
    kappa_high = m.curvature_bounds[1]
    delta = {n: frechet_mean_sensitivity(n, radius, kappa_high, m.injectivity_radius)
             for n in sizes}
    sigmas = {}
    if "gaussian" in mechanisms:
        cells = [(n, e) for n in sizes for e in eps_list]
        values = _parallel(calibrate_sigma, [(eps_to_mu(e), delta[n], m) for n, e in cells],
                           n_jobs)
        sigmas = {cell: float(s) for cell, s in zip(cells, values, strict=True)}
    seeds = _root_seed(rng).spawn(len(sizes) * replicates)
    keys = [(n, r) for n in sizes for r in range(replicates)]
    jobs = [(m, n, radius, center, eps_list, mechanisms, sigmas, mode, chain_length, burn_in, s)
            for (n, _), s in zip(keys, seeds, strict=True)]
    results = _parallel(_frechet_replicate, jobs, n_jobs)
    rows = []
    for (n, rep), res in zip(keys, results, strict=True):
        for eps, mech, geo, eucl, left, sigma in res:
            rows.append((n, eps, float(eps_to_mu(eps)), rep, mech, geo, eucl, left, sigma,
                         delta[n]))
    df = pd.DataFrame(rows, columns=["n", "epsilon", "mu", "replicate", "mechanism",
                                     "geodesic_error", "euclidean_error", "left_manifold",
                                     "sigma", "sensitivity"])
    df = df.sort_values(["n", "epsilon", "mechanism", "replicate"], kind="stable",
                        ignore_index=True)
    df.attrs.update({"manifold": repr(m), "radius": radius, "mode": mode,
                     "center": center.tolist()})
    return df


# ---------------------------------------------------------------------------- GDP
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
    sig = _positive_list(sigmas, "sigmas")
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


# ---------------------------------------------------------------------------- noise spread
#: Noise levels δ of paper 002 app. E (variance of the ambient Gaussian on the sphere).
PAPER_NOISES = (0.001, 0.01, 0.1)


def noise_spread_study(manifold=None, *, noises=PAPER_NOISES, n=50, totals=None, replicates=3,
                       rng=None, n_jobs=None, mode="paper", n_footpoints=10, n_vectors=10,
                       chain_length=1000, burn_in=500, **release_kwargs):
    r"""Log MSE of private geodesic regression for several data spreads δ (paper 002 fig. 6).

    Runs :func:`~dpcore.experiments.budget_sweep` with the equal split ε_p = ε_v = total/2 once
    per noise level, on ``n`` points, and stacks the results.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold, optional
        Default ``Sphere(2)`` (the paper's).
    noises : sequence of float
        Noise levels δ (on the sphere the variance of the ambient Gaussian; the paper:
        0.001, 0.01, 0.1).
    n : int
        Sample size (the paper: 50).
    totals : sequence of float, optional
        Total budgets; default ten from 0.2 to 2.0 (the paper's).
    replicates, rng, n_jobs, mode, n_footpoints, n_vectors, chain_length, burn_in
        As in :func:`~dpcore.experiments.budget_sweep`; ``rng`` seeds the whole study, one
        child per noise level.
    **release_kwargs
        Passed on (public bounds in strict mode).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`~dpcore.experiments.budget_sweep` plus ``noise``.
    """
    m = Sphere(2) if manifold is None else _check_manifold(manifold)
    noises = [float(d) for d in _positive_list(noises, "noises")]
    children = _root_seed(rng).spawn(len(noises))
    frames = []
    for delta, child in zip(noises, children, strict=True):
        df = budget_sweep(m, sample_sizes=[n], split="equal", totals=totals,
                          replicates=replicates, rng=child, n_jobs=n_jobs, mode=mode,
                          noise=delta, n_footpoints=n_footpoints, n_vectors=n_vectors,
                          chain_length=chain_length, burn_in=burn_in, **release_kwargs)
        df.insert(0, "noise", delta)
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({"manifold": repr(m), "mode": mode, "n": n})
    return out


def _spread_cell(manifold, x, y, t_grid, eps_p, eps_v, mode, chain_length, burn_in, seed):
    rel = _quiet_release(private_geodesic_regression, manifold, x, y, eps_p=eps_p, eps_v=eps_v,
                         mode=mode, rng=np.random.default_rng(seed), chain_length=chain_length,
                         burn_in=burn_in)
    low, high = release_covariate_range(rel)
    pts = geodesic_predictions(manifold, rel.values["footpoint"], rel.values["shooting_vector"],
                               (t_grid - low) / (high - low))
    return pts[0, 0], float(np.mean(release_mse(manifold, rel, x, y)))


def noise_spread_geodesics(manifold=None, *, noises=(0.01, 0.1), n=50, totals=None,
                           n_points=60, rng=None, n_jobs=None, mode="paper", chain_length=1000,
                           burn_in=500):
    r"""Data, non-private and private geodesics for several data spreads (paper 002 fig. 5).

    For every noise level one dataset of ``n`` points is drawn, fitted without privacy, and
    released once (one footpoint, one shooting vector) at each equal split ε_p = ε_v = total/2.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold, optional
        Default ``Sphere(2)``.
    noises : sequence of float
        Noise levels δ (the paper's figure: 0.01 and 0.1).
    n : int
        Sample size (the paper: 50).
    totals : sequence of float, optional
        Total budgets; default ten from 0.2 to 2.0.
    n_points : int
        Points along each drawn geodesic (covariate from 0 to 1).
    rng, n_jobs, mode, chain_length, burn_in
        As elsewhere; one child seed per (noise, total).

    Returns
    -------
    pandas.DataFrame
        Long format, one row per point: ``noise``, ``kind`` (``"data"``, ``"nonprivate"`` or
        ``"private"``), ``epsilon`` (total budget; NaN for data and the non-private fit),
        ``mse`` (of that geodesic on the data; NaN for data rows), ``x`` (covariate), and the
        point's coordinates ``c0``, ``c1``, ... (flattened point).
    """
    m = Sphere(2) if manifold is None else _check_manifold(manifold)
    noises = [float(d) for d in _positive_list(noises, "noises")]
    tot = (np.round(np.linspace(0.2, 2.0, 10), 10) if totals is None
           else _positive_list(totals, "totals"))
    n = check_int(n, "n", minimum=3)
    n_points = check_int(n_points, "n_points", minimum=2)
    t_grid = np.linspace(0.0, 1.0, n_points)
    root = _root_seed(rng)
    data_seeds = root.spawn(len(noises))
    cell_seeds = root.spawn(len(noises) * len(tot))
    frames, jobs, keys = [], [], []
    for i, (delta, ds) in enumerate(zip(noises, data_seeds, strict=True)):
        x, y = make_regression_data(m, n, noise=delta, rng=ds)
        fit = _nonprivate_fit(m, x, y)
        curve = fit.predict(t_grid * (x.max() - x.min()) + x.min())

        def block(kind, xs, pts, eps=np.nan, mse=np.nan, delta=delta):
            flat = np.asarray(pts).reshape(len(xs), -1)
            cols = {f"c{j}": flat[:, j] for j in range(flat.shape[1])}
            return pd.DataFrame({"noise": delta, "kind": kind, "epsilon": eps, "mse": mse,
                                 "x": xs, **cols})

        frames.append(block("data", x, y))
        frames.append(block("nonprivate", t_grid * (x.max() - x.min()) + x.min(), curve,
                            mse=fit.mse(x, y)))
        for j, total in enumerate(tot):
            jobs.append((m, x, y, t_grid * (x.max() - x.min()) + x.min(), total / 2, total / 2,
                         mode, chain_length, burn_in, cell_seeds[i * len(tot) + j]))
            keys.append((i, total, block, x))
    results = _parallel(_spread_cell, jobs, n_jobs)
    for (_, total, block, x), (pts, mse) in zip(keys, results, strict=True):
        frames.append(block("private", t_grid * (x.max() - x.min()) + x.min(), pts,
                            eps=float(total), mse=mse))
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({"manifold": repr(m), "mode": mode, "n": n})
    return out


# ---------------------------------------------------------------------------- real data sweeps
#: Errors of a single release that a sweep with ``on_error="record"`` records instead of raising:
#: numerical breakdowns of the samplers (e.g. chains drifting to matrices that are no longer
#: numerically positive definite), not programming errors.
NUMERICAL_ERRORS = (ValueError, FloatingPointError, np.linalg.LinAlgError)


def _real_cell(manifold, x, y, eps_p, eps_v, seed, mode, n_footpoints, n_vectors, chain_length,
               burn_in, on_error, release_kwargs):
    try:
        with np.errstate(all="ignore"):
            rel = _quiet_release(private_geodesic_regression, manifold, x, y,
                                 eps_p=float(eps_p), eps_v=float(eps_v), mode=mode,
                                 rng=np.random.default_rng(seed), n_footpoints=n_footpoints,
                                 n_vectors=n_vectors, chain_length=chain_length,
                                 burn_in=burn_in, **release_kwargs)
            mse = float(np.mean(release_mse(manifold, rel, x, y)))
    except NUMERICAL_ERRORS:
        if on_error == "raise":
            raise
        return np.nan, True
    if not np.isfinite(mse):
        if on_error == "raise":
            raise FloatingPointError("A private geodesic gave a non-finite MSE.")
        return np.nan, True
    return mse, False


def _sweep_datasets(manifold, datasets, pairs, root, n_jobs, mode, n_footpoints, n_vectors,
                    chain_length, burn_in, on_error, release_kwargs):
    """Every budget pair on every dataset ``(n, replicate, x, y, nonprivate_mse)``."""
    if on_error not in ("raise", "record"):
        raise ValueError(f"`on_error` must be 'raise' or 'record', got {on_error!r}.")
    keys = [(d, k) for d in range(len(datasets)) for k in range(len(pairs))]
    seeds = root.spawn(len(keys))
    settings = (mode, n_footpoints, n_vectors, chain_length, burn_in, on_error,
                dict(release_kwargs))
    jobs = [(manifold, datasets[d][2], datasets[d][3], pairs[k, 0], pairs[k, 1], s, *settings)
            for (d, k), s in zip(keys, seeds, strict=True)]
    results = _parallel(_real_cell, jobs, n_jobs)
    rows = []
    for (d, k), (mse, failed) in zip(keys, results, strict=True):
        n, rep, _, _, nonprivate = datasets[d]
        ep, ev = pairs[k]
        log = float(np.log(mse)) if mse > 0 else (np.nan if failed else -np.inf)
        rows.append((n, ep, ev, ep + ev, rep, mse, log, nonprivate, failed))
    df = pd.DataFrame(rows, columns=[*COLUMNS, "failed"])
    df = df.astype({"n": int, "replicate": int})
    return df.sort_values(["n", "eps_p", "eps_v", "replicate"], kind="stable",
                          ignore_index=True)


def real_data_budget_sweep(manifold, x, y, *, split="unequal", totals=None, eps_p_grid=None,
                           eps_v_grid=None, replicates=1, rng=None, n_jobs=None, mode="paper",
                           n_footpoints=10, n_vectors=10, chain_length=1000, burn_in=500,
                           on_error="raise", **release_kwargs):
    r""":func:`~dpcore.experiments.budget_sweep` on a fixed (real) dataset.

    The data do not change between replicates; each replicate is a fresh release of
    ``n_footpoints x n_vectors`` private geodesics for every budget pair.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    x : array-like, shape (n,)
        Covariates in original units.
    y : array-like, shape (n, *point_shape)
        Responses.
    split, totals, eps_p_grid, eps_v_grid
        The budget view, see :func:`~dpcore.experiments.budget_pairs`.
    replicates, rng, n_jobs, mode, n_footpoints, n_vectors, chain_length, burn_in
        As in :func:`~dpcore.experiments.budget_sweep`.
    on_error : {"raise", "record"}
        What to do when a release breaks down numerically (:data:`NUMERICAL_ERRORS` or a
        non-finite MSE): raise, or record the cell with ``mse`` NaN and ``failed`` True.
    **release_kwargs
        Public bounds for strict mode (``tau``, ``covariate_range``, ``tau_m``, ...).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`~dpcore.experiments.budget_sweep` (``nonprivate_mse`` is the same
        on every row) plus ``failed``.
    """
    m = _check_manifold(manifold)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    replicates = check_int(replicates, "replicates")
    pairs = budget_pairs(split, totals=totals, eps_p_grid=eps_p_grid, eps_v_grid=eps_v_grid)
    nonprivate = _nonprivate_fit(m, x, y).mse(x, y)
    datasets = [(len(x), r, x, y, nonprivate) for r in range(replicates)]
    df = _sweep_datasets(m, datasets, pairs, _root_seed(rng), n_jobs, mode, n_footpoints,
                         n_vectors, chain_length, burn_in, on_error, release_kwargs)
    df.attrs.update({"manifold": repr(m), "mode": mode, "split": split,
                     "n_footpoints": n_footpoints, "n_vectors": n_vectors,
                     "chain_length": chain_length, "burn_in": burn_in})
    return df


def recorded_budget_sweep(manifold, *, sample_sizes=(20, 50, 100), split="unequal", totals=None,
                          eps_p_grid=None, eps_v_grid=None, replicates=10, rng=None,
                          data_rng=None, nested=False, n_jobs=None, noise=None, mode="paper",
                          n_footpoints=10, n_vectors=10, chain_length=1000, burn_in=500,
                          **release_kwargs):
    r"""A synthetic-data budget sweep that records numerical breakdowns instead of raising.

    Same protocol and columns as :func:`~dpcore.experiments.budget_sweep` (one dataset per
    sample size and replicate, shared by all budget pairs), plus a ``failed`` column: a release
    that breaks down numerically gets ``mse`` NaN and ``failed`` True (see
    :func:`real_data_budget_sweep`). Use it where paper mode lets the chains leave the
    numerically representable part of the manifold, e.g. footpoints on SPD(2) at very small
    ε_p, where paper mode drops the support restriction.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    sample_sizes, split, totals, eps_p_grid, eps_v_grid, replicates, n_jobs, noise, mode,
    n_footpoints, n_vectors, chain_length, burn_in, **release_kwargs
        As in :func:`~dpcore.experiments.budget_sweep`.
    rng : None, int, SeedSequence or Generator
        Seed; its first child draws the datasets, its second the releases.
    data_rng : None, int, SeedSequence or Generator, optional
        Separate seed of the datasets, so that sweeps of different views can share them.
    nested : bool
        If True, each replicate draws one dataset of the largest size and the smaller sizes use
        its first ``n`` points (the covariates are i.i.d., so each prefix is a sample of its
        own): the sizes then share the data-generating geodesic, which on SPD(2) fixes the
        data-dependent radius τ_m that otherwise dominates the differences between sizes.

    Returns
    -------
    pandas.DataFrame
    """
    m = _check_manifold(manifold)
    sizes = _sizes(sample_sizes, minimum=3)
    replicates = check_int(replicates, "replicates")
    pairs = budget_pairs(split, totals=totals, eps_p_grid=eps_p_grid, eps_v_grid=eps_v_grid)
    data_root, cell_root = _root_seed(rng).spawn(2)
    if data_rng is not None:
        data_root = _root_seed(data_rng, "data_rng")
    data_seeds = data_root.spawn(len(sizes) * replicates)
    datasets = []
    if nested:
        full = [make_regression_data(m, max(sizes), noise=noise, rng=data_seeds[r])
                for r in range(replicates)]
    for i, n in enumerate(sizes):
        for r in range(replicates):
            if nested:
                x, y = full[r].x[:n], full[r].y[:n]
            else:
                x, y = make_regression_data(m, n, noise=noise,
                                            rng=data_seeds[i * replicates + r])
            datasets.append((n, r, x, y, _nonprivate_fit(m, x, y).mse(x, y)))
    df = _sweep_datasets(m, datasets, pairs, cell_root, n_jobs, mode, n_footpoints, n_vectors,
                         chain_length, burn_in, "record", release_kwargs)
    df.attrs.update({"manifold": repr(m), "mode": mode, "split": split, "noise": noise,
                     "nested": nested, "n_footpoints": n_footpoints, "n_vectors": n_vectors,
                     "chain_length": chain_length, "burn_in": burn_in,
                     "failed": int(df["failed"].sum())})
    return df


def load_rat_skulls(path=None):
    """Vilmann's rat skulls: ages and landmarks (18 rats x 8 ages, 8 planar landmarks).

    Parameters
    ----------
    path : str or pathlib.Path, optional
        ``rat_skulls.npy``; default in :func:`data_dir`.

    Returns
    -------
    ages : ndarray, shape (144,)
        Age in days of each observation (:data:`RAT_AGES` repeated for each rat).
    landmarks : ndarray, shape (144, 8, 2)
    """
    path = Path(path) if path is not None else data_dir() / "rat_skulls.npy"
    arr = np.load(path)
    if arr.ndim != 3 or arr.shape[0] % len(RAT_AGES) or arr.shape[2] != 2:
        raise ValueError(f"Expected landmarks of shape (8 * rats, k, 2), got {arr.shape}.")
    ages = np.tile(np.asarray(RAT_AGES, dtype=float), arr.shape[0] // len(RAT_AGES))
    return ages, arr.astype(float)


def rat_skull_budget_study(*, path=None, split="unequal", totals=None, eps_p_grid=None,
                           replicates=1, rng=None, n_jobs=None, mode="paper", n_footpoints=10,
                           n_vectors=10, chain_length=1000, burn_in=500, **release_kwargs):
    r"""Paper 002 fig. 2 on real planar shapes: the rat skulls on Kendall's shape space.

    The 144 skull outlines (8 landmarks) are mapped to preshapes and regressed on age in days
    (rescaled to [0, 1] with the data's range in paper mode, or a public ``covariate_range``
    in strict mode); see :func:`real_data_budget_sweep` for the rest.

    Returns
    -------
    pandas.DataFrame
        As :func:`real_data_budget_sweep`.
    """
    ages, landmarks = load_rat_skulls(path)
    shape_space = KendallShape(landmarks.shape[1])
    y = shape_space.from_landmarks(landmarks)
    return real_data_budget_sweep(
        shape_space, ages, y, split=split, totals=totals, eps_p_grid=eps_p_grid,
        replicates=replicates, rng=rng, n_jobs=n_jobs, mode=mode, n_footpoints=n_footpoints,
        n_vectors=n_vectors, chain_length=chain_length, burn_in=burn_in, **release_kwargs)


def _shapes_frame(kind, draw, ages, landmarks):
    rows = []
    for a, shape in zip(ages, landmarks, strict=True):
        for j, (lx, ly) in enumerate(shape):
            rows.append((kind, draw, float(a), j, float(lx), float(ly)))
    return pd.DataFrame(rows, columns=["kind", "draw", "age", "landmark", "x", "y"])


def rat_skull_shapes(*, path=None, ages=(14, 30, 60, 90, 150), eps_p=0.3, eps_v=0.3, n_draws=1,
                     rng=None, mode="paper", chain_length=2000, burn_in=1000, **release_kwargs):
    r"""Predicted rat-skull shapes, non-private and private (paper 002 fig. 3).

    Parameters
    ----------
    path : optional
        ``rat_skulls.npy``.
    ages : sequence of float
        Ages in days at which to predict (the issue: 14, 30, 60, 90, 150).
    eps_p, eps_v : float
        Budgets of each private geodesic (the paper: 0.3 and 0.3).
    n_draws : int
        Private geodesics (each its own footpoint and shooting vector).
    rng, mode, chain_length, burn_in, **release_kwargs
        As in :func:`~dpcore.release.private_geodesic_regression`.

    Returns
    -------
    pandas.DataFrame
        One row per landmark: ``kind`` (``"nonprivate"`` or ``"private"``), ``draw``, ``age``,
        ``landmark``, ``x``, ``y``. All shapes are rotated to the non-private prediction at the
        first age (optimal rotation), so panels are comparable.
    """
    ages_data, landmarks = load_rat_skulls(path)
    shape_space = KendallShape(landmarks.shape[1])
    y = shape_space.from_landmarks(landmarks)
    ages = np.asarray(ages, dtype=float)
    fit = _nonprivate_fit(shape_space, ages_data, y)
    pred = fit.predict(ages)
    reference = pred[0]
    frames = [_shapes_frame("nonprivate", 0, ages,
                            shape_space.to_landmarks(pred, reference=reference))]
    n_draws = check_int(n_draws, "n_draws")
    # One release with n_draws footpoints and one vector each: independent chains, batched.
    rel = _quiet_release(private_geodesic_regression, shape_space, ages_data, y, eps_p=eps_p,
                         eps_v=eps_v, mode=mode, rng=np.random.default_rng(_root_seed(rng)),
                         n_footpoints=n_draws, n_vectors=1, chain_length=chain_length,
                         burn_in=burn_in, **release_kwargs)
    low, high = release_covariate_range(rel)
    pts = geodesic_predictions(shape_space, rel.values["footpoint"],
                               rel.values["shooting_vector"], (ages - low) / (high - low))
    for d in range(n_draws):
        frames.append(_shapes_frame("private", d, ages,
                                    shape_space.to_landmarks(pts[d, 0], reference=reference)))
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({"mode": mode, "eps_p": eps_p, "eps_v": eps_v,
                      "nonprivate_mse": fit.mse(ages_data, y)})
    return out


# ---------------------------------------------------------------------------- SPD ellipses
def spd_ellipses_study(*, n=50, eps_p=0.2, eps_v=0.2, n_covariates=6, n_draws=1, noise=None,
                       rng=None, mode="paper", chain_length=2000, burn_in=1000,
                       **release_kwargs):
    r"""Non-private and private SPD(2) geodesics at equally spaced covariates (paper 002 fig. 8).

    Parameters
    ----------
    n : int
        Sample size of the synthetic data (appendix F protocol).
    eps_p, eps_v : float
        Budgets of each private geodesic (the paper: 0.2 and 0.2).
    n_covariates : int
        Equally spaced covariates in [0, 1] at which the geodesics are evaluated.
    n_draws : int
        Private geodesics.
    noise : float, optional
        Tangent noise standard deviation (default 0.01, the paper's).
    rng, mode, chain_length, burn_in, **release_kwargs
        As in :func:`~dpcore.release.private_geodesic_regression`; ``rng`` seeds the data and
        the releases.

    Returns
    -------
    pandas.DataFrame
        One row per matrix: ``kind`` (``"generating"``, ``"nonprivate"`` or ``"private"``),
        ``draw``, ``x``, ``s11``, ``s12``, ``s22``.
    """
    m = SPD(2)
    n_draws = check_int(n_draws, "n_draws")
    data_seed, release_seed = _root_seed(rng).spawn(2)
    data = make_regression_data(m, check_int(n, "n", minimum=3), noise=noise, rng=data_seed)
    x, y = data
    xs = np.linspace(0.0, 1.0, check_int(n_covariates, "n_covariates"))
    fit = _nonprivate_fit(m, x, y, covariate_range=(0.0, 1.0))

    def frame(kind, draw, mats):
        mats = np.asarray(mats)
        return pd.DataFrame({"kind": kind, "draw": draw, "x": xs, "s11": mats[:, 0, 0],
                             "s12": mats[:, 0, 1], "s22": mats[:, 1, 1]})

    frames = [frame("generating", 0, data.true_points(xs)),
              frame("nonprivate", 0, fit.predict(xs))]
    # One release with n_draws footpoints and one vector each: independent chains, batched.
    rel = _quiet_release(private_geodesic_regression, m, x, y, eps_p=eps_p, eps_v=eps_v,
                         mode=mode, rng=np.random.default_rng(release_seed),
                         n_footpoints=n_draws, n_vectors=1, chain_length=chain_length,
                         burn_in=burn_in, **release_kwargs)
    low, high = release_covariate_range(rel)
    pts = geodesic_predictions(m, rel.values["footpoint"], rel.values["shooting_vector"],
                               (xs - low) / (high - low))
    for d in range(n_draws):
        frames.append(frame("private", d, pts[d, 0]))
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({"mode": mode, "eps_p": eps_p, "eps_v": eps_v, "n": n,
                      "nonprivate_mse": fit.mse(x, y)})
    return out


# ---------------------------------------------------------------------------- Wine Quality
def load_wine(path=None, *, n_rows=100, responses=WINE_RESPONSES, covariate=WINE_COVARIATE,
              scaling="reference"):
    r"""The Wine Quality (red) data of papers 000 / 003 §4.2, ready for regression.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        ``winequality-red.csv``; default in :func:`data_dir`.
    n_rows : int
        The first ``n_rows`` rows are analysed (the papers: 100).
    responses : sequence of str
        Response columns (the papers: fixed acidity, density, pH, residual sugar).
    covariate : str
        Covariate column (the quality score ``class``).
    scaling : {"reference", "none"}
        ``"reference"`` (default): each response is standardised with the mean and standard
        deviation of the *other* rows of the file (rows ``n_rows + 1`` onward), which play the
        part of public reference data, so the scaling itself reveals nothing about the
        analysed rows and the four responses get comparable units (raw density varies by
        1e-3, residual sugar by units). ``"none"``: raw units.

    Returns
    -------
    x : ndarray, shape (n_rows,)
    y : ndarray, shape (n_rows, len(responses))
    info : dict
        ``scaling``, ``center`` and ``scale`` (per response, NaN-free), ``responses``,
        ``covariate``.
    """
    path = Path(path) if path is not None else data_dir() / "winequality-red.csv"
    table = pd.read_csv(path)
    missing = [c for c in (*responses, covariate) if c not in table.columns]
    if missing:
        raise ValueError(f"{path} lacks the columns {missing}.")
    n_rows = check_int(n_rows, "n_rows", minimum=3)
    if n_rows >= len(table):
        raise ValueError(f"`n_rows` must be below the {len(table)} rows of the file.")
    rows = table.iloc[:n_rows]
    x = rows[covariate].to_numpy(dtype=float)
    y = rows[list(responses)].to_numpy(dtype=float)
    if scaling == "reference":
        ref = table.iloc[n_rows:][list(responses)].to_numpy(dtype=float)
        center, scale = ref.mean(axis=0), ref.std(axis=0, ddof=1)
    elif scaling == "none":
        center, scale = np.zeros(len(responses)), np.ones(len(responses))
    else:
        raise ValueError(f"`scaling` must be 'reference' or 'none', got {scaling!r}.")
    info = {"scaling": scaling, "center": center, "scale": scale,
            "responses": list(responses), "covariate": covariate, "n_rows": n_rows}
    return x, (y - center) / scale, info


def _line_rows(method, mode, replicate, intercept, slope, x, y, responses, epsilon, note=""):
    pred = intercept[None, :] + x[:, None] * slope[None, :]
    mse = np.mean((pred - y) ** 2, axis=0)
    return [(method, mode, replicate, r, float(intercept[j]), float(slope[j]), float(mse[j]),
             epsilon, note) for j, r in enumerate(responses)]


def _dpgr_release(x, y, epsilon, mode, bounds, seed):
    m = Euclidean(y.shape[1])
    kwargs = {} if mode == "paper" else bounds
    rel = _quiet_release(private_geodesic_regression, m, x, y, eps_p=epsilon / 2,
                         eps_v=epsilon / 2, mode=mode, rng=np.random.default_rng(seed),
                         chain_length=10, burn_in=0, **kwargs)
    return np.asarray(rel.values["intercept"])[0, 0], np.asarray(rel.values["coef"])[0, 0]


def _diffprivlib_fit(x, y, epsilon, covariate_range, response_bound, seed):
    from diffprivlib.models import LinearRegression

    d = y.shape[1]
    model = LinearRegression(
        epsilon=epsilon, bounds_X=([covariate_range[0]], [covariate_range[1]]),
        bounds_y=([-response_bound] * d, [response_bound] * d),
        random_state=int(np.random.default_rng(seed).integers(2**31 - 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(x[:, None], y)
    return np.asarray(model.intercept_, dtype=float), np.asarray(model.coef_, dtype=float)[:, 0]


def linear_regression_comparison(path=None, *, n_rows=100, responses=WINE_RESPONSES,
                                 covariate=WINE_COVARIATE, scaling="reference", epsilon=2.0,
                                 replicates=100, covariate_range=WINE_QUALITY_RANGE,
                                 response_bound=4.0, tau=3.0,
                                 methods=("ols", "dpgr_strict", "dpgr_paper", "diffprivlib",
                                          "opacus"),
                                 rng=None, n_jobs=None):
    r"""Private linear regression on the Wine Quality data (papers 000 / 003, table 1).

    The responses (default: fixed acidity, density, pH, residual sugar, standardised as in
    :func:`load_wine`) are regressed on the quality score. Methods:

    ``"ols"``
        Non-private least squares (one row; equals :class:`~dpcore.learning.GeodesicRegression`
        on ``Euclidean(4)``).
    ``"dpgr_strict"``
        DP geodesic regression on ``Euclidean(4)``
        (:func:`~dpcore.release.private_geodesic_regression`, ε_p = ε_v = ε/2, exact K-norm
        sampler) in strict mode with public bounds: quality range
        ``covariate_range``, residuals clipped to ``tau``, responses projected onto the ball of
        radius ``tau_m = response_bound * sqrt(d)`` about 0 (which holds the cube
        ``[-response_bound, response_bound]^d``).
    ``"dpgr_paper"``
        The same in paper mode (bounds from the data, σ = Δ/ε): the papers' setting, not private.
    ``"diffprivlib"``
        ``diffprivlib.models.LinearRegression(epsilon=ε)`` with ``bounds_X = covariate_range``
        and ``bounds_y = [-response_bound, response_bound]`` per response (all four responses in
        one fit, so ε covers them together, as for DPGR).
    ``"opacus"``
        DP-SGD with Opacus at ε = 2 when ``torch`` and ``opacus`` import; otherwise one row
        saying why it was skipped (NaN MSE).

    Parameters
    ----------
    path, n_rows, responses, covariate, scaling
        See :func:`load_wine`.
    epsilon : float
        Total budget of every private fit (the papers: 2).
    replicates : int
        Independent private fits per private method.
    covariate_range : (float, float)
        Public range of the covariate.
    response_bound : float
        Public bound on each (scaled) response.
    tau : float
        Public bound on residual norms (strict DPGR).
    methods : sequence of str
    rng, n_jobs
        See the module docstring.

    Returns
    -------
    pandas.DataFrame
        One row per (method, replicate, response): ``method``, ``mode`` (``"non-private"``,
        ``"strict"``, ``"paper"``, ``"pure DP"``...), ``replicate``, ``response``,
        ``intercept``, ``slope`` (in the units of the covariate and the scaled responses),
        ``mse`` (mean squared residual of that response on the ``n_rows`` rows), ``epsilon``,
        ``note``. :func:`summarize_linear_regression` averages over responses and replicates.
    """
    x, y, info = load_wine(path, n_rows=n_rows, responses=responses, covariate=covariate,
                           scaling=scaling)
    responses = list(responses)
    d = y.shape[1]
    epsilon = check_positive(epsilon, "epsilon")
    replicates = check_int(replicates, "replicates")
    bounds = {"covariate_range": tuple(float(c) for c in covariate_range), "tau": float(tau),
              "tau_m": float(response_bound) * np.sqrt(d), "center": np.zeros(d)}
    rows = []
    children = dict(zip(methods, _root_seed(rng).spawn(len(methods)), strict=True))
    for method in methods:
        if method == "ols":
            design = np.column_stack([np.ones_like(x), x])
            coef = np.linalg.lstsq(design, y, rcond=None)[0]
            rows += _line_rows("ols", "non-private", 0, coef[0], coef[1], x, y, responses,
                               np.nan)
        elif method in ("dpgr_strict", "dpgr_paper"):
            mode = method.split("_")[1]
            seeds = children[method].spawn(replicates)
            fits = _parallel(_dpgr_release, [(x, y, epsilon, mode, bounds, s) for s in seeds],
                             n_jobs)
            for r, (a, b) in enumerate(fits):
                rows += _line_rows(method, mode, r, a, b, x, y, responses, epsilon)
        elif method == "diffprivlib":
            seeds = children[method].spawn(replicates)
            try:
                fits = _parallel(_diffprivlib_fit,
                                 [(x, y, epsilon, covariate_range, response_bound, s)
                                  for s in seeds], n_jobs)
            except ImportError as exc:
                rows += [("diffprivlib", "skipped", 0, r, np.nan, np.nan, np.nan, epsilon,
                          f"diffprivlib not importable: {exc}") for r in responses]
                continue
            for r, (a, b) in enumerate(fits):
                rows += _line_rows("diffprivlib", "pure DP", r, a, b, x, y, responses, epsilon)
        elif method == "opacus":
            try:
                import opacus  # noqa: F401
                import torch  # noqa: F401
            except ImportError as exc:
                note = (f"skipped: {exc.name or 'torch'} is not importable (Opacus needs "
                        "PyTorch, which is not installed here)")
            else:  # pragma: no cover - torch is not part of this project's environment
                note = "skipped: Opacus DP-SGD comparison not implemented in this study"
            rows += [("opacus", "skipped", 0, r, np.nan, np.nan, np.nan, epsilon, note)
                     for r in responses]
        else:
            raise ValueError(f"Unknown method {method!r}.")
    df = pd.DataFrame(rows, columns=["method", "mode", "replicate", "response", "intercept",
                                     "slope", "mse", "epsilon", "note"])
    df.attrs.update({"scaling": scaling, "n_rows": n_rows,
                     "center": np.asarray(info["center"]).tolist(),
                     "scale": np.asarray(info["scale"]).tolist(),
                     "covariate_range": list(bounds["covariate_range"]),
                     "response_bound": response_bound, "tau": tau,
                     "tau_m": bounds["tau_m"]})
    return df


def summarize_linear_regression(df):
    """Mean, median and spread of the MSE per method of :func:`linear_regression_comparison`.

    The MSE of one fit is the mean over responses of each response's mean squared residual
    (scikit-learn's ``mean_squared_error`` with uniform averaging over outputs).

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`linear_regression_comparison`.

    Returns
    -------
    pandas.DataFrame
        One row per method: ``method``, ``mode``, ``fits``, ``mse_mean``, ``mse_median``,
        ``mse_q10``, ``mse_q90``, ``note``.
    """
    per_fit = df.groupby(["method", "mode", "replicate"], sort=False).agg(
        mse=("mse", "mean"), note=("note", "first")).reset_index()
    out = per_fit.groupby(["method", "mode"], sort=False).agg(
        fits=("mse", "count"), mse_mean=("mse", "mean"), mse_median=("mse", "median"),
        mse_q10=("mse", lambda s: s.quantile(0.1)), mse_q90=("mse", lambda s: s.quantile(0.9)),
        note=("note", "first")).reset_index()
    return out
