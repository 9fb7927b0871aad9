"""Geodesic regression page logic, second part: the release's metrics and diagnostics, its
figures and assumptions, the error prediction before a release, the ε of a release, and the
"Estimate privately" notes. Re-exported by :mod:`ui.logic.geodesic_regression` (which keeps
the settings, the data, the fit and the release itself).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from dpcore import visualization as V
from dpcore.data import latlon_to_sphere
from dpcore.data.synthetic import default_center
from dpcore.experiments.metrics import (
    geodesic_predictions,
    parameter_errors,
    release_covariate_range,
    release_mse,
)
from ui.caps import CAPS
from ui.manifolds import make_manifold

from . import private_bounds as PB
from .regression_data import needs_ball

#: Uniform proposals of the page's error prediction (about 0.3 s on S² at n = 20).
ACCURACY_PROPOSALS = 20_000

#: Unit of the errors shown, per manifold key.
ERROR_UNITS = {"sphere": "rad", "spd": "(affine-invariant distance)",
               "kendall": "rad (shape distance)", "euclidean": "(data units)"}


def center_point(kind, param, center=None):
    """The public centre of the response ball as a point (``center`` as entered, or default).

    SPD: ``center`` is a scalar c giving c·I. Euclidean: a tuple of d coordinates. Sphere: a
    (latitude, longitude) pair in degrees.
    """
    m = make_manifold(kind, param)
    if center is None:
        return default_center(m)
    arr = np.asarray(center, dtype=float)
    if kind == "spd":
        return float(arr.ravel()[0]) * np.eye(m.point_shape[-1])
    if kind == "sphere":
        return np.asarray(latlon_to_sphere(arr.ravel()[0], arr.ravel()[1]), dtype=float).reshape(3)
    return arr.reshape(m.point_shape)


def residual_norms(m, x, y, fit):
    """Norms of the residuals of a fitted geodesic (:class:`Fit`) on manifold ``m`` at the
    data."""
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


def release_metrics(m, dataset, release, fit):
    """Utility numbers of a release next to the non-private fit.

    Parameters
    ----------
    m : Manifold
        The release's manifold.
    dataset : Dataset
    release : Release
    fit : Fit
        The non-private fit, parametrized by the release's covariate range.

    Returns
    -------
    dict
        ``mse_private`` (mean over draws), ``mse_private_draws`` (one per draw),
        ``mse_private_min/max``, ``mse_nonprivate``,
        ``footpoint_distance``, ``angle_deg``, ``length_error``, ``relative_length_error``
        (means over draws), ``scheme``, ``delta_p``, ``delta_v``, ``sigma_p``, ``sigma_v``
        (None for the joint scheme), ``delta_joint``, ``sigma_joint`` (None for the sequential
        one), ``eps_per_geodesic``, ``epsilon``, ``delta``, ``n_draws`` and ``diagnostics``,
        the display strings of each sampler stage.
    """
    mse = release_mse(m, release, dataset.x, dataset.y)
    err = parameter_errors(m, release, fit.footpoint, fit.vector)
    return {
        "mse_private": float(np.mean(mse)),
        "mse_private_draws": [float(v) for v in np.ravel(mse)],
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


#: Thresholds of the MCMC diagnostics (issue 14): above / below them a release is flagged.
RHAT_MAX = 1.05
ESS_MIN = 100


def diagnostic_flags(release):
    """Problems of an MCMC release's chains, each as a sentence with the fix (empty for exact
    draws): split R-hat above :data:`RHAT_MAX` or ESS below :data:`ESS_MIN` in any stage."""
    out = []
    for stage, diag in release.diagnostics.items():
        if not isinstance(diag, dict) or diag.get("exact"):
            continue
        rhat, ess = diag.get("rhat"), diag.get("ess")
        bad = []
        if rhat is not None and not rhat <= RHAT_MAX:
            bad.append(f"R-hat = {rhat:.3g} > {RHAT_MAX}")
        if ess is not None and not ess >= ESS_MIN:
            bad.append(f"ESS = {ess:.0f} < {ESS_MIN}")
        if bad:
            name = stage.replace("_", " ")
            out.append(f"The {name} chains have not mixed ({', '.join(bad)}): these draws do "
                       "not follow the mechanism, so neither its accuracy nor its privacy "
                       "holds for them. Fix: raise the chain length and burn-in (Advanced: "
                       "sampler), or lower n × ε or the number of draws for an exact release.")
    return out


def diagnostics_table(metrics):
    """Rows of the sampler-diagnostics table."""
    names = {"footpoint": "footpoint p̃", "shooting_vector": "shooting vector ṽ",
             "joint": "joint (p̃, ṽ)"}
    return [{"stage": names.get(stage, stage), **row}
            for stage, row in metrics["diagnostics"].items()]


def release_json(release):
    """The release record as JSON text (private outputs and metadata, no input data)."""
    return json.dumps(release.to_dict(), indent=2)


def assumption_rows(settings, release=None, plan=None, estimated=None):
    """The assumptions in force, as markdown bullet lines.

    From the release's own record when there is one, from the settings otherwise; ``plan``
    (:func:`sampler_plan`) says which sampler the next release will use and ``estimated``
    (assumption name -> statement, :func:`covariate_estimate_note`) which bounds the next
    release takes from an estimate under DP (a release's record already says so).
    """
    estimated = estimated or {}
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
        cov_note = estimated.get("covariate_range")
        rows.append(f"- covariate range [{low:g}, {high:g}] (public; covariates clipped to it"
                    + (f"; {cov_note})" if cov_note else ")"))
        if needs_ball(settings.kind):
            rows.append(f"- responses in a ball of radius τ_m = {settings.tau_m:g} about the "
                        "public centre (responses projected onto it)")
        rows.append("- noise scale rule: σ = 2Δ/ε (the normalizing constant depends on the data).")
    if plan is not None and plan.get("exact"):
        rows.append("- sampler: exact rejection sampling (δ = 0).")
    elif plan is not None and settings.mode == "strict" and settings.scheme == "joint":
        rows.append("- sampler: MCMC; the draws only approximate the mechanism and **no δ is "
                    "certified** (approximately private).")
    if settings.scheme == "sequential":
        rows.append("- sequential scheme: p̃ is drawn with the shooting vector fixed at its "
                    "non-private estimate, outside the sensitivity proof (labelled NOT "
                    "PRIVATE).")
    return rows


def _private_at(m, release, x_values):
    """Private geodesics at covariates ``x_values``: list (one per draw) of (len, *ps)."""
    low, high = release_covariate_range(release)
    t = (np.asarray(x_values, dtype=float) - low) / (high - low)
    pred = geodesic_predictions(m, release.values["footpoint"],
                                release.values["shooting_vector"], t)
    flat = pred.reshape((-1, *pred.shape[2:]))
    return list(flat[:CAPS["gr_drawn"]])


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


def regression_figures(m, dataset, fit, release=None, *, covariate_name="x",
                       kendall_range=None, kendall_panels=4, sphere_view="globe"):
    """The page's figures for one manifold (:func:`dpcore.visualization.regression_figures`).

    Parameters
    ----------
    m : Manifold
        The data's manifold (a setting's, :func:`ui.manifolds.make_manifold`).
    dataset : Dataset
    fit : Fit
        The non-private geodesic.
    release : Release, optional
        Private geodesics to overlay (coloured by draw; at most ``CAPS["gr_drawn"]`` drawn).
    kendall_range : (float, float), optional
        Covariate interval of the Kendall panels (default: the covariate range).
    kendall_panels : int
        Number of Kendall panels.
    sphere_view : {"globe", "map"}
        S²: the 3D globe or the flat map (:func:`dpcore.visualization.regression_figures`).

    Returns
    -------
    list of (str, plotly.graph_objects.Figure)
        Caption and figure, in display order (empty for a manifold without a figure).
    """
    n_draws = 0 if release is None else int(np.prod(release.values["shooting_vector"].shape[:2]))
    return V.regression_figures(
        m, dataset.x, dataset.y, fit.footpoint, fit.vector, fit.covariate_range,
        private_at=None if release is None else (lambda xs: _private_at(m, release, xs)),
        n_draws=n_draws, mode=None if release is None else release.mode,
        truth_at=lambda xs: dataset.truth_points(m, xs), covariate_name=covariate_name,
        kendall_range=kendall_range, kendall_panels=kendall_panels, sphere_view=sphere_view,
    )


def length_error_text(relative):
    """A short text for the relative length error (|ṽ| − |v̂|)/|v̂| that fits a metric card:
    a percentage below ±1000 % (whole percent from ±10 %), else the ratio |ṽ|/|v̂|."""
    pct = 100.0 * float(relative)
    if not np.isfinite(pct):
        return "n/a"
    if abs(pct) >= 1000:
        return f"{1.0 + float(relative):.2g}× |v̂|"
    return f"{pct:+.0f}%" if abs(pct) >= 10 else f"{pct:+.2g}%"


def predict_accuracy(settings, n, *, seed=0):
    """The predicted error of the strict joint release these settings would make, from public
    inputs only (:func:`ui.logic.gr_request.predict_error` of their request; no data)."""
    from .gr_request import predict_error

    return predict_error(settings.request(n), seed=seed)


def accuracy_lines(kind, pred):
    """Markdown lines stating a prediction (or why there is none)."""
    unit = ERROR_UNITS.get(kind, "")
    eps = pred["epsilon"]
    if not pred["available"]:
        return [f"No exact prediction at ε = {eps:g} per geodesic: {pred['reason']}. The release "
                "is more concentrated than a uniform draw; its error cannot be predicted "
                "exactly here."]
    f, c = pred["footpoint"], pred["curve"]
    lines = [
        f"**Footpoint error**: median {f['median']:.3g} {unit}, 95% within {f['q95']:.3g} "
        f"(a footpoint drawn uniformly on the support: median {f['uniform_median']:.3g}).",
        f"**Geodesic error** (RMS over the covariates): median {c['median']:.3g} {unit}, 95% "
        f"within {c['q95']:.3g} (uniform: {c['uniform_median']:.3g}).",
    ]
    # Judged on the whole curve: in a small public footpoint region every footpoint is near
    # the fit, so the footpoint error alone is close to a uniform draw's whatever the budget.
    if c["median"] >= 0.8 * c["uniform_median"]:
        lines.append(
            "At this n × ε the release is **close to a uniform draw**: it tells almost nothing "
            "about the data. Raise ε or n, or tighten the public bounds.")
    lines.append(f"From the {pred['model']}.")
    return lines


def release_epsilon(scheme, eps_p, eps_v, n_footpoints, n_vectors):
    """The total ε of a release: every drawn geodesic is a release of the data (joint: draws
    x (ε_p + ε_v); sequential: footpoints x ε_p + draws x ε_v), the draws capped as
    :meth:`ReleaseSettings.release_kwargs` caps them."""
    nf = int(min(n_footpoints, CAPS["gr_footpoints"]))
    nv = int(min(n_vectors, CAPS["gr_vectors"]))
    if scheme == "joint":
        return nf * nv * (float(eps_p) + float(eps_v))
    return nf * float(eps_p) + nf * nv * float(eps_v)


def planned_epsilon(settings):
    """The total ε the release button will record (:func:`release_epsilon`)."""
    return release_epsilon(settings.scheme, settings.eps_p, settings.eps_v,
                           settings.n_footpoints, settings.n_vectors)


# ------------------------------------------------------- "Estimate privately" (issue 14)
#: Data sources whose covariate range may be estimated under DP: an uploaded file only (the
#: synthetic and example data and the rat-skull preset have public ranges from their design).
ESTIMATE_SOURCES = ("upload",)


def estimate_offered(source, mode):
    """Whether the page offers "Estimate privately" for the covariate range: uploads in
    strict mode (paper mode takes the range from the data anyway)."""
    return mode == "strict" and source in ESTIMATE_SOURCES


def estimate_scope(file_digest, kind, param, covariate):
    """The key an estimate is kept under: the file (a digest of its bytes), the manifold (its
    response columns decide which rows are read) and the covariate column. Another file or
    column starts from the default range again."""
    text = json.dumps([str(file_digest), str(kind), param, str(covariate)])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def covariate_estimate_note(covariate_range, estimate):
    """The assumptions a release with ``covariate_range`` carries for an estimate under DP.

    Parameters
    ----------
    covariate_range : (float, float) or None
        The range in the fields (None in paper mode).
    estimate : dict or None
        The page's kept estimate: ``range`` (low, high), ``epsilon`` (ε_b) and ``levels``.

    Returns
    -------
    dict
        ``{"covariate_range": statement}`` while the fields still hold the estimated range
        (:func:`ui.logic.private_bounds.matches_estimate`), else empty (a retyped range is the
        user's own public choice).
    """
    if estimate is None or covariate_range is None:
        return {}
    if not PB.matches_estimate(covariate_range, estimate["range"]):
        return {}
    return {"covariate_range": PB.estimated_note(estimate["epsilon"], estimate["levels"])}
