"""Figures on the sphere S²: geodesic regression and clouds of private means.

Both figures draw a translucent unit sphere with a light graticule in a rotatable 3D scene whose
camera looks at the drawn data; curves and points sit slightly (``SPHERE_LIFT``) outside the
surface so it does not hide them.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from . import colors
from ._base import (
    EYE_DISTANCE,
    HEIGHT_3D,
    SPHERE_LIFT,
    _array,
    _curve_trace3d,
    _draw_styles,
    _finish,
    _named,
    _polyline,
    _stack,
)

__all__ = ["sphere_mesh", "sphere_points_figure", "sphere_regression_figure"]


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
