"""Page logic of the Budget split page's advice: the recommendation sentence read off a
simulation's splits (:func:`dpcore.experiments.budget_summary.recommend_split`), and the
settings that carry a chosen split to the Geodesic regression page."""

from __future__ import annotations

import math

import numpy as np

from dpcore.experiments.budget_summary import AVOID_RATIO, TOLERANCE, recommend_split

from .regression_data import EPS_GRID

__all__ = [
    "GEODESIC_REGRESSION_PAGE",
    "SOURCE_WORDS",
    "carry_settings",
    "recommendation",
    "split_label",
]

#: The page a split is carried to (``st.switch_page``).
GEODESIC_REGRESSION_PAGE = "pages/geodesic_regression.py"
#: How a sentence names where a cell's numbers come from.
SOURCE_WORDS = {"exact": "from exact draws", "law": "predicted from the asymptotic law",
                "mcmc": "from Markov chains", "mixed": "from exact draws and predictions"}


def _shares(rows):
    """``"24% to 50%"`` for the footpoint shares of ``rows`` (one share: ``"50%"``)."""
    lo, hi = float(rows["share"].min()), float(rows["share"].max())
    return f"{lo:.0f}%" if math.isclose(lo, hi) else f"{lo:.0f}% to {hi:.0f}%"


def _eps_range(rows):
    lo, hi = float(rows["eps_p"].min()), float(rows["eps_p"].max())
    return f"ε_p = {lo:.3g}" if math.isclose(lo, hi) else f"ε_p = {lo:.3g} to {hi:.3g}"


def split_label(row, unit):
    """A split as a choice: its share, budgets and error."""
    return (f"{row['share']:.0f}% to the footpoint: ε_p = {row['eps_p']:.3g}, "
            f"ε_v = {row['eps_v']:.3g} ({row['rms']:.3g} {unit})")


def recommendation(summary, n, *, unit, tolerance=TOLERANCE, avoid_ratio=None):
    """The recommendation sentence for the unequal view at sample size ``n``.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`ui.logic.budget_split.summary_of` rows of the unequal view.
    n : int
    unit : str
    tolerance, avoid_ratio : float
        As :func:`dpcore.experiments.budget_summary.recommend_split`; by default a split is
        to avoid at :data:`~dpcore.experiments.budget_summary.AVOID_RATIO` times the best
        error, or at ``1 + 2 tolerance`` times it for a wide tolerance.

    Returns
    -------
    (dict or None, str)
        The recommendation (None when every split is flagged) and its markdown sentence.
    """
    if avoid_ratio is None:
        avoid_ratio = max(AVOID_RATIO, 1.0 + 2.0 * tolerance)
    part = summary[summary["n"] == n]
    seq = part[part["scheme"] == "sequential"]
    total = float(seq["epsilon"].iloc[0]) if len(seq) else float("nan")
    rec = recommend_split(part, tolerance=tolerance, avoid_ratio=avoid_ratio)
    if rec is None:
        return None, (f"**No recommendation at n = {n}:** every split's numbers are flagged "
                      "(listed below), so none is called best. Raise n or the total ε, or "
                      "look at the other sample size.")
    best, good, avoid = rec["best"], rec["good"], rec["avoid"]
    contiguous = len(good) == int(((seq["share"] >= good["share"].min())
                                   & (seq["share"] <= good["share"].max())).sum())
    which = (f"footpoint shares **{_shares(good)}** ({_eps_range(good)})" if contiguous else
             "footpoint shares **" + ", ".join(f"{s:.0f}%" for s in good["share"]) + "**")
    text = (f"At a total ε = {total:.3g} per geodesic and n = {n}, {which} give an RMS error "
            f"within {100 * tolerance:.0f}% of the best: **{best['rms']:.3g} {unit}** at "
            f"{best['share']:.0f}% (ε_p = {best['eps_p']:.3g}, ε_v = {best['eps_v']:.3g}); the "
            f"non-private fit's is {best['nonprivate_rms']:.3g} {unit}.")
    if len(avoid):
        worst = float(avoid["rms"].max() / best["rms"])
        listed = ", ".join(f"{s:.0f}%" for s in avoid["share"])
        text += (f" **Avoid** {listed} to the footpoint: {avoid_ratio:g}× the best error or "
                 f"more (up to {worst:.2g}×).")
    else:
        text += f" No unflagged split is {avoid_ratio:g}× the best error or worse."
    if len(rec["flagged"]):
        shares = ", ".join(f"{s:.0f}%" for s in rec["flagged"]["share"])
        text += (f" The split{'s' if len(rec['flagged']) > 1 else ''} with {shares} to the "
                 f"footpoint {'are' if len(rec['flagged']) > 1 else 'is'} flagged and not "
                 "considered: the numbers there are not trusted.")
    sources = set(good["source"])
    text += " The good splits' numbers are " + (
        SOURCE_WORDS[sources.pop()] if len(sources) == 1 else "from exact draws and "
        "predictions from the asymptotic law") + "."
    joint = rec["joint"]
    if joint is not None and np.isfinite(joint["rms"]) and not joint["flag"]:
        text += (f" The proven **joint** scheme (one ε over footpoint and vector, Geodesic "
                 f"regression's default) gives {joint['rms']:.3g} {unit} at this total: "
                 "there the split does not apply.")
    return rec, text


def _nearest(value, grid):
    grid = np.asarray(grid, dtype=float)
    return float(grid[np.argmin(np.abs(np.log(grid) - math.log(value)))])


def carry_settings(kind, param, n, eps_p, eps_v):
    """Starting values of the Geodesic regression page's widgets that carry a split there
    (``n``: the sample size the split was chosen for, named in the note).

    The page sets its budget as a total ε (a value of its log grid, :data:`EPS_GRID`) and the
    footpoint's share in steps of 5%: the split is carried as the nearest of each, with the
    manifold (and its parameter). The sample size stays the page's: it is the data's (an
    upload's, or the synthetic default whose release is exact), and a larger n can move that
    release from exact sampling to MCMC; the note names the n the split was chosen for.

    Returns
    -------
    (dict, str)
        ``{session-state key: value}`` and a sentence saying what was carried.
    """
    total = _nearest(eps_p + eps_v, EPS_GRID)
    share = int(min(max(5 * round(20.0 * eps_p / (eps_p + eps_v)), 5), 95))
    values = {"gr_manifold": kind, "gr_prev_kind": kind, "gr_budget_input": "total",
              "gr_total": total, "gr_share": share}
    if param is not None:
        values[f"gr_param_{kind}"] = int(param)
    note = (f"total ε = {total:g} per geodesic with {share}% to the footpoint "
            f"(ε_p = {total * share / 100:.3g}, ε_v = {total * (100 - share) / 100:.3g}; the "
            f"simulated split, chosen for n = {int(n)}, was ε_p = {eps_p:.3g}, "
            f"ε_v = {eps_v:.3g})")
    return values, note
