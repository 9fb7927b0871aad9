"""Figures of SPD(2) matrices: ellipses along the covariate and the cone of ``(a, b, c)``.

A symmetric 2x2 matrix ``[[a, b], [b, c]]`` is drawn either as its one-standard-deviation
ellipse (:func:`ellipse_xy`) or as the point ``(a, b, c)`` (:func:`spd_abc`) inside the cone
``ac > b^2``, ``a > 0`` of positive definite matrices.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from . import colors
from ._base import (
    HEIGHT_3D,
    _array,
    _assign,
    _curve_trace3d,
    _draw_styles,
    _finish,
    _polyline,
    _stack,
    _update_axes,
)

__all__ = ["ellipse_xy", "spd_abc", "spd_cone_figure", "spd_ellipses_figure"]


def ellipse_xy(S, center=(0.0, 0.0), n=100):
    """Outline of the ellipse ``{z : (z - center)^T S^{-1} (z - center) = 1}``.

    For a covariance matrix ``S`` this is the one-standard-deviation ellipse. The outline is
    ``center + L u`` with ``L L^T = S`` (Cholesky) and ``u`` on the unit circle.

    Parameters
    ----------
    S : array-like, shape (2, 2)
        Symmetric positive definite matrix.
    center : array-like, shape (2,)
    n : int
        Number of points; the first and last coincide, so the outline is closed.

    Returns
    -------
    ndarray, shape (n, 2)

    Raises
    ------
    ValueError
        If ``S`` is not a symmetric positive definite 2x2 matrix.
    """
    S = _array(S, "S", trailing=(2, 2), ndim=2)
    c = _array(center, "center", ndim=1)
    if c.shape != (2,):
        raise ValueError(f"`center` must have shape (2,), got {c.shape}.")
    if not np.allclose(S, S.T, rtol=1e-8, atol=1e-12 * max(1.0, np.abs(S).max())):
        raise ValueError("`S` must be symmetric.")
    try:
        L = np.linalg.cholesky(0.5 * (S + S.T))
    except np.linalg.LinAlgError as exc:
        raise ValueError("`S` must be positive definite.") from exc
    angle = np.linspace(0.0, 2 * np.pi, int(n))
    u = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    return c + u @ L.T


def spd_abc(mats):
    """Coordinates ``(a, b, c)`` of symmetric 2x2 matrices ``[[a, b], [b, c]]``.

    Parameters
    ----------
    mats : array-like, shape (..., 2, 2)

    Returns
    -------
    ndarray, shape (..., 3)
    """
    m = _array(mats, "mats", trailing=(2, 2))
    return np.stack([m[..., 0, 0], 0.5 * (m[..., 0, 1] + m[..., 1, 0]), m[..., 1, 1]], axis=-1)


def spd_ellipses_figure(
    x_values,
    true_mats,
    private_mats=None,
    *,
    generating_mats=None,
    x_title="covariate x",
    true_label="Non-private geodesic",
    private_label="Private geodesic",
    title="SPD(2) geodesics as ellipses along the covariate",
    subtitle="Each matrix S drawn as its 1-sd ellipse {z : zᵀS⁻¹z = 1}, to scale",
    height=None,
    per_row=None,
):
    """SPD(2) matrices along a geodesic drawn as ellipses placed along the covariate axis.

    Each matrix ``S`` at covariate ``x_j`` becomes the ellipse ``{z : z^T S^-1 z = 1}``
    centred at a horizontal position proportional to ``x_j``. Both axes share one scale, so
    shapes and sizes are true; the spacing is chosen so neighbouring ellipses do not overlap
    and tick labels give the covariate values at the centres.

    Parameters
    ----------
    x_values : array-like, shape (m,)
        Covariate values, distinct.
    true_mats : array-like, shape (m, 2, 2)
        Non-private geodesic at ``x_values`` (black).
    private_mats : array-like, shape (r, m, 2, 2) or (m, 2, 2), optional
        Private geodesics at ``x_values``, coloured by draw.
    generating_mats : array-like, shape (m, 2, 2), optional
        Data-generating geodesic at ``x_values`` (dark blue, dashed).
    x_title, true_label, private_label, title, subtitle : str
    height : int, optional
        By default chosen from the aspect ratio of the ellipses' layout for a plot about
        800 px wide, between 300 and 600 px (700 px for a grid).
    per_row : int, optional
        Ellipses per row. By default all in one row, the covariate on the horizontal axis;
        fewer wrap them into a grid read left to right, top to bottom, each labelled with its
        covariate value (a long row in a narrow column squashes every ellipse).

    Returns
    -------
    plotly.graph_objects.Figure
        One trace for the non-private ellipses, one for the data-generating ellipses (if
        given), then one per private draw.
    """
    x = _array(x_values, "x_values", ndim=1)
    m = x.shape[0]
    if m == 0:
        raise ValueError("`x_values` must not be empty.")
    if np.unique(x).size != m:
        raise ValueError("`x_values` must be distinct.")
    true = _array(true_mats, "true_mats", trailing=(2, 2), ndim=3)
    if true.shape[0] != m:
        raise ValueError(f"`true_mats` must have shape ({m}, 2, 2), got {true.shape}.")
    priv = _stack(private_mats, "private_mats", 3)
    for i, p in enumerate(priv):
        if p.shape != (m, 2, 2):
            raise ValueError(f"private draw {i} must have shape ({m}, 2, 2), got {p.shape}.")
    groups = [true, *priv]
    gen = None
    if generating_mats is not None:
        gen = _array(generating_mats, "generating_mats", trailing=(2, 2), ndim=3)
        if gen.shape[0] != m:
            raise ValueError(f"`generating_mats` must have shape ({m}, 2, 2), got {gen.shape}.")
        groups.append(gen)
    # Largest semi-axis over everything drawn: sqrt of the largest eigenvalue.
    radius = float(np.sqrt(max(np.linalg.eigvalsh(0.5 * (g + np.swapaxes(g, -1, -2))).max()
                                for g in groups)))
    gap = 2.3 * radius
    grid = per_row is not None and int(per_row) < m
    if grid:
        cols = max(1, int(per_row))
        slot = np.argsort(np.argsort(x))  # rank of each covariate value
        centres = (slot % cols) * gap
        rows_y = -(slot // cols) * 1.25 * gap  # room for the label above each ellipse
    else:
        order = np.sort(x)
        step = np.min(np.diff(order)) if m > 1 else 1.0
        centres = (x - order[0]) / step * gap
        rows_y = np.zeros(m)

    def outlines(mats):
        return _polyline([ellipse_xy(S, (cx, cy), n=120)
                          for S, cx, cy in zip(mats, centres, rows_y, strict=True)])

    fig = go.Figure()
    e = outlines(true)
    fig.add_trace(go.Scatter(x=e[:, 0], y=e[:, 1], mode="lines", name=true_label,
                             line={"color": colors.NONPRIVATE, "width": 4},
                             hoverinfo="skip"))
    if gen is not None:
        e = outlines(gen)
        fig.add_trace(go.Scatter(x=e[:, 0], y=e[:, 1], mode="lines", name="Data-generating",
                                 line={"color": colors.TRUTH, "width": 2, "dash": "dash"},
                                 hoverinfo="skip"))
    for p, (name, color, show) in zip(priv, _draw_styles(len(priv), private_label),
                                      strict=True):
        e = outlines(p)
        fig.add_trace(go.Scatter(x=e[:, 0], y=e[:, 1], mode="lines", name=name,
                                 line={"color": color, "width": 2}, showlegend=show,
                                 legendgroup="private", hoverinfo="skip"))
    pad = 1.2 * radius
    if grid:
        top = 1.35 * radius
        for v, cx, cy in zip(x, centres, rows_y, strict=True):
            fig.add_annotation(x=cx, y=cy + top, text=f"{x_title} = {v:.3g}", showarrow=False,
                               yanchor="bottom", font={"size": 13})
        span_x = np.ptp(centres) + 2 * pad
        span_y = np.ptp(rows_y) + 2 * pad + 0.6 * radius
        if height is None:
            height = int(np.clip(800 * span_y / span_x + 230, 300, 700))
        _update_axes(fig, x={"range": [centres.min() - pad, centres.max() + pad],
                             "showticklabels": False, "showgrid": False, "zeroline": False,
                             "constrain": "domain",
                             "title": {"text": "ellipse extent (units of √S)"}},
                     y={"range": [rows_y.min() - pad, rows_y.max() + pad + 0.6 * radius],
                        "showticklabels": False, "showgrid": False, "zeroline": False,
                        "scaleanchor": "x", "scaleratio": 1, "constrain": "domain",
                        "title": {"text": "ellipse extent (units of √S)"}})
        return _finish(fig, title, height, subtitle=subtitle)
    if height is None:
        aspect = (np.ptp(centres) + 2 * pad) / (2 * pad)
        height = int(np.clip(800 / aspect + 190, 300, 600))
    _update_axes(fig, x={
        "title": {"text": x_title},
        "tickvals": centres.tolist(),
        "ticktext": [f"{v:.3g}" for v in x],
        "range": [centres.min() - pad, centres.max() + pad],
        "showgrid": False,
        "zeroline": False,
        "constrain": "domain",
    }, y={
        "title": {"text": "ellipse extent (units of √S)"},
        "range": [-pad, pad],
        "scaleanchor": "x",
        "scaleratio": 1,
        "constrain": "domain",
        "zeroline": True,
        "zerolinecolor": "#dddddd",
    })
    return _finish(fig, title, height, subtitle=subtitle)


def spd_cone_figure(
    data=None,
    true_curve=None,
    private_curves=None,
    *,
    generating_curve=None,
    extent=None,
    true_label="Non-private geodesic",
    private_label="Private geodesic",
    title="SPD(2) as a cone: matrices [[a, b], [b, c]]",
    subtitle=None,
    height=HEIGHT_3D,
):
    """3D view of the SPD(2) cone in ``(a, b, c)`` coordinates with data and geodesics.

    The boundary ``ac = b^2`` (``a, c >= 0``: the rank-one matrices) is drawn as a translucent
    surface; positive definite matrices lie inside it.

    Parameters
    ----------
    data : array-like, shape (n, 2, 2), optional
        Data matrices (grey points).
    true_curve : array-like, shape (m, 2, 2), optional
        Dense points along the non-private geodesic (black).
    private_curves : array-like, shape (r, m, 2, 2), or sequence of (m_i, 2, 2), optional
        Private geodesics, coloured by draw.
    generating_curve : array-like, shape (m, 2, 2), optional
        The data-generating geodesic (dark blue, dashed).
    extent : float, optional
        Largest trace ``a + c`` of the drawn boundary; by default 1.15 times the largest trace
        among the matrices shown.
    true_label, private_label, title, subtitle : str
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: cone surface, cone wireframe, data (if given), data-generating curve (if
        given), non-private curve (if given), one per private curve.
    """
    pieces = []
    d = None
    if data is not None:
        d = spd_abc(data).reshape(-1, 3)
        pieces.append(d)
    t = None if true_curve is None else spd_abc(_array(true_curve, "true_curve", ndim=3))
    g = (None if generating_curve is None
         else spd_abc(_array(generating_curve, "generating_curve", ndim=3)))
    priv = [spd_abc(c) for c in _stack(private_curves, "private_curves", 3)]
    pieces += [c for c in (t, g) if c is not None] + priv
    if extent is None:
        if not pieces:
            raise ValueError("Nothing to draw: pass `data` or a curve.")
        extent = 1.15 * max(float(np.max(p[:, 0] + p[:, 2])) for p in pieces)
    extent = float(extent)

    def rank_one(r, phi):
        # Rank-one matrices r u u^T, u = (cos phi, sin phi): a = r cos^2, b = r cos sin,
        # c = r sin^2; phi in [0, pi) sweeps the whole boundary.
        return np.stack(np.broadcast_arrays(r * np.cos(phi) ** 2, r * np.cos(phi) * np.sin(phi),
                                            r * np.sin(phi) ** 2), axis=-1)

    surf = rank_one(np.linspace(0.0, extent, 30)[:, None], np.linspace(0.0, np.pi, 73)[None, :])
    fig = go.Figure(go.Surface(
        x=surf[..., 0], y=surf[..., 1], z=surf[..., 2],
        colorscale=[[0.0, "#dfe7f0"], [1.0, "#dfe7f0"]], showscale=False, opacity=0.3,
        hoverinfo="skip", name="Cone boundary ac = b²", showlegend=True, legendgroup="cone",
        lighting={"ambient": 0.8, "diffuse": 0.4, "specular": 0.05},
    ))
    # A wireframe (rulings through the apex and two rims) makes the cone read as a cone.
    rims = [rank_one(r, np.linspace(0.0, np.pi, 121)) for r in (0.5 * extent, extent)]
    rulings = [rank_one(np.array([0.0, extent]), phi) for phi in np.linspace(0, np.pi, 12,
                                                                             endpoint=False)]
    w = _polyline(rims + rulings)
    fig.add_trace(go.Scatter3d(
        x=w[:, 0], y=w[:, 1], z=w[:, 2], mode="lines", line={"color": "#aab4bf", "width": 2},
        hoverinfo="skip", showlegend=False, legendgroup="cone", name="Cone wireframe",
    ))
    hover = "a = %{x:.3g}<br>b = %{y:.3g}<br>c = %{z:.3g}"
    if d is not None:
        fig.add_trace(go.Scatter3d(
            x=d[:, 0], y=d[:, 1], z=d[:, 2], mode="markers",
            marker={"size": 3.5, "color": colors.DATA, "opacity": 0.9},
            name=f"Data (n = {d.shape[0]})", hovertemplate=f"data<br>{hover}<extra></extra>",
        ))
    if g is not None:
        fig.add_trace(_curve_trace3d(g, "Data-generating geodesic", colors.TRUTH, 5,
                                     dash="dash", lift=1.0))
    if t is not None:
        fig.add_trace(_curve_trace3d(t, true_label, colors.NONPRIVATE, 7, lift=1.0))
    for c, (name, color, show) in zip(priv, _draw_styles(len(priv), private_label),
                                      strict=True):
        fig.add_trace(_curve_trace3d(c, name, color, 4.5, showlegend=show, group="private",
                                     lift=1.0))
    axis = {"showbackground": False, "gridcolor": "#e5e5e5", "zeroline": False}
    eye = np.array([0.35, -1.0, 0.35])
    eye = 2.3 * eye / np.linalg.norm(eye)
    _assign(fig.layout, {"scene": {
        "xaxis": {**axis, "title": {"text": "a = S₁₁"}},
        "yaxis": {**axis, "title": {"text": "b = S₁₂"}},
        "zaxis": {**axis, "title": {"text": "c = S₂₂"}},
        "aspectmode": "data",
        # The cone's axis (multiples of the identity, direction (1, 0, 1)) points up; the
        # camera looks at it from the side, slightly from above.
        "camera": {"eye": dict(zip("xyz", eye.tolist(), strict=True)),
                   "up": {"x": 1.0, "y": 0.0, "z": 1.0}},
    }})
    _finish(fig, title, height, subtitle=subtitle)
    _assign(fig.layout, {"margin": {"l": 0, "r": 0, "b": 0}})
    return fig
