"""Figures of one geodesic regression on any supported space: data, the non-private geodesic,
the data-generating truth and private geodesics, drawn the way the space is best seen.

S²: curves on the sphere; SPD(2): 1-sd ellipses along the covariate and the cone of
``(a, b, c)``; Kendall shapes: predicted shapes in panels; R^d: one panel per coordinate.
Which view a space gets is the one place here that switches on the manifold's class.
"""

from __future__ import annotations

import functools

import numpy as np

from ..manifolds import SPD, Euclidean, KendallShape, Sphere
from ._base import legend_below
from .euclidean import euclidean_regression_figure
from .kendall import kendall_draws_figure, kendall_shapes_figure
from .spd import spd_cone_figure, spd_ellipses_figure
from .sphere import sphere_regression_figure, sphere_regression_map_figure

__all__ = ["KENDALL_DRAW_ROWS", "SPD_VIEW_FACTOR", "has_regression_figure",
           "regression_figures"]

#: SPD views keep this multiple of the largest trace of the data and fits.
SPD_VIEW_FACTOR = 3.0

#: Kendall views draw at most this many private draws, one row of panels each.
KENDALL_DRAW_ROWS = 3


def _trace(mats):
    mats = np.asarray(mats, dtype=float)
    return mats[..., 0, 0] + mats[..., 1, 1]


# The view of each space (functools.singledispatch on its class): the one place that knows
# which spaces have a regression figure; a new space registers its view here.
@functools.singledispatch
def _view(manifold):
    return None


@_view.register
def _(manifold: Sphere):
    return "sphere" if manifold.dim == 2 else None


@_view.register
def _(manifold: SPD):
    return "spd" if manifold.k == 2 else None


@_view.register
def _(manifold: KendallShape):
    return "kendall"


@_view.register
def _(manifold: Euclidean):
    return "euclidean"


def has_regression_figure(manifold):
    """Whether :func:`regression_figures` draws this space (S², SPD(2), Kendall, R^d)."""
    return _view(manifold) is not None


def regression_figures(manifold, x, y, footpoint, vector, covariate_range, *, private_at=None,
                       n_draws=0, mode=None, truth_at=None, covariate_name="x",
                       kendall_range=None, kendall_panels=4, sphere_view="globe"):
    """The figures of one regression, as (caption, figure) pairs in display order.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    x : array, shape ``(n,)``
        Covariates.
    y : array, shape ``(n, *point_shape)``
        Responses.
    footpoint, vector : array, shape ``point_shape``
        The non-private geodesic ``t -> Exp_p(t v)``.
    covariate_range : (float, float)
        Covariates ``low .. high`` map to ``t = 0 .. 1``.
    private_at : callable, optional
        ``x_values (m,) -> list of arrays (m, *point_shape)``: the private geodesics to draw
        (one per draw, at most as many as should be drawn) evaluated at ``x_values``.
    n_draws : int
        How many private draws the release holds (for the subtitle; may exceed the number
        drawn).
    mode : str, optional
        The release's mode, for the subtitle.
    truth_at : callable, optional
        ``x_values (m,) -> array (m, *point_shape) or None``: the data-generating geodesic.
    covariate_name : str
    kendall_range : (float, float), optional
        Covariate interval of the Kendall panels (default: the covariate range).
    kendall_panels : int
        Number of Kendall panels.
    sphere_view : {"globe", "map"}
        S² only: the rotatable 3D globe, or the flat azimuthal equidistant map about the data
        (a 2D chart, drawn much sooner by a browser).

    Returns
    -------
    list of (str, plotly.graph_objects.Figure)
        Empty for a space without a figure here (see :func:`has_regression_figure`).
    """
    m = manifold
    x = np.asarray(x, dtype=float)
    cr = tuple(float(c) for c in covariate_range)

    def fit_at(xs):
        t = (np.asarray(xs, dtype=float) - cr[0]) / (cr[1] - cr[0])
        return m.geodesic(footpoint, vector, t)

    def truth(xs):
        return None if truth_at is None else truth_at(xs)

    def curve_grid(size):
        return np.linspace(min(cr[0], float(x.min())), max(cr[1], float(x.max())), size)

    def private(xs):
        return None if private_at is None else list(private_at(xs))

    def subtitle(drawn):
        if not n_draws:
            return None
        return (f"{drawn} private draws shown" + (f" (of {n_draws})" if drawn < n_draws else "")
                + (f"; mode {mode}" if mode else ""))

    x_title = f"covariate {covariate_name}"
    view = _view(m)
    out = []
    if view == "sphere":
        grid = curve_grid(200)
        priv = private(grid)
        shown = 0 if priv is None else len(priv)
        if sphere_view == "map":
            fig = sphere_regression_map_figure(
                y, fit_at(grid), priv, generating_curve=truth(grid), data_x=x, curve_x=grid,
                subtitle=subtitle(shown) or "Press Release to add private geodesics")
            out.append(("Data, the non-private geodesic and private geodesics on a flat map of "
                        "S² (azimuthal equidistant about the data: the distance from the centre "
                        "is the geodesic distance); zoom with the mouse; private geodesics that "
                        "leave the view are cut by its edge.", fig))
        elif sphere_view == "globe":
            fig = sphere_regression_figure(
                y, fit_at(grid), priv, generating_curve=truth(grid), data_x=x, curve_x=grid,
                subtitle=subtitle(shown) or "Drag to rotate; press Release to add private "
                                            "geodesics",
            )
            out.append(("Data, the non-private geodesic and private geodesics on S²; drag to "
                        "rotate, scroll to zoom.", legend_below(fig, zoom=1.6, bottom=90)))
        else:
            raise ValueError(f"`sphere_view` must be 'globe' or 'map', got {sphere_view!r}.")
    elif view == "spd":
        xs = np.linspace(*cr, 6)
        grid = curve_grid(120)
        fit_x, fit_grid = fit_at(xs), fit_at(grid)
        gen_x, gen_grid = truth(xs), truth(grid)
        # Private draws can be orders of magnitude larger than the data (the SPD bounds grow
        # like cosh); drawn to one scale they would shrink everything else to dots. The views
        # keep the scale of the data and the fits and say how many draws leave it.
        scale = SPD_VIEW_FACTOR * max(float(np.max(_trace(a))) for a in
                                      (y, fit_grid, gen_grid) if a is not None)
        priv, hidden = None, 0
        draws = private(xs)
        if draws is not None:
            priv = [d for d in draws if np.max(_trace(d)) <= scale]
            hidden = len(draws) - len(priv)
        fig = legend_below(spd_ellipses_figure(xs, fit_x, priv, generating_mats=gen_x,
                                               x_title=covariate_name, per_row=3), bottom=110)
        note = ("Each matrix drawn as its 1-sd ellipse at six covariate values (labelled), to "
                "scale; read left to right, top to bottom.")
        if hidden:
            note += (f" {hidden} private draw(s) reach matrices more than {SPD_VIEW_FACTOR:g}× "
                     "the size of the data and are left out here so the rest stays visible.")
        out.append((note, fig))
        privc, cut = None, 0
        curves = private(grid)
        if curves is not None:
            privc = []
            for curve in curves:
                outside = _trace(curve) > scale
                cut += bool(np.any(outside))
                privc.append(np.where(outside[:, None, None], np.nan, curve))
        cone = spd_cone_figure(y, fit_grid, privc, generating_curve=gen_grid, extent=scale,
                               subtitle=subtitle(0 if curves is None else len(curves)))
        note = "SPD(2) as the cone of matrices [[a, b], [b, c]] with ac > b²; drag to rotate."
        if cut:
            note += (f" {cut} private geodesic(s) leave the drawn part of the cone (trace above "
                     f"{scale:.3g}) and are cut there.")
        out.append((note, legend_below(cone, bottom=90)))
    elif view == "kendall":
        a, b = kendall_range if kendall_range is not None else cr
        xs = np.linspace(a, b, max(1, int(kendall_panels))) if b > a else np.array([a])
        ref = footpoint
        true = m.to_landmarks(fit_at(xs), reference=ref)
        draws = private(xs)
        priv = None if draws is None else [m.to_landmarks(s, reference=ref) for s in draws]
        gen = truth(xs)
        if priv:
            fig = kendall_draws_figure(xs, true, priv, x_name=covariate_name,
                                       max_draws=KENDALL_DRAW_ROWS)
            shown = min(len(priv), KENDALL_DRAW_ROWS)
            note = (f"Predicted shapes at the chosen covariate values: one row per private "
                    f"draw ({shown} of {len(priv)} drawn), each against the non-private shape "
                    "(black).")
        else:
            fig = kendall_shapes_figure(
                xs, true,
                generating_landmarks=(None if gen is None
                                      else m.to_landmarks(gen, reference=ref)),
                x_name=covariate_name, n_cols=min(len(xs), 2),
                # two square panels per row in the page's half-width column (about 550 px)
                height=280 * int(np.ceil(len(xs) / 2)) + 200,
            )
            note = "Predicted shapes at the chosen covariate values."
        out.append((note, fig))
    elif view == "euclidean":
        grid = curve_grid(60)
        priv = private(grid)
        fig = euclidean_regression_figure(
            x, y, fit_at(grid), priv, x_grid=grid, generating_lines=truth(grid), x_title=x_title,
            subtitle=subtitle(0 if priv is None else len(priv)),
        )
        out.append(("One panel per response coordinate.", fig))
    return out
