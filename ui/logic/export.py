"""Take it with you: the current scenario of a page as a self-contained Python script or a
Jupyter notebook that reproduces it with ``dpcore`` alone (no dashboard, no Streamlit).

The script holds only public settings. Synthetic data are regenerated from their seed;
uploaded data are never embedded: the script reads the file by the name it was uploaded
under, next to the script. Its docstring gives the line that installs dpcore
(:mod:`ui.logic.export_setup`); a bounds estimate made under DP is recorded with its ε_b. The
release draws from OS entropy unless ``RELEASE_SEED`` is set (a seeded release is a
reproducible demo, labelled not for publication). Notebook cells are the script's ``# %%``
sections (nbformat 4, written as plain JSON).
"""

from __future__ import annotations

from dpcore.manifolds import SPD, Sphere
from dpcore.release.frechet_mechanisms import frechet_mechanism

from .export_demos import budget_split_script, gaussian_dp_script
from .export_setup import (
    ONE_STAGE_RUN,
    TWO_STAGE_RUN,
    _array,
    _header,
    _literal,
    data_file_name,
    estimate_lines,
    notebook_from_script,
    preset_file,
)

__all__ = ["budget_split_script", "data_file_name", "frechet_script", "gaussian_dp_script",
           "linear_regression_script", "notebook_from_script", "regression_script"]


def frechet_script(manifold, *, source, n=None, seed=None, radius, center, epsilon, mechanism,
              release_seed=None, data_file=None, columns=None, person=None):
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
    data_file : str, optional
        The uploaded file's name, written as the path to read (:func:`data_file_name`; default
        ``your_data.csv``).
    columns : dict, optional
        The page's column mapping of an upload: the reader's name of each column of the point
        -> the file's column (``columns`` of :func:`dpcore.data.read_manifold_csv`). With it
        the script reads the file as the page did: the mapped columns, rows with an empty
        mapped cell left out, other columns ignored. Without it the file must have the
        manifold's own columns only (:func:`dpcore.data.load_csv`).
    person : str, optional
        The page's person column (with ``columns``): its empty cells drop their rows too, and
        the script prints the rows per person of the guarantee.

    Returns
    -------
    str
    """
    cls = type(manifold).__name__
    data_file = data_file_name(data_file)
    if source == "upload" and columns is not None:
        mapping = "{" + ", ".join(f"{str(k)!r}: {str(v)!r}" for k, v in columns.items()) + "}"
        data = ("# Your data: the CSV you uploaded to the dashboard (it is not stored in this "
                "script).\n"
                f"DATA_FILE = {data_file!r}\n"
                "# The page's column mapping: the reader's name of each column of a point -> "
                "your file's column.\n"
                f"COLUMNS = {mapping}\n"
                f"PERSON = {None if person is None else str(person)!r}\n"
                "# As on the page: rows with an empty cell in a mapped column are left out,\n"
                "# other columns are ignored.\n"
                "read = read_manifold_csv(DATA_FILE, manifold, \"mean\", blank=\"drop\", "
                "columns=COLUMNS,\n"
                "                         group=PERSON)\n"
                "print(read.note)\n"
                "y = read.y\n"
                "if PERSON:\n"
                "    _, sizes = np.unique(read.groups.astype(str), return_counts=True)\n"
                "    # Group privacy: one person's k rows make each guarantee below k times its "
                "epsilon.\n"
                "    print(\"rows per person (largest group):\", int(sizes.max()))\n")
    elif source == "synthetic":
        data = (f"# Synthetic data (paper 001 protocol): n = {int(n)} points in the ball, "
                f"seed {int(seed)}.\n"
                f"y = make_mean_data(manifold, {int(n)}, radius=RADIUS, rng={int(seed)})\n")
    elif source == "cities":
        data = ("# Preset: the 50 largest cities of the World Cities Database,\n"
                "# (c) simplemaps.com, CC BY 4.0, geomstats' copy (MIT) shipped with dpcore;\n"
                "# latitude/longitude -> S².\n"
                "from dpcore.data.shipped import preset_path\n\n"
                "y, _ = load_latlon_csv(preset_path(\"world_cities.csv\").read_bytes())\n")
    else:
        data = ("# Your data: the CSV you uploaded to the dashboard (it is not stored in this "
                "script).\n"
                f"DATA_FILE = {data_file!r}\n"
                "y = load_csv(DATA_FILE, manifold, task=\"mean\")\n")
    predict = frechet_mechanism(mechanism).error_prediction
    lines = [
        *_header("Fréchet mean",
            f"A private Fréchet mean on {manifold!r} by the {mechanism} mechanism at ε = "
            f"{float(epsilon):g}, data in the",
            f"public ball of radius {float(radius):g}.",
        ),
        "import json",
        "",
        "import numpy as np",
        "",
        "from dpcore.data import load_csv, load_latlon_csv, make_mean_data, read_manifold_csv",
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
        "# %% Summary (machine-readable)",
        "print(\"RESULT \" + json.dumps({\"label\": release.label, \"epsilon\": release.epsilon,",
        "                             \"private_mean\": private_mean.tolist()}))",
        "",
    ]
    return "\n".join(lines)


def regression_script(manifold, release_kwargs, *, source, n=None, noise=None, seed=None,
                 example=None, renormalize=False, data_file=None, covariate="x",
                 bounds_estimate=None, two_stage=None, columns=None, person=None):
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
    renormalize, covariate, columns, person : optional
        An upload's "Project points onto the sphere" tick, covariate column, column mapping
        (:func:`ui.logic.upload.mapped_columns`) and person column, read as on the page.
    data_file : str, optional
        The uploaded file's name, or a preset's path (:func:`data_file_name`).
    bounds_estimate : mapping, optional
        A covariate range estimated under DP: ``epsilon`` (ε_b) and ``notes`` (bound ->
        statement); recorded in the script (:func:`ui.logic.export_setup.estimate_lines`).
    two_stage : TwoStageRegressionRequest, optional
        The page's two-stage release: the script makes the same request and runs it
        (``release_kwargs`` is then not used).

    Returns
    -------
    str
    """
    kw = dict(release_kwargs)
    release_seed = kw.pop("rng", None)
    if two_stage is not None:
        kw = two_stage.to_script_dict()["settings"]
        release_seed = two_stage.seed
    cls = type(manifold).__name__
    estimated, record = estimate_lines(bounds_estimate)
    if source == "synthetic":
        region = ""
        if isinstance(manifold, Sphere):
            from .regression_data import SPHERE_DEMO_REGION

            center, radius = SPHERE_DEMO_REGION
            region = (f", footpoint_region=(np.array({[float(c) for c in center]}), "
                      f"{float(radius)!r})")
        elif isinstance(manifold, SPD) and manifold.k == 2:
            from .geodesic_regression import SPD_DEMO_REGION

            region = f", footpoint_region=(None, {float(SPD_DEMO_REGION[1])!r})"
        data = [f"# Synthetic data (paper protocol): n = {int(n)}, noise {float(noise):g}, "
                f"seed {int(seed)}.",
                f"data = make_regression_data(manifold, {int(n)}, noise={float(noise)!r}, "
                f"rng={int(seed)}{region})",
                "x, y = data.x, data.y"]
    elif source == "example":
        en, eseed, (low, high) = example
        data = [f"# The dashboard's generated example: {int(en)} subjects, covariate in years "
                f"({low:g} to {high:g}).",
                f"data = make_regression_data(manifold, {int(en)}, rng={int(eseed)})",
                f"x, y = {float(low)!r} + {float(high - low)!r} * data.x, data.y"]
    else:
        mapped = [f"COLUMNS = {({str(k): str(v) for k, v in columns.items()})!r}",
                  f"PERSON = {None if person is None else str(person)!r}"] if columns else []
        data = ["# Your data: the CSV you uploaded (it is not stored in this script).",
                f"DATA_FILE = {data_file_name(data_file)!r}",
                f"COVARIATE = {str(covariate)!r}", *mapped,
                "# As on the page: rows with an empty cell are left out, other columns ignored.",
                f"read = read_manifold_csv(DATA_FILE, manifold, \"regression\", blank=\"drop\", "
                f"renormalize={bool(renormalize)!r},",
                "                         covariate=COVARIATE, " + (
                    "columns=COLUMNS, group=PERSON)" if columns else "others=\"ignore\")"),
                "print(read.note)",
                "x, y = read.x, read.y"]
    settings = [f"    {k}=(np.array({_array(v[0])}), {float(v[1])!r})," if k == "center_ball"
                and v is not None else f"    {k}={_literal(v)}," for k, v in kw.items()]
    lines = [
        *_header("Geodesic regression",
            f"A private geodesic regression on {manifold!r} with the page's public bounds and "
            "budget.",
        ),
        "import numpy as np",
        "",
        "from dpcore.data import make_regression_data, read_manifold_csv",
        f"from dpcore.manifolds import {cls}",
        ("from dpcore.release import TwoStageRegressionRequest" if two_stage is not None else
         "from dpcore.release import plan_regression_sampler, private_geodesic_regression"),
        "",
        f"manifold = {manifold!r}",
        "",
        "# %% Public bounds and budget (fixed before looking at the data)",
        "SETTINGS = dict(",
        *settings,
        ")",
        f"RELEASE_SEED = {None if release_seed is None else int(release_seed)!r}",
        *estimated,
        "",
        "# %% Data",
        *data,
        "",
        *(TWO_STAGE_RUN if two_stage is not None else ONE_STAGE_RUN),
        *record,
        "print(\"label:\", release.label)",
        "print(\"epsilon:\", release.epsilon, \"delta:\", release.delta)",
        "print(\"footpoint:\", np.asarray(release.values[\"footpoint\"]).tolist())",
        "print(\"shooting vector:\", np.asarray(release.values[\"shooting_vector\"]).tolist())",
        "",
    ]
    return "\n".join(lines)


def linear_regression_script(release_kwargs, *, source, covariate, responses, group=None,
                        example=None, data_file=None, release_seed=None,
                        bounds_estimate=None):
    """Script reproducing a release of the Linear regression page.

    Parameters
    ----------
    release_kwargs : dict
        The keyword arguments the page passes to
        :func:`dpcore.release.private_geodesic_regression`
        (:func:`ui.logic.linear_regression.release_settings`: public settings only).
    source : {"example", "wine", "upload"}
    covariate : str
    responses : sequence of str
    group : str, optional
        The group (person) column, when one is mapped.
    example : (n, seed)
        The generated example's size and seed.
    data_file : str, optional
        The uploaded file's name (:func:`data_file_name`; default ``your_data.csv``).
    release_seed : int, optional
        None: OS entropy (for publication).
    bounds_estimate : mapping, optional
        Bounds estimated under DP: ``epsilon`` (ε_b) and ``notes`` (bound -> statement, the
        page's ``bounds["estimated"]``); recorded in the script
        (:func:`ui.logic.export_setup.estimate_lines`).

    Returns
    -------
    str
    """
    responses = list(responses)
    estimated, record = estimate_lines(bounds_estimate)
    if source == "example":
        en, eseed = example
        data = [
            f"# The dashboard's generated example: {int(en)} rows, seed {int(eseed)} (three "
            "responses linear in 'dose').",
            f"rng = np.random.default_rng({int(eseed)})",
            f"dose = rng.uniform(0.0, 10.0, {int(en)})",
            f"rng.choice([\"north\", \"south\", \"east\"], {int(en)})  # the text column 'site'",
            "columns = {\"dose\": np.round(dose, 3)}",
            f"columns[\"response_a\"] = np.round(2.0 + 0.8 * dose + rng.normal(0.0, 1.0, "
            f"{int(en)}), 3)",
            f"columns[\"response_b\"] = np.round(10.0 - 0.5 * dose + rng.normal(0.0, 0.7, "
            f"{int(en)}), 3)",
            f"columns[\"response_c\"] = np.round(5.0 + 0.1 * dose + rng.normal(0.0, 1.5, "
            f"{int(en)}), 3)",
            "x = columns[COVARIATE]",
            "y = np.column_stack([columns[r] for r in RESPONSES])",
        ]
    else:
        if source == "wine":
            path = ["# Preset: UCI Wine Quality, red wines (Cortez et al. 2009, CC BY 4.0), the "
               "copy shipped with the dashboard.",
               f"DATA_FILE = {preset_file('assets/data/winequality-red.csv')!r}"]
        else:
            path = ["# Your data: the CSV you uploaded (it is not stored in this script).",
               f"DATA_FILE = {data_file_name(data_file)!r}"]
        data = [
            *path,
            "table = scan_table(Path(DATA_FILE).read_bytes())",
            "# Rows with an empty cell in a mapped column are dropped (and counted).",
            "kept, dropped = table.keep_filled([COVARIATE, *RESPONSES, *([GROUP] if GROUP "
            "else [])])",
            "values = kept.to_numbers([COVARIATE, *RESPONSES]).values",
            "x, y = values[:, 0], values[:, 1:]",
            "print(\"rows used:\", len(x), \"dropped (empty cells):\", dropped)",
            "if GROUP:",
            "    _, sizes = np.unique(kept.text(GROUP), return_counts=True)",
            "    # Group privacy: one person's k rows make the guarantee k times ε.",
            "    print(\"rows per person (largest group):\", int(sizes.max()))",
        ]
    kw = dict(release_kwargs)
    settings = [f"    {k}={_literal(v)}," for k, v in kw.items()]
    heading = ["# %% Public bounds and budget (fixed before looking at the data)"]
    if kw.get("bound_sources"):
        # The page's fields still held the data's range: say so, never present it as public.
        heading = ["# %% Bounds and budget. NOT PUBLIC: the bounds named in bound_sources "
                   "are the page's",
                   "# starting values, the data's range rounded outward, so the release is "
                   "labelled",
                   "# NOT PRIVATE (bounds from the data). Replace them by public values and "
                   "delete",
                   "# bound_sources for a private release."]
    lines = [
        *_header("Linear regression",
            f"A private linear regression of {', '.join(responses)} on {covariate} (dpcore's "
            "private geodesic regression on R^d)",
            "with the page's public bounds and budget.",
        ),
        "import json",
        "from pathlib import Path",
        "",
        "import numpy as np",
        "",
        "from dpcore.data import scan_table",
        "from dpcore.manifolds import Euclidean",
        "from dpcore.release import plan_regression_sampler, private_geodesic_regression",
        "",
        *heading,
        f"COVARIATE = {covariate!r}",
        f"RESPONSES = {responses!r}",
        f"GROUP = {group!r}",
        "SETTINGS = dict(",
        *settings,
        ")",
        f"RELEASE_SEED = {None if release_seed is None else int(release_seed)!r}",
        *estimated,
        "",
        "# %% Data",
        *data,
        "manifold = Euclidean(y.shape[1])",
        "",
        "# %% What will run (public inputs only)",
        "plan = plan_regression_sampler(",
        "    manifold, len(y), eps_p=SETTINGS[\"eps_p\"], eps_v=SETTINGS[\"eps_v\"],",
        "    tau=SETTINGS[\"tau\"], tau_m=SETTINGS[\"tau_m\"], draws=1, mode=SETTINGS[\"mode\"])",
        "print(\"sampler:\", \"exact\" if plan[\"exact\"] else \"MCMC\", \"->\", "
        + ("\"not private (bounds from the data)\")" if kw.get("bound_sources")
           else "plan[\"guarantee\"])"),
        "",
        "# %% Release",
        "release = private_geodesic_regression(manifold, x, y, rng=RELEASE_SEED, **SETTINGS)",
        *record,
        "intercept = np.asarray(release.values[\"intercept\"]).reshape(-1)",
        "slope = np.asarray(release.values[\"coef\"]).reshape(-1)",
        "xc = x - x.mean()",
        "ols_slope = xc @ (y - y.mean(axis=0)) / (xc @ xc)",
        "ols_intercept = y.mean(axis=0) - ols_slope * x.mean()",
        "print(\"label:\", release.label)",
        "print(\"epsilon:\", release.epsilon, \"delta:\", release.delta)",
        "print(\"private intercept:\", intercept.tolist())",
        "print(\"private slope:\", slope.tolist())",
        "print(\"least-squares intercept:\", ols_intercept.tolist())",
        "print(\"least-squares slope:\", ols_slope.tolist())",
        "print(\"private MSE:\", float(np.mean((y - intercept - x[:, None] * slope) ** 2)))",
        "print(\"least-squares MSE:\",",
        "      float(np.mean((y - ols_intercept - x[:, None] * ols_slope) ** 2)))",
        "",
        "# %% Summary (machine-readable)",
        "summary = {\"label\": release.label, \"epsilon\": release.epsilon,",
        "           \"intercept\": intercept.tolist(), \"slope\": slope.tolist(),",
        "           \"assumptions\": release.assumptions}",
        "print(\"RESULT \" + json.dumps(summary, default=str))",
        "",
    ]
    return "\n".join(lines)
