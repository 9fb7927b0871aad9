"""Figures on the sphere S²: geodesic regression and clouds of private means.

The globe figures draw a translucent unit sphere with a light graticule in a rotatable 3D scene
whose camera looks at the drawn data; curves and points sit slightly (``SPHERE_LIFT``) outside
the surface so it does not hide them. The map figure draws the same regression flat, in the
azimuthal equidistant projection about a centre (normal coordinates): a 2D chart, which a
browser draws much sooner than a WebGL scene, and on which the distance of every point from the
centre is its true geodesic distance.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from . import colors
from ._base import (
    EYE_DISTANCE,
    HEIGHT_2D,
    HEIGHT_3D,
    SPHERE_LIFT,
    _array,
    _assign,
    _curve_trace3d,
    _draw_styles,
    _finish,
    _named,
    _polyline,
    _stack,
    _update_axes,
)

__all__ = ["azimuthal_equidistant", "map_frame", "sphere_mesh", "sphere_points_figure",
           "sphere_regression_figure", "sphere_regression_map_figure"]


def sphere_mesh(n_lat=33, n_lon=65, radius=1.0):
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


def _sphere_background():
    """Translucent unit sphere plus a light graticule (equator, two parallels, meridians)."""
    # Single precision and a 33 x 65 grid (every 5.6 degrees) keep the figure sent to the browser
    # small (about 50 kB instead of 250 kB), which shortens the first paint of 3D pages.
    X, Y, Z = (a.astype(np.float32) for a in sphere_mesh())
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
    s = np.linspace(0.0, 2 * np.pi, 121)
    segs = []
    for lat in (-np.pi / 4, 0.0, np.pi / 4):
        segs.append(np.stack([np.cos(lat) * np.cos(s), np.cos(lat) * np.sin(s),
                              np.full_like(s, np.sin(lat))], axis=-1))
    half = np.linspace(0.0, np.pi, 61)
    for lon in np.arange(0.0, np.pi, np.pi / 4):
        segs.append(np.stack([np.sin(half) * np.cos(lon), np.sin(half) * np.sin(lon),
                              np.cos(half)], axis=-1))
        segs.append(np.stack([np.sin(half) * np.cos(lon + np.pi),
                              np.sin(half) * np.sin(lon + np.pi), np.cos(half)], axis=-1))
    g = (_polyline(segs) * 1.001).astype(np.float32)
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
    _assign(fig.layout, {
        "scene": {
            "xaxis": {**axis, "title": {"text": "x₁"}},
            "yaxis": {**axis, "title": {"text": "x₂"}},
            "zaxis": {**axis, "title": {"text": "x₃"}},
            "aspectmode": "cube",
            "camera": {"eye": eye, "up": {"x": 0, "y": 0, "z": 1}},
        },
    })
    _finish(fig, title, height, subtitle=subtitle)
    _assign(fig.layout, {"margin": {"l": 0, "r": 0, "b": 0}})
    return fig


def _check_sphere_points(a, name):
    arr = _array(a, name, trailing=(3,))
    return arr.reshape(-1, 3)


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


# ------------------------------------------------------------------------------ flat map
def map_frame(center):
    """An orthonormal frame ``(c, east, north)`` of R³ for a map of S² centred at ``center``.

    ``north`` is the direction of the x₃ axis seen from ``c`` (the local "up" of the globe view),
    ``east = north × c``, so the map is seen from outside the sphere with north up and east to
    the right. At the poles, where "north" is undefined, the x₁ axis plays its part.

    Parameters
    ----------
    center : array-like, shape (3,)
        Any non-zero vector (normalised here).

    Returns
    -------
    (c, east, north) : tuple of ndarray, each shape (3,)
    """
    c = _array(center, "center", trailing=(3,), ndim=1)
    size = float(np.linalg.norm(c))
    if not np.isfinite(size) or size < 1e-12:
        raise ValueError(f"`center` must be a non-zero vector, got {c.tolist()}.")
    c = c / size
    up = np.array([0.0, 0.0, 1.0]) if abs(c[2]) < 0.99 else np.array([-np.sign(c[2]), 0.0, 0.0])
    north = up - (up @ c) * c
    north /= np.linalg.norm(north)
    return c, np.cross(north, c), north


def azimuthal_equidistant(points, frame):
    r"""Map points of S² to the plane of the azimuthal equidistant projection about ``frame[0]``.

    A point at geodesic distance θ from the centre c in the direction u of the tangent plane
    goes to θ·u written in the basis (east, north): these are the normal coordinates
    :math:`\log_c y` of the point, computed here without the cut-locus check of the manifold's
    ``log`` (the antipode of c maps to a point of the circle of radius π).

    Parameters
    ----------
    points : array-like, shape (..., 3)
        Points of the unit sphere (rows are normalised first).
    frame : tuple
        ``(c, east, north)`` from :func:`map_frame`.

    Returns
    -------
    ndarray, shape (..., 2)
        (east, north) coordinates in radians; their norm is the geodesic distance from c.
    """
    c, east, north = frame
    y = _array(points, "points", trailing=(3,))
    y = y / np.linalg.norm(y, axis=-1, keepdims=True)
    a, b = y @ east, y @ north
    # atan2 of the sine and cosine of θ stays accurate at both ends (θ near 0 and near π).
    s = np.hypot(a, b)
    theta = np.arctan2(s, y @ c)
    tiny = s <= 1e-15
    scale = theta / np.where(tiny, 1.0, s)
    # At the centre both coordinates are 0; at the antipode any direction is right: east.
    return np.stack([np.where(tiny, theta, a * scale), np.where(tiny, 0.0, b * scale)], axis=-1)


def _map_line(points, frame):
    """A curve on the map, broken (NaN row) where it jumps across the rim near the antipode."""
    xy = azimuthal_equidistant(points, frame)
    if xy.shape[0] < 2:
        return xy
    r = np.linalg.norm(xy, axis=-1)
    step = np.linalg.norm(np.diff(xy, axis=0), axis=-1)
    # A continuous curve moves little between samples; a segment between two far-side points
    # that spans more than a radian goes round the rim and is not drawn.
    cut = (step > 1.0) & (r[:-1] > np.pi / 2) & (r[1:] > np.pi / 2)
    if not np.any(cut):
        return xy
    pieces = np.split(xy, np.flatnonzero(cut) + 1)
    return _polyline(pieces)


def _map_graticule(frame):
    """Meridians every 30° and parallels every 30° (and the equator), as one polyline."""
    s = np.linspace(0.0, 2 * np.pi, 241)
    half = np.linspace(0.0, np.pi, 121)
    segs = []
    for lat in np.deg2rad([-60.0, -30.0, 0.0, 30.0, 60.0]):
        segs.append(np.stack([np.cos(lat) * np.cos(s), np.cos(lat) * np.sin(s),
                              np.full_like(s, np.sin(lat))], axis=-1))
    for lon in np.deg2rad(np.arange(0.0, 360.0, 30.0)):
        segs.append(np.stack([np.sin(half) * np.cos(lon), np.sin(half) * np.sin(lon),
                              np.cos(half)], axis=-1))
    return _polyline([_map_line(seg, frame) for seg in segs])


def _latlon(point):
    lat = np.degrees(np.arcsin(np.clip(point[2], -1.0, 1.0)))
    lon = np.degrees(np.arctan2(point[1], point[0]))
    return f"{abs(lat):.0f}° {'N' if lat >= 0 else 'S'}, {abs(lon):.0f}° {'E' if lon >= 0 else 'W'}"


def sphere_regression_map_figure(
    data,
    true_curve,
    private_curves=None,
    *,
    generating_curve=None,
    data_x=None,
    curve_x=None,
    center=None,
    true_label="Non-private geodesic",
    private_label="Private geodesic",
    title="Geodesic regression on the sphere S² (map)",
    subtitle=None,
    height=HEIGHT_2D + 180,
):
    """The regression of :func:`sphere_regression_figure` on a flat map of S².

    The azimuthal equidistant projection about ``center`` (the normal coordinates there): the
    whole sphere fits in a disc of radius π, and a point's distance from the centre on the map
    is its geodesic distance. The axes zoom on the data and the non-private geodesic; private
    geodesics that leave the view are cut by it (the caption of the page says where they go).

    Parameters
    ----------
    data, true_curve, private_curves, generating_curve, data_x, curve_x
        As in :func:`sphere_regression_figure`.
    center : array-like, shape (3,), optional
        Centre of the map; default the normalised mean of the data and the non-private curve.
    true_label, private_label, title, subtitle, height
        As in :func:`sphere_regression_figure`.

    Returns
    -------
    plotly.graph_objects.Figure
        2D traces: the graticule, the rim (distance π/2, the horizon of the globe view), data
        (if given), the non-private curve, the data-generating curve (if given), one trace per
        private curve.
    """
    t = _array(true_curve, "true_curve", trailing=(3,), ndim=2)
    d = None if data is None else _check_sphere_points(data, "data")
    if center is None:
        parts = [t] + ([] if d is None else [d])
        center = np.concatenate(parts).mean(axis=0)
        if np.linalg.norm(center) < 1e-9:  # data spread evenly round the sphere
            center = t[len(t) // 2]
    frame = map_frame(center)
    fig = go.Figure()
    # Guide lines only: 1e-4 rad is below a pixel even zoomed 20 times, and rounding cuts the
    # figure sent on every rerun from about 340 kB to 110 kB.
    g = np.round(_map_graticule(frame), 4)
    fig.add_trace(go.Scatter(x=g[:, 0], y=g[:, 1], mode="lines",
                             line={"color": "#c7ced6", "width": 1}, hoverinfo="skip",
                             showlegend=False, name="Graticule (30°)"))
    s = np.linspace(0.0, 2 * np.pi, 181)
    fig.add_trace(go.Scatter(x=np.round(np.pi / 2 * np.cos(s), 4),
                             y=np.round(np.pi / 2 * np.sin(s), 4), mode="lines",
                             line={"color": "#9aa5b1", "width": 1, "dash": "dot"},
                             hoverinfo="skip", name="90° from the centre"))
    shown = []
    if d is not None:
        xy = azimuthal_equidistant(d, frame)
        shown.append(xy)
        pts = go.Scatter(x=xy[:, 0], y=xy[:, 1], mode="markers",
                         marker={"size": 7, "color": colors.DATA, "opacity": 0.85},
                         name=f"Data (n = {d.shape[0]})")
        if data_x is not None:
            pts.customdata = _array(data_x, "data_x", ndim=1)
            pts.hovertemplate = "data<br>x = %{customdata:.3g}<extra></extra>"
        else:
            pts.hovertemplate = "data<extra></extra>"
        fig.add_trace(pts)
    hover = None if curve_x is None else _array(curve_x, "curve_x", ndim=1)

    def line(points, name, color, width, *, dash=None, showlegend=True, group=None):
        xy = _map_line(points, frame)
        tr = go.Scatter(x=xy[:, 0], y=xy[:, 1], mode="lines", name=name,
                        line={"color": color, "width": width, **({"dash": dash} if dash else {})},
                        showlegend=showlegend, legendgroup=group or name)
        if hover is not None and xy.shape[0] == hover.shape[0]:
            tr.customdata = hover
            tr.hovertemplate = f"{name}<br>x = %{{customdata:.3g}}<extra></extra>"
        else:
            tr.hovertemplate = f"{name}<extra></extra>"
        return tr, xy

    tr, xy = line(t, true_label, colors.NONPRIVATE, 4)
    shown.append(xy)
    fig.add_trace(tr)
    if generating_curve is not None:
        gc = _array(generating_curve, "generating_curve", trailing=(3,), ndim=2)
        tr, xy = line(gc, "Data-generating geodesic", colors.TRUTH, 3, dash="dash")
        shown.append(xy)
        fig.add_trace(tr)
    curves = _stack(private_curves, "private_curves", 2)
    for c, (name, color, show) in zip(curves, _draw_styles(len(curves), private_label),
                                      strict=True):
        if c.shape[-1] != 3:
            raise ValueError(f"`private_curves` must hold points in R^3, got shape {c.shape}.")
        tr, _ = line(c, name, color, 2.5, showlegend=show, group="private")
        fig.add_trace(tr)
    # Zoom on the data and the non-private fit (what the reader compares the draws with).
    pts = np.concatenate([a[np.all(np.isfinite(a), axis=-1)] for a in shown])
    mid = 0.5 * (pts.max(axis=0) + pts.min(axis=0))
    half = max(0.6 * float(np.max(pts.max(axis=0) - pts.min(axis=0))), 0.25)
    half = min(half, np.pi + 0.05)
    _update_axes(fig, x={"range": [mid[0] - half, mid[0] + half], "constrain": "domain",
                         "zeroline": False, "title": {"text": "east of the centre (radians)"},
                         "showgrid": False},
                 y={"range": [mid[1] - half, mid[1] + half], "constrain": "domain",
                    "zeroline": False, "scaleanchor": "x", "scaleratio": 1, "showgrid": False,
                    "title": {"text": "north of the centre (radians)"}})
    sub = subtitle or ""
    where = (f"Map centred at {_latlon(frame[0])}; distance from the centre = geodesic "
             "distance; grid every 30°")
    # The legend below the map: the map is square, so a legend beside it would shrink it.
    _finish(fig, title, height, subtitle=f"{sub}<br>{where}" if sub else where,
            legend_below=True)
    return fig
