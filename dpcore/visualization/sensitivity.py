"""Figures of the sensitivity page: histograms of theoretical / empirical sensitivity ratios
and the growth of Jacobi fields with curvature (why the bounds depend on κ).
"""

from __future__ import annotations

import numpy as np

from dpcore.manifolds._functions import jacobi_point_scale, jacobi_vector_scale

from . import colors
from ._base import FONT_SIZE, legend_below
from .charts import curves_figure, histogram_figure

__all__ = [
    "jacobi_figure",
    "jacobi_growth",
    "ratio_histogram",
]

def ratio_histogram(frame, which="p", *, log_scale=False, manifold_label=""):
    """Histogram of theory/empirical ratios per n with a dashed line at 1.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`regression_sensitivity_ratios`.
    which : {"p", "v"}
        Footpoint or shooting-vector ratios.
    log_scale : bool
        Histogram of log10(ratio) with the line at 0.
    manifold_label : str
        Shown in the title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    col = f"ratio_{which}"
    samples = {}
    for n in sorted(frame["n"].unique()):
        r = frame.loc[frame["n"] == n, col].to_numpy(float)
        r = r[np.isfinite(r)]
        samples[f"n = {n}"] = np.log10(r) if log_scale else r
    name = "footpoint Δ_p" if which == "p" else "shooting vector Δ_v"
    ratio = f"Δ{'_p' if which == 'p' else '_v'}(theory) / Δ{'_p' if which == 'p' else '_v'}" \
            "(empirical)"
    fig = histogram_figure(
        samples, reference=0.0 if log_scale else 1.0,
        reference_label="log₁₀ ratio = 0 (bound = empirical)" if log_scale
        else "ratio = 1 (bound = empirical)",
        x_title=f"log₁₀ of {ratio}" if log_scale else ratio, y_title="adjacent pairs",
        title=f"Sensitivity of the {name}{': ' + manifold_label if manifold_label else ''}",
        subtitle="Right of the dashed line: the bound holds. Pairs overlaid by sample size.",
        height=520,
    )
    counts = {f"n = {n}": int(np.isfinite(frame.loc[frame["n"] == n, col]).sum())
              for n in sorted(frame["n"].unique())}
    for tr in fig.data:
        label = tr.name.split(" (")[0]
        if label in counts:
            tr.name = f"{label} ({counts[label]} pairs)"
    return legend_below(fig)


def jacobi_growth(s, kappa):
    r"""Norms of the two Jacobi fields along a unit-speed geodesic, relative to flat space.

    Parameters
    ----------
    s : array-like
        Geodesic lengths.
    kappa : float
        Constant sectional curvature κ.

    Returns
    -------
    (point, vector) : tuple of ndarray
        ``point``: :math:`|J(s)|` for :math:`J(0) = u, J'(0) = 0` (|u| = 1): |cos(√κ s)|, 1 or
        cosh(√-κ s). ``vector``: :math:`|J(s)|/s` for :math:`J(0) = 0, J'(0) = u`:
        sin(√κ s)/(√κ s), 1 or sinh(√-κ s)/(√-κ s) (absolute values). These are the scale
        functions :func:`dpcore.manifolds._functions.jacobi_point_scale` and
        ``jacobi_vector_scale`` at :math:`\lambda = \kappa s^2`.
    """
    s = np.asarray(s, dtype=float)
    lam = kappa * s**2
    return np.abs(jacobi_point_scale(lam)), np.abs(jacobi_vector_scale(lam))


def jacobi_figure(kappa_abs=1.0, s_max=3.0, *, which="point", mark=None):
    """Jacobi-field growth against geodesic length for curvature +κ, 0 and −κ.

    Parameters
    ----------
    kappa_abs : float
        |κ| of the curved cases.
    s_max : float
        Longest geodesic shown.
    which : {"point", "vector"}
        ``"point"``: J(0) = u, J'(0) = 0 (moving the footpoint; cos, 1, cosh).
        ``"vector"``: J(0) = 0, J'(0) = u, divided by s (changing the shooting vector;
        sin(s)/s, 1, sinh(s)/s).
    mark : float, optional
        A geodesic length to mark with a vertical line (e.g. the reach 2(τ_m + τ) used by the
        bounds) together with the value of the negative-curvature curve there.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    s = np.linspace(0.0, float(s_max), 400)
    k = float(kappa_abs)
    idx = 0 if which == "point" else 1
    pos, flat, neg = (jacobi_growth(s, kv)[idx] for kv in (k, 0.0, -k))
    if which == "point":
        names = (f"κ = +{k:g}: |cos(√κ s)|", "κ = 0: 1", f"κ = −{k:g}: cosh(√|κ| s)")
        title = "Footpoint variation: J(0) = u, J′(0) = 0"
        y_title = "|J(s)| / |u|"
    else:
        names = (f"κ = +{k:g}: sin(√κ s)/(√κ s)", "κ = 0: 1", f"κ = −{k:g}: sinh(√|κ| s)/(√|κ| s)")
        title = "Shooting-vector variation: J(0) = 0, J′(0) = u"
        y_title = "|J(s)| / (s |u|)  (flat space = 1)"
    curves = {names[0]: (s, pos), names[1]: (s, flat), names[2]: (s, neg)}
    styles = {names[0]: {"color": colors.VERMILLION}, names[1]: {"color": colors.BLACK,
                                                                  "dash": "dash"},
              names[2]: {"color": colors.BLUE}}
    fig = curves_figure(curves, styles=styles, x_title="geodesic length s",
                                y_title=y_title, title=title, height=520)
    legend_below(fig)
    if mark is not None and 0 < mark <= s_max:
        value = float(jacobi_growth(np.array([mark]), -k)[idx][0])
        fig.add_vline(x=float(mark), line={"color": colors.GREY, "width": 2, "dash": "dot"},
                      annotation={"text": f"s = {mark:.3g}: factor {value:.3g}",
                                  "font": {"size": FONT_SIZE - 1}},
                      annotation_position="top left")
    return fig
