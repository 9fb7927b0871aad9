"""Page logic of "Estimate privately": columns' ranges estimated under DP with a small stated
budget ε_b (issue 14, point 2), for any page whose release needs public bounds.

A page offers, next to its bounds fields, a public *enclosing interval* per column (from the
column's units when its name says them, else a wide one the user must confirm, never from the
data), a budget ε_b (by default :data:`DEFAULT_SHARE` of the page's budget) and the levels
(how many rows may lie beyond each end). The estimate is :func:`dpcore.release.private_range`;
it goes through the page's confirmation, the session cap and the ledger like any release, with
:func:`ledger_page` and :func:`ledger_note`. Its ranges, rounded outward (post-processing), then
fill the bounds fields, and a later release that uses them states so in its assumptions
(:func:`annotate_release`): its own guarantee ε holds with them as public inputs, and the two
releases together are (ε_b + ε)-DP by sequential composition.

Streamlit-free: the page draws the widgets.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "DEFAULT_SHARE",
    "TRIM_OPTIONS",
    "UNIT_RULES",
    "WIDE_INTERVAL",
    "BoundsEstimate",
    "EnclosingDefault",
    "annotate_release",
    "budget_text",
    "composition_text",
    "default_budget",
    "enclosing_default",
    "enclosing_table",
    "estimate_bounds",
    "estimated_note",
    "interval_problems",
    "ledger_note",
    "ledger_page",
    "levels_of",
    "matches_estimate",
    "round_outward",
    "unconfirmed_columns",
]

#: Default ε_b as a share of the page's budget.
DEFAULT_SHARE = 0.1
#: The generic enclosing interval of a column whose units are not known from its name: wide,
#: since the mechanism's error grows only with the logarithm of the width, and to be confirmed.
WIDE_INTERVAL = (-1.0e6, 1.0e6)
#: Percent of the rows allowed beyond each end (the levels p and 1 − p); 2 is the default.
TRIM_OPTIONS = (0.5, 1.0, 2.0, 5.0, 10.0)

#: Enclosing intervals known from a column's units, recognised in its name (lower case):
#: ``(pattern, (low, high), reason)``. Public knowledge of what the unit allows, never the data.
UNIT_RULES = (
    (r"\bage\b", (0.0, 120.0), "an age in years lies in [0, 120]"),
    (r"%|\bpercent|\bpct\b|\bpercentage", (0.0, 100.0), "a percentage lies in [0, 100]"),
    (r"\blat(itude)?\b", (-90.0, 90.0), "a latitude in degrees lies in [−90, 90]"),
    (r"\blon(gitude)?\b|\blng\b", (-180.0, 180.0), "a longitude in degrees lies in [−180, 180]"),
    (r"\bph\b", (0.0, 14.0), "a pH lies in [0, 14]"),
    (r"\bprobability\b|\bproportion\b|\bfraction\b", (0.0, 1.0),
     "a probability or proportion lies in [0, 1]"),
    (r"\bmonth\b", (1.0, 12.0), "a month number lies in [1, 12]"),
    (r"\bhour\b", (0.0, 24.0), "an hour of the day lies in [0, 24]"),
    (r"\byear\b", (1900.0, 2100.0), "a calendar year of modern records lies in [1900, 2100]"),
)


@dataclass(frozen=True)
class EnclosingDefault:
    """A column's default enclosing interval and where it comes from.

    Attributes
    ----------
    low, high : float
    reason : str
        Shown beside the interval.
    known : bool
        From public knowledge (units or a preset); False for :data:`WIDE_INTERVAL`, which the
        user must confirm.
    """

    low: float
    high: float
    reason: str
    known: bool


def enclosing_default(name, public=None):
    """The default public enclosing interval of column ``name``.

    Parameters
    ----------
    name : str
        The column's header.
    public : mapping of str to (float, float), optional
        Bounds known for this data set (a preset's domain knowledge, a generator's design).

    Returns
    -------
    EnclosingDefault
    """
    if public and name in public:
        lo, hi = public[name]
        return EnclosingDefault(float(lo), float(hi), "public bounds of this data set", True)
    text = str(name).lower()
    for pattern, (lo, hi), reason in UNIT_RULES:
        if re.search(pattern, text):
            return EnclosingDefault(lo, hi, f"units: {reason}", True)
    return EnclosingDefault(*WIDE_INTERVAL, "wide default: confirm it holds the column", False)


def enclosing_table(names, public=None, kept=None):
    """The editable table of enclosing intervals: columns ``column``, ``lower``, ``upper``,
    ``from``.

    ``kept``: ``{column: (lower, upper)}`` the user typed earlier (:func:`typed_intervals`);
    those columns start from them (``from`` says so) instead of their defaults."""
    kept = kept or {}
    rows = []
    for nm in names:
        d = enclosing_default(nm, public)
        rows.append((nm, *kept[nm], "your entry") if nm in kept else (nm, d.low, d.high,
                                                                        d.reason))
    return pd.DataFrame(rows, columns=["column", "lower", "upper", "from"])


def typed_intervals(table, public=None, kept=None):
    """``kept`` updated with the intervals of ``table`` (the edited table) that differ from
    their defaults: what the user typed, to start from when the table is built again."""
    out = dict(kept or {})
    for nm, lo, hi in zip(table["column"], table["lower"], table["upper"], strict=True):
        default = enclosing_default(nm, public)
        if lo is None or hi is None:
            continue
        if (float(lo), float(hi)) != (float(default.low), float(default.high)):
            out[nm] = (float(lo), float(hi))
        else:
            out.pop(nm, None)
    return out


def interval_problems(table):
    """Messages naming each column whose enclosing interval is not a finite ``lower < upper``
    (empty when all are)."""
    out = []
    for nm, lo, hi in zip(table["column"], table["lower"], table["upper"], strict=True):
        ok = (lo is not None and hi is not None and np.isfinite(float(lo))
              and np.isfinite(float(hi)) and float(lo) < float(hi))
        if not ok:
            out.append(f"Column '{nm}': the enclosing interval's lower end must be below its "
                       "upper end (both finite).")
    return out


def unconfirmed_columns(table):
    """Columns whose interval is still the generic :data:`WIDE_INTERVAL` (to be confirmed)."""
    return [nm for nm, lo, hi in zip(table["column"], table["lower"], table["upper"],
                                     strict=True)
            if (float(lo), float(hi)) == WIDE_INTERVAL]


def default_budget(epsilon, share=DEFAULT_SHARE):
    """The default ε_b: ``share`` of the page's budget, to 3 significant digits."""
    return float(f"{share * float(epsilon):.3g}")


def levels_of(trim_percent):
    """The levels ``(p, 1 − p)`` for ``trim_percent`` % of the rows beyond each end."""
    p = float(trim_percent) / 100.0
    if not 0.0 <= p < 0.5:
        raise ValueError(f"The share beyond each end must be in [0, 50) %, got {trim_percent}.")
    return (p, 1.0 - p)


def budget_text(epsilon_b, n_columns, n_rows, levels):
    """How ε_b is spent and what it buys, from public inputs only (n, ε_b, the levels).

    The exponential mechanism misses its level's rank by about (2/ε) ln(W/s) rows, W the
    enclosing interval's width and s the spacing of the data near the quantile; s is at most
    about W/n (data filling the interval), so (2/ε) ln n rows is the best case.

    Returns
    -------
    (str, bool)
        The sentence, and whether the budget is too small for the rows: even in the best case
        the miss exceeds the rows meant to lie beyond each end (at least one), so the estimate
        is mostly noise.
    """
    k = len(levels) * int(n_columns)
    each = float(epsilon_b) / k
    scale = 2.0 / each
    best = scale * math.log(max(int(n_rows), 2))
    beyond = max(min(levels[0], 1.0 - levels[-1]) * int(n_rows), 1.0)
    text = (f"ε_b = {epsilon_b:.3g} is split over {n_columns} column(s) × {len(levels)} ends: "
            f"ε = {each:.3g} each (sequential composition). Each end misses its quantile by "
            f"about 2/ε × ln(interval width / spacing of the data) rows: about {best:,.0f} "
            f"here if the data filled the enclosing interval (more if they fill a small part "
            f"of it), against {beyond:,.0f} of the n = {int(n_rows):,} rows meant to lie "
            "beyond each end.")
    return text, best > beyond


def composition_text(epsilon_b, epsilon):
    """The total guarantee of the estimate and the release, stated at the control."""
    return (f"Total guarantee of the estimate and the release: ε_b + ε = {epsilon_b:.3g} + "
            f"{epsilon:.3g} = {epsilon_b + epsilon:.3g} (sequential composition: two releases "
            "of the same data; the ledger records both).")


def round_outward(low, high, bounds, digits=3):
    """``(low, high)`` rounded outward to ``digits`` significant digits of their width, kept in
    the enclosing ``bounds`` (post-processing of a private output: no privacy cost)."""
    lo, hi = float(low), float(high)
    a, b = (float(v) for v in bounds)
    width = hi - lo
    if width > 0:
        step = 10.0 ** (math.floor(math.log10(width)) - (digits - 1))
        lo = math.floor(lo / step) * step
        hi = math.ceil(hi / step) * step
        lo, hi = float(f"{lo:.12g}"), float(f"{hi:.12g}")
    return max(lo, a), min(hi, b)


@dataclass
class BoundsEstimate:
    """A finished estimate.

    Attributes
    ----------
    release : dpcore.release.Release
        The record of :func:`dpcore.release.private_range` (for the ledger and download).
    ranges : dict of str to (float, float)
        Per column, the estimated range rounded outward (what fills the fields).
    epsilon : float
        ε_b.
    levels : tuple of float
    """

    release: object
    ranges: dict
    epsilon: float
    levels: tuple


def estimate_bounds(columns, intervals, epsilon_b, levels, rng=None):
    """Estimate the ranges of ``columns`` under DP (:func:`dpcore.release.private_range`).

    Parameters
    ----------
    columns : mapping of str to array-like, shape (n,)
        The columns to estimate, all with the same rows.
    intervals : mapping of str to (float, float)
        Their public enclosing intervals.
    epsilon_b : float
        The budget of the whole estimate.
    levels : (float, float)
        The levels of the low and high ends.
    rng : None, int or numpy.random.Generator
        None: OS entropy.

    Returns
    -------
    BoundsEstimate

    Raises
    ------
    ValueError
        For an empty selection or bad arguments (from the library, naming them).
    """
    from dpcore.release import private_range

    names = list(columns)
    if not names:
        raise ValueError("Choose at least one column to estimate.")
    x = np.column_stack([np.asarray(columns[nm], dtype=float) for nm in names])
    bounds = [tuple(float(v) for v in intervals[nm]) for nm in names]
    rel = private_range(x, epsilon=float(epsilon_b), bounds=bounds, quantiles=tuple(levels),
                        rng=rng)
    raw = np.asarray(rel.values["range"])[0]
    ranges = {nm: round_outward(raw[j, 0], raw[j, 1], bounds[j]) for j, nm in enumerate(names)}
    return BoundsEstimate(release=rel, ranges=ranges, epsilon=float(epsilon_b),
                          levels=tuple(float(v) for v in levels))


def ledger_page(page):
    """The ledger's page field of an estimate made on ``page``."""
    return f"{page}: bounds estimate"


def _levels_text(levels):
    return f"{100 * levels[0]:g}%–{100 * levels[1]:g}% quantiles"


def ledger_note(estimate, rows):
    """The ledger note of an estimate: what it is, its ε and the rows per person in effect."""
    names = ", ".join(f"'{nm}'" for nm in estimate.ranges)
    return (f"bounds estimate of {names} ({_levels_text(estimate.levels)}), "
            f"ε_b = {estimate.epsilon:.3g}, {int(rows)} row(s) per person")


def estimated_note(epsilon_b, levels):
    """The statement a release carries for a bound filled by an estimate."""
    return (f"estimated under DP with ε_b = {epsilon_b:.3g} ({_levels_text(levels)} by the "
            "exponential mechanism, rounded outward; a separate release in the ledger): the "
            "total guarantee with this release is ε_b + ε by sequential composition")


def matches_estimate(value, estimated):
    """Whether a field's ``(low, high)`` still holds the estimated range (not retyped)."""
    return estimated is not None and bool(np.allclose(np.asarray(value, float),
                                                      np.asarray(estimated, float),
                                                      rtol=1e-12, atol=0.0))


def annotate_release(release, notes):
    """A copy of ``release`` with ``notes`` (assumption name -> statement) added to its
    assumptions, after any note already there; the source is unchanged (the bound is a public
    input of this release). A :class:`~dpcore.release.Release` is immutable."""
    assumptions = {name: dict(entry) if isinstance(entry, Mapping) else entry
                   for name, entry in release.assumptions.items()}
    for name, note in notes.items():
        entry = assumptions.get(name)
        if entry is None or not note:
            continue
        entry["note"] = f"{entry['note']}; {note}" if entry.get("note") else note
    return dataclasses.replace(release, assumptions=assumptions)
