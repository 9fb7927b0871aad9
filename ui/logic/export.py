"""Take it with you: the current scenario of a page as a self-contained Python script or a
Jupyter notebook that reproduces it with ``dpcore`` alone (no dashboard, no Streamlit).

The script holds only public settings. Synthetic data are regenerated from their seed;
uploaded data are never embedded: the script reads the file from a path the user fills in.
The release draws from OS entropy unless ``RELEASE_SEED`` is set (a seeded release is a
reproducible demo, labelled not for publication). Notebook cells are the script's ``# %%``
sections (nbformat 4, written as plain JSON).
"""

from __future__ import annotations

import datetime as _dt
import json

import numpy as np

__all__ = ["frechet_script", "notebook_from_script", "regression_script"]


def _array(value):
    return json.dumps(np.asarray(value, dtype=float).tolist())


def frechet_script(manifold, *, source, n=None, seed=None, radius, center, epsilon, mechanism,
                   release_seed=None, data_file="your_data.csv"):
    """Script reproducing a Fréchet-mean release of the Fréchet mean page.

    Parameters
    ----------
    manifold : Manifold
        Its ``repr`` (``Sphere(2)``, ``SPD(2)``) rebuilds it.
    source : {"synthetic", "upload", "cities"}
    n, seed : int
        Size and seed of synthetic data (paper 001 protocol, ``make_mean_data``).
    radius : float
    center : array
        The public ball.
    epsilon : float
    mechanism : str
    release_seed : int, optional
        None: OS entropy (for publication).
    data_file : str
        Path written for uploaded data (the user's own file).

    Returns
    -------
    str
    """
    cls = type(manifold).__name__
    if source == "synthetic":
        data = (f"# Synthetic data (paper 001 protocol): n = {int(n)} points in the ball, "
                f"seed {int(seed)}.\n"
                f"y = make_mean_data(manifold, {int(n)}, radius=RADIUS, rng={int(seed)})\n")
    elif source == "cities":
        data = ("# Preset: the 50 largest cities of the World Cities Database,\n"
                "# (c) simplemaps.com, CC BY 4.0, as shipped with geomstats (MIT);\n"
                "# latitude/longitude -> S².\n"
                "from pathlib import Path\n\n"
                "import geomstats.datasets\n\n"
                "CITIES = Path(geomstats.datasets.__file__).parent / \"data\" / \"cities\" / "
                "\"cities.csv\"\n"
                "y, _ = load_latlon_csv(CITIES.read_bytes())\n")
    else:
        data = ("# Your data: the CSV you uploaded to the dashboard (it is not stored in this "
                "script).\n"
                f"DATA_FILE = {data_file!r}\n"
                "y = load_csv(DATA_FILE, manifold, task=\"mean\")\n")
    predict = mechanism in ("laplace", "kng")
    lines = [
        '"""Fréchet mean scenario exported from the dpcore dashboard on '
        f'{_dt.date.today().isoformat()}.',
        "",
        f"A private Fréchet mean on {manifold!r} by the {mechanism} mechanism at ε = "
        f"{float(epsilon):g}, data in the",
        f"public ball of radius {float(radius):g}. Needs the dpcore library on the path "
        "(pip install -r requirements.txt).",
        "RELEASE_SEED = None draws from OS entropy (for publication); a seed gives a "
        "reproducible demo.",
        '"""',
        "",
        "# %% Setup",
        "import numpy as np",
        "",
        "from dpcore.data import load_csv, load_latlon_csv, make_mean_data",
        "from dpcore.learning import frechet_mean",
        f"from dpcore.manifolds import {cls}",
        "from dpcore.release import private_frechet_mean, project_to_ball",
        "from dpcore.release.accuracy import predict_frechet_error",
        "",
        f"manifold = {manifold!r}",
        "",
        "# %% Public bounds and budget (fixed before looking at the data)",
        f"CENTER = np.array({_array(center)})",
        f"RADIUS = {float(radius)!r}",
        f"EPSILON = {float(epsilon)!r}",
        f"MECHANISM = {mechanism!r}",
        f"RELEASE_SEED = {None if release_seed is None else int(release_seed)!r}",
        "",
        "# %% Data",
        data.rstrip("\n"),
        "",
        "# %% Accuracy before release (public inputs only; nothing is spent)",
    ]
    if predict:
        lines += [
            "pred = predict_frechet_error(manifold, len(y), epsilon=EPSILON, radius=RADIUS,",
            "                             center=CENTER, mechanism=MECHANISM)",
            "print(f\"predicted distance to the non-private mean: median {pred['median']:.4g}, \"",
            "      f\"95% within {pred['q95']:.4g} ({pred['model']})\")",
        ]
    else:
        lines.append("# (no closed-form prediction for this mechanism)")
    lines += [
        "",
        "# %% Release",
        "release = private_frechet_mean(manifold, y, epsilon=EPSILON, mechanism=MECHANISM,",
        "                               radius=RADIUS, center=CENTER, rng=RELEASE_SEED)",
        "private_mean = np.asarray(release.values[\"mean\"])[0]",
        "mean = frechet_mean(manifold, project_to_ball(manifold, y, CENTER, RADIUS))",
        "print(\"label:\", release.label)",
        "print(\"epsilon:\", release.epsilon, \"delta:\", release.delta, \"mu:\", release.mu)",
        "print(\"private mean:\", private_mean.tolist())",
        "print(\"distance to the non-private mean:\", float(manifold.dist(mean, private_mean)))",
        "",
    ]
    return "\n".join(lines)


def notebook_from_script(script):
    """A Jupyter notebook (nbformat 4 JSON text) with one cell per ``# %%`` section of
    ``script`` (the docstring becomes a markdown cell)."""
    head, _, rest = script.partition("# %%")
    doc = head.strip().strip('"').strip()
    cells = [{"cell_type": "markdown", "metadata": {}, "source": doc}] if doc else []
    for part in ("# %%" + rest).split("# %%")[1:]:
        title, _, code = part.partition("\n")
        cells.append({"cell_type": "code", "metadata": {}, "execution_count": None,
                      "outputs": [], "source": f"# {title.strip()}\n{code.strip()}\n"})
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}}, "cells": cells}
    for k, cell in enumerate(nb["cells"]):
        cell["id"] = f"cell-{k}"
    return json.dumps(nb, indent=1, ensure_ascii=False)


def _literal(value):
    if isinstance(value, np.ndarray) or (isinstance(value, (list, tuple)) and value
                                         and isinstance(value[0], (list, tuple, np.ndarray))):
        return f"np.array({_array(value)})"
    if isinstance(value, tuple):
        return repr(tuple(float(v) for v in value))
    if isinstance(value, (np.floating, np.integer)):
        return repr(value.item())
    return repr(value)


def regression_script(manifold, release_kwargs, *, source, n=None, noise=None, seed=None,
                      example=None, renormalize=False, data_file="your_data.csv"):
    """Script reproducing a release of the Geodesic regression page.

    Parameters
    ----------
    manifold : Manifold
    release_kwargs : dict
        The keyword arguments the page passes to
        :func:`dpcore.release.private_geodesic_regression` (public settings only; ``rng`` is
        the release seed or None).
    source : {"synthetic", "example", "upload"}
    n, noise, seed : synthetic data settings
    example : (n, seed, (low, high)), for the generated example
    renormalize : bool
        As ticked on the page, for an uploaded sphere file.
    data_file : str

    Returns
    -------
    str
    """
    kw = dict(release_kwargs)
    release_seed = kw.pop("rng", None)
    cls = type(manifold).__name__
    if source == "synthetic":
        data = [f"# Synthetic data (paper protocol): n = {int(n)}, noise {float(noise):g}, "
                f"seed {int(seed)}.",
                f"data = make_regression_data(manifold, {int(n)}, noise={float(noise)!r}, "
                f"rng={int(seed)})",
                "x, y = data.x, data.y"]
    elif source == "example":
        en, eseed, (low, high) = example
        data = [f"# The dashboard's generated example: {int(en)} subjects, covariate in years "
                f"({low:g} to {high:g}).",
                f"data = make_regression_data(manifold, {int(en)}, rng={int(eseed)})",
                f"x, y = {float(low)!r} + {float(high - low)!r} * data.x, data.y"]
    else:
        data = ["# Your data: the CSV you uploaded (it is not stored in this script).",
                f"DATA_FILE = {data_file!r}",
                f"x, y = load_csv(DATA_FILE, manifold, renormalize={bool(renormalize)!r})"]
    settings = [f"    {k}={_literal(v)}," for k, v in kw.items()]
    lines = [
        '"""Geodesic regression scenario exported from the dpcore dashboard on '
        f'{_dt.date.today().isoformat()}.',
        "",
        f"A private geodesic regression on {manifold!r} with the page's public bounds and "
        "budget.",
        "Needs the dpcore library on the path (pip install -r requirements.txt).",
        "RELEASE_SEED = None draws from OS entropy (for publication); a seed gives a "
        "reproducible demo.",
        '"""',
        "",
        "# %% Setup",
        "import numpy as np",
        "",
        "from dpcore.data import load_csv, make_regression_data",
        f"from dpcore.manifolds import {cls}",
        "from dpcore.release import plan_regression_sampler, private_geodesic_regression",
        "",
        f"manifold = {manifold!r}",
        "",
        "# %% Public bounds and budget (fixed before looking at the data)",
        "SETTINGS = dict(",
        *settings,
        ")",
        f"RELEASE_SEED = {None if release_seed is None else int(release_seed)!r}",
        "",
        "# %% Data",
        *data,
        "",
        "# %% What will run (public inputs only)",
        "plan = plan_regression_sampler(",
        "    manifold, len(y), eps_p=SETTINGS[\"eps_p\"], eps_v=SETTINGS[\"eps_v\"],",
        "    tau=SETTINGS.get(\"tau\"), tau_m=SETTINGS.get(\"tau_m\"),",
        "    draws=SETTINGS[\"n_footpoints\"] * SETTINGS[\"n_vectors\"], mode=SETTINGS[\"mode\"],",
        "    scheme=SETTINGS[\"scheme\"], sampler=SETTINGS[\"sampler\"])",
        "print(\"sampler:\", \"exact\" if plan[\"exact\"] else \"MCMC\", \"->\",",
        "      plan[\"guarantee\"])",
        "",
        "# %% Release",
        "release = private_geodesic_regression(manifold, x, y, rng=RELEASE_SEED, **SETTINGS)",
        "print(\"label:\", release.label)",
        "print(\"epsilon:\", release.epsilon, \"delta:\", release.delta)",
        "print(\"footpoint:\", np.asarray(release.values[\"footpoint\"]).tolist())",
        "print(\"shooting vector:\", np.asarray(release.values[\"shooting_vector\"]).tolist())",
        "",
    ]
    return "\n".join(lines)
