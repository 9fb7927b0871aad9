"""Figures on Kendall's planar shape space: predicted landmark shapes, one panel per covariate."""

from __future__ import annotations

import numpy as np
from plotly.subplots import make_subplots

from . import colors
from ._base import _add_traces, _array, _assign, _draw_styles, _finish, _stack

__all__ = ["kendall_draws_figure", "kendall_shapes_figure"]


def _panel_axes(fig, j, centre, half, *, x_title=None, y_title=None):
    """Same ranges and unit aspect in panel ``j`` (0-based, row-major) of a subplot grid."""
    axis_id = "" if j == 0 else str(j + 1)
    # constrain="domain" shrinks the panel to the square instead of widening the range.
    _assign(fig.layout[f"xaxis{axis_id}"], {
        "range": [centre[0] - half, centre[0] + half], "showticklabels": False,
        "showgrid": False, "zeroline": False, "constrain": "domain",
        "title": {"text": x_title} if x_title else None})
    _assign(fig.layout[f"yaxis{axis_id}"], {
        "range": [centre[1] - half, centre[1] + half], "showticklabels": False,
        "showgrid": False, "zeroline": False, "scaleanchor": f"x{axis_id}", "scaleratio": 1,
        "constrain": "domain", "constraintoward": "top",
        "title": {"text": y_title} if y_title else None})


def _checked_panels(x_values, true_landmarks, private_landmarks):
    """The covariates ``(m,)``, the non-private shapes ``(m, k, 2)`` and the private draws
    (a list of ``(m, k, 2)`` arrays), with their shapes checked."""
    x = _array(x_values, "x_values", ndim=1)
    m = x.shape[0]
    if m == 0:
        raise ValueError("`x_values` must not be empty.")
    true = _array(true_landmarks, "true_landmarks", trailing=(2,), ndim=3)
    if true.shape[0] != m:
        raise ValueError(f"`true_landmarks` must have shape ({m}, k, 2), got {true.shape}.")
    priv = _stack(private_landmarks, "private_landmarks", 3)
    for i, p in enumerate(priv):
        if p.shape != true.shape:
            raise ValueError(f"private draw {i} must have shape {true.shape}, got {p.shape}.")
    return x, true, priv


def kendall_draws_figure(
    x_values,
    true_landmarks,
    private_landmarks,
    *,
    max_draws=3,
    closed=True,
    x_name="x",
    true_label="Non-private prediction",
    private_label="Private draw",
    title="Predicted shapes: each private draw against the non-private fit",
    subtitle="One row per private draw, one column per covariate value; landmarks aligned "
             "to a common reference",
    height=None,
):
    """Small multiples of private shapes: one row per draw, one column per covariate value,
    each panel the non-private shape (black) and that one draw's shape (its colour).

    Drawing every draw in every panel tangles the outlines as soon as the draws differ; one
    draw per row keeps each comparison readable.

    Parameters
    ----------
    x_values : array-like, shape (m,)
    true_landmarks : array-like, shape (m, k, 2)
        Non-private predicted shapes, aligned as for :func:`kendall_shapes_figure`.
    private_landmarks : array-like, shape (r, m, k, 2) or (m, k, 2)
        Private predicted shapes; the first ``max_draws`` are drawn.
    max_draws : int
        Rows drawn (at most).
    closed, x_name, true_label, private_label, title, subtitle, height
        As for :func:`kendall_shapes_figure`; ``height`` defaults to square panels in a plot
        about 800 px wide plus room for the titles and the legend.

    Returns
    -------
    plotly.graph_objects.Figure
        Two traces per panel (non-private, then the row's draw); legend entries appear once.
    """
    x, true, priv = _checked_panels(x_values, true_landmarks, private_landmarks)
    m = x.shape[0]
    if not priv:
        raise ValueError("`private_landmarks` must hold at least one draw.")
    shown = priv[:max(1, int(max_draws))]
    rows, cols = len(shown), m
    fig = make_subplots(rows=rows, cols=cols,
                        subplot_titles=[f"{x_name} = {v:.3g}" if r == 0 else ""
                                        for r in range(rows) for v in x],
                        horizontal_spacing=0.03, vertical_spacing=0.04 if rows > 1 else 0.0)
    everything = np.concatenate([true[None], *(p[None] for p in shown)])
    centre = everything.reshape(-1, 2).mean(axis=0)
    half = 1.1 * float(np.max(np.abs(everything.reshape(-1, 2) - centre)))
    k = true.shape[1]
    sizes = np.full(k + int(closed), 5.0)
    sizes[0] = 10.0
    if closed:
        sizes[-1] = 10.0

    def outline(lm):
        return np.concatenate([lm, lm[:1]]) if closed else lm

    # Colours of the draw palette, spread over it so that the rows drawn differ; one legend
    # entry per drawn row.
    palette = _draw_styles(len(priv), private_label)
    picks = np.round(np.linspace(0, len(priv) - 1, rows)).astype(int) if rows > 1 else [0]
    styles = [(f"{private_label} {r + 1}", palette[i][1]) for r, i in enumerate(picks)]
    traces, cells = [], []
    for r, (p, (name, color)) in enumerate(zip(shown, styles, strict=True)):
        for j in range(m):
            for arr, nm, colr, width, group, show in (
                    (true, true_label, colors.NONPRIVATE, 3, "true", r == 0 and j == 0),
                    (p, name, color, 2.5, f"private-{r}", j == 0)):
                o = outline(arr[j])
                traces.append(dict(
                    type="scatter", x=o[:, 0], y=o[:, 1], mode="lines+markers", name=nm,
                    line={"color": colr, "width": width}, marker={"color": colr, "size": sizes},
                    legendgroup=group, showlegend=show,
                    customdata=np.arange(1, o.shape[0] + 1),
                    hovertemplate=f"{nm}<br>landmark %{{customdata}}<extra></extra>",
                ))
                cells.append((r + 1, j + 1))
            _panel_axes(fig, r * cols + j, centre, half,
                        y_title=f"draw {r + 1}" if j == 0 else None)
    _add_traces(fig, traces, cells)
    if len(priv) > rows:
        subtitle = f"{subtitle}; the first {rows} of {len(priv)} draws"
    if height is None:
        # Square panels in a plot about 800 px wide.
        height = int(rows * min(240, 0.75 * 800 / cols + 40) + 220)
    return _finish(fig, title, height, subtitle=subtitle, margin_top=110, legend_below=True)


def kendall_shapes_figure(
    x_values,
    true_landmarks,
    private_landmarks=None,
    *,
    generating_landmarks=None,
    closed=True,
    n_cols=None,
    x_name="x",
    true_label="Non-private prediction",
    private_label="Private prediction",
    title="Predicted shapes at chosen covariate values",
    subtitle="Landmarks aligned to a common reference (rotation, scale and position removed)",
    height=None,
):
    """Predicted landmark shapes, one panel per covariate value, non-private vs private.

    Pass landmark coordinates already aligned to one reference, e.g.
    ``KendallShape(k).to_landmarks(predictions, reference=template)``, so that the panels are
    comparable. The first landmark is drawn larger to show the correspondence of landmarks.

    Parameters
    ----------
    x_values : array-like, shape (m,)
        Covariate values, one panel each.
    true_landmarks : array-like, shape (m, k, 2)
        Non-private predicted shapes (black).
    private_landmarks : array-like, shape (r, m, k, 2) or (m, k, 2), optional
        Private predicted shapes, coloured by draw.
    generating_landmarks : array-like, shape (m, k, 2), optional
        Data-generating shapes (dark blue, dashed).
    closed : bool
        Join the last landmark to the first (closed outline).
    n_cols : int, optional
        Panels per row; ``min(m, 4)`` by default.
    x_name, true_label, private_label, title, subtitle : str
        ``x_name`` names the covariate in the panel titles (``"x = 0.5"``).
    height : int, optional
        By default 340 px per row plus room for the title and legend.

    Returns
    -------
    plotly.graph_objects.Figure
        Per panel: the non-private shape, the data-generating shape (if given), one trace per
        private draw; legend entries appear once.
    """
    x, true, priv = _checked_panels(x_values, true_landmarks, private_landmarks)
    m, k = x.shape[0], true.shape[1]
    gen = None
    if generating_landmarks is not None:
        gen = _array(generating_landmarks, "generating_landmarks", ndim=3)
        if gen.shape != true.shape:
            raise ValueError(f"`generating_landmarks` must have shape {true.shape}, "
                             f"got {gen.shape}.")
    cols = min(m, 4) if n_cols is None else max(1, int(n_cols))
    rows = int(np.ceil(m / cols))
    fig = make_subplots(
        rows=rows, cols=cols,
        subplot_titles=[f"{x_name} = {v:.3g}" for v in x],
        horizontal_spacing=0.04, vertical_spacing=0.12 if rows > 1 else 0.0,
    )
    everything = np.concatenate([true[None], *(p[None] for p in priv)]
                                + ([gen[None]] if gen is not None else []))
    centre = everything.reshape(-1, 2).mean(axis=0)
    half = 1.1 * float(np.max(np.abs(everything.reshape(-1, 2) - centre)))
    sizes = np.full(k + int(closed), 6.0)
    sizes[0] = 11.0
    if closed:
        sizes[-1] = 11.0

    def outline(lm):
        return np.concatenate([lm, lm[:1]]) if closed else lm

    series = [(true, true_label, colors.NONPRIVATE, 4, None, True, "true")]
    if gen is not None:
        series.append((gen, "Data-generating shape", colors.TRUTH, 2, "dash", True, "gen"))
    for p, (name, color, show) in zip(priv, _draw_styles(len(priv), private_label),
                                      strict=True):
        series.append((p, name, color, 2.0, None, show, f"private-{name}"))
    traces, cells = [], []
    for j in range(m):
        row, col = j // cols + 1, j % cols + 1
        for arr, name, color, width, dash, show, group in series:
            o = outline(arr[j])
            traces.append(dict(
                type="scatter", x=o[:, 0], y=o[:, 1], mode="lines+markers", name=name,
                line={"color": color, "width": width, **({"dash": dash} if dash else {})},
                marker={"color": color, "size": sizes},
                legendgroup=group, showlegend=show and j == 0,
                customdata=np.arange(1, o.shape[0] + 1),
                hovertemplate=f"{name}<br>landmark %{{customdata}}<extra></extra>",
            ))
            cells.append((row, col))
        # Same ranges and unit aspect in every panel; constrain="domain" shrinks the panel to
        # the square instead of widening the range, so axis titles stay next to the shape.
        _panel_axes(fig, j, centre, half,
                    x_title="horizontal (preshape units)" if row == rows and col == 1 else None,
                    y_title="vertical" if col == 1 else None)
    _add_traces(fig, traces, cells)
    if height is None:
        height = 340 * rows + 200
    # Below the panels the legend leaves them the full width.
    return _finish(fig, title, height, subtitle=subtitle, margin_top=110, legend_below=True)
