"""Figures of the Fréchet-mean page: mechanism comparisons and clouds of private means.

Shared by the dashboard (``pages/frechet_mean.py``) and anything else that draws Fréchet-mean
simulations; every builder takes the tidy tables of :mod:`ui.logic.frechet_mean` (or arrays)
and returns a :class:`plotly.graph_objects.Figure`.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import colors
from ._base import HEIGHT_3D, _add_traces, _assign, _finish, _polyline, _update_axes
from .charts import band_figure, curves_figure, mean_and_se
from .spd import ellipse_xy, spd_abc, spd_cone_figure

__all__ = [
    "frechet_error_figure",
    "frechet_left_manifold_figure",
    "frechet_sensitivity_figure",
    "MECHANISM_LABELS",
    "spd_mean_clouds_cone_figure",
    "spd_mean_ellipses_figure",
    "tangent_clouds_figure",
]

#: Display names of the Fréchet-mean mechanisms of :mod:`dpcore.release`, in display order.
MECHANISM_LABELS = {
    "laplace": "Riemannian Laplace",
    "kng": "KNG",
    "gaussian": "Riemannian Gaussian (equal µ)",
    "ambient_laplace": "Ambient Euclidean Laplace",
}


def _mechanism_colors(keys):
    palette = colors.qualitative_colors(len(MECHANISM_LABELS))
    lookup = dict(zip(MECHANISM_LABELS, palette, strict=True))
    return [lookup[k] for k in keys]


def frechet_error_figure(frame, metric="euclidean_error", *, epsilon=None):
    """Mean error ± 2 SE against n, one band per mechanism (a simulation).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of :func:`dpcore.experiments.frechet_mean_study`.
    metric : {"euclidean_error", "geodesic_error"}
    epsilon : float, optional
        Shown in the title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    series = {}
    for mech in MECHANISM_LABELS:
        sub = frame[frame["mechanism"] == mech]
        if sub.empty:
            continue
        x, mean, se = mean_and_se(sub["n"].to_numpy(float), sub[metric].to_numpy(float))
        series[MECHANISM_LABELS[mech]] = (x, mean, se)
    y_title = ("ambient (Euclidean) distance to x̄" if metric == "euclidean_error"
               else "geodesic distance to x̄")
    title = "Simulation: error of the private mean x̃ against n"
    if epsilon is not None:
        title += f" (ε = {epsilon:g})"
    fig = band_figure(
        series, x_title="sample size n", y_title=y_title, title=title,
        subtitle="Synthetic data; mean ± 2 standard errors over replicates", log_x=True,
        log_y=True,
    )
    # Keep the mechanism colours of the other figures of the page.
    names = list(series)
    lookup = {MECHANISM_LABELS[k]: c for k, c in zip(
        MECHANISM_LABELS, _mechanism_colors(list(MECHANISM_LABELS)), strict=True)}
    for tr in fig.data:
        label = tr.legendgroup
        if label in lookup and label in names:
            if tr.fill == "toself":
                tr.fillcolor = colors.with_alpha(lookup[label], 0.18)
            else:
                tr.line.color = lookup[label]
                tr.marker.color = lookup[label]
    return fig


def frechet_left_manifold_figure(frame):
    """Fraction of ambient Laplace releases off the manifold against n, with ±2 SE bars.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of :func:`dpcore.experiments.frechet_mean_study`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    sub = frame[frame["mechanism"] == "ambient_laplace"]
    x, mean, se = mean_and_se(sub["n"].to_numpy(float),
                                      sub["left_manifold"].to_numpy(float))
    fig = curves_figure(
        {"Ambient Laplace: share off the manifold": (x, mean, 2 * se)},
        styles={"Ambient Laplace: share off the manifold":
                {"color": _mechanism_colors(["ambient_laplace"])[0]}},
        x_title="sample size n", y_title="share of releases off the manifold",
        title="Simulation: ambient releases that leave the manifold",
        subtitle="Before projecting back; error bars ± 2 standard errors", log_x=True,
        y_range=(-0.02, 1.05), height=380,
    )
    return _update_axes(fig, y={"tickformat": ".0%"})


def frechet_sensitivity_figure(frame):
    """Empirical :math:`\\rho(\\bar x, \\bar x')` per adjacent pair, its mean and the bound.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`frechet_sensitivity_simulation`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    grouped = frame.groupby("n")
    ns = np.array(sorted(frame["n"].unique()), dtype=float)
    curves = {
        "Adjacent pair (empirical)": (frame["n"].to_numpy(float), frame["empirical"].to_numpy()),
        "Mean of the pairs": (ns, grouped["empirical"].mean().reindex(ns).to_numpy()),
        "Theoretical bound Δ (paper 001 Thm 2)": (ns, grouped["bound"].first().reindex(ns)
                                                  .to_numpy()),
    }
    styles = {
        "Adjacent pair (empirical)": {"mode": "markers", "color": colors.SKY_BLUE},
        "Mean of the pairs": {"color": colors.BLUE, "mode": "lines+markers"},
        "Theoretical bound Δ (paper 001 Thm 2)": {"color": colors.VERMILLION, "dash": "dash",
                                                  "mode": "lines+markers"},
    }
    return curves_figure(
        curves, styles=styles, x_title="sample size n",
        y_title="distance between the means of adjacent data sets",
        title="Sensitivity of the Fréchet mean: empirical vs bound",
        subtitle="n + 1 points; D drops the first, D′ the last", log_x=True, log_y=True,
    )


def tangent_clouds_figure(manifold, mean, clouds, *, data=None, title=None, subtitle=None):
    r"""Private means in normal coordinates at the non-private mean: a zoom on the clouds.

    Every point z is mapped to the coordinates of :math:`\log_{\bar x} z` in an orthonormal
    basis of the tangent space at :math:`\bar x` (for S², the azimuthal equidistant map), so
    the distance of a dot from the origin is its geodesic distance from the mean.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
        Of dimension 2 (e.g. ``Sphere(2)``); higher dimensions show the first two coordinates.
    mean : array-like
        Non-private mean (the origin of the plot).
    clouds : mapping of str to array-like, shape (m, *point_shape)
        Private means per mechanism label.
    data : array-like, shape (n, *point_shape), optional
        Data points (grey; those beyond the zoom are clipped by the axes).
    title, subtitle : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    mean = np.asarray(mean, dtype=float)
    basis = manifold.orthonormal_basis(mean)[:2]

    def coords(points):
        v = manifold.log(np.broadcast_to(mean, np.shape(points)), np.asarray(points, float))
        return np.stack([manifold.inner(mean, b, v) for b in basis], axis=-1)

    palette = dict(zip(MECHANISM_LABELS.values(), _mechanism_colors(list(MECHANISM_LABELS)),
                       strict=True))
    traces = []
    if data is not None:
        c = coords(data)
        traces.append(dict(type="scatter", x=c[:, 0], y=c[:, 1], mode="markers",
                           marker={"color": colors.DATA, "size": 6, "opacity": 0.6},
                           name=f"Data (n = {c.shape[0]})", hoverinfo="skip"))
    reach = 0.0
    for label, pts in clouds.items():
        c = coords(pts)
        reach = max(reach, float(np.quantile(np.linalg.norm(c, axis=-1), 0.98)))
        traces.append(dict(
            type="scatter", x=c[:, 0], y=c[:, 1], mode="markers", name=f"{label} ({c.shape[0]})",
            marker={"color": palette.get(label, colors.ORANGE), "size": 7, "opacity": 0.75},
            hovertemplate=f"{label}<br>(%{{x:.3g}}, %{{y:.3g}})<extra></extra>"))
    traces.append(dict(type="scatter", x=[0.0], y=[0.0], mode="markers", name="Non-private mean",
                       marker={"color": colors.NONPRIVATE, "size": 11, "symbol": "square"},
                       hovertemplate="non-private mean<extra></extra>"))
    fig = _add_traces(go.Figure(), traces)
    half = 1.15 * (reach if reach > 0 else 1.0)
    _update_axes(fig, x={"range": [-half, half],
                         "title": {"text": "tangent coordinate 1 (radians)"},
                         "zeroline": True, "zerolinecolor": "#dddddd", "constrain": "domain"},
                 y={"range": [-half, half], "title": {"text": "tangent coordinate 2 (radians)"},
                    "zeroline": True, "zerolinecolor": "#dddddd", "scaleanchor": "x",
                    "scaleratio": 1, "constrain": "domain"})
    # The legend below the square plot: beside it, it would shrink the plot.
    return _finish(fig, title or "Zoom: private means around the non-private mean",
                   HEIGHT_3D, subtitle=subtitle or
                   "Normal coordinates at the mean: distance from the origin = geodesic distance",
                   legend_below=True)


def spd_mean_clouds_cone_figure(data, mean, clouds, *, title=None):
    """SPD(2) cone in (a, b, c) coordinates with the data and a cloud of private means per
    mechanism.

    Parameters
    ----------
    data : array-like, shape (n, 2, 2)
    mean : array-like, shape (2, 2)
        Non-private mean (black square).
    clouds : mapping of str to array-like, shape (m, 2, 2)
        Private means per mechanism label.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    pieces = [spd_abc(data).reshape(-1, 3)]
    pieces += [spd_abc(c).reshape(-1, 3) for c in clouds.values()]
    extent = 1.1 * max(float(np.max(p[:, 0] + p[:, 2])) for p in pieces)
    fig = spd_cone_figure(
        data=data, extent=extent,
        title=title or "Private means in the SPD(2) cone: matrices [[a, b], [b, c]]",
        subtitle="Positive definite matrices lie inside the cone ac > b²",
    )
    palette = dict(zip(MECHANISM_LABELS.values(), _mechanism_colors(list(MECHANISM_LABELS)),
                       strict=True))
    for label, pts in clouds.items():
        p = spd_abc(pts).reshape(-1, 3)
        fig.add_trace(go.Scatter3d(
            x=p[:, 0], y=p[:, 1], z=p[:, 2], mode="markers",
            marker={"size": 3.5, "color": palette.get(label, colors.ORANGE), "opacity": 0.8},
            name=f"{label} ({p.shape[0]})", hovertemplate=f"{label}<extra></extra>",
        ))
    q = spd_abc(mean)
    fig.add_trace(go.Scatter3d(
        x=[q[0]], y=[q[1]], z=[q[2]], mode="markers",
        marker={"size": 7, "color": colors.NONPRIVATE, "symbol": "square"},
        name="Non-private mean", hovertemplate="non-private mean<extra></extra>",
    ))
    return fig


def spd_mean_ellipses_figure(mean, clouds, *, max_draws=12, title=None, n_cols=2):
    """One panel per mechanism: the non-private mean and private means of SPD(2) as ellipses.

    Each matrix S is drawn as its one-standard-deviation ellipse {z : zᵀS⁻¹z = 1}
    (:func:`ui.ellipse_xy`), all panels on one scale.

    Parameters
    ----------
    mean : array-like, shape (2, 2)
    clouds : mapping of str to array-like, shape (m, 2, 2)
    max_draws : int
        Private ellipses drawn per panel (the first ones).
    title : str, optional
    n_cols : int
        Panels per row (two: four mechanisms in a 2 × 2 grid, readable in half a page).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    labels = list(clouds)
    cols = max(1, min(int(n_cols), len(labels)))
    rows = -(-len(labels) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=labels, horizontal_spacing=0.08,
                        vertical_spacing=0.16 if rows > 1 else 0.0)
    palette = dict(zip(MECHANISM_LABELS.values(), _mechanism_colors(list(MECHANISM_LABELS)),
                       strict=True))
    mats = [np.asarray(mean)] + [np.asarray(c)[:max_draws].reshape(-1, 2, 2)
                                 for c in clouds.values()]
    reach = max(float(np.sqrt(np.linalg.eigvalsh(m).max())) for group in mats
                for m in np.reshape(group, (-1, 2, 2)))
    half = 1.1 * reach
    for j, label in enumerate(labels, start=1):
        row, col = (j - 1) // cols + 1, (j - 1) % cols + 1
        pts = np.asarray(clouds[label])[:max_draws].reshape(-1, 2, 2)
        color = palette.get(label, colors.ORANGE)
        outline = _polyline([ellipse_xy(S, n=90) for S in pts])
        # The non-private mean under the private ones: where they are close to it (the
        # Gaussian at small noise) they stay visible on top of it.
        e = ellipse_xy(mean, n=120)
        _add_traces(fig, [dict(
            type="scatter", x=e[:, 0], y=e[:, 1], mode="lines",
            line={"color": colors.NONPRIVATE, "width": 4},
            name="Non-private mean", showlegend=j == 1, legendgroup="np", hoverinfo="skip",
        ), dict(
            type="scatter", x=outline[:, 0], y=outline[:, 1], mode="lines",
            line={"color": color, "width": 1.5},
            name=f"{label}: first {pts.shape[0]} private means", hoverinfo="skip",
        )], [(row, col)] * 2)
        axis_id = "" if j == 1 else str(j)
        _assign(fig.layout[f"xaxis{axis_id}"], {
            "range": [-half, half], "zeroline": False, "showgrid": False, "constrain": "domain",
            "title": {"text": "z₁ (units of √S)"}})
        _assign(fig.layout[f"yaxis{axis_id}"], {
            "range": [-half, half], "zeroline": False, "showgrid": False,
            "scaleanchor": f"x{axis_id}", "scaleratio": 1, "constrain": "domain",
            "title": {"text": "z₂" if col == 1 else None}})
    return _finish(
        fig, title or "Private means of SPD(2) drawn as ellipses", 170 + 290 * rows,
        subtitle="Each matrix S as its 1-sd ellipse {z : zᵀS⁻¹z = 1}", legend_below=True,
        margin_top=130,
    )
