"""Generic 2-D charts: lines with error bands, curves, heatmaps, histograms and ECDFs.

They draw summaries rather than points of a manifold: utility against the privacy budget
(:func:`band_figure`, with :func:`mean_and_se` to summarise replicates), µ against σ and
trade-off curves (:func:`curves_figure`), utility over a budget grid (:func:`heatmap_figure`),
sensitivity ratios (:func:`histogram_figure`) and distributions of errors (:func:`ecdf_figure`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from . import colors
from ._base import (
    FONT_SIZE,
    HEIGHT_2D,
    _add_traces,
    _array,
    _assign,
    _axis_type,
    _cell_edges,
    _finish,
    _named,
    _update_axes,
)

__all__ = [
    "band_figure",
    "curves_figure",
    "ecdf_figure",
    "heatmap_figure",
    "histogram_figure",
    "mean_and_se",
]


def mean_and_se(x, values):
    """Mean and standard error of ``values`` grouped by equal ``x`` (for :func:`band_figure`).

    Parameters
    ----------
    x : array-like, shape (n,)
        Group keys, e.g. the budget of each replicate.
    values : array-like, shape (n,)

    Returns
    -------
    (x_unique, mean, se) : tuple of ndarray
        Sorted unique keys, group means and standard errors ``std(ddof=1) / sqrt(count)``
        (zero for a group of one).
    """
    x = _array(x, "x", ndim=1)
    values = _array(values, "values", ndim=1)
    if x.shape != values.shape:
        raise ValueError(f"`x` and `values` must have the same shape, got {x.shape} and "
                         f"{values.shape}.")
    keys, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    mean = np.bincount(inverse, weights=values) / counts
    sq = np.bincount(inverse, weights=(values - mean[inverse]) ** 2)
    var = np.divide(sq, counts - 1, out=np.zeros_like(sq), where=counts > 1)
    return keys, mean, np.sqrt(var / counts)


def band_figure(
    series,
    *,
    reference=None,
    reference_label="Non-private level",
    x_title="privacy budget ε",
    y_title="log mean squared error",
    title="Utility against the privacy budget",
    subtitle="Mean ± 2 standard errors over replicates",
    log_x=False,
    log_y=False,
    height=HEIGHT_2D,
):
    """Line chart with error bands (mean ± 2 SE) and dashed non-private levels.

    Parameters
    ----------
    series : tuple (x, mean, se) of arrays, or mapping of str to such tuples
        One line per entry (e.g. per sample size n); see :func:`mean_and_se`.
    reference : float or mapping of str to float, optional
        Non-private level: one dashed black line, or one dashed line per series (same keys as
        ``series``, drawn in the series colour).
    reference_label : str
        Legend name of the reference line(s).
    x_title, y_title, title, subtitle : str
    log_x, log_y : bool
        Logarithmic axes.
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
        Per series a filled band (no legend entry) and a line; then the reference line(s).
    """
    named = _named(series, "series", "mean")
    palette = colors.qualitative_colors(len(named))
    traces = []
    x_lo, x_hi = np.inf, -np.inf
    for (label, triple), color in zip(named, palette, strict=True):
        if len(triple) != 3:
            raise ValueError(f"series {label!r} must be a tuple (x, mean, se).")
        x, mean, se = (_array(a, f"series[{label!r}]", ndim=1) for a in triple)
        if not (x.shape == mean.shape == se.shape):
            raise ValueError(f"series {label!r}: x, mean and se must have the same length.")
        order = np.argsort(x)
        x, mean, se = x[order], mean[order], se[order]
        x_lo, x_hi = min(x_lo, x.min()), max(x_hi, x.max())
        lo, hi = mean - 2 * se, mean + 2 * se
        traces.append(dict(
            type="scatter", x=np.concatenate([x, x[::-1]]), y=np.concatenate([hi, lo[::-1]]),
            mode="lines", fill="toself", fillcolor=colors.with_alpha(color, 0.18),
            line={"width": 0}, hoverinfo="skip", showlegend=False, legendgroup=label,
            name=f"{label} ± 2 SE",
        ))
        traces.append(dict(
            type="scatter", x=x, y=mean, mode="lines+markers", name=label, legendgroup=label,
            line={"color": color, "width": 2.5}, marker={"size": 6},
            customdata=np.stack([se], axis=-1),
            hovertemplate=f"{label}<br>%{{x:.3g}}: %{{y:.4g}} ± 2×%{{customdata[0]:.2g}}"
                          "<extra></extra>",
        ))
    if reference is not None:
        if isinstance(reference, Mapping):
            colour_of = dict(zip([lab for lab, _ in named], palette, strict=True))
            refs = [(f"{reference_label} ({k})", float(v), colour_of.get(str(k), colors.TRUTH))
                    for k, v in reference.items()]
        else:
            refs = [(reference_label, float(reference), colors.NONPRIVATE)]
        grouped = isinstance(reference, Mapping)
        for (name, level, color), key in zip(refs, (reference if grouped else [None]),
                                              strict=True):
            # One legend entry per series is enough: each dashed line joins its series' legend
            # group (clicking "n = 20" hides both) and one grey entry explains the dashes.
            traces.append(dict(
                type="scatter", x=[x_lo, x_hi], y=[level, level], mode="lines", name=name,
                line={"color": color, "width": 2, "dash": "dash"},
                legendgroup=str(key) if grouped else None, showlegend=not grouped,
                hovertemplate=f"{name}: %{{y:.4g}}<extra></extra>",
            ))
        if grouped:
            traces.append(dict(
                type="scatter", x=[None], y=[None], mode="lines",
                name=f"{reference_label} (dashed)",
                line={"color": colors.NONPRIVATE, "width": 2, "dash": "dash"},
                hoverinfo="skip",
            ))
    fig = _add_traces(go.Figure(), traces)
    xs = [tr.x for tr in fig.data if tr.x is not None and tr.x[0] is not None]
    ys = [tr.y for tr in fig.data if tr.y is not None and tr.y[0] is not None]
    _update_axes(fig, x={"title": {"text": x_title}, **_axis_type(log_x, xs)},
                 y={"title": {"text": y_title}, **_axis_type(log_y, ys)})
    return _finish(fig, title, height, subtitle=subtitle)


def heatmap_figure(
    z,
    x_values,
    y_values,
    *,
    best=None,
    mark="min",
    total=None,
    x_title="ε_v (shooting-vector budget)",
    y_title="ε_p (footpoint budget)",
    colorbar_title="log mean MSE",
    title="Utility over the budget grid",
    subtitle=None,
    log_axes=False,
    height=520,
):
    """Heatmap over a grid (e.g. of ``(eps_v, eps_p)``) with the best cell marked.

    Parameters
    ----------
    z : array-like, shape (len(y_values), len(x_values))
        Cell values; ``z[i, j]`` belongs to ``(x_values[j], y_values[i])``. NaN cells are left
        blank.
    x_values, y_values : array-like
        Grid coordinates, strictly increasing (positive with ``log_axes``).
    best : tuple of int (i, j), optional
        Cell to mark; by default the arg-min (``mark="min"``) or arg-max (``mark="max"``) of
        the finite values. ``mark=None`` and no ``best`` marks nothing.
    mark : {"min", "max", None}
    total : float, optional
        Draw the line ``x + y = total`` (e.g. the splits of a fixed total budget).
    x_title, y_title, colorbar_title, title, subtitle : str
    log_axes : bool
        Logarithmic axes (for log-spaced budget grids).
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
        A heatmap trace, the best-cell marker (if any), and for ``total`` two line traces
        (a black line under white dashes, so it shows on every colour).
    """
    z = _array(z, "z", ndim=2)
    xv = _array(x_values, "x_values", ndim=1)
    yv = _array(y_values, "y_values", ndim=1)
    if z.shape != (yv.size, xv.size):
        raise ValueError(f"`z` must have shape ({yv.size}, {xv.size}), got {z.shape}.")
    if mark not in ("min", "max", None):
        raise ValueError(f"`mark` must be 'min', 'max' or None, got {mark!r}.")
    for v, name in ((xv, "x_values"), (yv, "y_values")):
        if v.size == 0 or np.any(np.diff(v) <= 0):
            raise ValueError(f"`{name}` must be non-empty and strictly increasing.")
    if log_axes and (np.any(xv <= 0) or np.any(yv <= 0)):
        raise ValueError("`log_axes` needs positive `x_values` and `y_values`.")
    x_name, y_name = x_title.split(" (")[0], y_title.split(" (")[0]
    # Cell edges halfway between grid values (geometrically on log axes, where plotly's own
    # arithmetic midpoints would give cells of uneven width).
    x_edges, y_edges = _cell_edges(xv, log_axes), _cell_edges(yv, log_axes)
    text = [[f"{x_name} = {xv[j]:.3g}<br>{y_name} = {yv[i]:.3g}<br>"
             f"{colorbar_title} = {z[i, j]:.4g}" for j in range(xv.size)]
            for i in range(yv.size)]
    fig = go.Figure(go.Heatmap(
        x=x_edges, y=y_edges, z=z, colorscale=colors.SEQUENTIAL,
        colorbar={"title": {"text": colorbar_title, "side": "right"}},
        text=text, hovertemplate="%{text}<extra></extra>", name=colorbar_title,
    ))
    if best is None and mark is not None and np.any(np.isfinite(z)):
        filled = np.where(np.isfinite(z), z, np.inf if mark == "min" else -np.inf)
        flat = np.argmin(filled) if mark == "min" else np.argmax(filled)
        best = np.unravel_index(flat, z.shape)
    if best is not None:
        i, j = (int(b) for b in best)
        fig.add_trace(go.Scatter(
            x=[xv[j]], y=[yv[i]], mode="markers",
            marker={"symbol": "star", "size": 22, "color": colors.HIGHLIGHT,
                    "line": {"color": "white", "width": 2}},
            name=f"Best cell: {x_name} = {xv[j]:.3g}, {y_name} = {yv[i]:.3g} "
                 f"({colorbar_title} {z[i, j]:.3g})",
            hovertemplate="best cell<extra></extra>",
        ))
    if total is not None:
        total = float(total)
        # The part of x + y = total inside the grid's cells.
        lo = max(x_edges[0], total - y_edges[-1])
        hi = min(x_edges[-1], total - y_edges[0])
        if hi > lo:
            xs = np.geomspace(lo, hi, 200) if log_axes else np.linspace(lo, hi, 200)
            name = f"{x_name} + {y_name} = {total:g}"
            # White dashes over a black line: visible on every colour of the scale, and the
            # legend shows the black line.
            fig.add_trace(go.Scatter(
                x=xs, y=total - xs, mode="lines", name=name, legendgroup="total",
                line={"color": colors.BLACK, "width": 3}, hoverinfo="skip",
            ))
            fig.add_trace(go.Scatter(
                x=xs, y=total - xs, mode="lines", name=name, legendgroup="total",
                line={"color": "white", "width": 2, "dash": "dash"}, hoverinfo="skip",
                showlegend=False,
            ))
    def axis_range(edges):
        return np.log10(edges[[0, -1]]).tolist() if log_axes else edges[[0, -1]].tolist()

    _update_axes(fig, x={"title": {"text": x_title}, **_axis_type(log_axes, [x_edges]),
                         "showgrid": False, "range": axis_range(x_edges)},
                 y={"title": {"text": y_title}, **_axis_type(log_axes, [y_edges]),
                    "showgrid": False, "range": axis_range(y_edges)})
    return _finish(fig, title, height, subtitle=subtitle, legend_below=True)


def histogram_figure(
    samples,
    *,
    reference=1.0,
    reference_label="ratio = 1",
    x_title="theoretical bound / empirical sensitivity",
    y_title="count",
    nbins=30,
    sample_label="ratio",
    title="Theoretical vs empirical sensitivity",
    subtitle=None,
    height=HEIGHT_2D,
):
    """Histogram(s) with a dashed vertical reference line.

    Parameters
    ----------
    samples : array-like, shape (n,), or mapping of str to such arrays
        A mapping gives overlaid, translucent histograms (one per key) on shared bins.
    reference : float, optional
        Position of the vertical line (``None`` for none). For sensitivity ratios the line at
        1 separates valid bounds (right) from violated ones (left).
    reference_label : str
    x_title, y_title, title, subtitle : str
    nbins : int
        Approximate number of bins over the pooled range.
    sample_label : str
        Legend name when ``samples`` is a single array.
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Histogram`` per sample; the reference is a layout shape with an annotation.
    """
    named = _named(samples, "samples", sample_label)
    arrays = [(label, _array(a, f"samples[{label!r}]").ravel()) for label, a in named]
    pooled = np.concatenate([a[np.isfinite(a)] for _, a in arrays])
    if pooled.size == 0:
        raise ValueError("`samples` has no finite values.")
    lo, hi = float(pooled.min()), float(pooled.max())
    if reference is not None:
        lo, hi = min(lo, float(reference)), max(hi, float(reference))
    width = (hi - lo) / max(int(nbins), 1) or 1.0
    # Put a bin edge exactly on the reference, so bars never straddle it.
    start = lo if reference is None else float(reference) - np.ceil(
        (float(reference) - lo) / width) * width
    fig = go.Figure()
    palette = colors.qualitative_colors(len(arrays))
    for (label, a), color in zip(arrays, palette, strict=True):
        fig.add_trace(go.Histogram(
            x=a, name=f"{label} (n = {a.size})", marker={"color": color,
                                                         "line": {"color": "white",
                                                                  "width": 0.5}},
            opacity=0.65 if len(arrays) > 1 else 0.9,
            xbins={"start": start, "end": hi + width, "size": width},
        ))
    if reference is not None:
        fig.add_vline(x=float(reference), line={"color": colors.NONPRIVATE, "width": 2,
                                                "dash": "dash"},
                      annotation={"text": reference_label, "font": {"size": FONT_SIZE - 1}},
                      annotation_position="top right")
    _assign(fig.layout, {"barmode": "overlay", "bargap": 0.02})
    _update_axes(fig, x={"title": {"text": x_title}}, y={"title": {"text": y_title}})
    return _finish(fig, title, height, subtitle=subtitle)


def ecdf_figure(
    samples,
    *,
    x_title="value",
    title="Empirical distribution",
    subtitle=None,
    log_x=False,
    height=HEIGHT_2D,
):
    """Empirical CDFs of several samples, with each median marked (easier to compare than
    overlaid histograms: a curve further left and higher means smaller values).

    Parameters
    ----------
    samples : mapping of str to array-like
        One sample per legend entry.
    x_title, title, subtitle : str
    log_x : bool
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
        Per sample a step line (its CDF) and a marker at its median.
    """
    named = _named(samples, "samples", "sample")
    traces = []
    palette = colors.qualitative_colors(len(named))
    for (label, a), color in zip(named, palette, strict=True):
        a = np.sort(_array(a, f"samples[{label!r}]").ravel())
        a = a[np.isfinite(a)]
        if a.size == 0:
            raise ValueError(f"`samples[{label!r}]` has no finite values.")
        p = np.arange(1, a.size + 1) / a.size
        traces.append(dict(
            type="scatter", x=a, y=p, mode="lines",
            line={"color": color, "width": 2.5, "shape": "hv"},
            name=f"{label} (n = {a.size})", legendgroup=label,
            hovertemplate=f"{label}<br>%{{y:.0%}} of draws ≤ %{{x:.3g}}<extra></extra>",
        ))
        median = float(np.median(a))
        traces.append(dict(
            type="scatter", x=[median], y=[0.5], mode="markers", legendgroup=label,
            showlegend=False,
            marker={"color": color, "size": 10, "symbol": "diamond",
                    "line": {"color": "white", "width": 1}},
            name=f"{label} median", hovertemplate=f"{label} median %{{x:.3g}}<extra></extra>",
        ))
    fig = _add_traces(go.Figure(), traces)
    fig.add_hline(y=0.5, line={"color": colors.NONPRIVATE, "width": 1, "dash": "dot"})
    _update_axes(fig, x={"title": {"text": x_title}, **_axis_type(log_x, [t.x for t in fig.data])},
                 y={"title": {"text": "share of draws ≤ x"}, "range": [0, 1.02],
                    "tickformat": ".0%"})
    return _finish(fig, title, height, subtitle=subtitle)


def curves_figure(
    curves,
    *,
    styles=None,
    x_title="x",
    y_title="y",
    title="Curves",
    subtitle=None,
    log_x=False,
    log_y=False,
    square=False,
    x_range=None,
    y_range=None,
    height=HEIGHT_2D,
    legend_below=False,
):
    """Generic line plot: µ against σ with error bars, trade-off curves, δ(ε) profiles.

    Parameters
    ----------
    curves : mapping of str to tuple (x, y) or (x, y, err)
        One trace per entry; ``err`` (same length as ``y``) is drawn as symmetric error bars
        and switches the trace to lines with markers.
    styles : mapping of str to dict, optional
        Per-label overrides with keys ``color``, ``dash`` (``"solid"``, ``"dash"``, ``"dot"``),
        ``width``, ``mode`` (``"lines"``, ``"markers"``, ``"lines+markers"``).
    x_title, y_title, title, subtitle : str
    log_x, log_y : bool
    square : bool
        Equal scales on both axes (for trade-off curves on [0, 1]^2).
    x_range, y_range : tuple of float, optional
        Axis ranges (in log10 units on a log axis, as plotly expects).
    height : int
    legend_below : bool
        The legend under the plot (the plot keeps the figure's width) instead of beside it.

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Scatter`` per curve.
    """
    if not isinstance(curves, Mapping) or not curves:
        raise TypeError("`curves` must be a non-empty mapping of label to (x, y[, err]).")
    styles = {} if styles is None else dict(styles)
    palette = colors.qualitative_colors(len(curves))
    traces = []
    for (label, spec), color in zip(curves.items(), palette, strict=True):
        if len(spec) not in (2, 3):
            raise ValueError(f"curve {label!r} must be (x, y) or (x, y, err).")
        x = _array(spec[0], f"curves[{label!r}] x", ndim=1)
        y = _array(spec[1], f"curves[{label!r}] y", ndim=1)
        if x.shape != y.shape:
            raise ValueError(f"curve {label!r}: x and y must have the same length.")
        style = styles.get(label, {})
        err = None
        if len(spec) == 3 and spec[2] is not None:
            err = _array(spec[2], f"curves[{label!r}] err", ndim=1)
            if err.shape != y.shape:
                raise ValueError(f"curve {label!r}: err must have the same length as y.")
        c = style.get("color", color)
        traces.append(dict(
            type="scatter", x=x, y=y, name=str(label),
            mode=style.get("mode", "lines+markers" if err is not None else "lines"),
            line={"color": c, "width": style.get("width", 2.5),
                  "dash": style.get("dash", "solid")},
            marker={"size": 7, "color": c},
            error_y=(None if err is None else
                     {"type": "data", "array": err, "visible": True, "thickness": 1.5,
                      "width": 4, "color": c}),
        ))
    fig = _add_traces(go.Figure(), traces)
    xs = [tr.x for tr in fig.data]
    ys = [tr.y for tr in fig.data]
    _update_axes(fig, x={"title": {"text": x_title}, **_axis_type(log_x, xs, x_range),
                         **({"range": list(x_range)} if x_range is not None else {})},
                 y={"title": {"text": y_title}, **_axis_type(log_y, ys, y_range),
                    **({"range": list(y_range)} if y_range is not None else {})})
    if square:
        _update_axes(fig, y={"scaleanchor": "x", "scaleratio": 1, "constrain": "domain"})
        _update_axes(fig, x={"constrain": "domain"})
    return _finish(fig, title, height, subtitle=subtitle, legend_below=legend_below)
