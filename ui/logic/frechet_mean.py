"""Page logic of the Fréchet-mean page: summaries, preview clouds and simulations.

Every random function takes a ``seed``; simulations are seeded so that they are reproducible
and may be cached.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpcore.data.synthetic import default_center
from dpcore.experiments.studies import frechet_mean_study, frechet_sensitivity_study
from dpcore.learning import frechet_mean
from dpcore.mechanisms import (
    embed,
)
from dpcore.privacy import (
    eps_to_mu,
    gdp_mu_monte_carlo,
)
from dpcore.release import private_frechet_mean, project_to_ball
from dpcore.release.accuracy import predict_frechet_error, smallest_frechet_epsilon
from dpcore.sampling.exact import exact_sampler_available
from dpcore.sensitivity import (
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
    frechet_radius_limit,
)
from dpcore.visualization.frechet import MECHANISM_LABELS
from ui.caps import CAPS
from ui.manifolds import make_manifold

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
    "cities_bytes",
    "parse_center_text",
    "planned_release",
    "read_upload",
    "predicted_error",
    "predicted_error_text",
    "smallest_epsilon_text",
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


def frechet_mechanism_draws(manifold_key, y, radius, epsilon, n_draws, *, center=None, seed=0,
                            chain_length=300, burn_in=200, mc_samples=1000, mc_repeats=20):
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

    Returns
    -------
    dict
        ``mean`` (non-private mean of the projected data), ``draws`` (mechanism -> array
        ``(n_draws, *point_shape)``), ``ambient`` (unprojected ambient draws),
        ``left_manifold`` (bool array), ``sigma`` (mechanism -> rate), ``errors`` (mechanism ->
        geodesic distances to the mean), ``ambient_errors`` (mechanism -> Euclidean distances in
        the embedding), ``kng_diagnostics``, ``guarantee`` (mechanism -> label, per-draw ε, δ
        and µ of its release), ``mu`` (target), ``mu_check`` ((estimate, standard
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
    draws, sigma, errors, amb_errors, guarantee = {}, {}, {}, {}, {}
    ambient = left = None
    kng_diag = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mech in simulated_mechanisms(m):
            rel = private_frechet_mean(
                m, y, epsilon=epsilon, mechanism=mech, radius=radius, center=center,
                rng=rng, n_draws=n_draws, chain_length=chain_length, burn_in=burn_in,
            )
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


#: Provenance and licence of the world-cities preset (shown on the page).
CITIES_ATTRIBUTION = (
    "The 50 largest cities of the World Cities Database, © simplemaps.com, licensed CC BY 4.0 "
    "(https://simplemaps.com/data/world-cities), in the copy shipped with geomstats (MIT). "
    "Latitude and longitude in degrees become points of S².")


def cities_bytes():
    """The world-cities CSV shipped inside the installed geomstats package (read-only)."""
    from pathlib import Path

    import geomstats.datasets

    return (Path(geomstats.datasets.__file__).parent / "data" / "cities"
            / "cities.csv").read_bytes()


def read_upload(raw, manifold, *, max_bytes):
    """Points of an uploaded file and a note on how they were read.

    On the sphere a file with a latitude and a longitude column (degrees) is read as places
    (other columns ignored, rows with a blank coordinate left out and counted); any other file
    must have the manifold's own columns (:func:`dpcore.data.load_csv`).

    Raises
    ------
    DataValidationError
    """
    from dpcore.data import latlon_columns, load_csv, load_latlon_csv, scan_table
    from dpcore.manifolds import Sphere

    if isinstance(manifold, Sphere) and manifold.dim == 2:
        head = scan_table(raw, max_bytes=max_bytes)
        if latlon_columns(head.columns) is not None:
            y, dropped = load_latlon_csv(raw, blank="drop", max_bytes=max_bytes)
            note = (f"Read {y.shape[0]} places from the latitude/longitude columns (degrees)"
                    + (f"; {dropped} row(s) with a blank coordinate left out." if dropped
                       else "."))
            return y, note
    return load_csv(raw, manifold, task="mean", max_bytes=max_bytes), None


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
