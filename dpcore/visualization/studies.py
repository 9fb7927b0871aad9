"""Figures of the paper-reproduction studies that no generic chart covers.

They take the tidy DataFrames of :mod:`dpcore.experiments.studies` and are drawn in the
reproduction report (:mod:`dpcore.experiments.report`): box plots of sensitivity ratios
(paper 002, figs. 9-10) and the fitted lines of the Wine Quality comparison (papers 000 / 003,
table 1).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import colors
from ._base import _assign, _set_template, _update_axes

__all__ = ["sensitivity_ratios_figure", "wine_fits_figure"]


def sensitivity_ratios_figure(df, title):
    """Box plots of theoretical / empirical sensitivity, one panel per parameter.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`dpcore.experiments.sensitivity_ratios`: columns ``n``, ``parameter``
        (``"footpoint"`` or ``"shooting_vector"``) and ``ratio``.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels (footpoint ``r_p``, shooting vector ``r_v``) with one box per sample size,
        every ratio drawn as a point, on a log axis with a dashed line at 1 (a ratio below 1
        would be a violated bound).
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=("r_p = Δ_p^thy / Δ_p^exp",
                                                        "r_v = Δ_v^thy / Δ_v^exp"))
    palette = colors.qualitative_colors(df["n"].nunique())
    for col, param in enumerate(("footpoint", "shooting_vector"), start=1):
        for (n, part), color in zip(df[df.parameter == param].groupby("n"), palette,
                                    strict=True):
            fig.add_trace(go.Box(y=part["ratio"], name=f"n = {n}", marker_color=color,
                                 boxpoints="all", jitter=0.3, showlegend=col == 1,
                                 legendgroup=str(n)), row=1, col=col)
    fig.add_hline(y=1.0, line={"dash": "dash", "color": colors.NONPRIVATE})
    _update_axes(fig, y={"type": "log", "title": {"text": "ratio (log scale)"}})
    _set_template(fig, "plotly_white")
    _assign(fig.layout, {"title": title, "height": 460})
    return fig


def wine_fits_figure(df, x, y, responses):
    """Wine Quality data with the fitted line of each method, one panel per response.

    For every private method the fit (replicate) whose MSE is closest to the method's median MSE
    is drawn, so the lines show a typical release rather than a lucky or an unlucky one.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`dpcore.experiments.linear_regression_comparison`: one row per
        (method, replicate, response) with ``intercept``, ``slope`` and ``mse``. Methods drawn:
        ``"ols"``, ``"dpgr_strict"``, ``"dpgr_paper"``, ``"diffprivlib"`` (those present).
    x : ndarray, shape (n,)
        Covariate (the quality score), as returned by :func:`dpcore.experiments.studies.load_wine`.
    y : ndarray, shape (n, 4)
        Scaled responses, one column per entry of ``responses``.
    responses : sequence of str
        Four response names, used as panel titles and to select rows of ``df``.

    Returns
    -------
    plotly.graph_objects.Figure
        A 2 x 2 grid; per panel the jittered data and one line per method.
    """
    fig = make_subplots(rows=2, cols=2, subplot_titles=responses)
    grid = np.linspace(x.min(), x.max(), 2)
    per_fit = df.groupby(["method", "replicate"])["mse"].mean()
    picks = {}
    for method in ("ols", "dpgr_strict", "dpgr_paper", "diffprivlib"):
        if method in per_fit.index.get_level_values(0):
            s = per_fit.loc[method]
            picks[method] = int((s - s.median()).abs().idxmin())  # the median-MSE fit
    names = {"ols": "non-private OLS", "dpgr_strict": "DPGR strict (median fit)",
             "dpgr_paper": "DPGR paper mode (median fit)",
             "diffprivlib": "diffprivlib (median fit)"}
    palette = {"ols": colors.NONPRIVATE, "dpgr_strict": colors.VERMILLION,
               "dpgr_paper": colors.ORANGE, "diffprivlib": colors.GREEN}
    for j, resp in enumerate(responses):
        r, cidx = divmod(j, 2)
        jitter = x + np.random.default_rng(j).uniform(-0.12, 0.12, x.size)
        fig.add_trace(go.Scatter(x=jitter, y=y[:, j], mode="markers", name="data (jittered)",
                                 marker={"color": colors.DATA, "size": 5},
                                 showlegend=j == 0), row=r + 1, col=cidx + 1)
        for method, rep in picks.items():
            row = df[(df.method == method) & (df.replicate == rep) & (df.response == resp)]
            a, b = float(row["intercept"].iloc[0]), float(row["slope"].iloc[0])
            fig.add_trace(go.Scatter(x=grid, y=a + b * grid, mode="lines", name=names[method],
                                     line={"color": palette[method], "width": 2.5},
                                     showlegend=j == 0, legendgroup=method),
                          row=r + 1, col=cidx + 1)
    lo, hi = float(np.min(y)), float(np.max(y))
    _update_axes(fig, y={"range": [lo - 0.5, hi + 0.5]})
    _update_axes(fig, x={"title": {"text": "quality score"}})
    _set_template(fig, "plotly_white")
    _assign(fig.layout, {"title": "Wine Quality (first 100 red wines): fitted lines, "
                                  "standardised responses", "height": 720})
    return fig
