"""What an attacker can conclude about one person: belief bounds against the privacy budget.

:func:`disclosure_risk_figure` draws, for a few priors, the largest belief an attacker who
starts at that prior can reach about one person after one release, against ε (or µ), with the
prior itself as the "no release" line and the current budget marked (the bounds of
:mod:`dpcore.privacy.risk`).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from dpcore.privacy.risk import average_posterior, posterior_bound

from . import colors
from ._base import HEIGHT_2D, _add_traces, _axis_type, _finish, _update_axes

__all__ = ["DEFAULT_PRIORS", "disclosure_risk_figure", "risk_grid"]

#: The priors drawn by default: a long shot, an unlikely guess, even odds.
DEFAULT_PRIORS = (0.01, 0.1, 0.5)
_PRIOR_COLORS = (colors.BLUE, colors.VERMILLION, colors.GREEN, colors.PURPLE, colors.ORANGE)


def risk_grid(current, *, scale="epsilon", points=200):
    """Log-spaced budgets around ``current``: from 0.01 (or current/3) to 10 for ε, 5 for µ
    (or 3 × current).

    Parameters
    ----------
    current : float
        The current budget (ε or µ), > 0.
    scale : {"epsilon", "mu"}
    points : int

    Returns
    -------
    ndarray
    """
    top = 10.0 if scale == "epsilon" else 5.0
    lo = min(0.01, float(current) / 3.0)
    hi = max(top, 3.0 * float(current))
    return np.unique(np.concatenate([np.logspace(np.log10(lo), np.log10(hi), int(points)),
                                     [float(current)]]))


def _percent(x):
    return f"{100 * x:.3g}%" if x < 0.9995 else "more than 99.9%"


def disclosure_risk_figure(current, *, scale="epsilon", delta=0.0, priors=DEFAULT_PRIORS,
                           average=None, per_person=False, title=None):
    """The attacker's largest belief against the budget, for several priors.

    For pure ε-DP (``scale="epsilon"``, δ = 0) the curves are the belief after any one release,
    :math:`p e^\\varepsilon / (p e^\\varepsilon + 1 - p)`; with δ > 0 or for µ-GDP, where no
    single release is bounded below certainty, they are the largest *average* belief when the
    person is in the data (:func:`dpcore.privacy.risk.average_posterior`).

    Parameters
    ----------
    current : float
        The release's budget per person: ε (``scale="epsilon"``) or µ (``scale="mu"``), > 0.
    scale : {"epsilon", "mu"}
    delta : float
        δ of (ε, δ)-DP (``scale="epsilon"`` only).
    priors : sequence of float
        The attackers' beliefs before the release, in (0, 1); at most five.
    average : bool, optional
        Draw the average belief even for pure ε-DP (default: only where the worst case is 1).
    per_person : bool
        Label the axis "per person" (group privacy applied to ``current``).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        One line per prior, one trace of dotted "before the release" levels, one marker trace
        at ``current``.
    """
    if scale not in ("epsilon", "mu"):
        raise ValueError(f"`scale` must be 'epsilon' or 'mu', got {scale!r}.")
    current = float(current)
    if not current > 0 or not np.isfinite(current):
        raise ValueError(f"`current` must be a positive finite budget, got {current!r}.")
    priors = [float(p) for p in priors]
    if not 1 <= len(priors) <= len(_PRIOR_COLORS):
        raise ValueError(f"Give between 1 and {len(_PRIOR_COLORS)} priors, got {len(priors)}.")
    if average is None:
        average = scale == "mu" or delta > 0
    grid = risk_grid(current, scale=scale)
    kw = {"mu": grid} if scale == "mu" else {"epsilon": grid, "delta": delta}
    now_kw = {"mu": current} if scale == "mu" else {"epsilon": current, "delta": delta}
    bound = average_posterior if average else posterior_bound
    symbol = "µ" if scale == "mu" else "ε"
    traces, marks = [], []
    for p, color in zip(priors, _PRIOR_COLORS[:len(priors)], strict=True):
        traces.append(dict(
            type="scatter", x=grid, y=bound(p, **kw), mode="lines", name=f"prior {100 * p:g}%",
            line={"color": color, "width": 3},
            hovertemplate=f"{symbol} = %{{x:.3g}}<br>belief at most %{{y:.1%}}<extra>prior "
                          f"{100 * p:g}%</extra>"))
        marks.append(bound(p, **now_kw))
    lx, ly = [], []
    for p in priors:
        lx += [grid[0], grid[-1], None]
        ly += [p, p, None]
    traces.append(dict(type="scatter", x=lx, y=ly, mode="lines",
                       name="before the release (the prior)",
                       line={"color": colors.GREY, "dash": "dot", "width": 2}, hoverinfo="skip"))
    traces.append(dict(
        type="scatter", x=[current] * len(priors), y=marks, mode="markers",
        name=f"this release ({symbol} = {current:.3g})",
        marker={"color": colors.BLACK, "size": 12, "symbol": "star"},
        text=[_percent(m) for m in marks],
        hovertemplate="%{text}<extra>this release</extra>"))
    fig = _add_traces(go.Figure(), traces)
    who = " per person" if per_person else ""
    # Short axis titles: the figure is often drawn in a narrow column; the subtitle says more.
    _update_axes(fig, x={"title": {"text": f"privacy budget {symbol}{who} (log scale)"},
                         **_axis_type(True, [grid])},
                 y={"title": {"text": "average belief after release" if average
                              else "largest belief after release"},
                    "range": [0, 1.02], "tickformat": ".0%"})
    subtitle = ("Belief that a given person is in the data: before (dotted), at most after "
                "one release" if not average else
                "Belief that a given person is in the data, averaged over releases when they "
                "are (rare releases can say more)")
    return _finish(fig, title or "What an attacker can conclude about one person", HEIGHT_2D,
                   subtitle=subtitle, legend_below=True)
