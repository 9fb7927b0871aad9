"""Figures in Euclidean space R^d: linear regression, one panel per response coordinate."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from plotly.subplots import make_subplots

from . import colors
from ._base import _add_traces, _array, _assign, _draw_styles, _finish

__all__ = ["euclidean_regression_figure"]


def euclidean_regression_figure(
    x,
    y,
    true_lines,
    private_lines=None,
    *,
    x_grid=None,
    generating_lines=None,
    coordinate_names=None,
    n_cols=None,
    x_title="covariate x",
    true_label="Non-private fit",
    private_label="Private fit",
    title="Linear regression per coordinate",
    subtitle=None,
    height=None,
):
    """Scatter of each response coordinate against ``x`` with fitted lines, one panel each.

    Parameters
    ----------
    x : array-like, shape (n,)
        Covariates.
    y : array-like, shape (n, d) or (n,)
        Responses.
    true_lines : array-like, shape (g, d) or (g,)
        Non-private fitted values at ``x_grid`` (black), e.g. ``model.predict(x_grid)``.
    private_lines : array-like, shape (r, g, d), or a sequence of (g, d) arrays, optional
        Private fitted values at ``x_grid``, coloured by draw. A single (g, d) array is one
        draw; with one response (d = 1) a (r, g) array is r draws.
    x_grid : array-like, shape (g,), optional
        Covariates of the fitted values; ``g`` evenly spaced points over the range of ``x``
        by default.
    generating_lines : array-like, shape (g, d), optional
        The data-generating line at ``x_grid`` (dark blue, dashed).
    coordinate_names : sequence of str, optional
        Response names (``y1 .. yd`` by default), used as panel and axis titles.
    n_cols : int, optional
        Panels per row; ``min(d, 3)`` by default.
    x_title, true_label, private_label, title, subtitle : str
    height : int, optional
        By default 340 px per row plus room for the title and legend.

    Returns
    -------
    plotly.graph_objects.Figure
        Per coordinate: data, non-private line, data-generating line (if given), one trace per
        private draw; legend entries appear once.
    """
    x = _array(x, "x", ndim=1)
    y = _array(y, "y")
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2 or y.shape[0] != x.shape[0]:
        raise ValueError(f"`y` must have shape ({x.shape[0]}, d), got {y.shape}.")
    d = y.shape[1]

    def as_lines(a, name):
        a = _array(a, name)
        return a[:, None] if a.ndim == 1 else a

    true = as_lines(true_lines, "true_lines")
    g = true.shape[0]
    if true.shape != (g, d):
        raise ValueError(f"`true_lines` must have shape (g, {d}), got {true.shape}.")
    grid = (np.linspace(x.min(), x.max(), g) if x_grid is None
            else _array(x_grid, "x_grid", ndim=1))
    if grid.shape != (g,):
        raise ValueError(f"`x_grid` must have shape ({g},), got {grid.shape}.")
    if private_lines is None:
        priv = []
    elif isinstance(private_lines, Sequence) and not isinstance(private_lines, np.ndarray):
        priv = [as_lines(p, f"private_lines[{i}]") for i, p in enumerate(private_lines)]
    else:
        arr = _array(private_lines, "private_lines")
        if arr.ndim == 3:  # (r, g, d)
            priv = list(arr)
        elif arr.ndim == 2 and d == 1:  # (r, g): several draws of a single response
            priv = [row[:, None] for row in arr]
        elif arr.ndim in (1, 2):  # one draw
            priv = [as_lines(arr, "private_lines")]
        else:
            raise ValueError(f"`private_lines` must have shape (r, g, d), got {arr.shape}.")
    for i, p in enumerate(priv):
        if p.shape != (g, d):
            raise ValueError(f"private draw {i} must have shape ({g}, {d}), got {p.shape}.")
    gen = None if generating_lines is None else as_lines(generating_lines, "generating_lines")
    if gen is not None and gen.shape != (g, d):
        raise ValueError(f"`generating_lines` must have shape ({g}, {d}), got {gen.shape}.")
    names = ([f"y{j + 1}" for j in range(d)] if coordinate_names is None
             else [str(s) for s in coordinate_names])
    if len(names) != d:
        raise ValueError(f"`coordinate_names` must have {d} entries, got {len(names)}.")
    cols = min(d, 3) if n_cols is None else max(1, int(n_cols))
    rows = int(np.ceil(d / cols))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names,
                        horizontal_spacing=0.1, vertical_spacing=0.16 if rows > 1 else 0.0)
    styles = _draw_styles(len(priv), private_label)
    traces, cells = [], []
    for j in range(d):
        row, col = j // cols + 1, j % cols + 1
        first = j == 0
        panel = [dict(
            type="scatter", x=x, y=y[:, j], mode="markers", name=f"Data (n = {x.shape[0]})",
            marker={"color": colors.DATA, "size": 6, "opacity": 0.75},
            legendgroup="data", showlegend=first,
        ), dict(
            type="scatter", x=grid, y=true[:, j], mode="lines", name=true_label,
            line={"color": colors.NONPRIVATE, "width": 4},
            legendgroup="true", showlegend=first,
        )]
        if gen is not None:
            panel.append(dict(
                type="scatter", x=grid, y=gen[:, j], mode="lines", name="Data-generating line",
                line={"color": colors.TRUTH, "width": 2, "dash": "dash"},
                legendgroup="gen", showlegend=first,
            ))
        for p, (name, color, show) in zip(priv, styles, strict=True):
            panel.append(dict(
                type="scatter", x=grid, y=p[:, j], mode="lines", name=name,
                line={"color": color, "width": 2},
                legendgroup=f"private-{name}", showlegend=show and first,
            ))
        traces += panel
        cells += [(row, col)] * len(panel)
        axis_id = "" if j == 0 else str(j + 1)
        _assign(fig.layout[f"xaxis{axis_id}"],
                {"title": {"text": x_title} if row == rows else None})
        _assign(fig.layout[f"yaxis{axis_id}"], {"title": {"text": names[j]}})
    _add_traces(fig, traces, cells)
    if height is None:
        height = 340 * rows + 200
    # Below the panels the legend leaves them the full width.
    return _finish(fig, title, height, subtitle=subtitle, margin_top=100, legend_below=True)
