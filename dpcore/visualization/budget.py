"""Figures of budget-split studies of private geodesic regression (paper 002, figs. 1, 2, 7).

The papers' log mean MSE against the footpoint budget at a fixed total (unequal split),
against the total at an equal split, and over a grid of (ε_p, ε_v), from the tidy rows of
:func:`dpcore.experiments.budget_sweep` (columns ``n``, ``eps_p``, ``eps_v``, ``epsilon``,
``log_mse``, ``nonprivate_mse``): the reproduction report's and the page's paper mode. And the
same views in the data's units from :func:`dpcore.experiments.budget_summary.cell_summary`
(:func:`split_error_figure`, :func:`error_heatmap_figure`): the RMS error with the
replicates' range as a band, each cell's source marked (exact draws, a prediction from the
asymptotic law, Markov chains) and flagged cells crossed out.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from . import colors
from ._base import HEIGHT_2D, _axis_type, _finish, _update_axes
from .charts import band_figure, heatmap_figure

__all__ = [
    "SOURCE_LABELS",
    "budget_heatmap_figure",
    "error_heatmap_figure",
    "split_error_figure",
    "budget_series",
    "equal_split_figure",
    "log_mse_summary",
    "replicate_note",
    "unequal_split_figure",
]


def log_mse_summary(df, by):
    """Mean and standard error of ``log_mse`` (and the mean non-private log MSE) per group.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of a budget sweep.
    by : sequence of str
        Grouping columns.

    Returns
    -------
    pandas.DataFrame
        Columns ``by`` + ``mean``, ``count``, ``se`` (ddof 1; 0 for a single row) and
        ``nonprivate`` (mean of log ``nonprivate_mse``).
    """
    g = df.assign(log_np=np.log(df["nonprivate_mse"])).groupby(list(by), sort=True)
    out = g["log_mse"].agg(["mean", "count"]).reset_index()
    out["se"] = g["log_mse"].sem(ddof=1).fillna(0.0).to_numpy()
    out["nonprivate"] = g["log_np"].mean().to_numpy()
    return out


def budget_series(df, x_col):
    """Band series ``{"n = …": (x, mean, se)}`` and non-private levels ``{"n = …": float}``
    of the log MSE against ``x_col``, one per sample size."""
    series, refs = {}, {}
    for n, part in log_mse_summary(df, ["n", x_col]).groupby("n"):
        label = f"n = {int(n)}"
        series[label] = (part[x_col].to_numpy(), part["mean"].to_numpy(), part["se"].to_numpy())
        refs[label] = float(part["nonprivate"].mean())
    return series, refs


def replicate_note(replicates):
    """Subtitle saying what the bands are."""
    if replicates == 1:
        return "One replicate (no error band); dashed: non-private level"
    return f"Mean ± 2 SE over {replicates} replicates; dashed: non-private level"


def _bands_without_markers(fig):
    """Band polygons as filled lines only (plotly's default mode would mark their vertices)."""
    for trace in fig.data:
        if getattr(trace, "fill", None) == "toself":
            trace.mode = "lines"
    return fig


def unequal_split_figure(df, total, *, title=None, subtitle=None, log_x=False,
                         x_title="ε_p (footpoint budget; ε_v = total − ε_p)"):
    """Log mean MSE against ε_p at a fixed total ``total``, one ±2 SE band per n.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    series, refs = budget_series(df, "eps_p")
    return _bands_without_markers(band_figure(
        series, reference=refs, reference_label="non-private", x_title=x_title,
        y_title="log mean MSE",
        title=title or f"Unequal split at a fixed total ε_p + ε_v = {total:g}",
        subtitle=subtitle, log_x=log_x,
    ))


def equal_split_figure(df, *, title=None, subtitle=None,
                       x_title="total ε = ε_p + ε_v (split equally)"):
    """Log mean MSE against the total with ε_p = ε_v = total / 2, one ±2 SE band per n.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    series, refs = budget_series(df, "epsilon")
    return _bands_without_markers(band_figure(
        series, reference=refs, reference_label="non-private", x_title=x_title,
        y_title="log mean MSE", title=title or "Equal split across total budgets",
        subtitle=subtitle, log_x=True,
    ))


def budget_heatmap_figure(df, total, *, n, replicates, excluded=()):
    """Heatmap of the log mean MSE over the (ε_p, ε_v) grid with the best split for ``total``.

    The best split is the cell of lowest log mean MSE among those with
    ``ε_p + ε_v <= total`` (the affordable ones) that are not ``excluded`` (cells whose
    chains have not mixed: their errors are not the mechanism's, so they are never called
    best).

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of a grid sweep at sample size ``n``.
    total : float
    n, replicates : int
        For the title and subtitle.
    excluded : iterable of (float, float)
        ``(eps_p, eps_v)`` cells that may not be the best split.

    Returns
    -------
    (figure, best) : tuple
        ``best`` is a dict with ``eps_p``, ``eps_v``, ``log_mse`` and ``excluded`` (how many
        affordable cells were passed over), or None if no allowed cell fits.
    """
    s = log_mse_summary(df, ["eps_p", "eps_v"])
    ep = np.unique(s["eps_p"].to_numpy())
    ev = np.unique(s["eps_v"].to_numpy())
    z = np.full((ep.size, ev.size), np.nan)
    for row in s.itertuples():
        z[np.searchsorted(ep, row.eps_p), np.searchsorted(ev, row.eps_v)] = row.mean
    feasible = (ep[:, None] + ev[None, :]) <= total * (1 + 1e-9)
    barred = np.zeros(z.shape, dtype=bool)
    for e_p, e_v in excluded:
        i, j = np.flatnonzero(np.isclose(ep, e_p)), np.flatnonzero(np.isclose(ev, e_v))
        if i.size and j.size:
            barred[i[0], j[0]] = True
    allowed = feasible & np.isfinite(z) & ~barred
    best, info = None, None
    if np.any(allowed):
        masked = np.where(allowed, z, np.inf)
        best = np.unravel_index(int(np.argmin(masked)), z.shape)
        info = {"eps_p": float(ep[best[0]]), "eps_v": float(ev[best[1]]),
                "log_mse": float(z[best]),
                "excluded": int(np.sum(feasible & np.isfinite(z) & barred))}
    fig = heatmap_figure(
        z, ev, ep, best=best, mark=None, total=total, log_axes=True,
        title=f"Log mean MSE over the budget grid (n = {n})",
        subtitle=(f"Star: best split with ε_p + ε_v ≤ {total:g}; mean over "
                  f"{replicates} replicates"),
    )
    return fig, info


# ---------------------------------------------------------------------- in the data's units
#: What a cell's marker says about where its numbers come from.
SOURCE_LABELS = {"exact": "exact draws", "law": "predicted from the asymptotic law",
                 "mcmc": "Markov chains", "mixed": "exact draws and predictions"}
_SYMBOLS = {"exact": "circle", "law": "diamond-open", "mcmc": "square-open",
            "mixed": "circle-open"}
_FLAGGED = "x-thin-open"


def _hover(row, unit):
    flag = f"<br><b>not trusted</b>: {row.flag}" if row.flag else ""
    return (f"ε_p = {row.eps_p:.3g}, ε_v = {row.eps_v:.3g} ({row.share:.0f}% to the footpoint)"
            f"<br>RMS error {row.rms:.3g} {unit} (replicates {row.rms_lo:.3g} to "
            f"{row.rms_hi:.3g})<br>{SOURCE_LABELS.get(row.source, row.source)}{flag}")


def split_error_figure(summary, *, unit, x="share", title, x_title, subtitle=None,
                       log_x=False, log_y=False, height=HEIGHT_2D + 100):
    """RMS error in the data's unit against ``x``, one colour per sample size.

    Per n: the replicates' range as a band, their mean as a line with a marker per cell
    (:data:`SOURCE_LABELS`: filled circle for exact draws, open diamond for a prediction from
    the asymptotic law; a thin cross for a flagged cell, whose numbers are not trusted), the
    joint scheme (one ε over (p, v): no split) dashed, the non-private fit dotted.

    Parameters
    ----------
    summary : pandas.DataFrame
        Rows of :func:`~dpcore.experiments.budget_summary.cell_summary` of one view.
    unit : str
        The error's unit, for the axis and hover.
    x : {"share", "epsilon", "eps_p"}
        The x column: the footpoint's share of the total in % (unequal split), or the total.
    title, x_title, subtitle : str
    log_x, log_y : bool
        Logarithmic axes.
    height : int

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    sizes = sorted(summary["n"].unique())
    palette = colors.qualitative_colors(len(sizes))
    seq_all = summary[summary["scheme"] == "sequential"]
    x_lo, x_hi = float(seq_all[x].min()), float(seq_all[x].max())
    for n, color in zip(sizes, palette, strict=True):
        part = summary[summary["n"] == n]
        seq = part[part["scheme"] == "sequential"].sort_values(x)
        group = f"n{n}"
        xs = seq[x].to_numpy()
        fig.add_trace(go.Scatter(
            x=np.concatenate([xs, xs[::-1]]),
            y=np.concatenate([seq["rms_hi"].to_numpy(), seq["rms_lo"].to_numpy()[::-1]]),
            mode="lines", fill="toself", fillcolor=colors.with_alpha(color, 0.18),
            line={"width": 0}, hoverinfo="skip", showlegend=False, legendgroup=group))
        fig.add_trace(go.Scatter(
            x=xs, y=seq["rms"], mode="lines", name=f"n = {n}: split (sequential)",
            legendgroup=group, line={"color": color, "width": 2.5}, hoverinfo="skip"))
        _cell_markers(fig, seq, x, color, group, f"n = {n}", unit)
        joint = part[part["scheme"] == "joint"].sort_values(x)
        if len(joint):
            flagged = " (flagged)" if (joint["flag"] != "").all() else ""
            if x == "share":  # one total: a level across the splits
                fig.add_trace(go.Scatter(
                    x=[x_lo, x_hi], y=[float(joint["rms"].iloc[0])] * 2, mode="lines",
                    legendgroup=group, name=f"n = {n}: joint scheme (one ε, no split){flagged}",
                    line={"color": color, "width": 2, "dash": "dash"},
                    text=[_hover(joint.iloc[0], unit)] * 2,
                    hovertemplate=f"n = {n}, joint scheme<br>%{{text}}<extra></extra>"))
            else:
                fig.add_trace(go.Scatter(
                    x=joint[x], y=joint["rms"], mode="lines", legendgroup=group,
                    name=f"n = {n}: joint scheme (one ε, no split)",
                    line={"color": color, "width": 2, "dash": "dash"}, hoverinfo="skip"))
                _cell_markers(fig, joint, x, color, group, f"n = {n}, joint scheme", unit)
        fig.add_trace(go.Scatter(
            x=[x_lo, x_hi], y=[float(part["nonprivate_rms"].mean())] * 2, mode="lines",
            legendgroup=group, showlegend=False, line={"color": color, "width": 1.5,
                                                       "dash": "dot"},
            hovertemplate=f"n = {n}, non-private fit: %{{y:.3g}} {unit}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="non-private fit (dotted)",
                             line={"color": colors.GREY, "width": 1.5, "dash": "dot"},
                             hoverinfo="skip"))
    _marker_legend(fig, summary)
    ys = [summary["rms_lo"].to_numpy(), summary["rms_hi"].to_numpy(),
          summary["nonprivate_rms"].to_numpy()]
    _update_axes(fig, x={"title": {"text": x_title}, **_axis_type(log_x, [seq_all[x].to_numpy()])},
                 y={"title": {"text": _error_title(unit, log_y)},
                    **_axis_type(log_y, ys), **({} if log_y else {"rangemode": "tozero"})})
    return _finish(fig, title, height, subtitle=subtitle, legend_below=True)


def _error_title(unit, log_y):
    """The error axis's title; on two lines where one would outgrow a half-width chart's
    height (e.g. 'affine-invariant distance, log scale' ran into the subtitle)."""
    inner = f"{unit}{', log scale' if log_y else ''}"
    return f"RMS error ({inner})" if len(inner) <= 24 else f"RMS error<br>({inner})"


def _cell_markers(fig, rows, x, color, group, what, unit):
    """One marker per cell (:data:`SOURCE_LABELS`; flagged cells crossed), no legend entry."""
    symbols = [_FLAGGED if f else _SYMBOLS.get(src, "circle")
               for f, src in zip(rows["flag"], rows["source"], strict=True)]
    fig.add_trace(go.Scatter(
        x=rows[x], y=rows["rms"], mode="markers", legendgroup=group, showlegend=False,
        marker={"symbol": symbols, "size": 11, "color": color,
                "line": {"color": color, "width": 2}},
        text=[_hover(r, unit) for r in rows.itertuples()],
        hovertemplate=f"{what}<br>%{{text}}<extra></extra>"))


def _marker_legend(fig, rows):
    """Grey legend entries for the marker shapes present in ``rows``."""
    present = [s for s in SOURCE_LABELS if s in set(rows.loc[rows["flag"] == "", "source"])]
    for src in present:
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=SOURCE_LABELS[src],
                                 marker={"symbol": _SYMBOLS[src], "size": 11,
                                         "color": colors.GREY,
                                         "line": {"color": colors.GREY, "width": 2}},
                                 hoverinfo="skip"))
    if (rows["flag"] != "").any():
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers",
                                 name="flagged: not trusted (see the list)",
                                 marker={"symbol": _FLAGGED, "size": 11, "color": colors.GREY,
                                         "line": {"color": colors.GREY, "width": 2}},
                                 hoverinfo="skip"))


def error_heatmap_figure(summary, total, *, unit, n, replicates):
    """Heatmap of the RMS error in the data's unit over the (ε_p, ε_v) grid, with the best
    split for ``total``: the cell of smallest error among the unflagged ones with
    ``ε_p + ε_v <= total``; flagged cells are crossed and never best.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`~dpcore.experiments.budget_summary.cell_summary` rows of a grid view.
    total : float
    unit : str
    n, replicates : int
        For the title and subtitle.

    Returns
    -------
    (figure, best) : tuple
        ``best`` is a dict with ``eps_p``, ``eps_v``, ``rms``, ``source`` and ``excluded`` (how
        many affordable cells were passed over as flagged), or None if no allowed cell fits.
    """
    seq = summary[summary["scheme"] == "sequential"]
    ep, ev = np.unique(seq["eps_p"].to_numpy()), np.unique(seq["eps_v"].to_numpy())
    z = np.full((ep.size, ev.size), np.nan)
    barred = np.zeros(z.shape, dtype=bool)
    source = np.full(z.shape, "", dtype=object)
    for row in seq.itertuples():
        i, j = np.searchsorted(ep, row.eps_p), np.searchsorted(ev, row.eps_v)
        z[i, j], barred[i, j], source[i, j] = row.rms, bool(row.flag), row.source
    feasible = (ep[:, None] + ev[None, :]) <= total * (1 + 1e-9)
    allowed = feasible & np.isfinite(z) & ~barred
    best, info = None, None
    if np.any(allowed):
        best = np.unravel_index(int(np.argmin(np.where(allowed, z, np.inf))), z.shape)
        info = {"eps_p": float(ep[best[0]]), "eps_v": float(ev[best[1]]), "rms": float(z[best]),
                "source": str(source[best]),
                "excluded": int(np.sum(feasible & np.isfinite(z) & barred))}
    fig = heatmap_figure(
        z, ev, ep, best=best, mark=None, total=total, log_axes=True,
        colorbar_title=f"RMS error ({unit})",
        title=f"RMS error over the budget grid (n = {n})",
        subtitle=(f"Star: best unflagged split with ε_p + ε_v ≤ {total:g}; crosses: flagged "
                  f"cells; mean over {replicates} replicates"))
    if barred.any():
        i, j = np.nonzero(barred)
        fig.add_trace(go.Scatter(x=ev[j], y=ep[i], mode="markers", name="flagged: not trusted",
                                 marker={"symbol": "x-thin-open", "size": 18,
                                         "color": colors.BLACK, "line": {"width": 3}},
                                 hovertemplate="flagged cell<extra></extra>"))
    return fig, info
