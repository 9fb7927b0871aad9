"""The Fréchet mean page's studies: seeded preview draws of every mechanism on the current
data, and the simulations (error against n, empirical sensitivity) on synthetic data, the
library's studies seed for seed.

Every function takes a ``seed``: the results are reproducible and may be cached.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpcore.data.synthetic import default_center
from dpcore.exceptions import WorkBudgetError
from dpcore.learning import frechet_mean
from dpcore.mechanisms import embed
from dpcore.privacy import eps_to_mu, gdp_mu_monte_carlo
from dpcore.release import private_frechet_mean, project_to_ball
from dpcore.visualization.frechet import MECHANISM_LABELS
from ui.caps import CAPS
from ui.manifolds import make_manifold

from .frechet_mean import available_mechanisms, frechet_summary, simulated_mechanisms

__all__ = ["frechet_mechanism_draws", "frechet_sensitivity_simulation",
           "frechet_simulation_one_n", "simulation_study_kwargs"]


def _ambient_error(manifold, mean, points):
    """Euclidean (Frobenius) distance in the ambient space between ``mean`` and ``points``."""
    diff = embed(manifold, points) - embed(manifold, mean)
    return np.linalg.norm(diff, axis=-1)


def frechet_mechanism_draws(manifold_key, y, radius, epsilon, n_draws, *, center=None, seed=0,
                            chain_length=300, burn_in=200, mc_samples=1000, mc_repeats=20,
                            mechanisms=None):
    r"""Many seeded private means of one data set per mechanism (a preview, not a release).

    Every mechanism goes through :func:`dpcore.release.private_frechet_mean` exactly as a
    release would (strict mode, ``n_draws`` draws, seeded); the Gaussian runs at the µ
    equivalent to ε, :math:`\mu = -2\Phi^{-1}(1/(1+e^\varepsilon))`, with σ calibrated as a
    release calibrates it. Its µ on the manifold at that σ is estimated once more by Monte
    Carlo (paper 004 Algorithm 2, another seed) and returned, so the page can show the margin.

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
    mechanisms : sequence of str, optional
        Default :func:`available_mechanisms` at ``radius`` (only the ambient one at r >= r*).

    Returns
    -------
    dict
        ``mean`` (non-private mean of the projected data), ``draws`` (mechanism -> array
        ``(n_draws, *point_shape)``), ``ambient`` (unprojected ambient draws),
        ``left_manifold`` (bool array), ``sigma`` (mechanism -> rate), ``errors`` (mechanism ->
        geodesic distances to the mean), ``ambient_errors`` (mechanism -> Euclidean distances in
        the embedding), ``kng_diagnostics``, ``guarantee`` (mechanism -> label, per-draw ε, δ
        and µ of its release), ``mu`` (target), ``mu_check`` ((estimate, standard
        error)), ``delta``, ``delta_gradient``, ``n_outside`` (points projected onto the ball),
        ``skipped`` (mechanism -> message, for draws the library's work budget refused).
    """
    m = make_manifold(manifold_key)
    n_draws = int(min(max(int(n_draws), 1), CAPS["cloud_draws"]))
    y = np.asarray(y, dtype=float)
    center = default_center(m) if center is None else np.asarray(center, dtype=float)
    n = y.shape[0]
    n_outside = int(np.sum(m.dist(y, center) > radius))
    yp = project_to_ball(m, y, center, radius)
    mean = frechet_mean(m, yp)
    info = frechet_summary(m, n, radius, center)
    rng = np.random.default_rng(seed)
    draws, sigma, errors, amb_errors, guarantee = {}, {}, {}, {}, {}
    ambient = left = None
    kng_diag, skipped = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if mechanisms is None:
            mechanisms = available_mechanisms(m, radius)
        for mech in mechanisms:
            try:
                rel = private_frechet_mean(
                    m, y, epsilon=epsilon, mechanism=mech, radius=radius, center=center,
                    rng=rng, n_draws=n_draws, chain_length=chain_length, burn_in=burn_in,
                )
            except WorkBudgetError as exc:  # refused before running: say so, show the rest
                skipped[mech] = str(exc)
                continue
            draws[mech] = np.asarray(rel.values["mean"])
            sigma[mech] = float(next(iter(rel.sigma.values())))
            per_delta = None if rel.delta is None else rel.delta / n_draws
            # per draw: n_draws draws compose to n·ε, n·δ and, for GDP, µ√n
            per_mu = None if rel.mu is None else rel.mu / math.sqrt(n_draws)
            guarantee[mech] = {"label": rel.label, "epsilon": epsilon, "delta": per_delta,
                               "mu": per_mu}
            if mech == "ambient_laplace":
                ambient = np.asarray(rel.values["ambient"])
                left = np.asarray(rel.values["left_manifold"], dtype=bool)
            if mech == "kng":
                kng_diag = dict(rel.diagnostics)
    mu = float(eps_to_mu(epsilon))
    mu_hat = mu_se = float("nan")
    if "gaussian" in sigma:
        mu_hat, mu_se = gdp_mu_monte_carlo(m, sigma["gaussian"], info["delta"],
                                           n_samples=mc_samples, n_eps=500,
                                           repeats=mc_repeats, rng=seed)
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
        "guarantee": guarantee,
        "mu": mu,
        "mu_check": (float(mu_hat), float(mu_se)),
        "delta": info["delta"],
        "delta_gradient": info["delta_gradient"],
        "n_outside": n_outside,
        "skipped": skipped,
    }


def frechet_simulation_one_n(manifold_key, radius, epsilon, n, replicates, *, include_kng=True,
                             chain_length=300, burn_in=200, seed=0):
    r"""Errors of the four mechanisms over fresh synthetic data sets of size ``n``.

    The study is the library's (:func:`dpcore.experiments.frechet_mean_study`, the report's
    paper 001 figure), seed for seed: each replicate draws a data set in the public ball
    (:func:`dpcore.data.make_mean_data`), computes its Fréchet mean :math:`\bar x` and
    releases it once per mechanism at budget ε through :func:`dpcore.release.private_frechet_mean`
    in strict mode (KNG by the exact sampler where the library chooses it); the Riemannian
    Gaussian runs at µ = µ(ε) with σ calibrated as a Gaussian release calibrates it. The
    sample size's seed is ``SeedSequence([seed, n])``, so each n can be cached on its own.

    Parameters
    ----------
    manifold_key : str
    radius : float
    epsilon : float
    n : int
        Clipped to ``2 .. CAPS["sim_max_n"]``.
    replicates : int
        Clipped to ``2 .. CAPS["sim_replicates"]``.
    include_kng : bool
    chain_length, burn_in : int
        Metropolis–Hastings settings, used only where KNG is not sampled exactly.
    seed : int

    Returns
    -------
    pandas.DataFrame
        The study's rows: ``n``, ``epsilon``, ``mu``, ``replicate``, ``mechanism``,
        ``geodesic_error`` (:math:`d(\bar x, \tilde x)`, ambient draws projected back),
        ``euclidean_error`` (distance in the embedding, ambient draws unprojected, as in paper
        001 Fig. 1), ``left_manifold``, ``sigma``, ``sensitivity``.
    """
    # Imported here: the studies (pandas, the experiment runners) are not needed for the
    # page's first figure, which comes before the simulation.
    from dpcore.experiments.studies import frechet_mean_study

    return frechet_mean_study(**simulation_study_kwargs(
        manifold_key, radius, epsilon, n, replicates, include_kng=include_kng,
        chain_length=chain_length, burn_in=burn_in, seed=seed))


def simulation_study_kwargs(manifold_key, radius, epsilon, n, replicates, *, include_kng=True,
                            chain_length=300, burn_in=200, seed=0):
    """Arguments of :func:`dpcore.experiments.frechet_mean_study` for one sample size of the
    page's simulation (sizes capped by :data:`CAPS`)."""
    n = int(min(max(int(n), 2), CAPS["sim_max_n"]))
    return {
        "manifold": make_manifold(manifold_key), "sample_sizes": [n], "epsilon": float(epsilon),
        "radius": float(radius),
        "replicates": int(min(max(int(replicates), 2), CAPS["sim_replicates"])),
        "mechanisms": simulated_mechanisms(make_manifold(manifold_key), include_kng),
        "mode": "strict", "chain_length": int(chain_length), "burn_in": int(burn_in),
        "rng": np.random.SeedSequence([int(seed), n]),
    }


def frechet_sensitivity_simulation(manifold_key, radius, n_values, pairs, *, seed=0):
    r"""Empirical sensitivity of the Fréchet mean next to the bound (paper 001, Fig. 1).

    The study is the library's (:func:`dpcore.experiments.frechet_sensitivity_study`, drawn in
    the reproduction report), seed for seed: for each n, ``pairs`` times, ``n + 1`` points in
    the ball, D drops the first and D' the last, and :math:`\rho(\bar x_D, \bar x_{D'})` is
    compared with the bound of paper 001 Thm 2. This function caps the sizes and names the
    replicate column ``pair``.

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
    from dpcore.experiments.studies import frechet_sensitivity_study

    m = make_manifold(manifold_key)
    pairs = int(min(max(int(pairs), 1), CAPS["sens_pairs"]))
    sizes = sorted({int(v) for v in n_values})
    df = frechet_sensitivity_study(m, sample_sizes=sizes, radius=radius, replicates=pairs,
                                   rng=seed)
    return df.rename(columns={"replicate": "pair"})
