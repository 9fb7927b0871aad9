"""Page logic of the Fréchet-mean page: summaries, preview clouds, simulations and the column
mapping of uploaded files (which columns hold the point, in which layout, and an optional
person column for group privacy).

Every random function takes a ``seed``; simulations are seeded so that they are reproducible
and may be cached.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, replace

import numpy as np

from dpcore.data.synthetic import default_center
from dpcore.exceptions import WorkBudgetError
from dpcore.learning import frechet_mean
from dpcore.mechanisms import (
    embed,
)
from dpcore.privacy import (
    eps_to_mu,
    gdp_mu_monte_carlo,
)
from dpcore.release import private_frechet_mean, project_to_ball
from dpcore.release import work as W
from dpcore.sampling.exact import exact_sampler_available
from dpcore.sensitivity import (
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
    frechet_radius_limit,
)
from dpcore.visualization.frechet import MECHANISM_LABELS
from ui.caps import CAPS, upload_max_rows
from ui.manifolds import make_manifold

from .regression_data import PersonRows

__all__ = [
    "simulated_mechanisms",
    "simulation_study_kwargs",
    "FRECHET_MANIFOLDS",
    "frechet_mechanism_draws",
    "frechet_sensitivity_simulation",
    "frechet_simulation_one_n",
    "frechet_summary",
    "MECHANISM_LABELS",
    "CITIES_ATTRIBUTION",
    "CITIES_BOUNDS_NOTE",
    "CITIES_PRESET",
    "EMG_ATTRIBUTION",
    "EMG_PRESET",
    "available_mechanisms",
    "ball_preview",
    "ball_preview_text",
    "cities_bytes",
    "emg_points",
    "parse_spd_center_text",
    "radius_help",
    "release_distances",
    "spd_center_text",
    "parse_center_text",
    "planned_release",
    "work_estimate",
    "work_refusal",
    "read_upload",
    "MeanUpload",
    "PointLayout",
    "PointMapping",
    "UploadTable",
    "default_layout",
    "default_point_columns",
    "incomplete_mapping_text",
    "mapping_legend",
    "person_hint",
    "person_rows_text",
    "point_layouts",
    "mapped_columns",
    "read_mapped",
    "recognised_text",
    "scan_upload",
    "slot_options",
    "predicted_error",
    "predicted_error_text",
    "smallest_epsilon_text",
]

#: Manifolds of the Fréchet-mean page: token of :mod:`ui.manifolds` -> range of the public
#: radius slider (its default is the manifold's ``radius`` there).
FRECHET_MANIFOLDS = {
    # Up to (almost) pi: the ambient Laplace mechanism covers any cap, the intrinsic ones need
    # r < r* = pi/4 (paper 001 Thm 2), see :func:`available_mechanisms`.
    "sphere": (0.05, 3.14),
    # SPD has no radius limit (kappa <= 0, infinite injectivity radius); 6 lets eigenvalues
    # range over a factor e^6 ~ 400 about the centre's, enough for real covariances.
    "spd": (0.25, 6.0),
    "spd3": (1.0, 3.0),
}


def frechet_summary(manifold, n, radius, center=None):
    """Public quantities of a private Fréchet mean with data in a ball of radius ``radius``.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    n : int
        Sample size.
    radius : float
        Radius r of the public ball holding the data.
    center : array-like, optional
        Public centre (default :func:`dpcore.data.synthetic.default_center`); the ambient
        radius of an SPD ball depends on it.

    Returns
    -------
    dict
        ``r_star`` (largest admissible radius, paper 001 Thm 2), ``kappa`` (upper curvature
        bound), ``h`` (curvature factor), ``delta`` (sensitivity of the mean),
        ``delta_gradient`` (sensitivity of the Fréchet-energy gradient, for KNG),
        ``delta_ambient`` (sensitivity ``2 r_E / n`` of the extrinsic mean, ambient Laplace).
        At ``radius >= r_star`` paper 001 Thm 2 gives no bound: ``h``, ``delta`` and
        ``delta_gradient`` are None and only the ambient mechanism is available.
    """
    kappa = float(manifold.curvature_bounds[1])
    inj = float(manifold.injectivity_radius)
    r_star = frechet_radius_limit(kappa, inj)
    center = default_center(manifold) if center is None else np.asarray(center, dtype=float)
    ambient = 2.0 * float(manifold.ambient_radius(center, radius)) / n
    if not radius < r_star:  # only the ambient mechanism has a sensitivity here
        return {"r_star": r_star, "kappa": kappa, "h": None, "delta": None,
                "delta_gradient": None, "delta_ambient": ambient}
    a = 2.0 * radius * math.sqrt(kappa) if kappa > 0 else 0.0
    h = a / math.tan(a) if kappa > 0 else 1.0
    return {
        "r_star": r_star,
        "kappa": kappa,
        "h": h,
        "delta": frechet_mean_sensitivity(n, radius, kappa, inj),
        "delta_gradient": frechet_gradient_sensitivity(n, radius, kappa, inj),
        "delta_ambient": ambient,
    }


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


def simulated_mechanisms(manifold, include_kng=True):
    """The mechanisms the page runs on ``manifold``, in display order.

    The Riemannian Gaussian is left out where it has no exact sampler (SPD(k ≥ 3)): calibrating
    its σ as a release does needs Monte Carlo over MCMC draws there, about 100 s per sample
    size on this machine, and a flat-space σ would not be the release's mechanism.
    """
    return tuple(k for k in MECHANISM_LABELS
                 if (include_kng or k != "kng")
                 and (k != "gaussian" or exact_sampler_available(manifold, "gaussian")))


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


#: Mechanisms whose error the page predicts before release (closed-form radial law).
PREDICTED_MECHANISMS = ("laplace", "kng")


def predicted_error(manifold, n, epsilon, radius, center, mechanism, *, seed=0):
    """:func:`dpcore.release.accuracy.predict_frechet_error`, or None where no prediction
    exists (Gaussian and ambient mechanisms; SPD(k >= 3), which has no closed-form radial
    law)."""
    from dpcore.release.accuracy import predict_frechet_error

    if mechanism not in PREDICTED_MECHANISMS:
        return None
    try:
        return predict_frechet_error(manifold, int(n), epsilon=float(epsilon),
                                     radius=float(radius), center=center, mechanism=mechanism,
                                     rng=seed)
    except NotImplementedError:
        return None


def predicted_error_text(pred, epsilon, mechanism):
    """One sentence stating a prediction before release."""
    if pred is None:
        why = ("its σ is calibrated at release time" if mechanism == "gaussian" else
               "no closed-form law of its error here")
        return (f"No prediction before release for this mechanism ({why}); the simulation below "
                "shows its error.")
    return (f"**Before you release** (public inputs only): at ε = {epsilon:g} the private mean "
            f"will lie at distance **{pred['median']:.3g}** (median) from the non-private mean, "
            f"and within **{pred['q95']:.3g}** with 95% chance; σ = {pred['sigma']:.3g}. From "
            f"{pred['model']}.")


def smallest_epsilon_text(manifold, n, radius, center, mechanism, target, *, seed=0):
    """The smallest ε whose predicted median error reaches ``target``, as a sentence."""
    from dpcore.release.accuracy import smallest_frechet_epsilon

    if mechanism not in PREDICTED_MECHANISMS:
        return None
    try:
        eps = smallest_frechet_epsilon(manifold, int(n), float(target), radius=float(radius),
                                       center=center, mechanism=mechanism, rng=seed)
    except NotImplementedError:
        return None
    if eps is None:
        return f"No ε up to 10⁴ brings the median error below {target:g} at n = {n}."
    return (f"The smallest ε with a median error of at most {target:g} is **ε = {eps:g}** "
            f"(n = {n}, r = {radius:.3g}).")


def planned_release(manifold, epsilon, mechanism):
    """What one release of ``mechanism`` at budget ``epsilon`` adds to the ledger
    (keyword arguments of :func:`ui.session.planned_cost`): ε for the pure-DP mechanisms, the
    equivalent µ for the Gaussian; approximately private where the draw or the calibration is
    not exact (as the release's label will say)."""
    if mechanism == "gaussian":
        proven = manifold.dim == 1 or manifold.curvature_bounds == (0.0, 0.0)
        return {"mu": float(eps_to_mu(epsilon)), "delta": None,
                "guarantee": "private" if proven else "approximately private"}
    exact = mechanism == "ambient_laplace" or exact_sampler_available(manifold, "laplace")
    return {"epsilon": float(epsilon), "delta": 0.0 if exact else None,
            "guarantee": "private" if exact else "approximately private"}


def work_estimate(manifold, n, epsilon, radius, center, mechanism):
    """The release's estimated work and time from public inputs only
    (:func:`dpcore.release.work.estimate_frechet_release_work`, the release's own defaults),
    and whether it is within the library's work budget (a KNG release refuses above it; the
    page refuses every mechanism above it).

    Returns
    -------
    (WorkEstimate, bool)
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the planner's MCMC notice: the page states it
        est = W.estimate_frechet_release_work(manifold, int(n), mechanism=mechanism,
                                              epsilon=float(epsilon), radius=float(radius),
                                              center=np.asarray(center, dtype=float))
    return est, est.seconds <= W.DEFAULT_WORK_BUDGET


#: The library's message for a request above the work budget (None within it).
work_refusal = W.refusal_message


#: Provenance and licence of the world-cities preset (shown on the page).
CITIES_ATTRIBUTION = (
    "The 50 largest cities of the World Cities Database, © simplemaps.com, licensed CC BY 4.0 "
    "(https://simplemaps.com/data/world-cities), in the copy shipped with geomstats (MIT). "
    "Latitude and longitude in degrees become points of S².")


def cities_bytes():
    """The world-cities CSV shipped inside the installed geomstats package (read-only; found
    without importing geomstats, which costs about a second)."""
    from dpcore.data.shipped import geomstats_data_path

    return geomstats_data_path("cities", "cities.csv").read_bytes()


#: The world-cities preset's public bounds: cities can be anywhere on Earth.
CITIES_PRESET = {"center": "30, 100", "radius": 3.14}
CITIES_BOUNDS_NOTE = (
    "Preset bounds: the largest cities can lie anywhere on Earth, so the public ball is the "
    "whole globe (r = 3.14 ≈ π about 30°N, 100°E); only the ambient Laplace mechanism has a "
    "sensitivity bound there. For regional data (one continent), type its centre and a radius "
    "below π/4 ≈ 0.785 to compare the Riemannian mechanisms.")

#: The EMG preset (SPD(2)): provenance, what one row is, and its public bounds.
EMG_PRESET = {
    "channels": ("c0", "c1"),
    "window": 800,
    # A typical per-electrode variance of 10 raw units² (the centre 10·I) and a radius of 3.5:
    # each eigenvalue may range over 10·e^(±3.5), i.e. about 0.3 to 330 raw units².
    "scale": 10.0,
    "radius": 3.5,
}
EMG_ATTRIBUTION = (
    "Surface EMG of the forearm, 8 electrodes, two people (mg, rr) in two sessions each "
    "holding the hand signs rest, rock, paper, scissors and ok; raw 8-bit samples. Shipped "
    "with geomstats 2.8 (MIT licence, © 2018 Nina Miolane and contributors; file "
    "geomstats/datasets/data/emg/emg.csv, used in its EMG sign-classification tutorial). "
    "Each row here is the 2×2 covariance of electrodes c0 and c1 over a window of 800 "
    "consecutive samples within one recording and one sign (840 windows; geomstats' own "
    "preparation, restricted to two electrodes so the points lie in SPD(2)). Units: raw "
    "sample units squared.")
EMG_PRIVACY_UNIT = (
    "One row is one window, not one person: all 840 windows come from 2 people. The guarantee "
    "below protects one window; set *Rows one person contributes* in the sidebar for a "
    "per-person reading.")
EMG_BOUNDS_NOTE = (
    "Preset bounds: centre 10·I (a typical variance of 10 raw units² per electrode) and radius "
    "3.5 (eigenvalues between about 0.3 and 330 raw units²), chosen by the page's authors for "
    "this public data set. With your own data, set the centre and radius from domain knowledge "
    "(units, a typical scale), never from the data themselves.")


def emg_points():
    """The EMG preset's SPD(2) points (:func:`dpcore.data.shipped.emg_covariances`)."""
    from dpcore.data.shipped import emg_covariances

    return emg_covariances(channels=EMG_PRESET["channels"],
                           window=EMG_PRESET["window"]).matrices


def available_mechanisms(manifold, radius, include_kng=True):
    """The mechanisms with a proven sensitivity at ``radius``, in display order.

    Below r* (paper 001 Thm 2) every mechanism of :func:`simulated_mechanisms`; at or above
    it only the ambient Laplace mechanism, whose sensitivity ``2 r_E / n`` holds for any
    ball (on S² up to the whole sphere, ``r_E <= 2``).
    """
    kappa = float(manifold.curvature_bounds[1])
    if radius < frechet_radius_limit(kappa, float(manifold.injectivity_radius)):
        return simulated_mechanisms(manifold, include_kng)
    return ("ambient_laplace",)


def radius_help(manifold):
    """What the public radius means on ``manifold`` (help text of the radius widget)."""
    from dpcore.manifolds import Sphere

    kappa = float(manifold.curvature_bounds[1])
    r_star = frechet_radius_limit(kappa, float(manifold.injectivity_radius))
    if isinstance(manifold, Sphere):
        return (
            "A public bound: every point is assumed within geodesic distance r (radians) of the "
            "centre m₀, a spherical cap. On the Earth r = 0.1 is 5.7° or about 640 km, 0.5 is "
            "29° (3,200 km), π/2 a hemisphere, π the whole globe. The Laplace, KNG and Gaussian "
            f"mechanisms need r < r* = π/4 ≈ {r_star:.3f} (paper 001 Thm 2); above it only the "
            "ambient Laplace mechanism is offered. Points outside the cap are projected onto it.")
    return (
        "A public bound: every matrix is assumed within affine-invariant distance r of the "
        "centre m₀, i.e. the eigenvalues of m₀^(-1/2) X m₀^(-1/2) lie between e^(-r) and e^r "
        "(r = 1: a factor 2.7 either way; r = 3: a factor 20). There is no upper limit on SPD "
        "(curvature ≤ 0) but Δ grows with r. Points outside are projected onto the ball.")


def parse_spd_center_text(text, k):
    """A public SPD(k) centre typed as one typical variance s (the centre s·I), as the
    ``k(k+1)/2`` upper-triangle entries row by row (s11, s12, ..., skk), or as all ``k²``
    entries.

    Raises
    ------
    ValueError
        With a message saying what to type.
    """
    n_upper = k * (k + 1) // 2
    try:
        values = np.array([float(v) for v in text.replace(";", ",").split(",")])
    except ValueError:
        raise ValueError(f"Could not read the centre {text!r}: give one typical variance, or "
                         f"the {n_upper} upper-triangle entries s11, s12, …, separated by "
                         "commas.") from None
    if not np.all(np.isfinite(values)):
        raise ValueError(f"The centre must be finite numbers; got {text!r}.")
    if values.size == 1:
        mat = values[0] * np.eye(k)
    elif values.size == n_upper:
        mat = np.zeros((k, k))
        mat[np.triu_indices(k)] = values
        mat = mat + np.triu(mat, 1).T
    elif values.size == k * k:
        mat = values.reshape(k, k)
        if not np.allclose(mat, mat.T):
            raise ValueError(f"The centre must be symmetric; got {text!r}.")
    else:
        raise ValueError(f"The centre takes 1 number (s for s·I), {n_upper} upper-triangle "
                         f"entries or {k * k} entries; got {values.size}.")
    if np.linalg.eigvalsh(mat)[0] <= 0:
        raise ValueError(f"The centre must be positive definite; {text!r} is not.")
    return mat


def spd_center_text(center):
    """Short display of an SPD centre: ``s·I`` where it is a multiple of I, else its entries."""
    center = np.asarray(center, dtype=float)
    k = center.shape[0]
    if np.allclose(center, center[0, 0] * np.eye(k)):
        return "the identity matrix" if center[0, 0] == 1 else f"{center[0, 0]:g}·I"
    return ", ".join(f"{v:g}" for v in center[np.triu_indices(k)]) + " (upper triangle)"


#: Above this share of rows outside the public ball the page warns (issue 14).
OUTSIDE_WARN = 0.05


def ball_preview(manifold, y, center, radius):
    """How many rows lie outside the public ball (a preview for the data holder, not
    released).

    Returns
    -------
    dict
        ``count``, ``share`` (of the rows), ``rows`` (1-based file rows, the header being
        row 1, of the first ten outside), ``warn`` (share above :data:`OUTSIDE_WARN`),
        ``max_distance`` (largest distance to the centre).
    """
    dist = np.asarray(manifold.dist(np.asarray(y, float), center), dtype=float)
    outside = np.flatnonzero(dist > radius)
    share = outside.size / max(dist.size, 1)
    return {"count": int(outside.size), "share": float(share),
            "rows": [int(i) + 2 for i in outside[:10]], "warn": bool(share > OUTSIDE_WARN),
            "max_distance": float(dist.max()) if dist.size else 0.0}


def ball_preview_text(preview, n, radius, *, file_rows=True):
    """The ball preview as one sentence (Markdown); ``file_rows``: name the rows outside by
    their line in the user's file (uploads), else only count them (presets)."""
    if not preview["count"]:
        return (f"Preview on your data (not released): all {n} rows lie within the public ball "
                f"of radius {radius:.3g} (largest distance {preview['max_distance']:.3g}).")
    rows = ", ".join(map(str, preview["rows"])) + (" …" if preview["count"] > 10 else "")
    text = (f"Preview on your data (not released): **{preview['count']} of {n} rows "
            f"({preview['share']:.1%})** lie outside the public ball of radius {radius:.3g}"
            + (f" (file rows {rows})" if file_rows else "")
            + "; strict mode projects them onto the ball, which pulls the released mean "
            "towards the centre.")
    if preview["warn"]:
        text += (f" That is more than {OUTSIDE_WARN:.0%}: the private mean will describe the "
                 "projected data, not yours. Move the centre towards where your data are or "
                 f"enlarge the radius (largest distance: {preview['max_distance']:.3g}).")
    return text


def release_distances(manifold, value, y, center, radius):
    """Distances of a released mean to the non-private means of the projected data (what the
    mechanism privatizes) and of the data as given (what the user wants).

    Returns
    -------
    dict
        ``projected``, ``unprojected`` (distances), ``bias`` (distance between the two
        non-private means: what projecting onto the ball costs whatever the noise) and
        ``mean_unprojected`` (the non-private Fréchet mean of the data as given).
    """
    y = np.asarray(y, dtype=float)
    proj = frechet_mean(manifold, project_to_ball(manifold, y, center, radius))
    raw = frechet_mean(manifold, y)
    return {"projected": float(manifold.dist(proj, value)),
            "unprojected": float(manifold.dist(raw, value)),
            "bias": float(manifold.dist(raw, proj)), "mean_unprojected": raw}


def read_upload(raw, manifold, *, max_bytes):
    """Points of an uploaded file and a note on how they were read.

    :func:`dpcore.data.read_manifold_csv`: the manifold's own columns, latitude/longitude in
    degrees on S² (other columns ignored), SPD matrices in full or as upper triangles, raw
    landmarks or preshapes; rows with an empty cell are left out and counted. At most
    ``CAPS["upload_rows"]`` rows.

    Raises
    ------
    DataValidationError
    """
    from dpcore.data import read_manifold_csv

    read = read_manifold_csv(raw, manifold, "mean", blank="drop", max_bytes=max_bytes,
                             max_rows=upload_max_rows())
    return read.y, read.note


def parse_center_text(text):
    """A public centre on S² typed as three coordinates or as latitude, longitude (degrees).

    Raises
    ------
    ValueError
        With a message saying what to type.
    """
    from dpcore.data import latlon_to_sphere

    try:
        values = np.array([float(v) for v in text.replace(";", ",").split(",")])
    except ValueError:
        raise ValueError(f"Could not read the centre {text!r}: give 3 coordinates, or a "
                         "latitude and a longitude in degrees, separated by commas.") from None
    if values.shape == (2,) and np.all(np.isfinite(values)):
        if not (-90 <= values[0] <= 90 and -180 <= values[1] <= 360):
            raise ValueError(f"Latitude must lie in [-90, 90] and longitude in [-180, 360] "
                             f"degrees; got {text!r}.")
        return latlon_to_sphere(values[0], values[1])
    if values.shape != (3,) or not np.all(np.isfinite(values)) or np.linalg.norm(values) == 0:
        raise ValueError(f"The centre must be 3 finite numbers, not all zero, or a latitude "
                         f"and a longitude; got {text!r}.")
    return values / np.linalg.norm(values)


# ------------------------------------------------------------------ uploads: column mapping
#: Names of columns that may say who a row belongs to (a hint on the page; never a default).
_PERSON_NAMES = re.compile(r"(?:[a-z0-9]+_)?(?:person|people|subject|subj|participant|patient|"
                           r"individual|user|respondent|customer|household|animal|rat|mouse|"
                           r"owner)s?(?:_?(?:id|no|nr|code|name))?")


@dataclass(frozen=True)
class PointLayout:
    """One way a file may write a point: the columns the reader knows (``slots``, in the
    reader's order) and how the page names them.

    Attributes
    ----------
    key : str
        A layout of :data:`dpcore.data.LAYOUTS` (``"landmarks"`` also covers preshapes).
    label : str
        The layout as the page offers it.
    slots : tuple of str
        Column names of :func:`dpcore.data.read_manifold_csv` for this layout.
    slot_labels : tuple of str
        What each slot holds, as shown above its column choice.
    """

    key: str
    label: str
    slots: tuple
    slot_labels: tuple


def point_layouts(manifold):
    """The layouts an uploaded file may use for ``manifold``, in the order offered.

    S²: coordinates ``y1, y2, y3`` or latitude and longitude in degrees; SPD(k): the upper
    triangle or the full matrix, row by row; Kendall shapes: landmark coordinates (raw or
    preshapes); any other manifold: its coordinates
    (:meth:`~dpcore.manifolds.Manifold.csv_columns`).

    Returns
    -------
    dict
        Layout key -> :class:`PointLayout`.
    """
    from dpcore.manifolds import SPD, KendallShape, Sphere

    own = tuple(manifold.csv_columns())
    if isinstance(manifold, Sphere) and manifold.dim == 2:
        return {"coordinates": PointLayout("coordinates", "Coordinates y1, y2, y3 (unit "
                                           "vectors)", own, own),
                "latlon": PointLayout("latlon", "Latitude and longitude in degrees",
                                      ("lat", "lon"), ("latitude (°)", "longitude (°)"))}
    if isinstance(manifold, SPD) and manifold.k >= 2:
        k = manifold.k
        sep = "_" if k >= 10 else ""
        full = tuple(f"s{i}{sep}{j}" for i in range(1, k + 1) for j in range(1, k + 1))
        return {"spd_upper": PointLayout("spd_upper", f"Upper triangle, row by row "
                                         f"({len(own)} entries)", own, own),
                "spd_full": PointLayout("spd_full", f"Full matrix, row by row ({k * k} "
                                        "entries)", full, full)}
    if isinstance(manifold, KendallShape):
        return {"landmarks": PointLayout("landmarks", "Landmark coordinates lx1, ly1, … (raw "
                                         "or preshapes)", own, own)}
    return {"coordinates": PointLayout("coordinates", f"Coordinates {own[0]}…{own[-1]}", own,
                                       own)}


@dataclass(frozen=True)
class PointMapping:
    """The roles of an uploaded file's columns on the Fréchet mean page.

    Attributes
    ----------
    layout : str
        Key of :func:`point_layouts`.
    columns : tuple of str
        The file's column for each slot of the layout, in slot order.
    person : str, optional
        A column naming who each row belongs to (group privacy); every other column is
        ignored.
    """

    layout: str
    columns: tuple
    person: str | None = None

    @property
    def used(self):
        """The mapped columns: the point's, then the person column."""
        return (*self.columns, *((self.person,) if self.person else ()))


@dataclass(frozen=True, eq=False)
class UploadTable:
    """An uploaded file scanned once (:func:`scan_upload`): its cells as text, the column
    profiles and the preview of its first rows, and its bytes for reading the mapped columns
    (all in this session's memory only).

    Attributes
    ----------
    table : dpcore.data.TextTable
    profiles : list of ui.logic.regression_data.ColumnProfile
    preview : pandas.DataFrame
    raw : bytes
        The file's contents.
    max_bytes : int
        The upload limit the file was scanned under.
    """

    table: object
    profiles: list
    preview: object
    raw: bytes
    max_bytes: int

    @property
    def n_rows(self):
        return len(self.table.cells)

    @property
    def columns(self):
        return tuple(self.table.columns)


@dataclass(frozen=True, eq=False)
class MeanUpload(PersonRows):
    """Points read from an uploaded file through a :class:`PointMapping`.

    Attributes
    ----------
    y : ndarray, shape (n, *point_shape)
    rows : ndarray of int, shape (n,)
        Spreadsheet row numbers (header = row 1) of the points.
    layout : str
        How the points were read (:data:`dpcore.data.LAYOUTS`: ``"landmarks"`` becomes
        ``"preshapes"`` when every row already was one).
    mapping : PointMapping
    ignored : tuple of str
        The file's other columns, not read.
    dropped : int
        Rows left out because a mapped cell was empty.
    note : str
        How the file was read, for the user.
    groups : ndarray of str, optional
        Each point's person, when a person column is mapped.
    """

    y: np.ndarray
    rows: np.ndarray
    layout: str
    mapping: PointMapping
    ignored: tuple
    dropped: int
    note: str
    groups: np.ndarray | None = None

    @property
    def n(self):
        return int(self.y.shape[0])



def scan_upload(raw, *, max_bytes):
    """Scan an uploaded file once: structure, cells as text, column profiles (identifiers
    flagged) and a preview (:func:`dpcore.data.scan_table`,
    :func:`ui.logic.regression_data.profile_columns`). In memory only.

    Raises
    ------
    DataValidationError
        For a file that is not a table (encoding, header, ragged rows, limits), by row and
        column.
    """
    from dpcore.data import scan_table
    from ui.logic.regression_data import preview_frame, profile_columns

    raw = bytes(raw)
    table = scan_table(raw, max_bytes=max_bytes, max_rows=upload_max_rows())
    return UploadTable(table, profile_columns(table), preview_frame(table), raw, max_bytes)


def _named(layout, names):
    """The file's column named for each slot of ``layout`` (by name, any case), or None."""
    if layout.key == "latlon":
        from dpcore.data import latlon_columns

        pair = latlon_columns(list(names))
        return list(pair) if pair is not None else [None, None]
    keys = {n.strip().lower(): n for n in names}
    return [keys.get(s.lower()) for s in layout.slots]


def default_layout(manifold, profiles):
    """The layout the header names: the one with the most slots whose every column is named
    (latitude and longitude by their usual names), else the first of :func:`point_layouts`."""
    layouts = point_layouts(manifold)
    names = [p.name for p in profiles]
    named = [lay for lay in layouts.values() if all(_named(lay, names))]
    return max(named, key=lambda lay: len(lay.slots)).key if named else next(iter(layouts))


def slot_options(profiles, layout):
    """Columns offered for the point's slots: the numeric ones and any column named as a slot
    (so that its bad cells are reported rather than hidden), in file order."""
    names = {n for n in _named(layout, [p.name for p in profiles]) if n}
    return [p.name for p in profiles if p.kind == "number" or p.name in names]


def default_point_columns(manifold, layout_key, profiles):
    """The default column of each slot of a layout (None where the user must choose).

    A slot takes the column named for it (``y1``; ``lat``/``latitude``; ``s12``) unless that
    column looks like an identifier. Slots left over take the remaining numeric columns in file
    order only when exactly as many remain as are needed (nothing to guess); identifiers are
    never chosen.

    Returns
    -------
    tuple
    """
    from ui.logic.regression_data import candidate_columns

    layout = point_layouts(manifold)[layout_key]
    candidates = candidate_columns(profiles)
    chosen = [c if c in candidates else None for c in _named(layout, candidates)]
    rest = [c for c in candidates if c not in chosen]
    if chosen.count(None) == len(rest):
        fill = iter(rest)
        chosen = [c if c is not None else next(fill) for c in chosen]
    return tuple(chosen)


def person_hint(profiles, exclude=()):
    """Columns whose name suggests a person (``person``, ``subject``, ``patient_id``, …), as a
    hint to choose the person column; never chosen by default."""
    return [p.name for p in profiles if p.name not in exclude
            and _PERSON_NAMES.fullmatch(re.sub(r"[\s.\-]+", "_", p.name.strip().lower()))]


def incomplete_mapping_text(manifold, layout_key, columns, profiles):
    """Why a mapping with unchosen slots cannot be read yet: ``("error", text)`` when the file
    has too few columns for the layout (a missing column), else ``("info", text)`` asking the
    user to choose."""
    layout = point_layouts(manifold)[layout_key]
    missing = [lab for lab, c in zip(layout.slot_labels, columns, strict=True) if c is None]
    options = slot_options(profiles, layout)
    if len(options) < len(layout.slots):
        found = ", ".join(f"'{c}'" for c in options) or "none"
        others = [lay for lay in point_layouts(manifold).values()
                  if lay.key != layout_key and len(lay.slots) <= len(options)]
        hint = "".join(f" Choose *{lay.label}* if the file holds that." for lay in others)
        return "error", (f"Header (row 1): a point written as *{layout.label}* needs "
                         f"{len(layout.slots)} numeric columns ({', '.join(layout.slot_labels)})"
                         f", but the file has {len(options)}: {found}.{hint}")
    return "info", (f"Choose the column of {', '.join(missing)} above: no column is named so, "
                    "and identifier-like columns are never chosen by default.")


def mapping_legend(manifold, mapping):
    """The mapped columns as a sentence (``y1 ← 'east'``), or '' when every column has the
    reader's own name."""
    layout = point_layouts(manifold)[mapping.layout]
    pairs = list(zip(layout.slot_labels, layout.slots, mapping.columns, strict=True))
    if all(c.strip().lower() == s.lower() for _, s, c in pairs):
        return ""
    return "Point columns: " + ", ".join(f"{lab} ← '{c}'" for lab, _, c in pairs) + "."


def mapped_columns(manifold, mapping):
    """The ``columns`` argument of :func:`dpcore.data.read_manifold_csv` for ``mapping``: the
    reader's name of each slot -> the file's column."""
    layout = point_layouts(manifold)[mapping.layout]
    return dict(zip(layout.slots, mapping.columns, strict=True))


def read_mapped(upload, manifold, mapping):
    """Read the mapped columns of a scanned upload as points: the library's reader and checks
    with the mapping, :func:`dpcore.data.read_manifold_csv` (``columns=``, ``group=``), in
    memory.

    Rows with an empty cell in a mapped column (a point column or the person column) are left
    out and counted; every other cell of the point columns must be a finite number, and each
    point must lie on ``manifold`` (latitudes and longitudes in range, matrices symmetric
    positive definite, …). Unmapped columns are not read.

    Parameters
    ----------
    upload : UploadTable
    manifold : dpcore.manifolds.Manifold
    mapping : PointMapping

    Returns
    -------
    MeanUpload

    Raises
    ------
    DataValidationError
        Naming the row and the file's column of every problem; also for a column chosen
        twice, a column not in the file, or no row left.
    """
    from dpcore.data import DataValidationError, read_manifold_csv

    layout = point_layouts(manifold)[mapping.layout]
    if len(mapping.columns) != len(layout.slots) or None in mapping.columns:
        raise DataValidationError(f"a point written as {layout.label} needs one column for "
                                  f"each of {', '.join(layout.slot_labels)}.", row=1)
    used = [c.strip().lower() for c in mapping.used]
    for j, name in enumerate(used):
        if name in used[:j]:
            roles = [lab for lab, c in zip((*layout.slot_labels, "person"), mapping.used,
                                           strict=False) if c.strip().lower() == name]
            raise DataValidationError(f"the column is chosen for {' and '.join(roles)}; each "
                                      "column has one role.", row=1, column=mapping.used[j])
    read = read_manifold_csv(upload.raw, manifold, "mean", blank="drop",
                             max_bytes=upload.max_bytes, max_rows=upload_max_rows(),
                             columns=mapped_columns(manifold, mapping), group=mapping.person)
    # The page lists the ignored columns next to the mapping; the note says how it read.
    return MeanUpload(y=read.y, rows=read.rows, layout=read.layout, mapping=mapping,
                      ignored=read.ignored, dropped=read.dropped,
                      note=replace(read, ignored=()).note, groups=read.groups)


def person_rows_text(k, person, sizes):
    """What a person column does to the guarantee, for the page (Markdown)."""
    return (f"**Rows per person: {k}**, the largest group of column '{person}' "
            f"({sizes.size:,} people; median {np.median(sizes):g} rows). The guarantee per "
            f"person is {k} × ε (group privacy); the cost, the ledger entry and the sidebar "
            "count per person on this page.")


def recognised_text(manifold, layout_key, columns, profiles):
    """How the header was recognised for ``layout_key`` (the default ``columns`` of its
    slots), in one sentence for the page."""
    layout = point_layouts(manifold)[layout_key]
    named = _named(layout, [p.name for p in profiles])
    found = ", ".join(f"'{c}'" for c in columns if c is not None)
    if None not in columns and list(columns) == named:
        return (f"Recognised from the header: {layout.label.lower()}, in the columns "
                f"{found}.")
    if None not in columns:
        return (f"No column is named {', '.join(layout.slots)}: the numeric columns {found} "
                "(all the file has besides identifiers) are taken in file order. Check them.")
    return (f"The header does not name the columns of {', '.join(layout.slot_labels)}: choose "
            "them below.")
