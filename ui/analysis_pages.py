r"""Computations, parsers and figure builders behind four analysis pages of the dashboard.

The pages ``pages/frechet_mean.py``, ``pages/gaussian_dp.py``, ``pages/sensitivity.py`` and
``pages/linear_regression.py`` stay thin: they read widgets, call the functions here (through
``st.cache_data`` where the work is deterministic) and draw the returned figures. Like
:mod:`ui.figures`, nothing here imports Streamlit, so every function can be tested and timed
on its own.

Conventions
-----------
* Every random function takes a ``seed``; simulations are seeded so that they are reproducible
  and may be cached. Private *releases* are never made here: the pages call
  :mod:`dpcore.release` directly with OS entropy when the user presses a button.
* Sizes a user can change are capped by :data:`CAPS` (and by :func:`dpcore.settings.get_limits`),
  so that one visitor cannot tie up the machine.
* Figures use the builders of :mod:`ui.figures` where one fits; the few new builders here
  follow the same style (title, axis titles, legend, Okabe–Ito colours).
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.data import make_mean_data, make_regression_data
from dpcore.data.synthetic import default_center
from dpcore.learning import GeodesicRegression, frechet_mean
from dpcore.learning.frechet import frechet_mean_gradient
from dpcore.manifolds import SPD, Sphere
from dpcore.manifolds._functions import jacobi_point_scale, jacobi_vector_scale
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
    delta_mu,
    eps_to_mu,
    gdp_mu_circle,
    gdp_mu_monte_carlo,
    mu_to_eps,
    privacy_profile_circle,
    tradeoff_gdp,
)
from dpcore.release import private_frechet_mean, project_to_ball
from dpcore.sampling import sample_gaussian, sample_laplace
from dpcore.sensitivity import (
    empirical_frechet_sensitivity,
    empirical_regression_sensitivity,
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
    frechet_radius_limit,
    geodesic_regression_sensitivity,
)
from dpcore.settings import get_limits

from . import colors, figures
from .manifolds import make_manifold

__all__ = [
    "CAPS",
    "FRECHET_MANIFOLDS",
    "MECHANISM_LABELS",
    "REGRESSION_MANIFOLDS",
    "CsvParseError",
    "NumericTable",
    "assumptions_markdown",
    "example_regression_frame",
    "frechet_error_figure",
    "frechet_left_manifold_figure",
    "frechet_mechanism_draws",
    "frechet_sensitivity_figure",
    "frechet_sensitivity_simulation",
    "frechet_simulation_one_n",
    "frechet_summary",
    "gaussian_laplace_utility",
    "gaussian_utility_figure",
    "jacobi_figure",
    "jacobi_growth",
    "linear_fit",
    "linear_regression_figure",
    "mse_table",
    "mu_sigma_figure",
    "mu_sigma_table",
    "nice_bounds",
    "parse_numeric_csv",
    "privacy_profile_figure",
    "ratio_histogram",
    "regression_sensitivity_ratios",
    "select_numeric",
    "spd_mean_clouds_cone_figure",
    "spd_mean_ellipses_figure",
    "tangent_clouds_figure",
    "tradeoff_figure",
]

#: Upper bounds on the sizes a user can ask for on these pages (on top of
#: :func:`dpcore.settings.get_limits`). They keep every request well under a minute.
CAPS = {
    "cloud_draws": 200,  # private means per mechanism in the preview cloud
    "sim_replicates": 100,  # replicates per sample size in the Fréchet simulation
    "sim_sizes": 8,  # sample sizes in the Fréchet simulation
    "sim_max_n": 1000,  # largest sample size in the Fréchet simulation
    "sens_pairs": 200,  # adjacent pairs per sample size (sensitivity page)
    "sens_max_n": 500,  # largest sample size on the sensitivity page
    "mc_samples": 5000,  # Monte Carlo samples per centre and repeat (GDP estimates)
    "mc_repeats": 50,  # Monte Carlo repeats (GDP estimates)
    "mc_sigmas": 16,  # rates sigma in a Monte Carlo sweep
    "utility_replicates": 2000,  # draws per rate in the Gaussian vs Laplace comparison
    "example_rows": 2000,  # rows of the generated linear-regression example
    "upload_bytes": 5 * 1024 * 1024,  # uploaded CSV for the linear-regression page
    "upload_columns": 200,  # columns of that CSV
}

#: Display names of the Fréchet-mean mechanisms of :mod:`dpcore.release`, in display order.
MECHANISM_LABELS = {
    "laplace": "Riemannian Laplace",
    "kng": "KNG",
    "gaussian": "Riemannian Gaussian (equal µ)",
    "ambient_laplace": "Ambient Euclidean Laplace",
}

#: Manifolds of the Fréchet-mean page: token of :mod:`ui.manifolds` -> range of the public
#: radius slider (its default is the manifold's ``radius`` there).
FRECHET_MANIFOLDS = {
    "sphere": (0.05, 0.75),
    "spd": (0.75, 3.0),
    "spd3": (1.0, 3.0),
}

#: Manifolds of the sensitivity page: tokens of :mod:`ui.manifolds` (Kendall with its default
#: 8 landmarks).
REGRESSION_MANIFOLDS = ("sphere", "spd", "kendall")


def assumptions_markdown(items):
    """A Markdown bullet list for an "Assumptions in force" box.

    Parameters
    ----------
    items : sequence of (str, str)
        ``(name, statement)`` pairs.

    Returns
    -------
    str
    """
    return "\n".join(f"- **{name}:** {text}" for name, text in items)


def _seed_for(*parts):
    """A generator seeded deterministically from integers (e.g. a seed and a sample size)."""
    return np.random.default_rng(np.random.SeedSequence([int(p) for p in parts]))


# =============================================================================== Fréchet mean
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


def _legend_below(fig):
    """Move the legend under the plot, leaving the full width to a figure in a narrow column."""
    fig.update_layout(
        legend={"orientation": "h", "x": 0.0, "xanchor": "left", "y": 0.0, "yref": "container",
                "yanchor": "bottom"},
        margin={"b": 150},
    )
    return fig


def _mechanism_colors(keys):
    palette = colors.qualitative_colors(len(MECHANISM_LABELS))
    lookup = dict(zip(MECHANISM_LABELS, palette, strict=True))
    return [lookup[k] for k in keys]


def frechet_error_figure(frame, metric="ambient_error", *, epsilon=None):
    """Mean error ± 2 SE against n, one band per mechanism (a simulation).

    Parameters
    ----------
    frame : pandas.DataFrame
        Concatenated outputs of :func:`frechet_simulation_one_n`.
    metric : {"ambient_error", "geodesic_error"}
    epsilon : float, optional
        Shown in the title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    series = {}
    for mech in MECHANISM_LABELS:
        sub = frame[frame["mechanism"] == mech]
        if sub.empty:
            continue
        x, mean, se = figures.mean_and_se(sub["n"].to_numpy(float), sub[metric].to_numpy(float))
        series[MECHANISM_LABELS[mech]] = (x, mean, se)
    y_title = ("ambient (Euclidean) distance to x̄" if metric == "ambient_error"
               else "geodesic distance to x̄")
    title = "Simulation: error of the private mean x̃ against n"
    if epsilon is not None:
        title += f" (ε = {epsilon:g})"
    fig = figures.band_figure(
        series, x_title="sample size n", y_title=y_title, title=title,
        subtitle="Synthetic data; mean ± 2 standard errors over replicates", log_x=True,
        log_y=True,
    )
    # Keep the mechanism colours of the other figures of the page.
    names = list(series)
    lookup = {MECHANISM_LABELS[k]: c for k, c in zip(
        MECHANISM_LABELS, _mechanism_colors(list(MECHANISM_LABELS)), strict=True)}
    for tr in fig.data:
        label = tr.legendgroup
        if label in lookup and label in names:
            if tr.fill == "toself":
                tr.fillcolor = colors.with_alpha(lookup[label], 0.18)
            else:
                tr.line.color = lookup[label]
                tr.marker.color = lookup[label]
    return fig


def frechet_left_manifold_figure(frame):
    """Fraction of ambient Laplace releases off the manifold against n, with ±2 SE bars.

    Parameters
    ----------
    frame : pandas.DataFrame
        Concatenated outputs of :func:`frechet_simulation_one_n`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    sub = frame[frame["mechanism"] == "ambient_laplace"]
    x, mean, se = figures.mean_and_se(sub["n"].to_numpy(float),
                                      sub["left_manifold"].to_numpy(float))
    fig = figures.curves_figure(
        {"Ambient Laplace: share off the manifold": (x, mean, 2 * se)},
        styles={"Ambient Laplace: share off the manifold":
                {"color": _mechanism_colors(["ambient_laplace"])[0]}},
        x_title="sample size n", y_title="share of releases off the manifold",
        title="Simulation: ambient releases that leave the manifold",
        subtitle="Before projecting back; error bars ± 2 standard errors", log_x=True,
        y_range=(-0.02, 1.05), height=380,
    )
    fig.update_yaxes(tickformat=".0%")
    return fig


def frechet_sensitivity_figure(frame):
    """Empirical :math:`\\rho(\\bar x, \\bar x')` per adjacent pair, its mean and the bound.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`frechet_sensitivity_simulation`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    grouped = frame.groupby("n")
    ns = np.array(sorted(frame["n"].unique()), dtype=float)
    curves = {
        "Adjacent pair (empirical)": (frame["n"].to_numpy(float), frame["empirical"].to_numpy()),
        "Mean of the pairs": (ns, grouped["empirical"].mean().reindex(ns).to_numpy()),
        "Theoretical bound Δ (paper 001 Thm 2)": (ns, grouped["bound"].first().reindex(ns)
                                                  .to_numpy()),
    }
    styles = {
        "Adjacent pair (empirical)": {"mode": "markers", "color": colors.SKY_BLUE},
        "Mean of the pairs": {"color": colors.BLUE, "mode": "lines+markers"},
        "Theoretical bound Δ (paper 001 Thm 2)": {"color": colors.VERMILLION, "dash": "dash",
                                                  "mode": "lines+markers"},
    }
    return figures.curves_figure(
        curves, styles=styles, x_title="sample size n",
        y_title="distance between the means of adjacent data sets",
        title="Sensitivity of the Fréchet mean: empirical vs bound",
        subtitle="n + 1 points; D drops the first, D′ the last", log_x=True, log_y=True,
    )


def tangent_clouds_figure(manifold, mean, clouds, *, data=None, title=None, subtitle=None):
    r"""Private means in normal coordinates at the non-private mean: a zoom on the clouds.

    Every point z is mapped to the coordinates of :math:`\log_{\bar x} z` in an orthonormal
    basis of the tangent space at :math:`\bar x` (for S², the azimuthal equidistant map), so
    the distance of a dot from the origin is its geodesic distance from the mean.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
        Of dimension 2 (e.g. ``Sphere(2)``); higher dimensions show the first two coordinates.
    mean : array-like
        Non-private mean (the origin of the plot).
    clouds : mapping of str to array-like, shape (m, *point_shape)
        Private means per mechanism label.
    data : array-like, shape (n, *point_shape), optional
        Data points (grey; those beyond the zoom are clipped by the axes).
    title, subtitle : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    mean = np.asarray(mean, dtype=float)
    basis = manifold.orthonormal_basis(mean)[:2]

    def coords(points):
        v = manifold.log(np.broadcast_to(mean, np.shape(points)), np.asarray(points, float))
        return np.stack([manifold.inner(mean, b, v) for b in basis], axis=-1)

    palette = dict(zip(MECHANISM_LABELS.values(), _mechanism_colors(list(MECHANISM_LABELS)),
                       strict=True))
    fig = go.Figure()
    if data is not None:
        c = coords(data)
        fig.add_trace(go.Scatter(x=c[:, 0], y=c[:, 1], mode="markers",
                                 marker={"color": colors.DATA, "size": 6, "opacity": 0.6},
                                 name=f"Data (n = {c.shape[0]})", hoverinfo="skip"))
    reach = 0.0
    for label, pts in clouds.items():
        c = coords(pts)
        reach = max(reach, float(np.quantile(np.linalg.norm(c, axis=-1), 0.98)))
        fig.add_trace(go.Scatter(
            x=c[:, 0], y=c[:, 1], mode="markers", name=f"{label} ({c.shape[0]})",
            marker={"color": palette.get(label, colors.ORANGE), "size": 7, "opacity": 0.75},
            hovertemplate=f"{label}<br>(%{{x:.3g}}, %{{y:.3g}})<extra></extra>"))
    fig.add_trace(go.Scatter(x=[0.0], y=[0.0], mode="markers", name="Non-private mean",
                             marker={"color": colors.NONPRIVATE, "size": 11, "symbol": "square"},
                             hovertemplate="non-private mean<extra></extra>"))
    half = 1.15 * (reach if reach > 0 else 1.0)
    fig.update_xaxes(range=[-half, half], title={"text": "tangent coordinate 1 (radians)"},
                     zeroline=True, zerolinecolor="#dddddd", constrain="domain")
    fig.update_yaxes(range=[-half, half], title={"text": "tangent coordinate 2 (radians)"},
                     zeroline=True, zerolinecolor="#dddddd", scaleanchor="x", scaleratio=1,
                     constrain="domain")
    return figures._finish(fig, title or "Zoom: private means around the non-private mean",
                           figures.HEIGHT_3D, subtitle=subtitle or
                           "Normal coordinates at the mean: distance from the origin = "
                           "geodesic distance")


def spd_mean_clouds_cone_figure(data, mean, clouds, *, title=None):
    """SPD(2) cone in (a, b, c) coordinates with the data and a cloud of private means per
    mechanism.

    Parameters
    ----------
    data : array-like, shape (n, 2, 2)
    mean : array-like, shape (2, 2)
        Non-private mean (black square).
    clouds : mapping of str to array-like, shape (m, 2, 2)
        Private means per mechanism label.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    pieces = [figures.spd_abc(data).reshape(-1, 3)]
    pieces += [figures.spd_abc(c).reshape(-1, 3) for c in clouds.values()]
    extent = 1.1 * max(float(np.max(p[:, 0] + p[:, 2])) for p in pieces)
    fig = figures.spd_cone_figure(
        data=data, extent=extent,
        title=title or "Private means in the SPD(2) cone: matrices [[a, b], [b, c]]",
        subtitle="Positive definite matrices lie inside the cone ac > b²",
    )
    palette = dict(zip(MECHANISM_LABELS.values(), _mechanism_colors(list(MECHANISM_LABELS)),
                       strict=True))
    for label, pts in clouds.items():
        p = figures.spd_abc(pts).reshape(-1, 3)
        fig.add_trace(go.Scatter3d(
            x=p[:, 0], y=p[:, 1], z=p[:, 2], mode="markers",
            marker={"size": 3.5, "color": palette.get(label, colors.ORANGE), "opacity": 0.8},
            name=f"{label} ({p.shape[0]})", hovertemplate=f"{label}<extra></extra>",
        ))
    q = figures.spd_abc(mean)
    fig.add_trace(go.Scatter3d(
        x=[q[0]], y=[q[1]], z=[q[2]], mode="markers",
        marker={"size": 7, "color": colors.NONPRIVATE, "symbol": "square"},
        name="Non-private mean", hovertemplate="non-private mean<extra></extra>",
    ))
    return fig


def spd_mean_ellipses_figure(mean, clouds, *, max_draws=12, title=None):
    """One panel per mechanism: the non-private mean and private means of SPD(2) as ellipses.

    Each matrix S is drawn as its one-standard-deviation ellipse {z : zᵀS⁻¹z = 1}
    (:func:`ui.figures.ellipse_xy`), all panels on one scale.

    Parameters
    ----------
    mean : array-like, shape (2, 2)
    clouds : mapping of str to array-like, shape (m, 2, 2)
    max_draws : int
        Private ellipses drawn per panel (the first ones).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    labels = list(clouds)
    fig = make_subplots(rows=1, cols=len(labels), subplot_titles=labels,
                        horizontal_spacing=0.03)
    palette = dict(zip(MECHANISM_LABELS.values(), _mechanism_colors(list(MECHANISM_LABELS)),
                       strict=True))
    mats = [np.asarray(mean)] + [np.asarray(c)[:max_draws].reshape(-1, 2, 2)
                                 for c in clouds.values()]
    reach = max(float(np.sqrt(np.linalg.eigvalsh(m).max())) for group in mats
                for m in np.reshape(group, (-1, 2, 2)))
    half = 1.1 * reach
    for j, label in enumerate(labels, start=1):
        pts = np.asarray(clouds[label])[:max_draws].reshape(-1, 2, 2)
        color = palette.get(label, colors.ORANGE)
        outline = figures._polyline([figures.ellipse_xy(S, n=90) for S in pts])
        fig.add_trace(go.Scatter(
            x=outline[:, 0], y=outline[:, 1], mode="lines", line={"color": color, "width": 1.5},
            name=f"{label}: first {pts.shape[0]} private means", hoverinfo="skip",
        ), row=1, col=j)
        e = figures.ellipse_xy(mean, n=120)
        fig.add_trace(go.Scatter(
            x=e[:, 0], y=e[:, 1], mode="lines", line={"color": colors.NONPRIVATE, "width": 4},
            name="Non-private mean", showlegend=j == 1, legendgroup="np", hoverinfo="skip",
        ), row=1, col=j)
        axis_id = "" if j == 1 else str(j)
        fig.update_xaxes(range=[-half, half], zeroline=False, showgrid=False, row=1, col=j,
                         constrain="domain", title={"text": "z₁ (units of √S)"})
        fig.update_yaxes(range=[-half, half], zeroline=False, showgrid=False, row=1, col=j,
                         scaleanchor=f"x{axis_id}", scaleratio=1, constrain="domain",
                         title={"text": "z₂" if j == 1 else None})
    return figures._finish(
        fig, title or "Private means of SPD(2) drawn as ellipses", 430,
        subtitle="Each matrix S as its 1-sd ellipse {z : zᵀS⁻¹z = 1}", legend_below=True,
        margin_top=130,
    )


# =============================================================================== Gaussian DP
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


def mu_sigma_figure(table, *, current=None):
    """µ against σ: S¹ exact, S¹ Monte Carlo (± 2 SE) and R, with the current setting marked.

    Parameters
    ----------
    table : dict
        Output of :func:`mu_sigma_table`.
    current : tuple (sigma, mu), optional
        The page's current rate and its exact µ on S¹.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    curves = {
        "S¹ exact (paper 004 Algorithm 1)": (table["sigma"], table["mu_circle"]),
        "R: µ = Δ/σ": (table["sigma"], table["mu_line"]),
    }
    styles = {
        "S¹ exact (paper 004 Algorithm 1)": {"color": colors.VERMILLION, "mode": "lines+markers"},
        "R: µ = Δ/σ": {"color": colors.BLUE, "dash": "dash", "mode": "lines+markers"},
    }
    if len(table["mc_sigma"]):
        label = "S¹ Monte Carlo ± 2 SE (Algorithm 2)"
        curves[label] = (table["mc_sigma"], table["mu_mc"], 2 * table["mu_mc_se"])
        styles[label] = {"color": colors.GREY, "mode": "markers"}
    if current is not None:
        curves["Current setting"] = ([current[0]], [current[1]])
        styles["Current setting"] = {"color": colors.BLACK, "mode": "markers"}
    fig = figures.curves_figure(
        curves, styles=styles, x_title="rate σ (radians)", y_title="privacy parameter µ",
        title="Gaussian DP parameter µ against the rate σ", log_y=True,
        subtitle="The circle's µ falls below R's Δ/σ once σ is large: S¹ is compact",
    )
    if current is not None:
        fig.data[-1].marker.size = 13
        fig.data[-1].marker.symbol = "star"
    return fig


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


def gaussian_utility_figure(frame):
    """Mean distance ± 2 SE against µ for the Gaussian and Laplace mechanisms (a simulation).

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`gaussian_laplace_utility`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    series = {}
    for mech in ("Riemannian Gaussian", "Riemannian Laplace"):
        sub = frame[frame["mechanism"] == mech]
        series[mech] = figures.mean_and_se(sub["mu"].to_numpy(float),
                                           sub["distance"].to_numpy(float))
    fig = figures.band_figure(
        series, x_title="privacy parameter µ (Monte Carlo estimate for the Gaussian)",
        y_title="mean geodesic distance to x̄",
        title="Simulation on S²: Gaussian vs Laplace at equal µ",
        subtitle="Mean ± 2 standard errors over draws; Laplace at ε = log(Φ(µ/2)/Φ(−µ/2))",
        log_x=True, log_y=True,
    )
    return fig


def tradeoff_figure(mus):
    """GDP trade-off curves :math:`G_\\mu(\\alpha) = \\Phi(\\Phi^{-1}(1-\\alpha) - \\mu)`.

    Parameters
    ----------
    mus : mapping of str to float
        Labelled values of µ (the first one is drawn thickest).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    alpha = np.concatenate([np.linspace(0.0, 0.02, 41), np.linspace(0.02, 1.0, 300)[1:]])
    curves = {"µ = 0: no test beats guessing": (alpha, 1 - alpha)}
    styles = {"µ = 0: no test beats guessing": {"color": colors.GREY, "dash": "dot"}}
    for i, (label, mu) in enumerate(mus.items()):
        curves[label] = (alpha, tradeoff_gdp(alpha, float(mu)))
        if i == 0:
            styles[label] = {"color": colors.BLACK, "width": 4}
    fig = figures.curves_figure(
        curves, styles=styles, x_title="type I error α (false alarm)",
        y_title="type II error β (miss)", title="Trade-off curves of µ-GDP",
        subtitle="Lower curves: an attacker can tell adjacent data sets apart more easily",
        square=True, x_range=(0, 1), y_range=(0, 1), height=600,
    )
    return _legend_below(fig)


def privacy_profile_figure(mu, *, sigma=None, sensitivity=None, eps_max=None):
    """Privacy profile :math:`\\delta_\\mu(\\varepsilon)`, and the exact S¹ profile at a rate.

    Parameters
    ----------
    mu : float
        GDP parameter.
    sigma, sensitivity : float, optional
        Rate and sensitivity of a Gaussian mechanism on S¹ whose exact profile
        (:func:`dpcore.privacy.privacy_profile_circle`) is drawn too; it lies on or below
        :math:`\\delta_\\mu` when µ is that mechanism's GDP parameter.
    eps_max : float, optional
        Right end of the ε axis (default: where δ_µ drops below 1e-8, at most 20).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if eps_max is None:
        grid = np.linspace(0.0, 40.0, 4001)
        below = grid[delta_mu(grid, mu) < 1e-8]
        eps_max = float(min(below[0] if below.size else 20.0, 20.0))
        eps_max = max(eps_max, 0.5)
    eps = np.linspace(0.0, eps_max, 300)
    curves = {f"δ_µ(ε) of µ-GDP, µ = {mu:.3g}": (eps, delta_mu(eps, mu))}
    styles = {f"δ_µ(ε) of µ-GDP, µ = {mu:.3g}": {"color": colors.BLACK, "width": 3}}
    if sigma is not None and sensitivity is not None:
        prof = privacy_profile_circle(eps, sigma, sensitivity)
        label = f"Exact profile on S¹ (σ = {sigma:.3g}, Δ = {sensitivity:.3g})"
        curves[label] = (eps, np.where(prof > 0, prof, np.nan))
        styles[label] = {"color": colors.VERMILLION, "dash": "dash"}
    fig = figures.curves_figure(
        curves, styles=styles, x_title="ε", y_title="δ(ε)",
        title="Privacy profile: (ε, δ(ε))-DP for every ε ≥ 0", log_y=True, height=600,
        subtitle="The smallest δ for which the mechanism is (ε, δ)-DP",
    )
    return _legend_below(fig)


# =============================================================================== sensitivity
def regression_sensitivity_ratios(manifold_key, n_values, pairs, *, noise=None, seed=0):
    r"""Theory / empirical sensitivity ratios of geodesic regression (paper 002 app. G).

    For each n, ``pairs`` times: draw ``n + 1`` observations with
    :func:`dpcore.data.make_regression_data`, fit the non-private geodesic
    :math:`(\hat p, \hat v)` to all of them, let D drop the first and D' the last observation,
    and compare :math:`\|\nabla_p E(D) - \nabla_p E(D')\|` (and the same for v) at
    :math:`(\hat p, \hat v)` with the bounds of :func:`dpcore.sensitivity.
    geodesic_regression_sensitivity`, where τ is the largest residual of the ``n + 1`` points
    and, for negative curvature, :math:`\tau_m` the radius of the smallest ball about
    :math:`\hat p` holding the responses.

    Parameters
    ----------
    manifold_key : str
        Token of :data:`REGRESSION_MANIFOLDS` (any key or token of :mod:`ui.manifolds` works).
    n_values : sequence of int
    pairs : int
        Adjacent pairs per n (capped by ``CAPS["sens_pairs"]``).
    noise : float, optional
        Noise level of the generator (its default per manifold if omitted).
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns ``n``, ``pair``, ``tau``, ``tau_m``, ``theory_p``, ``theory_v``,
        ``empirical_p``, ``empirical_v``, ``ratio_p``, ``ratio_v``.
    """
    m = make_manifold(manifold_key)
    pairs = int(min(max(int(pairs), 1), CAPS["sens_pairs"]))
    kappa_low = float(m.curvature_bounds[0])
    rows = []
    for n in sorted({int(v) for v in n_values}):
        n = int(min(max(n, 3), CAPS["sens_max_n"]))
        rng = _seed_for(seed, n, 2)
        for j in range(pairs):
            data = make_regression_data(m, n + 1, noise=noise, rng=rng)
            fit = GeodesicRegression(m, covariate_range=(0.0, 1.0), tol=1e-8).fit(data.x,
                                                                                   data.y)
            p, v = fit.footpoint_, fit.shooting_vector_
            pred = m.exp(np.broadcast_to(p, data.y.shape), m._pw(data.x) * v)
            tau = max(float(np.max(m.dist(pred, data.y))), 1e-12)
            tau_m = float(np.max(m.dist(p, data.y))) if kappa_low < 0 else None
            th_p, th_v = geodesic_regression_sensitivity(n, tau, kappa_low, tau_m)
            em_p, em_v = empirical_regression_sensitivity(m, data.x, data.y, p, v)
            rows.append({
                "n": n, "pair": j, "tau": tau, "tau_m": np.nan if tau_m is None else tau_m,
                "theory_p": th_p, "theory_v": th_v, "empirical_p": em_p, "empirical_v": em_v,
                "ratio_p": th_p / em_p if em_p > 0 else np.inf,
                "ratio_v": th_v / em_v if em_v > 0 else np.inf,
            })
    return pd.DataFrame(rows)


def ratio_histogram(frame, which="p", *, log_scale=False, manifold_label=""):
    """Histogram of theory/empirical ratios per n with a dashed line at 1.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`regression_sensitivity_ratios`.
    which : {"p", "v"}
        Footpoint or shooting-vector ratios.
    log_scale : bool
        Histogram of log10(ratio) with the line at 0.
    manifold_label : str
        Shown in the title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    col = f"ratio_{which}"
    samples = {}
    for n in sorted(frame["n"].unique()):
        r = frame.loc[frame["n"] == n, col].to_numpy(float)
        r = r[np.isfinite(r)]
        samples[f"n = {n}"] = np.log10(r) if log_scale else r
    name = "footpoint Δ_p" if which == "p" else "shooting vector Δ_v"
    ratio = f"Δ{'_p' if which == 'p' else '_v'}(theory) / Δ{'_p' if which == 'p' else '_v'}" \
            "(empirical)"
    fig = figures.histogram_figure(
        samples, reference=0.0 if log_scale else 1.0,
        reference_label="log₁₀ ratio = 0 (bound = empirical)" if log_scale
        else "ratio = 1 (bound = empirical)",
        x_title=f"log₁₀ of {ratio}" if log_scale else ratio, y_title="adjacent pairs",
        title=f"Sensitivity of the {name}{': ' + manifold_label if manifold_label else ''}",
        subtitle="Right of the dashed line: the bound holds. Pairs overlaid by sample size.",
        height=520,
    )
    counts = {f"n = {n}": int(np.isfinite(frame.loc[frame["n"] == n, col]).sum())
              for n in sorted(frame["n"].unique())}
    for tr in fig.data:
        label = tr.name.split(" (")[0]
        if label in counts:
            tr.name = f"{label} ({counts[label]} pairs)"
    return _legend_below(fig)


def jacobi_growth(s, kappa):
    r"""Norms of the two Jacobi fields along a unit-speed geodesic, relative to flat space.

    Parameters
    ----------
    s : array-like
        Geodesic lengths.
    kappa : float
        Constant sectional curvature κ.

    Returns
    -------
    (point, vector) : tuple of ndarray
        ``point``: :math:`|J(s)|` for :math:`J(0) = u, J'(0) = 0` (|u| = 1): |cos(√κ s)|, 1 or
        cosh(√-κ s). ``vector``: :math:`|J(s)|/s` for :math:`J(0) = 0, J'(0) = u`:
        sin(√κ s)/(√κ s), 1 or sinh(√-κ s)/(√-κ s) (absolute values). These are the scale
        functions :func:`dpcore.manifolds._functions.jacobi_point_scale` and
        ``jacobi_vector_scale`` at :math:`\lambda = \kappa s^2`.
    """
    s = np.asarray(s, dtype=float)
    lam = kappa * s**2
    return np.abs(jacobi_point_scale(lam)), np.abs(jacobi_vector_scale(lam))


def jacobi_figure(kappa_abs=1.0, s_max=3.0, *, which="point", mark=None):
    """Jacobi-field growth against geodesic length for curvature +κ, 0 and −κ.

    Parameters
    ----------
    kappa_abs : float
        |κ| of the curved cases.
    s_max : float
        Longest geodesic shown.
    which : {"point", "vector"}
        ``"point"``: J(0) = u, J'(0) = 0 (moving the footpoint; cos, 1, cosh).
        ``"vector"``: J(0) = 0, J'(0) = u, divided by s (changing the shooting vector;
        sin(s)/s, 1, sinh(s)/s).
    mark : float, optional
        A geodesic length to mark with a vertical line (e.g. the reach 2(τ_m + τ) used by the
        bounds) together with the value of the negative-curvature curve there.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    s = np.linspace(0.0, float(s_max), 400)
    k = float(kappa_abs)
    idx = 0 if which == "point" else 1
    pos, flat, neg = (jacobi_growth(s, kv)[idx] for kv in (k, 0.0, -k))
    if which == "point":
        names = (f"κ = +{k:g}: |cos(√κ s)|", "κ = 0: 1", f"κ = −{k:g}: cosh(√|κ| s)")
        title = "Footpoint variation: J(0) = u, J′(0) = 0"
        y_title = "|J(s)| / |u|"
    else:
        names = (f"κ = +{k:g}: sin(√κ s)/(√κ s)", "κ = 0: 1", f"κ = −{k:g}: sinh(√|κ| s)/(√|κ| s)")
        title = "Shooting-vector variation: J(0) = 0, J′(0) = u"
        y_title = "|J(s)| / (s |u|)  (flat space = 1)"
    curves = {names[0]: (s, pos), names[1]: (s, flat), names[2]: (s, neg)}
    styles = {names[0]: {"color": colors.VERMILLION}, names[1]: {"color": colors.BLACK,
                                                                  "dash": "dash"},
              names[2]: {"color": colors.BLUE}}
    fig = figures.curves_figure(curves, styles=styles, x_title="geodesic length s",
                                y_title=y_title, title=title, height=520)
    _legend_below(fig)
    if mark is not None and 0 < mark <= s_max:
        value = float(jacobi_growth(np.array([mark]), -k)[idx][0])
        fig.add_vline(x=float(mark), line={"color": colors.GREY, "width": 2, "dash": "dot"},
                      annotation={"text": f"s = {mark:.3g}: factor {value:.3g}",
                                  "font": {"size": figures.FONT_SIZE - 1}},
                      annotation_position="top left")
    return fig


# =============================================================================== linear regression
class CsvParseError(ValueError):
    """An uploaded table could not be read; ``problems`` lists what is wrong, by row and column.

    Parameters
    ----------
    problems : list of str
        Messages, each naming its row (header = row 1) and column where that applies.
    """

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass
class NumericTable:
    """A parsed CSV table, all cells as text, with the columns that look numeric.

    Attributes
    ----------
    frame : pandas.DataFrame
        The cells as stripped strings (no type conversion yet).
    numeric_columns : list of str
        Columns whose non-empty cells are mostly numbers (candidates for the covariate and
        the responses).
    other_columns : list of str
        The remaining (text) columns, ignored.
    """

    frame: pd.DataFrame
    numeric_columns: list = field(default_factory=list)
    other_columns: list = field(default_factory=list)


_LINE_RE = re.compile(r"line (\d+)")
_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _decode_upload(data):
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"`data` must be bytes, got {type(data).__name__}.")
    data = bytes(data)
    if len(data) > CAPS["upload_bytes"]:
        raise CsvParseError([f"The file has {len(data):,} bytes; this page reads at most "
                             f"{CAPS['upload_bytes']:,}."])
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise CsvParseError([f"The file starts like UTF-16 but byte {exc.start} cannot be "
                                 "decoded."]) from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        row = data[: exc.start].count(b"\n") + 1
        raise CsvParseError([f"Row {row}: byte {exc.start} (0x{data[exc.start]:02x}) is not "
                             "UTF-8 text. Save the file as UTF-8 CSV."]) from exc
    if "\x00" in text:
        raise CsvParseError(["The file contains NUL characters: it looks binary, not CSV."])
    return text


def _to_float(cell):
    """A cell as a finite float, or None."""
    try:
        value = float(cell)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def parse_numeric_csv(data, *, max_rows=None):
    """Parse an uploaded CSV (bytes) in memory into text cells and find its numeric columns.

    The first row is the header. The delimiter is the most frequent of ``,``, ``;``, tab and
    ``|`` in the header line. Nothing is written to disk.

    Parameters
    ----------
    data : bytes
        The file's content (UTF-8, with or without a byte-order mark, or UTF-16 with a BOM).
    max_rows : int, optional
        Most data rows accepted (default: :func:`dpcore.settings.get_limits().max_rows`).

    Returns
    -------
    NumericTable

    Raises
    ------
    CsvParseError
        For an empty, binary or malformed file, a missing or duplicated header name, ragged
        rows, too many rows or columns, or no numeric column. Messages name the row
        (header = row 1, first data row = row 2) and the column.
    """
    max_rows = get_limits().max_rows if max_rows is None else int(max_rows)
    text = _decode_upload(data)
    if not text.strip():
        raise CsvParseError(["The file is empty."])
    first = text.splitlines()[0] if text.splitlines() else ""
    delimiter = max([",", ";", "\t", "|"], key=lambda d: (first.count(d), d == ","))
    try:
        raw = pd.read_csv(io.StringIO(text), sep=delimiter, header=None, dtype=str,
                          keep_default_na=False, skip_blank_lines=True, engine="c",
                          nrows=max_rows + 2, quoting=csv.QUOTE_MINIMAL)
    except pd.errors.ParserError as exc:
        msg = str(exc)
        m = _FIELDS_RE.search(msg)
        if m:
            expected, line, saw = (int(g) for g in m.groups())
            raise CsvParseError([f"Row {line}: {saw} fields, but the header row has "
                                 f"{expected} columns."]) from exc
        m = _LINE_RE.search(msg)
        where = f"Row {m.group(1)}: " if m else ""
        raise CsvParseError([f"{where}the file is not valid CSV ({msg.splitlines()[0]})."]) \
            from exc
    except pd.errors.EmptyDataError as exc:
        raise CsvParseError(["The file is empty."]) from exc
    if raw.shape[1] > CAPS["upload_columns"]:
        raise CsvParseError([f"The file has {raw.shape[1]} columns; at most "
                             f"{CAPS['upload_columns']} are read."])
    header = [str(h).strip() for h in raw.iloc[0].tolist()]
    problems = []
    for j, h in enumerate(header):
        if not h:
            problems.append(f"Header (row 1), column {j + 1}: the column has no name.")
    seen = {}
    for j, h in enumerate(header):
        if h and h.lower() in seen:
            problems.append(f"Header (row 1): column name '{h}' appears twice (columns "
                            f"{seen[h.lower()] + 1} and {j + 1}).")
        seen.setdefault(h.lower(), j)
    if problems:
        raise CsvParseError(problems)
    body = raw.iloc[1:].reset_index(drop=True)
    body.columns = header
    # pandas skips blank lines; keep the spreadsheet row numbers anyway (header = 1).
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip()]
    body.index = pd.Index(lines[1: 1 + len(body)] if len(lines) > len(body) else
                          range(2, 2 + len(body)), name="row")
    if len(body) == 0:
        raise CsvParseError(["The file has a header row but no data rows."])
    if len(body) > max_rows:
        raise CsvParseError([f"The file has more than {max_rows:,} data rows; this page reads "
                             f"at most {max_rows:,}."])
    body = body.apply(lambda col: col.str.strip())
    numeric, other = [], []
    for name in header:
        cells = body[name]
        filled = cells[cells != ""]
        ok = filled.map(lambda c: _to_float(c) is not None)
        if len(filled) and ok.mean() >= 0.5:
            numeric.append(name)
        else:
            other.append(name)
    if not numeric:
        raise CsvParseError(["No column holds numbers: every column is text or empty."])
    return NumericTable(frame=body, numeric_columns=numeric, other_columns=other)


def select_numeric(table, columns):
    """The chosen columns as floats, checking every cell.

    Parameters
    ----------
    table : NumericTable
    columns : sequence of str
        Column names, in the order wanted.

    Returns
    -------
    ndarray, shape (n_rows, len(columns))

    Raises
    ------
    CsvParseError
        Listing (up to 20) empty, non-numeric, NaN or infinite cells by row and column.
    """
    problems, total = [], 0
    out = np.empty((len(table.frame), len(columns)))
    rows = table.frame.index.to_numpy()
    for j, name in enumerate(columns):
        if name not in table.frame.columns:
            raise CsvParseError([f"Column '{name}' is not in the file."])
        for i, cell in enumerate(table.frame[name].tolist()):
            value = _to_float(cell)
            if value is None:
                total += 1
                if len(problems) < 20:
                    what = "is empty" if cell == "" else f"'{cell[:30]}' is not a finite number"
                    problems.append(f"Row {rows[i]}, column '{name}': {what}.")
                out[i, j] = np.nan
            else:
                out[i, j] = value
    if total:
        if total > len(problems):
            problems.append(f"... and {total - len(problems)} more cells.")
        raise CsvParseError(problems)
    return out


def example_regression_frame(n=100, *, seed=0):
    """A generated example for the linear-regression page (made in memory, never read from disk).

    Three responses depend linearly on a covariate ``dose`` in [0, 10] with Gaussian noise;
    a text column ``site`` shows that non-numeric columns are ignored.

    Parameters
    ----------
    n : int
        Rows (capped by ``CAPS["example_rows"]``).
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns ``site``, ``dose``, ``response_a``, ``response_b``, ``response_c``.
    """
    n = int(min(max(int(n), 3), CAPS["example_rows"]))
    rng = np.random.default_rng(seed)
    dose = rng.uniform(0.0, 10.0, n)
    frame = pd.DataFrame({
        "site": rng.choice(["north", "south", "east"], n),
        "dose": np.round(dose, 3),
        "response_a": np.round(2.0 + 0.8 * dose + rng.normal(0.0, 1.0, n), 3),
        "response_b": np.round(10.0 - 0.5 * dose + rng.normal(0.0, 0.7, n), 3),
        "response_c": np.round(5.0 + 0.1 * dose + rng.normal(0.0, 1.5, n), 3),
    })
    return frame


def linear_fit(x, y):
    """Ordinary least squares, one line per response column.

    Parameters
    ----------
    x : array-like, shape (n,)
    y : array-like, shape (n, d)

    Returns
    -------
    (intercept, slope) : tuple of ndarray, each shape (d,)
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    xc = x - x.mean()
    denom = float(np.sum(xc**2))
    if denom == 0:
        raise ValueError("The covariate is constant: no line can be fitted.")
    slope = xc @ (y - y.mean(axis=0)) / denom
    return y.mean(axis=0) - slope * x.mean(), slope


def nice_bounds(values, *, pad=0.05):
    """An interval holding ``values``, widened by ``pad`` of its width and rounded outward.

    Parameters
    ----------
    values : array-like
    pad : float

    Returns
    -------
    (low, high) : tuple of float
    """
    v = np.asarray(values, dtype=float)
    lo, hi = float(np.min(v)), float(np.max(v))
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    lo, hi = lo - pad * width, hi + pad * width
    step = 10.0 ** math.floor(math.log10(width)) / 10.0
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


def mse_table(y, names, predictions):
    """Mean squared error per response and over all responses.

    Parameters
    ----------
    y : array-like, shape (n, d)
    names : sequence of str
        Response names.
    predictions : mapping of str to array-like, shape (n, d)
        Fitted values per method (e.g. non-private, dpcore, diffprivlib).

    Returns
    -------
    pandas.DataFrame
        One row per response plus a row ``"all responses"``; one column per method.
    """
    y = np.asarray(y, dtype=float)
    data = {}
    for method, pred in predictions.items():
        err = (y - np.asarray(pred, dtype=float)) ** 2
        data[method] = list(err.mean(axis=0)) + [float(err.mean())]
    return pd.DataFrame(data, index=pd.Index([*names, "all responses"], name="response"))


def linear_regression_figure(x, y, names, lines, *, x_name="covariate", title=None):
    """Data with the fitted lines of several methods, one panel per response.

    Parameters
    ----------
    x : array-like, shape (n,)
    y : array-like, shape (n, d)
    names : sequence of str
    lines : mapping of str to tuple (intercept, slope)
        The first entry is the non-private fit (black); the others are private fits.
    x_name : str
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    x = np.asarray(x, dtype=float)
    grid = np.linspace(x.min(), x.max(), 50)
    items = list(lines.items())
    true_label, (a0, b0) = items[0]
    true_lines = a0[None, :] + grid[:, None] * b0[None, :]
    private = [a[None, :] + grid[:, None] * b[None, :] for _, (a, b) in items[1:]]
    prefix = "Private fit"
    fig = figures.euclidean_regression_figure(
        x, y, true_lines, private or None, x_grid=grid, coordinate_names=list(names),
        x_title=x_name, true_label=true_label, private_label=prefix,
        title=title or "Linear regression per response",
    )
    # Name each private method (the shared builder numbers the draws of one method).
    labels = [label for label, _ in items[1:]]
    rename = {(f"{prefix} {k + 1}" if len(labels) > 1 else prefix): label
              for k, label in enumerate(labels)}
    for tr in fig.data:
        if tr.name in rename:
            tr.name = rename[tr.name]
    return fig
