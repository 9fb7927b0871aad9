"""Logic behind the "Geodesic regression" and "Budget split" pages (no Streamlit import).

The pages stay thin: they draw widgets, call the functions here and hand the returned figures,
tables and text to Streamlit. Everything here is plain Python on top of :mod:`dpcore` and
:mod:`ui.figures`, so it can be tested without a running app.

Contents
--------
* manifolds and data sets: :data:`MANIFOLD_KINDS` (manifolds themselves: :mod:`ui.manifolds`),
  :func:`synthetic_dataset`,
  :func:`example_dataset`, :func:`parse_upload` (bytes of an uploaded CSV, never written to disk);
* one release: :class:`ReleaseSettings`, :func:`fit_nonprivate`, :func:`run_release`,
  :func:`release_metrics`, :func:`regression_figures`, :func:`assumption_rows`;
* teaching text: :data:`LATEX_NOTES`;
* budget simulations: :class:`SweepConfig`, :func:`sweep_chunks`, :func:`run_chunk`,
  :func:`summarize`, :func:`unequal_figure`, :func:`equal_figure`, :func:`heatmap_for_total`.
"""

from __future__ import annotations

import io
import json
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from dpcore.data import DEFAULT_NOISE, load_csv, make_regression_data, to_csv
from dpcore.data.synthetic import GENERIC_NOISE, default_center
from dpcore.exceptions import ApproximatePrivacyWarning, PrivacyLeakWarning
from dpcore.experiments import budget_sweep, default_eps_p_grid
from dpcore.experiments.metrics import (
    geodesic_predictions,
    parameter_errors,
    release_covariate_range,
    release_mse,
)
from dpcore.learning import GeodesicRegression
from dpcore.release import plan_regression_sampler, private_geodesic_regression

from . import figures
from . import manifolds as M
from .manifolds import make_manifold

# ============================================================================ manifolds
#: The manifolds of the regression pages: every key of :mod:`ui.manifolds`, in its order.
MANIFOLD_KINDS = M.KEYS
#: Manifolds whose parameter these pages let the user choose. SPD stays SPD(2) here: its
#: figures draw 2 × 2 matrices as ellipses and in the cone.
PARAM_KINDS = ("kendall", "euclidean")
#: Budget schemes of the release (DESIGN §8) and their labels.
SCHEME_LABELS = {"joint": "joint (one ε over (p, v); proven)",
                 "sequential": "sequential (papers: ε_p then ε_v; not covered by the proof)"}
SAMPLER_LABELS = {"auto": "exact when within reach, else MCMC",
                  "exact": "exact only (private; may be slow)",
                  "mcmc": "MCMC (approximately private)"}
MANIFOLD_LABELS = {kind: M.label(kind) if kind in PARAM_KINDS else M.choice_label(kind)
                   for kind in MANIFOLD_KINDS}
#: Allowed range and default of the manifold parameter (landmarks k, dimension d).
PARAM_RANGE = {kind: M.spec(kind).param_range for kind in PARAM_KINDS}
#: Choices of the sphere's noise variance delta (paper 002 §4.1 and app. E).
SPHERE_NOISE_CHOICES = (0.001, 0.01, 0.1)

#: Log-scale grid of the budget sliders (1-1.5-2-3-5-7 per decade).
EPS_GRID = tuple(float(f"{m * 10.0**e:.3g}") for e in (-2, -1, 0, 1)
                 for m in (1, 1.5, 2, 3, 5, 7))[:-5]  # 0.01 ... 10
#: Caps on replicates of one release and on the MCMC settings.
MAX_FOOTPOINTS = 10
MAX_VECTORS = 10
MAX_CHAIN = 5000
#: Private draws drawn in a figure (the metrics use all of them).
MAX_DRAWN = 25
#: Default MCMC settings: the default scenario (S², n = 50, 3 x 3 draws) takes about a second.
DEFAULT_CHAIN = 300
DEFAULT_BURN_IN = 200


def needs_ball(kind):
    """Whether strict mode needs a public ball ``B_{tau_m}(center)`` (non-compact or κ_l < 0)."""
    return M.spec(kind).needs_ball


def default_noise(kind):
    """Default noise of the synthetic data (variance δ on the sphere, a standard deviation else)."""
    return float(DEFAULT_NOISE.get(type(make_manifold(kind)), GENERIC_NOISE))


# ============================================================================ data sets
@dataclass(frozen=True, eq=False)
class Dataset:
    """Regression data shown on the page.

    Attributes
    ----------
    x : ndarray, shape (n,)
    y : ndarray, shape (n, *point_shape)
    source : {"synthetic", "example", "upload"}
    description : str
    truth : tuple (footpoint, shooting_vector, (low, high)), optional
        The data-generating geodesic of generated data: the point at covariate ``low`` and the
        velocity per unit of ``(x - low) / (high - low)``.
    """

    x: np.ndarray
    y: np.ndarray
    source: str
    description: str
    truth: tuple | None = None

    @property
    def generated(self):
        """True for synthetic and example data (which may be downloaded)."""
        return self.source != "upload"

    @property
    def n(self):
        return int(self.x.shape[0])

    def truth_points(self, manifold, x):
        """Points of the data-generating geodesic at covariates ``x`` (None if unknown)."""
        if self.truth is None:
            return None
        p, v, (low, high) = self.truth
        t = (np.asarray(x, dtype=float) - low) / (high - low)
        return manifold.geodesic(p, v, t)


def synthetic_dataset(kind, param, n, noise, seed):
    """Synthetic data following the papers' protocols (:func:`dpcore.data.make_regression_data`).

    Parameters
    ----------
    kind, param : manifold setting, see :func:`ui.manifolds.make_manifold`
    n : int
        Sample size.
    noise : float
        Noise level (variance δ on the sphere, a standard deviation elsewhere).
    seed : int

    Returns
    -------
    Dataset
    """
    m = make_manifold(kind, param)
    d = make_regression_data(m, int(n), noise=float(noise), rng=int(seed))
    what = "variance δ" if kind == "sphere" else "standard deviation"
    return Dataset(d.x, d.y, "synthetic",
                   f"Synthetic data (paper protocol): n = {int(n)}, noise {what} {noise:g}, "
                   f"seed {int(seed)}; covariate x uniform on [0, 1].",
                   truth=(d.footpoint, d.shooting_vector, (0.0, 1.0)))


#: The bundled example: a covariate in years, so that the covariate range matters.
EXAMPLE_N = 40
EXAMPLE_AGES = (20.0, 80.0)
EXAMPLE_SEED = 20240611


def example_dataset(kind, param):
    """A generated example with the covariate in original units (age 20 to 80 years).

    Made in memory from :func:`dpcore.data.make_regression_data` with a fixed seed; the covariate
    ``t`` on [0, 1] becomes ``age = 20 + 60 t``. Nothing is read from disk.

    Returns
    -------
    Dataset
    """
    m = make_manifold(kind, param)
    d = make_regression_data(m, EXAMPLE_N, rng=EXAMPLE_SEED)
    low, high = EXAMPLE_AGES
    return Dataset(low + (high - low) * d.x, d.y, "example",
                   f"Generated example: {EXAMPLE_N} subjects aged {low:g} to {high:g} years "
                   "(covariate in years), responses scattered about a geodesic.",
                   truth=(d.footpoint, d.shooting_vector, EXAMPLE_AGES))


def parse_upload(data, kind, param, renormalize=False):
    """Parse the bytes of an uploaded CSV into a :class:`Dataset` (validated, in memory only).

    Parameters
    ----------
    data : bytes
        File contents (e.g. ``UploadedFile.getvalue()``). Nothing is written to disk or logged.
    kind, param : manifold setting, see :func:`ui.manifolds.make_manifold`
    renormalize : bool
        Sphere: project every point onto the sphere instead of rejecting points off it.

    Returns
    -------
    Dataset

    Raises
    ------
    dpcore.data.DataValidationError
        With a message naming the row and column of every problem.
    """
    m = make_manifold(kind, param)
    x, y = load_csv(bytes(data), m, task="regression", renormalize=bool(renormalize))
    return Dataset(x, y, "upload", f"Uploaded CSV: n = {x.shape[0]} rows.")


def expected_header(kind, param):
    """The header line an uploaded CSV must have (DESIGN §9)."""
    from dpcore.data import expected_columns

    return ",".join(expected_columns(make_manifold(kind, param), "regression"))


def data_csv(kind, param, dataset):
    """CSV text of a generated data set (the format :func:`parse_upload` reads)."""
    if not dataset.generated:
        raise ValueError("Only generated data can be downloaded.")
    return to_csv(make_manifold(kind, param), dataset.y, dataset.x)


# ============================================================================ one release
@dataclass(frozen=True)
class ReleaseSettings:
    """Everything the release button uses (all public: no data in here).

    ``tau``, ``covariate_range``, ``tau_m`` and ``center`` are ignored in paper mode (the
    release then takes them from the data). ``seed`` None means OS entropy.
    """

    kind: str
    param: int | None
    eps_p: float
    eps_v: float
    mode: str = "strict"
    tau: float | None = None
    covariate_range: tuple | None = None
    tau_m: float | None = None
    center: tuple | None = None
    n_footpoints: int = 3
    n_vectors: int = 3
    chain_length: int = DEFAULT_CHAIN
    burn_in: int = DEFAULT_BURN_IN
    seed: int | None = None
    scheme: str = "joint"
    sampler: str = "auto"

    @property
    def manifold(self):
        return make_manifold(self.kind, self.param)

    def release_kwargs(self):
        """Keyword arguments of :func:`dpcore.release.private_geodesic_regression`."""
        kw = {
            "eps_p": float(self.eps_p), "eps_v": float(self.eps_v), "mode": self.mode,
            "n_footpoints": int(min(self.n_footpoints, MAX_FOOTPOINTS)),
            "n_vectors": int(min(self.n_vectors, MAX_VECTORS)),
            "chain_length": int(min(self.chain_length, MAX_CHAIN)),
            "burn_in": int(min(self.burn_in, MAX_CHAIN)),
            "rng": self.seed,
            "scheme": self.scheme,
            "sampler": self.sampler if self.scheme == "joint" else "auto",
        }
        if self.mode == "strict":
            kw["tau"] = self.tau
            kw["covariate_range"] = self.covariate_range
            if needs_ball(self.kind):
                kw["tau_m"] = self.tau_m
                kw["center"] = center_point(self.kind, self.param, self.center)
        return kw


def center_point(kind, param, center=None):
    """The public centre of the response ball as a point (``center`` as entered, or default).

    SPD: ``center`` is a scalar c giving c·I. Euclidean: a tuple of d coordinates.
    """
    m = make_manifold(kind, param)
    if center is None:
        return default_center(m)
    arr = np.asarray(center, dtype=float)
    if kind == "spd":
        return float(arr.ravel()[0]) * np.eye(m.point_shape[-1])
    return arr.reshape(m.point_shape)


def covariate_range_for(settings, dataset):
    """The covariate range the release uses: public in strict mode, the data's in paper mode."""
    if settings.mode == "strict":
        low, high = settings.covariate_range
        return float(low), float(high)
    return float(dataset.x.min()), float(dataset.x.max())


@dataclass(frozen=True, eq=False)
class Fit:
    """A non-private geodesic: footpoint at the low end of ``covariate_range``, velocity per
    unit of the rescaled covariate, its MSE on the data and whether the descent converged."""

    footpoint: np.ndarray
    vector: np.ndarray
    covariate_range: tuple
    mse: float
    converged: bool


def fit_nonprivate(kind, param, x, y, covariate_range):
    """Non-private geodesic regression, parametrized by ``covariate_range`` (deterministic).

    Returns
    -------
    Fit
    """
    m = make_manifold(kind, param)
    cr = (float(covariate_range[0]), float(covariate_range[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = GeodesicRegression(m, covariate_range=cr, tol=1e-9).fit(x, y)
    return Fit(fit.footpoint_, fit.shooting_vector_, cr, float(fit.mse(x, y)),
               bool(fit.converged_))


def run_release(settings, dataset):
    """Make one private release (never cached: every call draws fresh randomness).

    Returns
    -------
    (release, notes) : tuple
        The :class:`~dpcore.release.Release` and the messages of any
        :class:`~dpcore.exceptions.PrivacyLeakWarning` raised (paper mode).
    """
    m = settings.manifold
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        warnings.simplefilter("always", ApproximatePrivacyWarning)
        release = private_geodesic_regression(m, dataset.x, dataset.y,
                                              **settings.release_kwargs())
    notes = [str(w.message) for w in caught
             if issubclass(w.category, (PrivacyLeakWarning, ApproximatePrivacyWarning))]
    return release, notes


def sampler_plan(settings, n):
    """What the release button will run (exact or MCMC) and the label it will get, from public
    inputs only (:func:`dpcore.release.plan_regression_sampler`)."""
    return plan_regression_sampler(
        settings.manifold, int(n), eps_p=float(settings.eps_p), eps_v=float(settings.eps_v),
        tau=settings.tau if settings.mode == "strict" else None,
        tau_m=settings.tau_m, draws=int(settings.n_footpoints * settings.n_vectors),
        mode=settings.mode, scheme=settings.scheme, sampler=settings.sampler)


def data_checks(settings, dataset, fit=None):
    """What strict mode will do to this data set (for the analyst's eyes only, not released).

    Returns
    -------
    list of str
        Counts of covariates outside the public range (clipped), of residuals of the
        non-private fit above τ (clipped in the gradient) and of responses outside the public
        ball (projected onto it).
    """
    if settings.mode != "strict":
        return []
    out = []
    m = settings.manifold
    low, high = settings.covariate_range
    k = int(np.sum((dataset.x < low) | (dataset.x > high)))
    if k:
        out.append(f"{k} of {dataset.n} covariates lie outside the public range "
                   f"[{low:g}, {high:g}] and are clipped to it.")
    if fit is not None:
        res = residual_norms(settings.kind, settings.param, dataset.x, dataset.y, fit)
        k = int(np.sum(res > settings.tau))
        if k:
            out.append(f"{k} of {dataset.n} residuals of the non-private fit exceed τ = "
                       f"{settings.tau:g}; they are clipped to norm τ inside the gradients.")
    if needs_ball(settings.kind):
        center = center_point(settings.kind, settings.param, settings.center)
        d = np.asarray(m.dist(dataset.y, np.broadcast_to(center, dataset.y.shape)))
        k = int(np.sum(d > settings.tau_m))
        if k:
            out.append(f"{k} of {dataset.n} responses lie outside the public ball of radius "
                       f"τ_m = {settings.tau_m:g}; they are projected onto it.")
    return out


def residual_norms(kind, param, x, y, fit):
    """Norms of the residuals of a fitted geodesic (:class:`Fit`) at the data."""
    m = make_manifold(kind, param)
    low, high = fit.covariate_range
    pred = m.geodesic(fit.footpoint, fit.vector, (np.asarray(x, dtype=float) - low) / (high - low))
    return np.asarray(m.dist(pred, y), dtype=float)


def _stage(diag):
    """Acceptance, ESS and R-hat of one sampler stage, as display strings."""
    if diag.get("exact"):
        return {"acceptance": "exact", "ess": "exact", "rhat": "exact"}

    def fmt(key, spec):
        value = diag.get(key)
        return "–" if value is None else format(value, spec)

    return {"acceptance": fmt("acceptance_rate_mean", ".2f"), "ess": fmt("ess", ".0f"),
            "rhat": fmt("rhat", ".3f")}


def release_metrics(kind, param, dataset, release, fit):
    """Utility numbers of a release next to the non-private fit.

    Parameters
    ----------
    fit : Fit
        The non-private fit, parametrized by the release's covariate range.

    Returns
    -------
    dict
        ``mse_private`` (mean over draws), ``mse_private_min/max``, ``mse_nonprivate``,
        ``footpoint_distance``, ``angle_deg``, ``length_error``, ``relative_length_error``
        (means over draws), ``scheme``, ``delta_p``, ``delta_v``, ``sigma_p``, ``sigma_v``
        (None for the joint scheme), ``delta_joint``, ``sigma_joint`` (None for the sequential
        one), ``eps_per_geodesic``, ``epsilon``, ``delta``, ``n_draws`` and ``diagnostics``,
        the display strings of each sampler stage.
    """
    m = make_manifold(kind, param)
    mse = release_mse(m, release, dataset.x, dataset.y)
    err = parameter_errors(m, release, fit.footpoint, fit.vector)
    return {
        "mse_private": float(np.mean(mse)),
        "mse_private_min": float(np.min(mse)),
        "mse_private_max": float(np.max(mse)),
        "mse_nonprivate": float(fit.mse),
        "footpoint_distance": float(np.mean(err["footpoint_distance"])),
        "angle_deg": float(np.degrees(np.nanmean(err["angle"]))),
        "length_error": float(np.mean(err["length_error"])),
        "relative_length_error": float(np.nanmean(err["relative_length_error"])),
        "scheme": release.details.get("scheme", "sequential"),
        "delta_p": float(release.sensitivity["footpoint"]),
        "delta_v": float(release.sensitivity["shooting_vector"]),
        "delta_joint": release.sensitivity.get("joint"),
        "sigma_p": release.sigma.get("footpoint"),
        "sigma_v": release.sigma.get("shooting_vector"),
        "sigma_joint": release.sigma.get("joint"),
        "eps_per_geodesic": float(release.details["epsilon_per_geodesic"]),
        "epsilon": float(release.epsilon),
        "delta": None if release.delta is None else float(release.delta),
        "n_draws": int(mse.size),
        "diagnostics": {stage: _stage(diag) for stage, diag in release.diagnostics.items()},
    }


def noise_hint(kind, metrics, mode):
    """A hint when the private draws are far from the fit (None otherwise)."""
    if metrics["mse_private"] <= 10 * max(metrics["mse_nonprivate"], 1e-12):
        return None
    text = (f"The private geodesics are far from the fit (MSE "
            f"{metrics['mse_private'] / max(metrics['mse_nonprivate'], 1e-300):.3g}× the "
            "non-private one). ")
    if mode == "strict":
        text += ("In strict mode residuals are clipped, so the gradient norm is bounded and the "
                 "KNG density never falls below about exp(−nε/4) of its peak: when nε is small "
                 "(or the space has many dimensions) that floor carries most of the mass and "
                 "the draws spread over the whole support. Try a larger ε or n")
        text += (", a smaller τ_m (the SPD bounds grow like cosh(2c))" if kind == "spd" else "")
        text += (", fewer landmarks" if kind == "kendall" else "")
        text += ", or compare with paper mode."
    else:
        text += "Try a larger ε or n."
    return text


def diagnostics_table(metrics):
    """Rows of the sampler-diagnostics table."""
    names = {"footpoint": "footpoint p̃", "shooting_vector": "shooting vector ṽ",
             "joint": "joint (p̃, ṽ)"}
    return [{"stage": names.get(stage, stage), **row}
            for stage, row in metrics["diagnostics"].items()]


def release_json(release):
    """The release record as JSON text (private outputs and metadata, no input data)."""
    return json.dumps(release.to_dict(), indent=2)


def assumption_rows(settings, release=None):
    """The assumptions in force, as markdown bullet lines.

    From the release's own record when there is one, from the settings otherwise.
    """
    rows = []
    if release is not None:
        for name, a in release.assumptions.items():
            if not isinstance(a, dict):
                continue
            value = a.get("value")
            if isinstance(value, (list, tuple)) and len(value) == 2 and name == "covariate_range":
                text = f"[{value[0]:.4g}, {value[1]:.4g}]"
            elif isinstance(value, (int, float)):
                text = f"{value:.4g}"
            else:
                arr = np.asarray(value, dtype=float)
                text = np.array2string(arr, precision=3, suppress_small=True,
                                       separator=", ").replace("\n", "")
            src = a.get("source", "")
            note = f"; {a['note']}" if a.get("note") else ""
            flag = " **(from the data: not private)**" if src == "data" else ""
            rows.append(f"- `{name}` = {text} — source: {src}{flag}{note}")
        rows.append(f"- noise scale rule: σ = {release.details['sigma_rule']}")
        rows.append(f"- mode: **{release.mode}**; label: *{release.label}*")
        return rows
    if settings.mode == "paper":
        rows.append("- τ, the covariate range" + (" and τ_m" if needs_ball(settings.kind) else "")
                    + " will be **taken from the data** (not private).")
        rows.append("- noise scale rule: σ = Δ/ε (the papers' choice).")
    else:
        low, high = settings.covariate_range
        rows.append(f"- residual bound τ = {settings.tau:g} (public; residuals clipped to it)")
        rows.append(f"- covariate range [{low:g}, {high:g}] (public; covariates clipped to it)")
        if needs_ball(settings.kind):
            rows.append(f"- responses in a ball of radius τ_m = {settings.tau_m:g} about the "
                        "public centre (responses projected onto it)")
        rows.append("- noise scale rule: σ = 2Δ/ε (the normalizing constant depends on the data).")
    rows.append("- MCMC sampler: δ of order 1/chain length per draw, assuming the chain mixed.")
    rows.append("- sequential scheme: p̃ is drawn with the shooting vector fixed at its "
                "non-private estimate (a gap in the papers' proof).")
    return rows


# ---------------------------------------------------------------------------- figures
#: SPD views keep this multiple of the largest trace of the data and fits.
SPD_VIEW_FACTOR = 3.0


def _trace(mats):
    mats = np.asarray(mats, dtype=float)
    return mats[..., 0, 0] + mats[..., 1, 1]


def _legend_below(fig, zoom=1.0):
    """Put the legend under a 3D figure, which then gets the full width of its column;
    ``zoom > 1`` moves the camera closer (the page's column is narrower than a full page)."""
    eye = fig.layout.scene.camera.eye
    if zoom != 1.0 and eye is not None and eye.x is not None:
        fig.update_layout(scene_camera_eye={"x": eye.x / zoom, "y": eye.y / zoom,
                                            "z": eye.z / zoom})
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "xanchor": "left", "y": 0.0,
                              "yref": "container", "yanchor": "bottom"},
                      margin={"b": 90})
    return fig


def _curve_grid(dataset, covariate_range, size):
    low, high = covariate_range
    a, b = min(low, float(dataset.x.min())), max(high, float(dataset.x.max()))
    return np.linspace(a, b, size)


def _private_at(m, release, x_values):
    """Private geodesics at covariates ``x_values``: list (one per draw) of (len, *ps)."""
    low, high = release_covariate_range(release)
    t = (np.asarray(x_values, dtype=float) - low) / (high - low)
    pred = geodesic_predictions(m, release.values["footpoint"],
                                release.values["shooting_vector"], t)
    flat = pred.reshape((-1, *pred.shape[2:]))
    return list(flat[:MAX_DRAWN])


def _fit_at(m, footpoint, vector, covariate_range, x_values):
    low, high = covariate_range
    return m.geodesic(footpoint, vector, (np.asarray(x_values, dtype=float) - low) / (high - low))


def regression_figures(kind, param, dataset, fit, release=None, *, covariate_name="x",
                       kendall_range=None, kendall_panels=4):
    """The page's figures for one manifold.

    Parameters
    ----------
    fit : Fit
        The non-private geodesic.
    release : Release, optional
        Private geodesics to overlay (coloured by draw; at most :data:`MAX_DRAWN` drawn).
    kendall_range : (float, float), optional
        Covariate interval of the Kendall panels (default: the covariate range).
    kendall_panels : int
        Number of Kendall panels.

    Returns
    -------
    list of (str, plotly.graph_objects.Figure)
        Caption and figure, in display order (empty for a manifold without a figure here).
    """
    m = make_manifold(kind, param)
    p_hat, v_hat, cr = fit.footpoint, fit.vector, fit.covariate_range
    n_draws = 0 if release is None else int(np.prod(release.values["shooting_vector"].shape[:2]))
    shown = min(n_draws, MAX_DRAWN)
    sub = None
    if n_draws:
        sub = (f"{shown} private draws shown" + (f" (of {n_draws})" if shown < n_draws else "")
               + f"; mode {release.mode}")
    x_title = f"covariate {covariate_name}"
    out = []
    if kind == "sphere":
        grid = _curve_grid(dataset, cr, 200)
        priv = _private_at(m, release, grid) if release is not None else None
        fig = figures.sphere_regression_figure(
            dataset.y, _fit_at(m, p_hat, v_hat, cr, grid), priv,
            generating_curve=dataset.truth_points(m, grid), data_x=dataset.x, curve_x=grid,
            subtitle=sub or "Drag to rotate; press Release to add private geodesics",
        )
        out.append(("Data, the non-private geodesic and private geodesics on S²; drag to "
                    "rotate, scroll to zoom.", _legend_below(fig, zoom=1.35)))
    elif kind == "spd":
        xs = np.linspace(*cr, 6)
        grid = _curve_grid(dataset, cr, 120)
        fit_x, fit_grid = _fit_at(m, p_hat, v_hat, cr, xs), _fit_at(m, p_hat, v_hat, cr, grid)
        gen_x, gen_grid = dataset.truth_points(m, xs), dataset.truth_points(m, grid)
        # Private draws can be orders of magnitude larger than the data (the SPD bounds grow
        # like cosh); drawn to one scale they would shrink everything else to dots. The views
        # keep the scale of the data and the fits and say how many draws leave it.
        scale = SPD_VIEW_FACTOR * max(float(np.max(_trace(a))) for a in
                                      (dataset.y, fit_grid, gen_grid) if a is not None)
        priv, hidden = None, 0
        if release is not None:
            draws = _private_at(m, release, xs)
            priv = [d for d in draws if np.max(_trace(d)) <= scale]
            hidden = len(draws) - len(priv)
        fig = figures.spd_ellipses_figure(xs, fit_x, priv, generating_mats=gen_x,
                                          x_title=x_title)
        note = "Each matrix drawn as its 1-sd ellipse at six covariate values, to scale."
        if hidden:
            note += (f" {hidden} private draw(s) reach matrices more than {SPD_VIEW_FACTOR:g}× "
                     "the size of the data and are left out here so the rest stays visible.")
        out.append((note, fig))
        privc, cut = None, 0
        if release is not None:
            privc = []
            for curve in _private_at(m, release, grid):
                outside = _trace(curve) > scale
                cut += bool(np.any(outside))
                privc.append(np.where(outside[:, None, None], np.nan, curve))
        cone = figures.spd_cone_figure(dataset.y, fit_grid, privc, generating_curve=gen_grid,
                                       extent=scale, subtitle=sub)
        note = "SPD(2) as the cone of matrices [[a, b], [b, c]] with ac > b²; drag to rotate."
        if cut:
            note += (f" {cut} private geodesic(s) leave the drawn part of the cone (trace above "
                     f"{scale:.3g}) and are cut there.")
        out.append((note, _legend_below(cone)))
    elif kind == "kendall":
        a, b = kendall_range if kendall_range is not None else cr
        xs = np.linspace(a, b, max(1, int(kendall_panels))) if b > a else np.array([a])
        ref = p_hat
        true = m.to_landmarks(_fit_at(m, p_hat, v_hat, cr, xs), reference=ref)
        priv = None
        if release is not None:
            priv = [m.to_landmarks(s, reference=ref) for s in _private_at(m, release, xs)]
        gen = dataset.truth_points(m, xs)
        fig = figures.kendall_shapes_figure(
            xs, true, priv,
            generating_landmarks=None if gen is None else m.to_landmarks(gen, reference=ref),
            x_name=covariate_name, n_cols=min(len(xs), 2),
        )
        out.append(("Predicted shapes at the chosen covariate values.", fig))
    elif kind == "euclidean":
        grid = _curve_grid(dataset, cr, 60)
        priv = _private_at(m, release, grid) if release is not None else None
        fig = figures.euclidean_regression_figure(
            dataset.x, dataset.y, _fit_at(m, p_hat, v_hat, cr, grid), priv, x_grid=grid,
            generating_lines=dataset.truth_points(m, grid), x_title=x_title, subtitle=sub,
        )
        out.append(("One panel per response coordinate.", fig))
    return out


# ============================================================================ teaching notes
LATEX_NOTES = {
    "energy": r"E(p, v) = \frac{1}{2n} \sum_{i=1}^{n} d\big(\mathrm{Exp}(p, x_i v),\, y_i\big)^2,"
              r"\qquad x_i \in [0, 1]",
    "gradient": r"\nabla_p E = -\frac{1}{n} \sum_{i} (d_p \mathrm{Exp})^{\dagger} \varepsilon_i,"
                r"\qquad \nabla_v E = -\frac{1}{n} \sum_{i} x_i\, (d_v \mathrm{Exp})^{\dagger}"
                r" \varepsilon_i, \qquad \varepsilon_i = \mathrm{Log}(\hat y_i, y_i)",
    "kng": r"f(\tilde p) \propto \exp\!\Big(-\frac{\|\nabla_p E(\tilde p,"
           r" \Gamma_{\hat p \to \tilde p} \hat v)\|}{\sigma_p}\Big), \quad"
           r" f(\tilde v) \propto \exp\!\Big(-\frac{\|\nabla_v E(\tilde p, \tilde v)\|}"
           r"{\sigma_v}\Big), \quad \sigma = \frac{2\Delta}{\epsilon}\ \text{(strict)},\ "
           r"\frac{\Delta}{\epsilon}\ \text{(paper)}",
    "kng_joint": r"f(\tilde p, \tilde v) \propto \exp\!\Big(-\frac{\sqrt{\|\nabla_p E\|^2"
                 r" + \|\nabla_v E\|^2}}{\sigma}\Big), \quad \Delta = \sqrt{\Delta_p^2 +"
                 r" \Delta_v^2}",
    "sensitivity_flat": r"\kappa_l \ge 0:\quad \Delta_p = \Delta_v = \frac{2\tau}{n}",
    "sensitivity_neg": r"\kappa_l < 0:\quad \Delta_p = \frac{2\tau}{n}\cosh(2c), \quad"
                       r" \Delta_v = \frac{\tau}{n}\,\frac{\sinh(2c)}{c}, \quad"
                       r" c = \sqrt{-\kappa_l}\,(\tau_m + \tau)",
}


# ============================================================================ budget split
VIEW_IDS = {"unequal": 1, "equal": 2, "grid": 3}


@dataclass(frozen=True)
class SweepConfig:
    """A budget-split simulation (all settings; with ``seed`` it is deterministic).

    ``unequal``: ``n_unequal`` splits of ``total`` (log-symmetric, :func:`default_eps_p_grid`);
    ``equal``: ``n_equal`` log-spaced totals from ``equal_range[0]`` to ``equal_range[1]``;
    ``grid``: ``n_grid`` x ``n_grid`` log-spaced budgets over ``grid_range`` at sample size
    ``grid_n``. ``tau`` (strict mode only) is the public residual bound, with covariate range
    [0, 1] and ``tau_m`` where the manifold needs it.
    """

    kind: str = "sphere"
    param: int | None = None
    mode: str = "paper"
    sample_sizes: tuple = (20, 50, 100)
    total: float = 2.02
    n_unequal: int = 7
    equal_range: tuple = (0.2, 2.0)
    n_equal: int = 5
    grid_range: tuple = (0.05, 2.0)
    n_grid: int = 4
    grid_n: int = 50
    replicates: int = 2
    n_footpoints: int = 3
    n_vectors: int = 3
    chain_length: int = 80
    burn_in: int = 80
    noise: float | None = None
    tau: float | None = None
    tau_m: float | None = None
    views: tuple = ("unequal", "equal", "grid")
    seed: int = 0

    def as_dict(self):
        return asdict(self)

    def unequal_grid(self):
        return default_eps_p_grid(self.total, self.n_unequal)

    def equal_totals(self):
        return np.geomspace(*self.equal_range, self.n_equal)

    def grid_values(self):
        return np.geomspace(*self.grid_range, self.n_grid)


#: Caps of the simulation page.
SWEEP_CAPS = {"replicates": 20, "n_grid": 9, "n_unequal": 15, "n_equal": 12, "draws": 10,
              "chain_length": 2000, "sample_sizes": 5}


def sweep_chunks(config):
    """The units of work of a simulation: ``(view, n, replicate)`` triples, in order."""
    out = []
    for view in config.views:
        sizes = (config.grid_n,) if view == "grid" else config.sample_sizes
        for n in sizes:
            for rep in range(config.replicates):
                out.append((view, int(n), rep))
    return out


def n_releases(config):
    """How many releases (cells) the simulation makes."""
    per = {"unequal": config.n_unequal, "equal": config.n_equal, "grid": config.n_grid ** 2}
    return sum(per[v] for v, _, _ in sweep_chunks(config))


def run_chunk(config, view, n, rep):
    """One replicate of one view at one sample size (deterministic given ``config.seed``).

    The synthetic data set depends on ``(seed, n, rep)`` only, so every view sees the same data;
    the mechanism's randomness depends on the view too.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`dpcore.experiments.budget_sweep` with ``replicate = rep`` and a
        column ``view``.
    """
    m = make_manifold(config.kind, config.param)
    kw = {}
    if config.mode == "strict":
        kw = {"tau": config.tau, "covariate_range": (0.0, 1.0)}
        if needs_ball(config.kind):
            kw["tau_m"] = config.tau_m
    if view == "unequal":
        kw.update(totals=[config.total], eps_p_grid=config.unequal_grid())
    elif view == "equal":
        kw.update(totals=config.equal_totals())
    else:
        kw.update(eps_p_grid=config.grid_values(), eps_v_grid=config.grid_values())
    df = budget_sweep(
        m, sample_sizes=[n], split=view, replicates=1, mode=config.mode, noise=config.noise,
        rng=np.random.SeedSequence([config.seed, VIEW_IDS[view], n, rep]),
        data_rng=np.random.SeedSequence([config.seed, n, rep]),
        n_footpoints=config.n_footpoints, n_vectors=config.n_vectors,
        chain_length=config.chain_length, burn_in=config.burn_in, **kw,
    )
    df["replicate"] = rep
    df["view"] = view
    return df


def summarize(df, by):
    """Mean and standard error of ``log_mse`` (and the mean non-private log MSE) per group.

    Returns
    -------
    pandas.DataFrame
        Columns ``by`` + ``mean``, ``se``, ``count``, ``nonprivate``.
    """
    g = df.assign(log_np=np.log(df["nonprivate_mse"])).groupby(list(by), sort=True)
    out = g["log_mse"].agg(["mean", "count"]).reset_index()
    out["se"] = g["log_mse"].sem(ddof=1).fillna(0.0).to_numpy()
    out["nonprivate"] = g["log_np"].mean().to_numpy()
    return out


def _series(df, x_col):
    series, refs = {}, {}
    for n, part in summarize(df, ["n", x_col]).groupby("n"):
        label = f"n = {int(n)}"
        series[label] = (part[x_col].to_numpy(), part["mean"].to_numpy(), part["se"].to_numpy())
        refs[label] = float(part["nonprivate"].mean())
    return series, refs


def _bands_without_markers(fig):
    """Band polygons as filled lines only (plotly's default mode would mark their vertices)."""
    for trace in fig.data:
        if getattr(trace, "fill", None) == "toself":
            trace.mode = "lines"
    return fig


def _replicate_note(replicates):
    if replicates == 1:
        return "One replicate (no error band); dashed: non-private level"
    return f"Mean ± 2 SE over {replicates} replicates; dashed: non-private level"


def unequal_figure(df, config):
    """Log mean MSE against ε_p at a fixed total, one line per n, ±2 SE bands."""
    series, refs = _series(df, "eps_p")
    return _bands_without_markers(figures.band_figure(
        series, reference=refs, reference_label="non-private",
        x_title="ε_p (footpoint budget; ε_v = total − ε_p)", y_title="log mean MSE",
        title=f"Unequal split at a fixed total ε_p + ε_v = {config.total:g}",
        subtitle=_replicate_note(config.replicates),
        log_x=False,
    ))


def equal_figure(df, config):
    """Log mean MSE against the total with ε_p = ε_v = total / 2, one line per n."""
    series, refs = _series(df, "epsilon")
    return _bands_without_markers(figures.band_figure(
        series, reference=refs, reference_label="non-private",
        x_title="total ε = ε_p + ε_v (split equally)", y_title="log mean MSE",
        title="Equal split across total budgets",
        subtitle=_replicate_note(config.replicates),
        log_x=True,
    ))


def heatmap_for_total(df, config, total):
    """Heatmap of the log mean MSE over the (ε_p, ε_v) grid with the best split for ``total``.

    The best split is the cell of lowest log mean MSE among those with
    ``ε_p + ε_v <= total`` (the affordable ones).

    Returns
    -------
    (figure, best) : tuple
        ``best`` is a dict with ``eps_p``, ``eps_v``, ``log_mse`` (None if no cell fits).
    """
    s = summarize(df, ["eps_p", "eps_v"])
    ep = np.unique(s["eps_p"].to_numpy())
    ev = np.unique(s["eps_v"].to_numpy())
    z = np.full((ep.size, ev.size), np.nan)
    for row in s.itertuples():
        z[np.searchsorted(ep, row.eps_p), np.searchsorted(ev, row.eps_v)] = row.mean
    feasible = (ep[:, None] + ev[None, :]) <= total * (1 + 1e-9)
    best, info = None, None
    if np.any(feasible & np.isfinite(z)):
        masked = np.where(feasible & np.isfinite(z), z, np.inf)
        best = np.unravel_index(int(np.argmin(masked)), z.shape)
        info = {"eps_p": float(ep[best[0]]), "eps_v": float(ev[best[1]]),
                "log_mse": float(z[best])}
    fig = figures.heatmap_figure(
        z, ev, ep, best=best, mark=None, total=total, log_axes=True,
        title=f"Log mean MSE over the budget grid (n = {config.grid_n})",
        subtitle=(f"Star: best split with ε_p + ε_v ≤ {total:g}; mean over "
                  f"{config.replicates} replicates"),
    )
    return fig, info


def sweep_table(df):
    """A compact table of the simulation results (means over replicates)."""
    s = summarize(df, ["view", "n", "eps_p", "eps_v"])
    s = s.rename(columns={"mean": "mean log MSE", "se": "SE", "nonprivate":
                          "non-private log MSE", "count": "replicates"})
    return s


def sweep_csv(df):
    """CSV text of the simulation rows (synthetic data only; no user data involved)."""
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue()


__all__ = [
    "Dataset",
    "EPS_GRID",
    "LATEX_NOTES",
    "MANIFOLD_KINDS",
    "MANIFOLD_LABELS",
    "PARAM_KINDS",
    "PARAM_RANGE",
    "ReleaseSettings",
    "SweepConfig",
    "assumption_rows",
    "data_csv",
    "equal_figure",
    "example_dataset",
    "fit_nonprivate",
    "heatmap_for_total",
    "parse_upload",
    "regression_figures",
    "release_json",
    "release_metrics",
    "run_chunk",
    "run_release",
    "summarize",
    "sweep_chunks",
    "synthetic_dataset",
    "unequal_figure",
]
