"""Figures of budget-split studies of private geodesic regression (paper 002, figs. 1, 2, 7).

The log mean MSE against the footpoint budget at a fixed total (unequal split), against the
total at an equal split, and over a grid of (ε_p, ε_v). They take the tidy rows of
:func:`dpcore.experiments.budget_sweep` (columns ``n``, ``eps_p``, ``eps_v``, ``epsilon``,
``log_mse``, ``nonprivate_mse``) and serve both the dashboard's Budget split page and the
reproduction report, so the two draw the same numbers the same way.
"""

from __future__ import annotations

import numpy as np

from .charts import band_figure, heatmap_figure

__all__ = [
    "budget_heatmap_figure",
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
