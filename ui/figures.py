"""Pure plotly figure builders and the small geometry helpers behind them.

Every builder takes numpy arrays (and simple options) and returns a
:class:`plotly.graph_objects.Figure` with a title, labelled axes, a legend and the
``plotly_white`` template. Nothing here imports Streamlit: pages call a builder and hand the
figure to ``st.plotly_chart``. Manifold operations come from :mod:`dpcore`; the only geometry
done here is what drawing needs (a sphere mesh, an ellipse outline, (a, b, c) coordinates of
2x2 matrices).

Colours follow :mod:`ui.colors`: data grey, the non-private estimate black, the
data-generating truth dark blue, private draws Okabe–Ito hues (viridis beyond five draws).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import colors

__all__ = [
    "band_figure",
    "curves_figure",
    "ellipse_xy",
    "euclidean_regression_figure",
    "geodesic_curve",
    "heatmap_figure",
    "ecdf_figure",
    "histogram_figure",
    "kendall_shapes_figure",
    "mean_and_se",
    "spd_abc",
    "spd_cone_figure",
    "spd_ellipses_figure",
    "sphere_mesh",
    "sphere_points_figure",
    "sphere_regression_figure",
]

#: Base font size (axis labels, ticks, legend) and title size, in px.
FONT_SIZE = 14
TITLE_SIZE = 19
#: Text colour of titles, ticks and legends (dark grey, readable on white).
TEXT_COLOR = "#262730"
#: Default heights in px.
HEIGHT_3D = 640
HEIGHT_2D = 460
#: Curves and points on the sphere are drawn this far outside the unit sphere so the
#: translucent surface does not hide them.
SPHERE_LIFT = 1.012
#: Up to this many private draws each get their own legend entry; beyond it one entry
#: stands for all of them.
MAX_LEGEND_DRAWS = 5
#: Distance of the 3D camera from the centre of the scene (plotly's default is about 2.2).
EYE_DISTANCE = 1.85


# ------------------------------------------------------------------------------ validation
def _array(a, name, trailing=None, ndim=None):
    """``a`` as a float array, checked for trailing shape ``trailing`` and ``ndim`` axes.

    NaN is allowed (plotly leaves a gap there); the builders never do arithmetic that NaN
    would spoil except where they say so.
    """
    if a is None:
        raise TypeError(f"`{name}` is required, got None.")
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a numeric array, got {type(a).__name__}.") from exc
    if trailing is not None:
        trailing = tuple(trailing)
        if arr.ndim < len(trailing) or arr.shape[arr.ndim - len(trailing) :] != trailing:
            raise ValueError(f"`{name}` must have shape [..., {', '.join(map(str, trailing))}], "
                             f"got {arr.shape}.")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"`{name}` must have {ndim} axes, got shape {arr.shape}.")
    return arr


def _stack(items, name, item_ndim):
    """A list of arrays of ``item_ndim`` axes from ``None``, one array, a batch or a sequence."""
    if items is None:
        return []
    if isinstance(items, np.ndarray) or not isinstance(items, Sequence):
        arr = _array(items, name)
        if arr.ndim == item_ndim:
            return [arr]
        if arr.ndim == item_ndim + 1:
            return list(arr)
        raise ValueError(
            f"`{name}` must have {item_ndim} or {item_ndim + 1} axes, got shape {arr.shape}."
        )
    out = [_array(item, f"{name}[{i}]") for i, item in enumerate(items)]
    for i, arr in enumerate(out):
        if arr.ndim != item_ndim:
            raise ValueError(
                f"`{name}[{i}]` must have {item_ndim} axes, got shape {arr.shape}."
            )
    return out


def _named(items, name, default_label):
    """``(label, value)`` pairs from a mapping, or one pair for a bare value."""
    if isinstance(items, Mapping):
        if not items:
            raise ValueError(f"`{name}` must not be empty.")
        return [(str(k), v) for k, v in items.items()]
    return [(default_label, items)]


# ------------------------------------------------------------------------------ styling
def _finish(fig, title, height, *, subtitle=None, legend_below=False, margin_top=None):
    """Shared layout: template, title, fonts, height and legend placement.

    The legend sits to the right of the plot (where it cannot cover titles, subplot titles or
    data), or below it with ``legend_below`` (for figures with a colour bar on the right).
    """
    title_spec = {"text": title, "x": 0.01, "xanchor": "left", "font": {"size": TITLE_SIZE}}
    if subtitle:
        title_spec["subtitle"] = {"text": subtitle, "font": {"size": FONT_SIZE - 1}}
    if legend_below:
        # Anchored to the bottom of the whole figure (not the plot), under the axis title.
        legend = {"orientation": "h", "x": 0.0, "xanchor": "left", "y": 0.0, "yref": "container",
                  "yanchor": "bottom", "font": {"size": FONT_SIZE - 1}}
        bottom = 140
    else:
        legend = {"x": 1.02, "xanchor": "left", "y": 1.0, "yanchor": "top",
                  "font": {"size": FONT_SIZE - 1}, "bgcolor": "rgba(255, 255, 255, 0.85)"}
        bottom = 60
    top = (90 if subtitle else 60) if margin_top is None else margin_top
    fig.update_layout(
        template="plotly_white",
        title=title_spec,
        # Explicit colours: Streamlit's chart theme would otherwise draw light-grey text.
        font={"size": FONT_SIZE, "color": TEXT_COLOR},
        height=int(height),
        legend=legend,
        showlegend=True,
        margin={"l": 70, "r": 20, "t": top, "b": bottom},
        hoverlabel={"font": {"size": FONT_SIZE - 1}},
    )
    # Powers of ten rather than SI prefixes (plotly's "100µ" would clash with the GDP µ).
    axis_text = {"tickfont": {"color": TEXT_COLOR}, "title_font": {"color": TEXT_COLOR}}
    fig.update_xaxes(exponentformat="power", **axis_text)
    fig.update_yaxes(exponentformat="power", **axis_text)
    return fig


def _axis_type(log, values=(), axis_range=None):
    """Axis settings: linear, or log with plain labelled ticks at 1, 2 and 5 of each decade
    over short spans and powers of ten over long ones (where more labels would crowd)."""
    if not log:
        return {"type": "linear"}
    if axis_range is not None:
        lo, hi = sorted(float(r) for r in axis_range)
    else:
        v = np.concatenate([np.ravel(np.asarray(a, dtype=float)) for a in values] or [[]])
        v = v[np.isfinite(v) & (v > 0)]
        if v.size == 0:
            return {"type": "log"}
        lo, hi = float(np.log10(v.min())), float(np.log10(v.max()))
    if hi - lo > 2.5:
        return {"type": "log", "dtick": 1}
    decades = np.arange(np.floor(lo) - 1, np.ceil(hi) + 1)
    ticks = (np.array([1.0, 2.0, 5.0])[None, :] * 10.0 ** decades[:, None]).ravel()
    eps = 1e-9
    ticks = ticks[(np.log10(ticks) >= lo - eps) & (np.log10(ticks) <= hi + eps)]
    if ticks.size < 2:
        return {"type": "log"}
    return {"type": "log", "tickvals": ticks.tolist(), "ticktext": [f"{t:g}" for t in ticks]}


def _draw_styles(n, label):
    """Per-draw ``(name, color, showlegend)`` for ``n`` private draws."""
    cols = colors.private_colors(n)
    if n <= MAX_LEGEND_DRAWS:
        names = [f"{label} {i + 1}" if n > 1 else label for i in range(n)]
        return [(names[i], cols[i], True) for i in range(n)]
    many = f"{label}s 1–{n} (colour = draw)"
    return [(many, cols[i], i == 0) for i in range(n)]


def _cell_edges(values, log):
    """Cell edges for an increasing grid: midpoints between neighbours (geometric midpoints
    if ``log``), the outer edges mirrored, so every grid value lies inside its own cell."""
    v = np.log10(values) if log else values
    if v.size == 1:
        edges = np.array([v[0] - 0.5, v[0] + 0.5])
    else:
        mid = 0.5 * (v[1:] + v[:-1])
        edges = np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])
    return 10.0**edges if log else edges


def _polyline(segments):
    """Concatenate 2-D or 3-D point arrays, separated by NaN rows (one trace, many pieces)."""
    pieces = []
    for seg in segments:
        pieces.append(seg)
        pieces.append(np.full((1, seg.shape[-1]), np.nan))
    return np.concatenate(pieces[:-1]) if pieces else np.empty((0, 2))


# ------------------------------------------------------------------------------ geometry
def geodesic_curve(manifold, p, v, t_grid):
    """Points ``Exp(p, t v)`` along a geodesic, for drawing it as a dense polyline.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    p : array-like, shape point_shape
        Footpoint (the point at ``t = 0``).
    v : array-like, shape point_shape
        Shooting vector, tangent at ``p``.
    t_grid : array-like, shape (m,)
        Times; for a geodesic regression fit with covariates rescaled to [0, 1] use
        e.g. ``np.linspace(0, 1, 200)``.

    Returns
    -------
    ndarray, shape (m, *point_shape)
    """
    t = np.atleast_1d(_array(t_grid, "t_grid"))
    if t.ndim != 1:
        raise ValueError(f"`t_grid` must be one-dimensional, got shape {t.shape}.")
    p = _array(p, "p", trailing=manifold.point_shape, ndim=manifold.point_ndim)
    v = _array(v, "v", trailing=manifold.point_shape, ndim=manifold.point_ndim)
    return manifold.geodesic(p, v, t)


def sphere_mesh(n_lat=48, n_lon=96, radius=1.0):
    """A latitude-longitude grid on the sphere, for ``go.Surface``.

    Parameters
    ----------
    n_lat, n_lon : int
        Grid sizes along the polar angle [0, pi] and the azimuth [0, 2 pi].
    radius : float

    Returns
    -------
    (X, Y, Z) : tuple of ndarray, each shape (n_lat, n_lon)
    """
    theta = np.linspace(0.0, np.pi, int(n_lat))[:, None]
    phi = np.linspace(0.0, 2 * np.pi, int(n_lon))[None, :]
    return (
        radius * np.sin(theta) * np.cos(phi),
        radius * np.sin(theta) * np.sin(phi),
        radius * np.cos(theta) * np.ones_like(phi),
    )


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


# ------------------------------------------------------------------------------ sphere
def _sphere_background():
    """Translucent unit sphere plus a light graticule (equator, two parallels, meridians)."""
    X, Y, Z = sphere_mesh()
    surface = go.Surface(
        x=X,
        y=Y,
        z=Z,
        colorscale=[[0.0, "#dfe7f0"], [1.0, "#dfe7f0"]],
        showscale=False,
        opacity=0.45,
        hoverinfo="skip",
        lighting={"ambient": 0.75, "diffuse": 0.45, "specular": 0.05, "roughness": 0.9},
        lightposition={"x": 100, "y": 200, "z": 1000},
        name="Unit sphere",
        showlegend=False,
    )
    s = np.linspace(0.0, 2 * np.pi, 181)
    segs = []
    for lat in (-np.pi / 4, 0.0, np.pi / 4):
        segs.append(np.stack([np.cos(lat) * np.cos(s), np.cos(lat) * np.sin(s),
                              np.full_like(s, np.sin(lat))], axis=-1))
    half = np.linspace(0.0, np.pi, 91)
    for lon in np.arange(0.0, np.pi, np.pi / 4):
        segs.append(np.stack([np.sin(half) * np.cos(lon), np.sin(half) * np.sin(lon),
                              np.cos(half)], axis=-1))
        segs.append(np.stack([np.sin(half) * np.cos(lon + np.pi),
                              np.sin(half) * np.sin(lon + np.pi), np.cos(half)], axis=-1))
    g = _polyline(segs) * 1.001
    grid = go.Scatter3d(
        x=g[:, 0], y=g[:, 1], z=g[:, 2], mode="lines",
        line={"color": "#b8c2cc", "width": 1.5},
        hoverinfo="skip", showlegend=False, name="Graticule",
    )
    return [surface, grid]


def _sphere_layout(fig, focus, title, height, subtitle=None):
    """Cube aspect on [-1.1, 1.1]^3, camera looking at ``focus`` (a direction in R^3)."""
    axis = {
        "range": [-1.1, 1.1],
        "showbackground": False,
        "showgrid": False,
        "showline": True,
        "linecolor": "#cccccc",
        "zeroline": False,
        "tickvals": [-1, 0, 1],
    }
    eye = {"x": 1.0, "y": 1.0, "z": 0.8}
    if focus is not None and np.linalg.norm(focus) > 1e-6:
        d = focus / np.linalg.norm(focus)
        if abs(d[2]) > 0.9:  # near a pole: tilt away so "up" stays well defined
            d = d + np.array([0.45, 0.45, 0.0])
        d = d + np.array([0.0, 0.0, 0.25])  # a little from above reads as 3D
        d = EYE_DISTANCE * d / np.linalg.norm(d)
        eye = {"x": float(d[0]), "y": float(d[1]), "z": float(d[2])}
    fig.update_layout(
        scene={
            "xaxis": {**axis, "title": {"text": "x₁"}},
            "yaxis": {**axis, "title": {"text": "x₂"}},
            "zaxis": {**axis, "title": {"text": "x₃"}},
            "aspectmode": "cube",
            "camera": {"eye": eye, "up": {"x": 0, "y": 0, "z": 1}},
        },
    )
    _finish(fig, title, height, subtitle=subtitle)
    fig.update_layout(margin={"l": 0, "r": 0, "b": 0})
    return fig


def _check_sphere_points(a, name):
    arr = _array(a, name, trailing=(3,))
    return arr.reshape(-1, 3)


def _curve_trace3d(pts, name, color, width, *, dash=None, showlegend=True, group=None,
                   hover_x=None, lift=SPHERE_LIFT):
    pts = np.asarray(pts) * lift
    trace = go.Scatter3d(
        x=pts[:, 0], y=pts[:, 1], z=pts[:, 2],
        mode="lines",
        line={"color": color, "width": width, **({"dash": dash} if dash else {})},
        name=name, showlegend=showlegend, legendgroup=group or name,
    )
    if hover_x is not None:
        trace.customdata = np.asarray(hover_x)
        trace.hovertemplate = f"{name}<br>x = %{{customdata:.3g}}<extra></extra>"
    else:
        trace.hovertemplate = f"{name}<extra></extra>"
    return trace


def sphere_regression_figure(
    data,
    true_curve,
    private_curves=None,
    *,
    generating_curve=None,
    data_x=None,
    curve_x=None,
    true_label="Non-private geodesic",
    private_label="Private geodesic",
    title="Geodesic regression on the sphere S²",
    subtitle=None,
    height=HEIGHT_3D,
):
    """Rotatable 3D sphere with data, the non-private geodesic and private geodesics.

    Parameters
    ----------
    data : array-like, shape (n, 3) or None
        Responses on the unit sphere (grey points).
    true_curve : array-like, shape (m, 3)
        Dense points along the non-private geodesic (black), e.g. from :func:`geodesic_curve`.
    private_curves : array-like, shape (r, m, 3), or sequence of (m_i, 3) arrays, optional
        Private geodesics, coloured by draw.
    generating_curve : array-like, shape (m, 3), optional
        The data-generating geodesic of synthetic data (dark blue, dashed).
    data_x : array-like, shape (n,), optional
        Covariates of the data, shown on hover.
    curve_x : array-like, shape (m,), optional
        Covariate at each curve point (same grid for all curves), shown on hover.
    true_label, private_label : str
        Legend names; draws are numbered ``"<private_label> 1"``, ...
    title, subtitle : str
    height : int
        Figure height in px.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: sphere surface, graticule, data (if given), non-private curve,
        data-generating curve (if given), one trace per private curve.
    """
    fig = go.Figure(_sphere_background())
    focus = []
    if data is not None:
        d = _check_sphere_points(data, "data")
        focus.append(d.mean(axis=0))
        dl = d * SPHERE_LIFT
        pts = go.Scatter3d(
            x=dl[:, 0], y=dl[:, 1], z=dl[:, 2], mode="markers",
            marker={"size": 4.5, "color": colors.DATA, "opacity": 0.9},
            name=f"Data (n = {d.shape[0]})",
        )
        if data_x is not None:
            pts.customdata = _array(data_x, "data_x", ndim=1)
            pts.hovertemplate = "data<br>x = %{customdata:.3g}<extra></extra>"
        fig.add_trace(pts)
    hover = None if curve_x is None else _array(curve_x, "curve_x", ndim=1)
    t = _array(true_curve, "true_curve", trailing=(3,), ndim=2)
    focus.append(t.mean(axis=0))
    fig.add_trace(_curve_trace3d(t, true_label, colors.NONPRIVATE, 8, hover_x=hover))
    if generating_curve is not None:
        # Drawn over the non-private curve, a little higher, so both stay visible.
        g = _array(generating_curve, "generating_curve", trailing=(3,), ndim=2)
        fig.add_trace(_curve_trace3d(g, "Data-generating geodesic", colors.TRUTH, 6,
                                     dash="dash", hover_x=hover, lift=SPHERE_LIFT + 0.015))
    curves = _stack(private_curves, "private_curves", 2)
    for c, (name, color, show) in zip(curves, _draw_styles(len(curves), private_label),
                                      strict=True):
        if c.shape[-1] != 3:
            raise ValueError(f"`private_curves` must hold points in R^3, got shape {c.shape}.")
        fig.add_trace(_curve_trace3d(c, name, color, 4.5, showlegend=show,
                                     group="private", hover_x=hover))
    return _sphere_layout(fig, np.mean(focus, axis=0), title, height, subtitle)


def sphere_points_figure(
    clouds,
    *,
    data=None,
    true_point=None,
    nonprivate_point=None,
    true_label="True mean",
    nonprivate_label="Non-private mean",
    cloud_label="Private means",
    title="Private Fréchet means on the sphere S²",
    subtitle=None,
    height=HEIGHT_3D,
):
    """Clouds of points on a rotatable 3D sphere, e.g. private Fréchet means per mechanism.

    Parameters
    ----------
    clouds : array-like, shape (m, 3), or mapping of str to such arrays
        Private releases; a mapping gives one coloured cloud per key (e.g. per mechanism).
    data : array-like, shape (n, 3), optional
        The data set (grey).
    true_point : array-like, shape (3,), optional
        The true (population) mean, an open dark-blue diamond.
    nonprivate_point : array-like, shape (3,), optional
        The non-private estimate, a small black square.
    true_label, nonprivate_label : str
        Legend names of the two markers.
    cloud_label : str
        Legend name when ``clouds`` is a single array.
    title, subtitle : str
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: sphere surface, graticule, data (if given), one per cloud, then the true and
        non-private markers (if given).
    """
    fig = go.Figure(_sphere_background())
    focus = []
    if data is not None:
        d = _check_sphere_points(data, "data") * SPHERE_LIFT
        focus.append(d.mean(axis=0))
        fig.add_trace(go.Scatter3d(
            x=d[:, 0], y=d[:, 1], z=d[:, 2], mode="markers",
            marker={"size": 3, "color": colors.DATA, "opacity": 0.8},
            name=f"Data (n = {d.shape[0]})", hovertemplate="data<extra></extra>",
        ))
    named = _named(clouds, "clouds", cloud_label)
    for (label, pts), color in zip(named, colors.qualitative_colors(len(named)), strict=True):
        p = _check_sphere_points(pts, f"clouds[{label!r}]") * SPHERE_LIFT
        focus.append(p.mean(axis=0))
        fig.add_trace(go.Scatter3d(
            x=p[:, 0], y=p[:, 1], z=p[:, 2], mode="markers",
            marker={"size": 4, "color": color, "opacity": 0.75},
            name=f"{label} ({p.shape[0]})", hovertemplate=f"{label}<extra></extra>",
        ))
    # An open diamond for the truth leaves a nearby non-private square visible inside it.
    # (3D markers are drawn as font glyphs; "x" and "cross" are missing from some fonts.)
    for point, label, color, symbol, size in (
        (true_point, true_label, colors.TRUTH, "diamond-open", 11),
        (nonprivate_point, nonprivate_label, colors.NONPRIVATE, "square", 6),
    ):
        if point is None:
            continue
        # Lifted above the clouds so the markers are not buried in them.
        q = _array(point, label, trailing=(3,), ndim=1) * (SPHERE_LIFT + 0.03)
        fig.add_trace(go.Scatter3d(
            x=[q[0]], y=[q[1]], z=[q[2]], mode="markers",
            marker={"size": size, "color": color, "symbol": symbol,
                    "line": {"color": color, "width": 3 if symbol.endswith("open") else 0}},
            name=label, hovertemplate=f"{label}<extra></extra>",
        ))
        focus.append(q)
    return _sphere_layout(fig, np.mean(focus, axis=0), title, height, subtitle)


# ------------------------------------------------------------------------------ SPD(2)
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
        By default chosen from the aspect ratio of the row of ellipses for a plot about
        800 px wide, between 300 and 600 px.

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
    order = np.sort(x)
    step = np.min(np.diff(order)) if m > 1 else 1.0
    centres = (x - order[0]) / step * gap

    def outlines(mats):
        return _polyline([ellipse_xy(S, (cx, 0.0), n=120) for S, cx in zip(mats, centres,
                                                                             strict=True)])

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
    if height is None:
        aspect = (np.ptp(centres) + 2 * pad) / (2 * pad)
        height = int(np.clip(800 / aspect + 190, 300, 600))
    fig.update_xaxes(
        title={"text": x_title},
        tickvals=centres.tolist(),
        ticktext=[f"{v:.3g}" for v in x],
        range=[centres.min() - pad, centres.max() + pad],
        showgrid=False,
        zeroline=False,
        constrain="domain",
    )
    fig.update_yaxes(
        title={"text": "ellipse extent (units of √S)"},
        range=[-pad, pad],
        scaleanchor="x",
        scaleratio=1,
        constrain="domain",
        zeroline=True,
        zerolinecolor="#dddddd",
    )
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
    fig.update_layout(scene={
        "xaxis": {**axis, "title": {"text": "a = S₁₁"}},
        "yaxis": {**axis, "title": {"text": "b = S₁₂"}},
        "zaxis": {**axis, "title": {"text": "c = S₂₂"}},
        "aspectmode": "data",
        # The cone's axis (multiples of the identity, direction (1, 0, 1)) points up; the
        # camera looks at it from the side, slightly from above.
        "camera": {"eye": dict(zip("xyz", eye.tolist(), strict=True)),
                   "up": {"x": 1.0, "y": 0.0, "z": 1.0}},
    })
    _finish(fig, title, height, subtitle=subtitle)
    fig.update_layout(margin={"l": 0, "r": 0, "b": 0})
    return fig


# ------------------------------------------------------------------------------ Kendall
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
    x = _array(x_values, "x_values", ndim=1)
    m = x.shape[0]
    if m == 0:
        raise ValueError("`x_values` must not be empty.")
    true = _array(true_landmarks, "true_landmarks", trailing=(2,), ndim=3)
    if true.shape[0] != m:
        raise ValueError(f"`true_landmarks` must have shape ({m}, k, 2), got {true.shape}.")
    k = true.shape[1]
    priv = _stack(private_landmarks, "private_landmarks", 3)
    for i, p in enumerate(priv):
        if p.shape != true.shape:
            raise ValueError(f"private draw {i} must have shape {true.shape}, got {p.shape}.")
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
    for j in range(m):
        row, col = j // cols + 1, j % cols + 1
        for arr, name, color, width, dash, show, group in series:
            o = outline(arr[j])
            fig.add_trace(go.Scatter(
                x=o[:, 0], y=o[:, 1], mode="lines+markers", name=name,
                line={"color": color, "width": width, **({"dash": dash} if dash else {})},
                marker={"color": color, "size": sizes},
                legendgroup=group, showlegend=show and j == 0,
                customdata=np.arange(1, o.shape[0] + 1),
                hovertemplate=f"{name}<br>landmark %{{customdata}}<extra></extra>",
            ), row=row, col=col)
        axis_id = "" if j == 0 else str(j + 1)
        # Same ranges and unit aspect in every panel; constrain="domain" shrinks the panel to
        # the square instead of widening the range, so axis titles stay next to the shape.
        fig.update_xaxes(range=[centre[0] - half, centre[0] + half], showticklabels=False,
                         showgrid=False, zeroline=False, constrain="domain", row=row, col=col,
                         title={"text": "horizontal (preshape units)"} if row == rows and
                         col == 1 else None)
        fig.update_yaxes(range=[centre[1] - half, centre[1] + half], showticklabels=False,
                         showgrid=False, zeroline=False, scaleanchor=f"x{axis_id}",
                         scaleratio=1, constrain="domain", constraintoward="top",
                         row=row, col=col,
                         title={"text": "vertical"} if col == 1 else None)
    if height is None:
        height = 340 * rows + 200
    # Below the panels the legend leaves them the full width.
    return _finish(fig, title, height, subtitle=subtitle, margin_top=110, legend_below=True)


# ------------------------------------------------------------------------------ R^d
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
    for j in range(d):
        row, col = j // cols + 1, j % cols + 1
        first = j == 0
        fig.add_trace(go.Scatter(
            x=x, y=y[:, j], mode="markers", name=f"Data (n = {x.shape[0]})",
            marker={"color": colors.DATA, "size": 6, "opacity": 0.75},
            legendgroup="data", showlegend=first,
        ), row=row, col=col)
        fig.add_trace(go.Scatter(
            x=grid, y=true[:, j], mode="lines", name=true_label,
            line={"color": colors.NONPRIVATE, "width": 4},
            legendgroup="true", showlegend=first,
        ), row=row, col=col)
        if gen is not None:
            fig.add_trace(go.Scatter(
                x=grid, y=gen[:, j], mode="lines", name="Data-generating line",
                line={"color": colors.TRUTH, "width": 2, "dash": "dash"},
                legendgroup="gen", showlegend=first,
            ), row=row, col=col)
        for p, (name, color, show) in zip(priv, styles, strict=True):
            fig.add_trace(go.Scatter(
                x=grid, y=p[:, j], mode="lines", name=name,
                line={"color": color, "width": 2},
                legendgroup=f"private-{name}", showlegend=show and first,
            ), row=row, col=col)
        fig.update_xaxes(title={"text": x_title} if row == rows else None, row=row, col=col)
        fig.update_yaxes(title={"text": names[j]}, row=row, col=col)
    if height is None:
        height = 340 * rows + 200
    # Below the panels the legend leaves them the full width.
    return _finish(fig, title, height, subtitle=subtitle, margin_top=100, legend_below=True)


# ------------------------------------------------------------------------------ charts
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
    fig = go.Figure()
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
        fig.add_trace(go.Scatter(
            x=np.concatenate([x, x[::-1]]), y=np.concatenate([hi, lo[::-1]]),
            mode="lines", fill="toself", fillcolor=colors.with_alpha(color, 0.18),
            line={"width": 0}, hoverinfo="skip", showlegend=False, legendgroup=label,
            name=f"{label} ± 2 SE",
        ))
        fig.add_trace(go.Scatter(
            x=x, y=mean, mode="lines+markers", name=label, legendgroup=label,
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
            fig.add_trace(go.Scatter(
                x=[x_lo, x_hi], y=[level, level], mode="lines", name=name,
                line={"color": color, "width": 2, "dash": "dash"},
                legendgroup=str(key) if grouped else None, showlegend=not grouped,
                hovertemplate=f"{name}: %{{y:.4g}}<extra></extra>",
            ))
        if grouped:
            fig.add_trace(go.Scatter(
                x=[None], y=[None], mode="lines", name=f"{reference_label} (dashed)",
                line={"color": colors.NONPRIVATE, "width": 2, "dash": "dash"},
                hoverinfo="skip",
            ))
    xs = [tr.x for tr in fig.data if tr.x is not None and tr.x[0] is not None]
    ys = [tr.y for tr in fig.data if tr.y is not None and tr.y[0] is not None]
    fig.update_xaxes(title={"text": x_title}, **_axis_type(log_x, xs))
    fig.update_yaxes(title={"text": y_title}, **_axis_type(log_y, ys))
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

    fig.update_xaxes(title={"text": x_title}, **_axis_type(log_axes, [x_edges]),
                     showgrid=False, range=axis_range(x_edges))
    fig.update_yaxes(title={"text": y_title}, **_axis_type(log_axes, [y_edges]),
                     showgrid=False, range=axis_range(y_edges))
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
    fig.update_layout(barmode="overlay", bargap=0.02)
    fig.update_xaxes(title={"text": x_title})
    fig.update_yaxes(title={"text": y_title})
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
    fig = go.Figure()
    palette = colors.qualitative_colors(len(named))
    for (label, a), color in zip(named, palette, strict=True):
        a = np.sort(_array(a, f"samples[{label!r}]").ravel())
        a = a[np.isfinite(a)]
        if a.size == 0:
            raise ValueError(f"`samples[{label!r}]` has no finite values.")
        p = np.arange(1, a.size + 1) / a.size
        fig.add_trace(go.Scatter(
            x=a, y=p, mode="lines", line={"color": color, "width": 2.5, "shape": "hv"},
            name=f"{label} (n = {a.size})", legendgroup=label,
            hovertemplate=f"{label}<br>%{{y:.0%}} of draws ≤ %{{x:.3g}}<extra></extra>",
        ))
        median = float(np.median(a))
        fig.add_trace(go.Scatter(
            x=[median], y=[0.5], mode="markers", legendgroup=label, showlegend=False,
            marker={"color": color, "size": 10, "symbol": "diamond",
                    "line": {"color": "white", "width": 1}},
            name=f"{label} median", hovertemplate=f"{label} median %{{x:.3g}}<extra></extra>",
        ))
    fig.add_hline(y=0.5, line={"color": colors.NONPRIVATE, "width": 1, "dash": "dot"})
    fig.update_xaxes(title={"text": x_title}, **_axis_type(log_x, [t.x for t in fig.data]))
    fig.update_yaxes(title={"text": "share of draws ≤ x"}, range=[0, 1.02], tickformat=".0%")
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

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Scatter`` per curve.
    """
    if not isinstance(curves, Mapping) or not curves:
        raise TypeError("`curves` must be a non-empty mapping of label to (x, y[, err]).")
    styles = {} if styles is None else dict(styles)
    palette = colors.qualitative_colors(len(curves))
    fig = go.Figure()
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
        fig.add_trace(go.Scatter(
            x=x, y=y, name=str(label),
            mode=style.get("mode", "lines+markers" if err is not None else "lines"),
            line={"color": c, "width": style.get("width", 2.5),
                  "dash": style.get("dash", "solid")},
            marker={"size": 7, "color": c},
            error_y=(None if err is None else
                     {"type": "data", "array": err, "visible": True, "thickness": 1.5,
                      "width": 4, "color": c}),
        ))
    xs = [tr.x for tr in fig.data]
    ys = [tr.y for tr in fig.data]
    fig.update_xaxes(title={"text": x_title}, **_axis_type(log_x, xs, x_range),
                     **({"range": list(x_range)} if x_range is not None else {}))
    fig.update_yaxes(title={"text": y_title}, **_axis_type(log_y, ys, y_range),
                     **({"range": list(y_range)} if y_range is not None else {}))
    if square:
        fig.update_yaxes(scaleanchor="x", scaleratio=1, constrain="domain")
        fig.update_xaxes(constrain="domain")
    return _finish(fig, title, height, subtitle=subtitle)
