"""Take it with you, for the two demonstration pages: the Gaussian DP page's release and the
Budget split page's simulation as self-contained scripts (the conventions of
:mod:`ui.logic.export`, which re-exports both writers)."""

from __future__ import annotations

import datetime as _dt

import numpy as np

from .export_setup import _header, _literal, install_note

__all__ = ["budget_split_script", "gaussian_dp_script"]


def gaussian_dp_script(request, *, sensitivity, seed, release_seed=None):
    """Script reproducing the release of the Gaussian DP page: a Riemannian Gaussian private
    Fréchet mean on S² at the page's σ, with the data ball whose mean has sensitivity Δ.

    Parameters
    ----------
    request : dpcore.release.GaussianReleaseRequest
        The page's release (``ui.logic.gaussian_dp.release_request``): its rate σ, ``n`` and
        the public data radius the page derived from ``n`` and Δ (written as numbers).
    sensitivity : float
        The page's top control Δ (the text of the script).
    seed : int
        Seed of the synthetic data.
    release_seed : int, optional
        None: OS entropy (for publication).

    Returns
    -------
    str
    """
    spec = request.to_script_dict()
    settings = spec["settings"]
    if settings.get("mechanism") != "gaussian" or settings.get("sigma") is None:
        raise ValueError("The Gaussian DP page's script is for a Gaussian release at a rate σ.")
    sigma, n, radius = settings["sigma"], spec["n"], settings["radius"]
    lines = [
        *_header("Gaussian DP",
            f"A Riemannian Gaussian private Fréchet mean on Sphere(2) at σ = {float(sigma):g}; the "
            "data ball's radius makes",
            f"the mean's proven sensitivity Δ = {float(sensitivity):g}.",
        ),
        "import json",
        "import math",
        "",
        "import numpy as np",
        "",
        "from dpcore.data import make_mean_data",
        "from dpcore.data.synthetic import default_center",
        "from dpcore.learning import frechet_mean",
        "from dpcore.manifolds import Sphere",
        "from dpcore.privacy import delta_mu, mu_to_eps",
        "from dpcore.release import private_frechet_mean",
        "from dpcore.release.accuracy import predict_gaussian_error",
        "from dpcore.sensitivity import frechet_mean_sensitivity",
        "",
        "manifold = Sphere(2)",
        "",
        "# %% Public settings (fixed before looking at the data)",
        f"SIGMA = {float(sigma)!r}",
        f"DELTA = {float(sensitivity)!r}",
        f"N = {int(n)}",
        f"DATA_SEED = {int(seed)}",
        "# Radius of the public cap holding the data: 2r(2 - h)/(nh) = DELTA (paper 001 Thm 2).",
        f"RADIUS = {float(radius)!r}",
        f"RELEASE_SEED = {None if release_seed is None else int(release_seed)!r}",
        "CENTER = default_center(manifold)",
        "print(\"proven sensitivity of the mean:\", frechet_mean_sensitivity(",
        "    N, RADIUS, *manifold.curvature_bounds[1:], manifold.injectivity_radius))",
        "",
        "# %% Data (synthetic, paper 001 protocol)",
        "y = make_mean_data(manifold, N, radius=RADIUS, rng=DATA_SEED)",
        "",
        "# %% Accuracy before release (from SIGMA alone; nothing is spent)",
        "pred = predict_gaussian_error(manifold, SIGMA)",
        "print(f\"predicted distance to the non-private mean: median {pred['median']:.4g} rad, \"",
        "      f\"95% within {pred['q95']:.4g} rad\")",
        "",
        "# %% Release",
        "release = private_frechet_mean(manifold, y, sigma=SIGMA, mechanism=\"gaussian\",",
        "                               radius=RADIUS, center=CENTER, rng=RELEASE_SEED)",
        "private_mean = np.asarray(release.values[\"mean\"])[0]",
        "distance = float(manifold.dist(frechet_mean(manifold, y), private_mean))",
        "eps = float(mu_to_eps(release.mu))",
        "print(\"label:\", release.label)",
        "print(f\"mu = {release.mu:.4g}-GDP; at the matched epsilon = {eps:.4g}, \"",
        "      f\"delta = {float(delta_mu(eps, release.mu)):.3g} (not pure epsilon-DP)\")",
        "print(\"private mean:\", private_mean.tolist())",
        "print(f\"distance to the non-private mean: {distance:.6g} rad \"",
        "      f\"({math.degrees(distance):.4g} degrees)\")",
        "",
        "# %% Summary (machine-readable)",
        "summary = {\"predicted_median\": pred[\"median\"], \"predicted_q95\": pred[\"q95\"],",
        "           \"mu\": release.mu, \"private_mean\": private_mean.tolist(),",
        "           \"distance\": distance}",
        "print(\"RESULT \" + json.dumps(summary))",
        "",
    ]
    return "\n".join(lines)


def budget_split_script(manifold, view_kwargs):
    """Script reproducing a simulation of the Budget split page with
    :func:`dpcore.experiments.budget_sweep` (one call per view, the page's seeds).

    Parameters
    ----------
    manifold : Manifold
        Its ``repr`` rebuilds it.
    view_kwargs : dict
        ``{view: keyword arguments of budget_sweep}``; ``rng`` and ``data_rng`` are
        :class:`numpy.random.SeedSequence` objects (written by their entropy). A public design
        of the data (``data_kwargs``, with its bounds ``footpoint_radius`` and ``max_speed``)
        is written as passed and named in the docstring.

    Returns
    -------
    str
    """
    cls = type(manifold).__name__
    designed = any(kw.get("data_kwargs") for kw in view_kwargs.values())
    protocol = ("synthetic data with a stated public design: data_kwargs, footpoint_radius "
                "and max_speed" if designed else "synthetic data, paper 002 protocol")
    blocks = []
    for view, kw in view_kwargs.items():
        kw = dict(kw)
        rng, data_rng = kw.pop("rng"), kw.pop("data_rng")
        args = [f"    {k}={_literal(v)}," for k, v in kw.items()]
        blocks += [
            f"VIEWS[{view!r}] = dict(",
            *args,
            f"    rng=np.random.SeedSequence({list(np.atleast_1d(rng.entropy).tolist())!r}),",
            f"    data_rng=np.random.SeedSequence("
            f"{list(np.atleast_1d(data_rng.entropy).tolist())!r}),",
            ")",
        ]
    lines = [
        '"""Budget split simulation exported from the dpcore dashboard on '
        f'{_dt.date.today().isoformat()}.',
        "",
        f"How the split of ε between footpoint and shooting vector changes the error of a "
        f"private geodesic on {manifold!r}",
        f"({protocol}; a simulation, not a release of anyone's data).",
        "",
        *install_note(),
        '"""',
        "",
        "# %% Setup",
        "import json",
        "",
        "import numpy as np",
        "",
        "from dpcore.experiments import budget_sweep",
        f"from dpcore.manifolds import {cls}",
        "",
        f"manifold = {manifold!r}",
        "UNIT_SCALE = " + ("180 / np.pi  # degrees" if cls == "Sphere" else "1.0"),
        "",
        "# %% Settings of each view (seeded: the same numbers as the page)",
        "VIEWS = {}",
        *blocks,
        "",
        "# %% Simulation",
        "results = {}",
        "for view, kwargs in VIEWS.items():",
        "    df = budget_sweep(manifold, **kwargs)",
        "    df[\"rms_error\"] = UNIT_SCALE * np.sqrt(df[\"mse\"])",
        "    results[view] = df",
        "    print(f\"--- {view} view\")",
        "    columns = [c for c in (\"log_mse\", \"rms_error\", \"rhat\", \"ess\") if c in df]",
        "    keys = [k for k in (\"n\", \"scheme\", \"eps_p\", \"eps_v\") if k in df]",
        "    cells = df.groupby(keys)[columns].mean()",
        "    print(cells.round(4).to_string())",
        "    bad = df[(df[\"rhat\"] > 1.05) | (df[\"ess\"] < 100)]",
        "    if len(bad):",
        "        print(f\"{len(bad)} cell(s) whose chains have not mixed: \"",
        "              \"raise chain_length and burn_in\")",
        "",
        "# %% Summary (machine-readable)",
        "print(\"RESULT \" + json.dumps({view: df[\"log_mse\"].tolist() for view, df in "
        "results.items()}))",
        "",
    ]
    return "\n".join(lines)
