"""Page logic of the Fréchet mean page: the public quantities of the data ball, the one
release as a request (:class:`dpcore.release.FrechetMeanRequest`) and what the page says
about it before and after, the presets, the public centre and the ball preview.

The studies (preview draws, simulations) are :mod:`ui.logic.frechet_simulation`; the column
mapping of uploads is :mod:`ui.logic.upload` (shared by every page that reads a file), whose
names are re-exported here.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpcore.data.synthetic import default_center
from dpcore.learning import frechet_mean
from dpcore.release import FrechetMeanRequest, project_to_ball
from dpcore.release import work as W
from dpcore.sampling.exact import exact_sampler_available
from dpcore.sensitivity import (
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
    frechet_radius_limit,
)
from dpcore.visualization.frechet import MECHANISM_LABELS
from ui.caps import upload_max_rows

from .upload import (
    MeanUpload,
    PointLayout,
    PointMapping,
    UploadTable,
    default_layout,
    default_point_columns,
    incomplete_mapping_text,
    mapped_columns,
    mapping_legend,
    person_hint,
    person_rows_text,
    point_layouts,
    read_mapped,
    recognised_text,
    scan_upload,
    slot_options,
)

__all__ = [
    "FRECHET_MANIFOLDS",
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
    "frechet_summary",
    "parse_center_text",
    "parse_spd_center_text",
    "predicted_error_text",
    "radius_help",
    "read_upload",
    "release_distances",
    "release_facts",
    "release_request",
    "simulated_mechanisms",
    "smallest_epsilon_text",
    "spd_center_text",
    # the column mapping of uploads (ui.logic.upload)
    "MeanUpload",
    "PointLayout",
    "PointMapping",
    "UploadTable",
    "default_layout",
    "default_point_columns",
    "incomplete_mapping_text",
    "mapped_columns",
    "mapping_legend",
    "person_hint",
    "person_rows_text",
    "point_layouts",
    "read_mapped",
    "recognised_text",
    "scan_upload",
    "slot_options",
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


def simulated_mechanisms(manifold, include_kng=True):
    """The mechanisms the page runs on ``manifold``, in display order.

    The Riemannian Gaussian is left out where it has no exact sampler (SPD(k ≥ 3)): calibrating
    its σ as a release does needs Monte Carlo over MCMC draws there, about 100 s per sample
    size on this machine, and a flat-space σ would not be the release's mechanism.
    """
    return tuple(k for k in MECHANISM_LABELS
                 if (include_kng or k != "kng")
                 and (k != "gaussian" or exact_sampler_available(manifold, "gaussian")))


# ------------------------------------------------------------------ the release, as a request
def release_request(manifold, n, epsilon, mechanism, radius, center):
    """The page's one release, built once from its widgets: a
    :class:`dpcore.release.FrechetMeanRequest` in strict mode, one draw, drawn from OS entropy
    (no seed), the library's defaults otherwise. The cost line, the work estimate, the
    prediction, the release, its ledger entry and the exported script all read it.

    Raises
    ------
    ValueError
        From the request's validation, with a message naming the input.
    """
    return FrechetMeanRequest(manifold, int(n), epsilon=float(epsilon), mechanism=mechanism,
                              radius=float(radius), center=np.asarray(center, dtype=float))


def release_facts(request):
    """What the page states about ``request`` before it runs, from public inputs only.

    Returns
    -------
    event : dpcore.privacy.PrivacyEvent
        :meth:`~dpcore.release.FrechetMeanRequest.event` for one row per person (the page's
        cost line applies its rows per person): ε or µ, δ, guarantee and label as the release
        will state them.
    work : dpcore.release.work.WorkEstimate
        :meth:`~dpcore.release.FrechetMeanRequest.work`.
    within : bool
        Whether the work is within the library's budget (the page refuses every mechanism
        above it, as a KNG release would).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the planner's MCMC notice: the page states it
        event, work = request.event(), request.work()
    return event, work, W.refusal_message(work, request.max_work) is None


def predicted_error_text(pred, request):
    """One sentence stating :meth:`~dpcore.release.FrechetMeanRequest.predict`'s prediction
    (``pred``) before the release of ``request``."""
    if pred is None:
        return ("No prediction before release for this mechanism (no closed-form law of its "
                "error here); the simulation below shows its error.")
    return (f"**Before you release** (public inputs only): at ε = {request.epsilon:g} the "
            f"private mean will lie at distance **{pred['median']:.3g}** (median) from the "
            f"non-private mean, and within **{pred['q95']:.3g}** with 95% chance; σ = "
            f"{pred['sigma']:.3g}. From {pred['model']}.")


def smallest_epsilon_text(request, target, *, seed=0):
    """The smallest ε whose predicted median error reaches ``target``, the other inputs of
    ``request`` fixed (:meth:`~dpcore.release.FrechetMeanRequest.smallest_epsilon`), as a
    sentence; where the request has no search, its reason."""
    try:
        eps = request.smallest_epsilon(float(target), rng=seed)
    except NotImplementedError as exc:
        return f"No search over ε before release here: {exc}."
    if eps is None:
        return (f"No ε up to 10⁴ brings the median error below {target:g} at "
                f"n = {request.n}.")
    return (f"The smallest ε with a median error of at most {target:g} is **ε = {eps:g}** "
            f"(n = {request.n}, r = {request.radius:.3g}).")


#: Provenance and licence of the world-cities preset (shown on the page).
CITIES_ATTRIBUTION = (
    "The 50 largest cities of the World Cities Database, © simplemaps.com, licensed CC BY 4.0 "
    "(https://simplemaps.com/data/world-cities), the copy of geomstats (MIT) shipped with "
    "dpcore. Latitude and longitude in degrees become points of S².")


def cities_bytes():
    """The world-cities CSV shipped inside dpcore (``dpcore/data/presets``, from geomstats;
    read-only)."""
    from dpcore.data.shipped import preset_path

    return preset_path("world_cities.csv").read_bytes()


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
