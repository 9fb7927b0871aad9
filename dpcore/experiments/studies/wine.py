r"""Private linear regression on the Wine Quality data (papers 000 / 003, table 1).

* :func:`load_wine` -- the analysed rows, scaled with public reference rows;
* :func:`linear_regression_comparison` -- DP geodesic regression on Euclidean space (strict and
  paper mode) against diffprivlib and (when importable) Opacus, and non-private OLS;
* :func:`summarize_linear_regression` -- MSE per method;
* :data:`WINE_RESPONSES`, :data:`WINE_COVARIATE`, :data:`WINE_QUALITY_RANGE`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..._validation import check_int, check_positive
from ...manifolds import Euclidean
from ...release import private_geodesic_regression
from ._common import _parallel, _quiet_release, _root_seed, data_dir

__all__ = [
    "WINE_COVARIATE",
    "WINE_QUALITY_RANGE",
    "WINE_RESPONSES",
    "linear_regression_comparison",
    "load_wine",
    "summarize_linear_regression",
]


#: Responses of the Wine Quality comparison (papers 000 / 003 §4.2), in the CSV's spelling.
WINE_RESPONSES = ("fixed_acidity", "density", "pH", "residual_sugar")
#: Covariate of the Wine Quality comparison: the quality score (column ``class``).
WINE_COVARIATE = "class"
#: Public range of the wine quality score used as ``covariate_range`` in strict mode: the scores
#: that occur among the red wines of the UCI data (the scale itself runs from 0 to 10).
WINE_QUALITY_RANGE = (3.0, 8.0)
#: δ of the Opacus DP-SGD comparison (the papers give none): well below 1/n for n = 100 rows.
OPACUS_DELTA = 1e-5
#: DP-SGD settings of the Opacus comparison, fixed in advance (not tuned on the data): a linear
#: model on the covariate rescaled to [-1, 1] by its public range, responses clipped to the
#: public bound, Poisson batches of expected size 20, per-example gradients clipped to norm 1.
OPACUS_EPOCHS = 30
OPACUS_BATCH = 20
OPACUS_LR = 0.5
OPACUS_CLIP = 1.0
OPACUS_SETTINGS = (f"{OPACUS_EPOCHS} epochs, expected batch {OPACUS_BATCH}, learning rate "
                   f"{OPACUS_LR}, gradient clip {OPACUS_CLIP}, PRV accountant")


def load_wine(path=None, *, n_rows=100, responses=WINE_RESPONSES, covariate=WINE_COVARIATE,
              scaling="reference"):
    r"""The Wine Quality (red) data of papers 000 / 003 §4.2, ready for regression.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        ``winequality-red.csv``; default in :func:`data_dir`.
    n_rows : int
        The first ``n_rows`` rows are analysed (the papers: 100).
    responses : sequence of str
        Response columns (the papers: fixed acidity, density, pH, residual sugar).
    covariate : str
        Covariate column (the quality score ``class``).
    scaling : {"reference", "none"}
        ``"reference"`` (default): each response is standardised with the mean and standard
        deviation of the *other* rows of the file (rows ``n_rows + 1`` onward), which play the
        part of public reference data, so the scaling itself reveals nothing about the
        analysed rows and the four responses get comparable units (raw density varies by
        1e-3, residual sugar by units). ``"none"``: raw units.

    Returns
    -------
    x : ndarray, shape (n_rows,)
    y : ndarray, shape (n_rows, len(responses))
    info : dict
        ``scaling``, ``center`` and ``scale`` (per response, NaN-free), ``responses``,
        ``covariate``.
    """
    path = Path(path) if path is not None else data_dir() / "winequality-red.csv"
    table = pd.read_csv(path)
    missing = [c for c in (*responses, covariate) if c not in table.columns]
    if missing:
        raise ValueError(f"{path} lacks the columns {missing}.")
    n_rows = check_int(n_rows, "n_rows", minimum=3)
    if n_rows >= len(table):
        raise ValueError(f"`n_rows` must be below the {len(table)} rows of the file.")
    rows = table.iloc[:n_rows]
    x = rows[covariate].to_numpy(dtype=float)
    y = rows[list(responses)].to_numpy(dtype=float)
    if scaling == "reference":
        ref = table.iloc[n_rows:][list(responses)].to_numpy(dtype=float)
        center, scale = ref.mean(axis=0), ref.std(axis=0, ddof=1)
    elif scaling == "none":
        center, scale = np.zeros(len(responses)), np.ones(len(responses))
    else:
        raise ValueError(f"`scaling` must be 'reference' or 'none', got {scaling!r}.")
    info = {"scaling": scaling, "center": center, "scale": scale,
            "responses": list(responses), "covariate": covariate, "n_rows": n_rows}
    return x, (y - center) / scale, info


def _line_rows(method, mode, replicate, intercept, slope, x, y, responses, epsilon, note=""):
    pred = intercept[None, :] + x[:, None] * slope[None, :]
    mse = np.mean((pred - y) ** 2, axis=0)
    return [(method, mode, replicate, r, float(intercept[j]), float(slope[j]), float(mse[j]),
             epsilon, note) for j, r in enumerate(responses)]


def _dpgr_release(x, y, epsilon, mode, bounds, seed):
    m = Euclidean(y.shape[1])
    kwargs = {} if mode == "paper" else bounds
    rel = _quiet_release(private_geodesic_regression, m, x, y, eps_p=epsilon / 2,
                         eps_v=epsilon / 2, mode=mode, rng=np.random.default_rng(seed),
                         chain_length=10, burn_in=0, **kwargs)
    return np.asarray(rel.values["intercept"])[0, 0], np.asarray(rel.values["coef"])[0, 0]


def _diffprivlib_fit(x, y, epsilon, covariate_range, response_bound, seed):
    from diffprivlib.models import LinearRegression

    d = y.shape[1]
    model = LinearRegression(
        epsilon=epsilon, bounds_X=([covariate_range[0]], [covariate_range[1]]),
        bounds_y=([-response_bound] * d, [response_bound] * d),
        random_state=int(np.random.default_rng(seed).integers(2**31 - 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(x[:, None], y)
    return np.asarray(model.intercept_, dtype=float), np.asarray(model.coef_, dtype=float)[:, 0]


def _opacus_fit(x, y, noise_multiplier, covariate_range, response_bound, seed):
    """One DP-SGD fit of the lines ``y = a + b x`` with Opacus.

    The model is linear in the covariate rescaled to [-1, 1] by its public range (so plain SGD
    is well conditioned); the fitted line is mapped back to the covariate's units.
    ``noise_multiplier`` is calibrated once by the caller to the target (ε, δ) for the epochs
    and the Poisson sampling rate with Opacus's PRV accountant (it is the same for every fit).
    """
    import torch
    from opacus import PrivacyEngine

    child = np.random.default_rng(seed)
    torch.manual_seed(int(child.integers(2**62)))
    lo, hi = (float(c) for c in covariate_range)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    xs = torch.tensor(((np.clip(x, lo, hi) - mid) / half)[:, None], dtype=torch.float64)
    ys = torch.tensor(np.clip(y, -response_bound, response_bound), dtype=torch.float64)
    model = torch.nn.Linear(1, y.shape[1]).double()
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=OPACUS_LR)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs, ys),
                                         batch_size=OPACUS_BATCH)
    engine = PrivacyEngine(accountant="prv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader,
            noise_multiplier=noise_multiplier, max_grad_norm=OPACUS_CLIP)
        for _ in range(OPACUS_EPOCHS):
            for xb, yb in loader:
                if xb.shape[0] == 0:
                    continue
                optimizer.zero_grad()
                loss = 0.5 * ((model(xb) - yb) ** 2).sum(dim=1).mean()
                loss.backward()
                optimizer.step()
    weight = model._module.weight.detach().numpy()[:, 0]
    bias = model._module.bias.detach().numpy()
    return bias - weight * mid / half, weight / half


def linear_regression_comparison(path=None, *, n_rows=100, responses=WINE_RESPONSES,
                                 covariate=WINE_COVARIATE, scaling="reference", epsilon=2.0,
                                 replicates=100, covariate_range=WINE_QUALITY_RANGE,
                                 response_bound=4.0, tau=3.0,
                                 methods=("ols", "dpgr_strict", "dpgr_paper", "diffprivlib",
                                          "opacus"),
                                 opacus_replicates=None, rng=None, n_jobs=None):
    r"""Private linear regression on the Wine Quality data (papers 000 / 003, table 1).

    The responses (default: fixed acidity, density, pH, residual sugar, standardised as in
    :func:`load_wine`) are regressed on the quality score. Methods:

    ``"ols"``
        Non-private least squares (one row; equals :class:`~dpcore.learning.GeodesicRegression`
        on ``Euclidean(4)``).
    ``"dpgr_strict"``
        DP geodesic regression on ``Euclidean(4)``
        (:func:`~dpcore.release.private_geodesic_regression`, ε_p = ε_v = ε/2, exact K-norm
        sampler) in strict mode with public bounds: quality range
        ``covariate_range``, residuals clipped to ``tau``, responses projected onto the ball of
        radius ``tau_m = response_bound * sqrt(d)`` about 0 (which holds the cube
        ``[-response_bound, response_bound]^d``).
    ``"dpgr_paper"``
        The same in paper mode (bounds from the data, σ = Δ/ε): the papers' setting, not private.
    ``"diffprivlib"``
        ``diffprivlib.models.LinearRegression(epsilon=ε)`` with ``bounds_X = covariate_range``
        and ``bounds_y = [-response_bound, response_bound]`` per response (all four responses in
        one fit, so ε covers them together, as for DPGR).
    ``"opacus"``
        DP-SGD with Opacus (``torch`` and ``opacus``, the optional extra ``make opacus``) at
        (ε, :data:`OPACUS_DELTA`): approximate DP, δ > 0, unlike the pure-ε methods; settings
        :data:`OPACUS_SETTINGS`, fixed in advance. Without torch, one row per response saying
        why it was skipped (NaN MSE).

    Parameters
    ----------
    path, n_rows, responses, covariate, scaling
        See :func:`load_wine`.
    epsilon : float
        Total budget of every private fit (the papers: 2).
    replicates : int
        Independent private fits per private method.
    covariate_range : (float, float)
        Public range of the covariate.
    response_bound : float
        Public bound on each (scaled) response.
    tau : float
        Public bound on residual norms (strict DPGR).
    methods : sequence of str
    opacus_replicates : int, optional
        Fits of the Opacus method (default ``replicates``; DP-SGD fits take seconds each).
    rng, n_jobs
        See :mod:`dpcore.experiments.studies`.

    Returns
    -------
    pandas.DataFrame
        One row per (method, replicate, response): ``method``, ``mode`` (``"non-private"``,
        ``"strict"``, ``"paper"``, ``"pure DP"``...), ``replicate``, ``response``,
        ``intercept``, ``slope`` (in the units of the covariate and the scaled responses),
        ``mse`` (mean squared residual of that response on the ``n_rows`` rows), ``epsilon``,
        ``note``. :func:`summarize_linear_regression` averages over responses and replicates.
    """
    x, y, info = load_wine(path, n_rows=n_rows, responses=responses, covariate=covariate,
                           scaling=scaling)
    responses = list(responses)
    d = y.shape[1]
    epsilon = check_positive(epsilon, "epsilon")
    replicates = check_int(replicates, "replicates")
    bounds = {"covariate_range": tuple(float(c) for c in covariate_range), "tau": float(tau),
              "tau_m": float(response_bound) * np.sqrt(d), "center": np.zeros(d)}
    rows = []
    children = dict(zip(methods, _root_seed(rng).spawn(len(methods)), strict=True))
    for method in methods:
        if method == "ols":
            design = np.column_stack([np.ones_like(x), x])
            coef = np.linalg.lstsq(design, y, rcond=None)[0]
            rows += _line_rows("ols", "non-private", 0, coef[0], coef[1], x, y, responses,
                               np.nan)
        elif method in ("dpgr_strict", "dpgr_paper"):
            mode = method.split("_")[1]
            seeds = children[method].spawn(replicates)
            fits = _parallel(_dpgr_release, [(x, y, epsilon, mode, bounds, s) for s in seeds],
                             n_jobs)
            for r, (a, b) in enumerate(fits):
                rows += _line_rows(method, mode, r, a, b, x, y, responses, epsilon)
        elif method == "diffprivlib":
            seeds = children[method].spawn(replicates)
            try:
                fits = _parallel(_diffprivlib_fit,
                                 [(x, y, epsilon, covariate_range, response_bound, s)
                                  for s in seeds], n_jobs)
            except ImportError as exc:
                rows += [("diffprivlib", "skipped", 0, r, np.nan, np.nan, np.nan, epsilon,
                          f"diffprivlib not importable: {exc}") for r in responses]
                continue
            for r, (a, b) in enumerate(fits):
                rows += _line_rows("diffprivlib", "pure DP", r, a, b, x, y, responses, epsilon)
        elif method == "opacus":
            try:
                import opacus  # noqa: F401
                import torch  # noqa: F401
            except ImportError as exc:
                note = (f"skipped: {exc.name or 'torch'} is not importable (install the "
                        "optional extra: make opacus)")
                rows += [("opacus", "skipped", 0, r, np.nan, np.nan, np.nan, epsilon, note)
                         for r in responses]
                continue
            from opacus.accountants.utils import get_noise_multiplier

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                noise = get_noise_multiplier(
                    target_epsilon=epsilon, target_delta=OPACUS_DELTA,
                    sample_rate=OPACUS_BATCH / len(x), epochs=OPACUS_EPOCHS, accountant="prv")
            seeds = children[method].spawn(opacus_replicates or replicates)
            fits = _parallel(_opacus_fit, [(x, y, noise, covariate_range, response_bound, s)
                                           for s in seeds], n_jobs)
            note = (f"DP-SGD, (ε, δ) = ({epsilon:g}, {OPACUS_DELTA:g}), noise multiplier "
                    f"{noise:.3g}; {OPACUS_SETTINGS}")
            for r, (a, b) in enumerate(fits):
                rows += _line_rows("opacus", "approximate DP", r, a, b, x, y, responses,
                                   epsilon, note)
        else:
            raise ValueError(f"Unknown method {method!r}.")
    df = pd.DataFrame(rows, columns=["method", "mode", "replicate", "response", "intercept",
                                     "slope", "mse", "epsilon", "note"])
    df.attrs.update({"scaling": scaling, "n_rows": n_rows,
                     "center": np.asarray(info["center"]).tolist(),
                     "scale": np.asarray(info["scale"]).tolist(),
                     "covariate_range": list(bounds["covariate_range"]),
                     "response_bound": response_bound, "tau": tau,
                     "tau_m": bounds["tau_m"]})
    return df


def summarize_linear_regression(df):
    """Mean, median and spread of the MSE per method of :func:`linear_regression_comparison`.

    The MSE of one fit is the mean over responses of each response's mean squared residual
    (scikit-learn's ``mean_squared_error`` with uniform averaging over outputs).

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`linear_regression_comparison`.

    Returns
    -------
    pandas.DataFrame
        One row per method: ``method``, ``mode``, ``fits``, ``mse_mean``, ``mse_median``,
        ``mse_q10``, ``mse_q90``, ``note``.
    """
    per_fit = df.groupby(["method", "mode", "replicate"], sort=False).agg(
        mse=("mse", "mean"), note=("note", "first")).reset_index()
    out = per_fit.groupby(["method", "mode"], sort=False).agg(
        fits=("mse", "count"), mse_mean=("mse", "mean"), mse_median=("mse", "median"),
        mse_q10=("mse", lambda s: s.quantile(0.1)), mse_q90=("mse", lambda s: s.quantile(0.9)),
        note=("note", "first")).reset_index()
    return out
