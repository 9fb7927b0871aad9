"""Page logic of the Fréchet-mean page: summaries, preview clouds and simulations.

Every random function takes a ``seed``; simulations are seeded so that they are reproducible
and may be cached.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from dpcore.data import make_mean_data
from dpcore.data.synthetic import default_center
from dpcore.learning import frechet_mean
from dpcore.learning.frechet import frechet_mean_gradient
from dpcore.manifolds import SPD, Sphere
from dpcore.mechanisms import (
    AmbientLaplace,
    Ball,
    KNormGradient,
    RiemannianLaplace,
    ambient_radius,
    embed,
)
from dpcore.mechanisms.laplace import unembed
from dpcore.privacy import (
    eps_to_mu,
    gdp_mu_monte_carlo,
)
from dpcore.release import private_frechet_mean, project_to_ball
from dpcore.sampling import sample_gaussian
from dpcore.sensitivity import (
    empirical_frechet_sensitivity,
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
    frechet_radius_limit,
)
from dpcore.visualization.frechet import MECHANISM_LABELS
from ui.manifolds import make_manifold

from .common import CAPS, _seed_for

__all__ = [
    "FRECHET_MANIFOLDS",
    "frechet_mechanism_draws",
    "frechet_sensitivity_simulation",
    "frechet_simulation_one_n",
    "frechet_summary",
    "MECHANISM_LABELS",
]

#: Manifolds of the Fréchet-mean page: token of :mod:`ui.manifolds` -> range of the public
#: radius slider (its default is the manifold's ``radius`` there).
FRECHET_MANIFOLDS = {
    "sphere": (0.05, 0.75),
    "spd": (0.75, 3.0),
    "spd3": (1.0, 3.0),
}


def frechet_summary(manifold, n, radius):
    """Public quantities of a private Fréchet mean with data in a ball of radius ``radius``.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    n : int
        Sample size.
    radius : float
        Radius r of the public ball holding the data.

    Returns
    -------
    dict
        ``r_star`` (largest admissible radius, paper 001 Thm 2), ``kappa`` (upper curvature
        bound), ``h`` (curvature factor), ``delta`` (sensitivity of the mean),
        ``delta_gradient`` (sensitivity of the Fréchet-energy gradient, for KNG).
    """
    kappa = float(manifold.curvature_bounds[1])
    inj = float(manifold.injectivity_radius)
    a = 2.0 * radius * math.sqrt(kappa) if kappa > 0 else 0.0
    h = a / math.tan(a) if kappa > 0 else 1.0
    return {
        "r_star": frechet_radius_limit(kappa, inj),
        "kappa": kappa,
        "h": h,
        "delta": frechet_mean_sensitivity(n, radius, kappa, inj),
        "delta_gradient": frechet_gradient_sensitivity(n, radius, kappa, inj),
    }


def _ambient_error(manifold, mean, points):
    """Euclidean (Frobenius) distance in the ambient space between ``mean`` and ``points``."""
    diff = embed(manifold, points) - embed(manifold, mean)
    return np.linalg.norm(diff, axis=-1)


def _kng_batched(manifold, datasets, means, *, epsilon, delta_gradient, center, radius,
                 chain_length, burn_in, rng):
    """One KNG draw per data set, all chains in one batched Metropolis–Hastings run.

    Chain ``i`` targets ``exp(-|grad F(z; D_i)| / sigma)`` restricted to the public ball, the
    density :meth:`dpcore.mechanisms.KNormGradient.frechet_mean` samples for a single data set.
    """
    mech = KNormGradient(manifold=manifold, epsilon=epsilon, sensitivity=delta_gradient,
                         chain_length=chain_length, burn_in=burn_in)

    def gradient_norm(z):
        return manifold.norm(z, frechet_mean_gradient(manifold, z, datasets))

    res = mech.sample(gradient_norm, means, size=means.shape[0], rng=rng,
                      support=Ball.make(manifold, center, radius))
    return np.asarray(res.values), res.diagnostics, mech.sigma


def _move_by_isometry(manifold, points, targets):
    r"""Carry draws made about the default centre to draws about each target point.

    ``points[i]`` was drawn about :func:`dpcore.data.synthetic.default_center` and is mapped by
    an isometry sending that centre to ``targets[i]``: a reflection of the sphere (through the
    hyperplane orthogonal to centre − target) or the congruence :math:`X \mapsto
    T^{1/2} X T^{1/2}` of SPD(k) (affine-invariant metric). Distance-based densities such as the
    Riemannian Laplace and Gaussian are invariant under isometries, so the result has the law of
    one draw about each target. This replaces one (for SPD(k ≥ 3) Markov chain) sampler call
    per replicate by one batched call.
    """
    points = np.asarray(points, dtype=float)
    targets = np.asarray(targets, dtype=float)
    if isinstance(manifold, Sphere):
        w = default_center(manifold)[None, :] - targets
        norm2 = np.sum(w * w, axis=-1, keepdims=True)
        safe = np.where(norm2 > 1e-24, norm2, 1.0)
        moved = points - 2.0 * w * np.sum(w * points, axis=-1, keepdims=True) / safe
        return np.where(norm2 > 1e-24, moved, points)
    if isinstance(manifold, SPD):
        vals, vecs = np.linalg.eigh(0.5 * (targets + np.swapaxes(targets, -1, -2)))
        root = (vecs * np.sqrt(vals)[..., None, :]) @ np.swapaxes(vecs, -1, -2)
        moved = root @ points @ root
        return 0.5 * (moved + np.swapaxes(moved, -1, -2))
    raise TypeError(f"No isometry helper for {manifold!r}.")


def frechet_mechanism_draws(manifold_key, y, radius, epsilon, n_draws, *, center=None, seed=0,
                            chain_length=300, burn_in=200, mc_samples=1000, mc_repeats=20):
    r"""Many seeded private means of one data set per mechanism (a preview, not a release).

    Laplace, KNG and ambient Laplace go through :func:`dpcore.release.private_frechet_mean`
    exactly as a release would (strict mode, ``n_draws`` draws, seeded). The Gaussian
    mechanism is run at the µ equivalent to ε, :math:`\mu = -2\Phi^{-1}(1/(1+e^\varepsilon))`,
    with the flat-space rate :math:`\sigma = \Delta/\mu`; its actual µ on the manifold at that
    rate is estimated by Monte Carlo (paper 004 Algorithm 2) and returned, so the page can show
    how close the flat calibration is. (A release calibrates σ by bisection on that Monte
    Carlo estimate with a safety margin, which takes seconds.)

    Parameters
    ----------
    manifold_key : str
        Token of :data:`FRECHET_MANIFOLDS` (any key or token of :mod:`ui.manifolds` works).
    y : array-like, shape (n, *point_shape)
        The data.
    radius : float
        Public radius r of the ball about ``center`` holding the data.
    epsilon : float
        Privacy budget ε of one draw.
    n_draws : int
        Draws per mechanism (capped by ``CAPS["cloud_draws"]``).
    center : array-like, optional
        Public centre of the ball (default :func:`dpcore.data.synthetic.default_center`).
    seed : int
    chain_length, burn_in : int
        Metropolis–Hastings settings of the KNG draws.
    mc_samples, mc_repeats : int
        Monte Carlo sizes of the µ check of the Gaussian rate.

    Returns
    -------
    dict
        ``mean`` (non-private mean of the projected data), ``draws`` (mechanism -> array
        ``(n_draws, *point_shape)``), ``ambient`` (unprojected ambient draws),
        ``left_manifold`` (bool array), ``sigma`` (mechanism -> rate), ``errors`` (mechanism ->
        geodesic distances to the mean), ``ambient_errors`` (mechanism -> Euclidean distances in
        the embedding), ``kng_diagnostics``, ``mu`` (target), ``mu_check`` ((estimate, standard
        error)), ``delta``, ``delta_gradient``, ``n_outside`` (points projected onto the ball).
    """
    m = make_manifold(manifold_key)
    n_draws = int(min(max(int(n_draws), 1), CAPS["cloud_draws"]))
    y = np.asarray(y, dtype=float)
    center = default_center(m) if center is None else np.asarray(center, dtype=float)
    n = y.shape[0]
    n_outside = int(np.sum(m.dist(y, center) > radius))
    yp = project_to_ball(m, y, center, radius)
    mean = frechet_mean(m, yp)
    info = frechet_summary(m, n, radius)
    rng = np.random.default_rng(seed)
    draws, sigma, errors, amb_errors = {}, {}, {}, {}
    ambient = left = None
    kng_diag = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mech in ("laplace", "kng", "ambient_laplace"):
            rel = private_frechet_mean(
                m, y, epsilon=epsilon, mechanism=mech, radius=radius, center=center,
                rng=rng, n_draws=n_draws, chain_length=chain_length, burn_in=burn_in,
            )
            draws[mech] = np.asarray(rel.values["mean"])
            sigma[mech] = float(next(iter(rel.sigma.values())))
            if mech == "ambient_laplace":
                ambient = np.asarray(rel.values["ambient"])
                left = np.asarray(rel.values["left_manifold"], dtype=bool)
            if mech == "kng":
                kng_diag = dict(rel.diagnostics)
    mu = float(eps_to_mu(epsilon))
    sigma_g = info["delta"] / mu
    draws["gaussian"] = np.asarray(sample_gaussian(m, mean, sigma_g, size=n_draws, rng=rng))
    sigma["gaussian"] = sigma_g
    mu_hat, mu_se = gdp_mu_monte_carlo(m, sigma_g, info["delta"], n_samples=mc_samples,
                                       n_eps=500, repeats=mc_repeats, rng=seed)
    order = [k for k in MECHANISM_LABELS if k in draws]
    draws = {k: draws[k] for k in order}
    for k, pts in draws.items():
        errors[k] = np.asarray(m.dist(mean, pts), dtype=float)
        target = ambient if k == "ambient_laplace" else pts
        amb_errors[k] = _ambient_error(m, mean, target)
    return {
        "mean": mean,
        "draws": draws,
        "ambient": ambient,
        "left_manifold": left,
        "sigma": sigma,
        "errors": errors,
        "ambient_errors": amb_errors,
        "kng_diagnostics": kng_diag,
        "mu": mu,
        "mu_check": (float(mu_hat), float(mu_se)),
        "delta": info["delta"],
        "delta_gradient": info["delta_gradient"],
        "n_outside": n_outside,
    }


def frechet_simulation_one_n(manifold_key, radius, epsilon, n, replicates, *, include_kng=True,
                             chain_length=300, burn_in=200, seed=0):
    r"""Errors of the four mechanisms over fresh synthetic data sets of size ``n``.

    Each replicate draws a data set with :func:`dpcore.data.make_mean_data` (the paper 001
    protocol), computes its Fréchet mean :math:`\bar x` and one private mean per mechanism at
    budget ε: Riemannian Laplace and ambient Laplace with the mechanisms of
    :mod:`dpcore.mechanisms` configured as :func:`dpcore.release.private_frechet_mean` does;
    KNG by one batched Metropolis–Hastings run over all replicates (shorter chains than a
    release); the Riemannian Gaussian at
    :math:`\mu = \mu(\varepsilon)` with the flat-space rate :math:`\sigma = \Delta/\mu`.

    Parameters
    ----------
    manifold_key : str
    radius : float
    epsilon : float
    n : int
    replicates : int
        Capped by ``CAPS["sim_replicates"]``.
    include_kng : bool
    chain_length, burn_in : int
    seed : int
        Combined with ``n`` into the seed of this sample size.

    Returns
    -------
    pandas.DataFrame
        One row per (replicate, mechanism): ``n``, ``replicate``, ``mechanism``,
        ``geodesic_error`` (:math:`d(\bar x, \tilde x)`, ambient draws projected back),
        ``ambient_error`` (Euclidean distance in the embedding, ambient draws unprojected, as in
        paper 001 Fig. 1), ``left_manifold`` (ambient only; NaN otherwise).
    """
    m = make_manifold(manifold_key)
    n = int(min(max(int(n), 2), CAPS["sim_max_n"]))
    replicates = int(min(max(int(replicates), 2), CAPS["sim_replicates"]))
    center = default_center(m)
    rng = _seed_for(seed, n)
    datasets = np.stack([make_mean_data(m, n, radius=radius, rng=rng) for _ in range(replicates)])
    means = np.stack([frechet_mean(m, d) for d in datasets])
    info = frechet_summary(m, n, radius)
    mu = float(eps_to_mu(epsilon))
    rows = []

    def add(mech, private, ambient=None, left=None):
        geo = np.asarray(m.dist(means, private), dtype=float)
        amb = _ambient_error(m, means, private if ambient is None else ambient)
        for i in range(replicates):
            rows.append({"n": n, "replicate": i, "mechanism": mech,
                         "geodesic_error": float(geo[i]), "ambient_error": float(amb[i]),
                         "left_manifold": np.nan if left is None else float(left[i])})

    # The mechanisms as dpcore.release.private_frechet_mean configures them in strict mode
    # (the synthetic data lie in the ball, so its projection step changes nothing).
    try:
        laplace = RiemannianLaplace(manifold=m, epsilon=epsilon, sensitivity=info["delta"])
    except ValueError:  # density not integrable on the whole space: restrict to the ball
        laplace = RiemannianLaplace(manifold=m, epsilon=epsilon, sensitivity=info["delta"],
                                    support=(center, radius))
    ambient = AmbientLaplace(manifold=m, epsilon=epsilon,
                             sensitivity=2.0 * ambient_radius(m, center, radius) / n)
    if laplace.support is None:  # isometry invariant: draw all replicates at once
        lap = _move_by_isometry(m, laplace.release(center, size=replicates, rng=rng).values,
                                means)
    else:  # truncated to the public ball: one draw per data set
        lap = np.stack([laplace.release(mean_i, rng=rng).values for mean_i in means])
    amb_p, amb_raw, amb_left = [], [], []
    for d in datasets:
        res = ambient.release(unembed(m, embed(m, d).mean(axis=0)), rng=rng)
        amb_p.append(res.values)
        amb_raw.append(res.diagnostics["ambient_values"])
        amb_left.append(bool(res.diagnostics["left_manifold"]))
    add("laplace", lap)
    if include_kng:
        kng, _, _ = _kng_batched(m, datasets, means, epsilon=epsilon,
                                 delta_gradient=info["delta_gradient"], center=center,
                                 radius=radius, chain_length=chain_length, burn_in=burn_in,
                                 rng=rng)
        add("kng", kng)
    sigma_g = info["delta"] / mu
    gauss = _move_by_isometry(m, sample_gaussian(m, center, sigma_g, size=replicates, rng=rng),
                              means)
    add("gaussian", gauss)
    add("ambient_laplace", np.stack(amb_p), np.stack(amb_raw), np.array(amb_left))
    return pd.DataFrame(rows)


def frechet_sensitivity_simulation(manifold_key, radius, n_values, pairs, *, seed=0):
    r"""Empirical sensitivity of the Fréchet mean next to the bound (paper 001, Fig. 1).

    For each n, ``pairs`` times: draw ``n + 1`` points in the ball, let D drop the first and
    D' the last, and record :math:`\rho(\bar x_D, \bar x_{D'})`
    (:func:`dpcore.sensitivity.empirical_frechet_sensitivity`).

    Parameters
    ----------
    manifold_key : str
    radius : float
    n_values : sequence of int
    pairs : int
        Capped by ``CAPS["sens_pairs"]``.
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns ``n``, ``pair``, ``empirical``, ``bound``, ``ratio`` (bound / empirical).
    """
    m = make_manifold(manifold_key)
    pairs = int(min(max(int(pairs), 1), CAPS["sens_pairs"]))
    rows = []
    for n in sorted({int(v) for v in n_values}):
        rng = _seed_for(seed, n, 1)
        bound = frechet_summary(m, n, radius)["delta"]
        for j in range(pairs):
            y = make_mean_data(m, n + 1, radius=radius, rng=rng)
            emp = empirical_frechet_sensitivity(m, y)
            rows.append({"n": n, "pair": j, "empirical": emp, "bound": bound,
                         "ratio": bound / emp if emp > 0 else np.inf})
    return pd.DataFrame(rows)
